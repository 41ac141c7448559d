/**
 * generateValidated, streamed: the same run of the validation graph, yielding
 * each attempt's value as it arrives (typed as a deep partial of the spec's
 * type, with the fields that are complete and the errors already certain),
 * the end of each attempt (and whether its request was stopped early), then
 * the outcome. The partials inform; the outcome's verdict is the check step's.
 */
import { TrustworthyOutputError } from "../errors.js";
import { STREAM_TOKENS_KEY } from "../shared/model-call.js";
import type { AttemptEndEvent, PartialEvent } from "../streaming/attempt.js";
import { outcomeOf, prepareRun, type GenerateValidatedOptions, type ValidationOutcome } from "./generate.js";
import type { ValidationStateType } from "./state.js";

export type { AttemptEndEvent, DeepPartial, PartialEvent, StoppedAnswer } from "../streaming/attempt.js";
export type { EarlyStopReason, StopPolicy } from "../streaming/partial-check.js";

/** The outcome, once the run ends: the same as generateValidated's. */
export interface OutcomeEvent<T = unknown> {
  kind: "outcome";
  outcome: ValidationOutcome<T>;
}

/** What streamValidated yields: partials and the end of each attempt while the model answers, then the outcome. */
export type ValidationStreamEvent<T = unknown> = PartialEvent<T> | AttemptEndEvent<T> | OutcomeEvent<T>;

export type StreamValidatedOptions<T, C = Record<string, unknown>> = GenerateValidatedOptions<T, C>;

/**
 * Generate, validate and retry as generateValidated does, yielding the answer
 * as it streams. The stop policy (`stopEarly`, default "useless") may end a
 * request whose rest cannot help; that attempt counts as invalid and its
 * retry carries the errors found.
 *
 * @example
 * ```ts
 * import { streamValidated } from "langgraph-trustworthy-output";
 *
 * for await (const event of streamValidated({ spec: "deployment-config", request: "payments-api with 8 replicas" })) {
 *   if (event.kind === "partial") console.log(event.attempt, event.value, event.errors);
 *   else if (event.kind === "final" && event.stopped) console.log("stopped:", event.stopped.reason);
 *   else if (event.kind === "outcome") console.log(event.outcome.success ? event.outcome.result : event.outcome.errors);
 * }
 * ```
 */
export async function* streamValidated<T = unknown, C = Record<string, unknown>>(
  options: StreamValidatedOptions<T, C>,
): AsyncGenerator<ValidationStreamEvent<T>, ValidationOutcome<T>> {
  const { graph, input, config } = prepareRun(options);
  // Tokens are asked for through the run's configuration, so the generate node reads the answer as it
  // arrives; no callback handler is attached, so LangChain dispatches no token to one.
  const stream = await graph.stream(input, {
    ...config,
    configurable: { ...config.configurable, [STREAM_TOKENS_KEY]: true },
    streamMode: ["custom", "values"],
  });
  let last: ValidationStateType | undefined;
  for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
    if (mode === "values") last = chunk as ValidationStateType;
    else if (isAttemptEvent(chunk)) yield chunk as PartialEvent<T> | AttemptEndEvent<T>;
  }
  if (last === undefined) throw new TrustworthyOutputError("the validation run ended without a state");
  const outcome = outcomeOf<T>(last);
  yield { kind: "outcome", outcome };
  return outcome;
}

function isAttemptEvent(chunk: unknown): boolean {
  const kind = (chunk as { kind?: unknown } | null)?.kind;
  return kind === "partial" || kind === "final";
}
