/**
 * The retry feedback: how a rejected answer goes back to the model (the request, the previous answer and
 * its exact errors, each bounded), for the validation graph, the createAgent middleware, the simulated
 * model and whatever reads the prompts (the evaluation, the benchmarks). Its size does not grow with the
 * attempt number.
 */
import { bound } from "../shared/text.js";

/** Longest raw answer kept in each attempt record (the validation graph's history, the agent's outcome). */
export const MAX_RECORDED_OUTPUT_CHARS = 20_000;

/** Longest previous answer echoed back in a retry prompt. */
export const MAX_ECHOED_OUTPUT_CHARS = 4_000;
/** Longest error list sent back in a retry prompt (the validator caps the count and each message too). */
export const MAX_ERRORS_SECTION_CHARS = 8_000;
/** Upper bound on everything a retry prompt adds to the request: echoed output, errors and instructions. */
export const MAX_FEEDBACK_CHARS = MAX_ECHOED_OUTPUT_CHARS + MAX_ERRORS_SECTION_CHARS + 500;

/** The headings of the generation prompts, for code that reads them (the simulated model, benchmarks): match these, never copies. */
export const PROMPT_HEADINGS = {
  request: "Request:",
  previousAnswer: "Your previous answer:",
  errors: "A validator rejected it with these errors:",
  /** The instruction that asks for corrections only (a JSON Patch) instead of the whole answer. */
  corrections: "Reply with the corrections only, as a JSON Patch (RFC 6902):",
} as const;

export function firstAttemptPrompt(request: string): string {
  return `${PROMPT_HEADINGS.request}\n${request}`;
}

export function retryPrompt(request: string, previousOutput: string, errors: readonly string[]): string {
  return [
    `${PROMPT_HEADINGS.request}\n${request}`,
    `${PROMPT_HEADINGS.previousAnswer}\n${bound(previousOutput, MAX_ECHOED_OUTPUT_CHARS)}`,
    rejectionSection(errors),
    "Reply with the corrected JSON object only. Fix every error listed and keep everything that was already right.",
  ].join("\n\n");
}

/**
 * A retry that asks for the corrections only: the previous answer shown whole (as the value read, which
 * the corrections' paths point into; the caller keeps it within MAX_CORRECTABLE_CHARS), its errors, and
 * how to write a JSON Patch whose paths match the errors' field paths.
 */
export function correctionPrompt(request: string, previousValue: string, errors: readonly string[]): string {
  return [
    `${PROMPT_HEADINGS.request}\n${request}`,
    `${PROMPT_HEADINGS.previousAnswer}\n${previousValue}`,
    rejectionSection(errors),
    `${PROMPT_HEADINGS.corrections}\n` +
      'a JSON array of operations such as {"op": "replace", "path": "/services/3/port", "value": 8080}, {"op": "add", "path": "/resources/cpu_limit", "value": 1}, ' +
      '{"op": "remove", "path": "/username"}. Each path is a JSON Pointer into your previous answer: the field an error names as services[3].port is /services/3/port. ' +
      'Fix every error listed, change nothing else, and do not repeat the answer: reply with the JSON array only (where only an object may be given, {"patch": [ … ]}).',
  ].join("\n\n");
}

/**
 * The error a correction that could not be used adds to its attempt (before the errors its answer still
 * has): why, and that the next reply must be the whole answer.
 */
export function unusedCorrectionError(problem: string): string {
  return `Your corrections were not used: ${problem}. Reply with the whole corrected JSON object instead.`;
}

/**
 * The one error of an answer the provider cut at its output limit (`reason` in its words, e.g.
 * `stop_reason "max_tokens"`): the JSON was never finished, so the retry asks for a shorter answer, not a fix.
 */
export function truncatedAnswerError(reason: string): string {
  return (
    `The answer was cut off at the output limit (${reason}) before it was complete. ` +
    "Answer again with a compact JSON object: no whitespace between tokens, no prose, and no optional fields or long texts the request does not need."
  );
}

/** The one error of a tool-mode attempt that called other tools and not the answer's (`tool`). */
export function missingAnswerError(tool: string, called: readonly string[]): string {
  const names = called
    .slice(0, 5)
    .map((n) => JSON.stringify(bound(n, 64)))
    .join(", ");
  return `The answer is missing: you called ${names}, not ${JSON.stringify(tool)}. Give your answer by calling ${JSON.stringify(tool)} with the whole JSON object as its arguments.`;
}

/**
 * The one error of an answer the provider did not say was finished (`reason` in its words, e.g.
 * `finishReason "OTHER"`, or no stop at all): whatever its text, it cannot be judged complete.
 */
export function unfinishedAnswerError(reason: string): string {
  return (
    `The answer did not finish (${reason}), so it cannot be taken as complete. ` +
    "Answer again with the whole JSON object, from its first character to its last."
  );
}

/**
 * The errors of a rejected answer, listed exactly as `retryPrompt` lists them, for a retry whose request and
 * previous answer are already in front of the model (an agent's conversation, where the answer is a tool call).
 */
export function rejectionSection(errors: readonly string[]): string {
  return `${PROMPT_HEADINGS.errors}\n${bound(errors.map((e) => `- ${e}`).join("\n"), MAX_ERRORS_SECTION_CHARS)}`;
}
