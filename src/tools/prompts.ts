/** What a guarded tool tells the model when it does not run: the exact errors and what to do next. */
import { bound } from "../shared/text.js";
import type { Spec } from "../specs/spec.js";

/** Longest error list returned to the model (the validator caps the count and each message too). */
export const MAX_ERRORS_SECTION_CHARS = 8_000;
/** Longest list of the spec's rules appended to a tool's description. */
const MAX_RULES_CHARS = 2_000;

export interface CallFacts {
  tool: string;
  spec: string;
  /** 1-based number of this call among the attempts the budget counts. */
  attempt: number;
  maxAttempts: number;
}

/** The result of a call whose arguments failed the spec. */
export function invalidCallText(facts: CallFacts, errors: readonly string[]): string {
  const { tool, spec, attempt, maxAttempts } = facts;
  const last = attempt >= maxAttempts;
  return [
    `${tool} call ${attempt} of ${maxAttempts} was not run: its arguments do not match the ${spec} spec.`,
    `Errors:\n${bound(errors.map((e, i) => `${i + 1}. ${e}`).join("\n"), MAX_ERRORS_SECTION_CHARS)}`,
    last
      ? `That was the last of ${maxAttempts} attempts: ${tool} will refuse further calls until the user writes again. Tell the user what could not be made valid.`
      : `Fix these and call ${tool} again with the corrected arguments, keeping everything that was already right.`,
  ].join("\n");
}

/** The result of every call after the budget is spent. */
export function refusalText(facts: CallFacts): string {
  const { tool, spec, maxAttempts } = facts;
  return (
    `${tool} refused this call without running it: ${maxAttempts} of ${maxAttempts} attempts already failed the ${spec} spec, ` +
    `so it accepts no more calls until the user writes again. Do not call ${tool} again; tell the user the arguments could not be made valid.`
  );
}

/** The tool's description for the model: the caller's text (or the spec's) plus the cross-field rules JSON Schema cannot carry. */
export function toolDescription(spec: Spec, description: string | undefined): string {
  const base = description ?? spec.description;
  if (spec.rules.length === 0) return base;
  return `${base}\n\nThe arguments must also satisfy:\n${bound(spec.rules.map((r) => `- ${r.description}`).join("\n"), MAX_RULES_CHARS)}`;
}
