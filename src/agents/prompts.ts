/**
 * What the validatedResponseMiddleware middleware tells the model. The errors of a
 * rejected answer are listed exactly as the validation graph's retry prompt
 * lists them (../protocol/feedback.ts); only the instruction around them
 * differs, because here the answer is a tool call in a conversation.
 */
import type { Spec } from "../specs/spec.js";
import { toolDescription } from "../tools/prompts.js";
import { rejectionSection } from "../protocol/feedback.js";

/** The answer tool's description: what the answer is, and the spec's cross-field rules (its schema is the tool's parameters). */
export function answerToolDescription(spec: Spec, tool: string): string {
  return toolDescription(spec, `Give your final answer by calling ${tool} with it, once, on its own: ${spec.description}`);
}

/** The result of an answer call that failed the spec. */
export function answerRejectedText(tool: string, errors: readonly string[], attempt: number, maxAttempts: number): string {
  const next =
    attempt >= maxAttempts
      ? `That was the last of ${maxAttempts} attempts: the answer was not accepted.`
      : `Call ${tool} again with the corrected answer (attempt ${attempt + 1} of ${maxAttempts}). Fix every error listed and keep everything that was already right.`;
  return `${rejectionSection(errors)}\n\n${next}`;
}

/** The result of an answer call made alongside other tool calls: it is not read (their results may change the answer) and not counted. */
export function answerSetAsideText(tool: string): string {
  return `${tool} was not read: this answer came with other tool calls. Give your final answer on its own, once their results are in.`;
}

/** The result of an accepted answer call. */
export function answerAcceptedText(value: unknown): string {
  return JSON.stringify(value);
}

/** Why the answer ended without one: the model kept calling other tools. Also the result of the calls of the turn past the budget, which are not run. */
export function noAnswerText(maxToolTurns: number): string {
  return `No answer after ${maxToolTurns} turns of other tool calls (maxToolTurns): this turn's calls were not run, and the answer ended without one.`;
}
