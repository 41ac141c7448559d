/**
 * generateValidated, streamed: the same run of the validation graph, yielding
 * each attempt's value as it arrives (typed as a deep partial of the spec's
 * type, with the fields that are complete and the errors already certain),
 * the end of each attempt (and whether its request was stopped early), then
 * the outcome. The partials inform; the outcome's verdict is the check step's.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { ModelSource } from "../models.js";
import type { SpecRef } from "../specs/registry.js";
import type { AttemptEndEvent, PartialEvent } from "../streaming/attempt.js";
import { outcomeOf, type GenerateValidatedOptions, type ValidationOutcome, type ValidationSettings } from "./generate.js";
import { buildValidationGraph } from "./graph.js";
import type { ValidationStateType } from "./state.js";

export type { AttemptEndEvent, DeepPartial, PartialEvent, StoppedAnswer } from "../streaming/attempt.js";
export type { StopPolicy } from "../streaming/partial-check.js";

/** The outcome, once the run ends: the same as generateValidated's. */
export interface OutcomeEvent<T = unknown> {
  kind: "outcome";
  outcome: ValidationOutcome<T>;
}

/** What streamValidated yields: partials and the end of each attempt while the model answers, then the outcome. */
export type ValidationStreamEvent<T = unknown> = PartialEvent<T> | AttemptEndEvent<T> | OutcomeEvent<T>;

export type StreamValidatedOptions<T, C = Record<string, unknown>> = GenerateValidatedOptions<T, C>;

/** Asks chat models to stream their tokens (as LangGraph's messages mode does), without delivering them anywhere. */
class StreamTokens extends BaseCallbackHandler {
  name = "stream-tokens";
  lc_prefer_streaming = true;
}

type CompiledValidationGraph = ReturnType<typeof buildValidationGraph>;
const compiled = new WeakMap<object, WeakMap<object, CompiledValidationGraph>>();
const NO_MODEL = {};
const NO_CHECKPOINTER = {};

/** One compiled graph per model source and checkpointer (the spec and settings travel in each run's context). */
function graphFor(model: ModelSource | undefined, checkpointer: BaseCheckpointSaver | undefined): CompiledValidationGraph {
  const byModel = compiled.get(model ?? NO_MODEL) ?? new WeakMap<object, CompiledValidationGraph>();
  compiled.set(model ?? NO_MODEL, byModel);
  let graph = byModel.get(checkpointer ?? NO_CHECKPOINTER);
  if (graph === undefined) {
    graph = buildValidationGraph({ model, checkpointer });
    byModel.set(checkpointer ?? NO_CHECKPOINTER, graph);
  }
  return graph;
}

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
export async function* streamValidated<T = unknown, C = Record<string, unknown>>(options: StreamValidatedOptions<T, C>): AsyncGenerator<ValidationStreamEvent<T>, ValidationOutcome<T>> {
  const { model, modelName, spec, request, checkpointer, threadId, signal, ruleContext, durability, ...rest } = options;
  const settings: ValidationSettings = {
    ...rest,
    ...(modelName === undefined ? {} : { model: modelName }),
    ...(ruleContext === undefined ? {} : { ruleContext: ruleContext as Record<string, unknown> }),
  };
  const stream = await graphFor(model, checkpointer).stream(
    { request },
    {
      context: { ...settings, spec: spec as SpecRef },
      signal,
      streamMode: ["custom", "values"],
      callbacks: [new StreamTokens()],
      ...(checkpointer ? { configurable: { thread_id: threadId ?? crypto.randomUUID() }, durability: durability ?? "sync" } : {}),
    },
  );
  let last: ValidationStateType | undefined;
  for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
    if (mode === "values") last = chunk as ValidationStateType;
    else if (isAttemptEvent(chunk)) yield chunk as PartialEvent<T> | AttemptEndEvent<T>;
  }
  if (last === undefined) throw new Error("the validation run ended without a state");
  const outcome = outcomeOf<T>(last);
  yield { kind: "outcome", outcome };
  return outcome;
}

function isAttemptEvent(chunk: unknown): boolean {
  const kind = (chunk as { kind?: unknown } | null)?.kind;
  return kind === "partial" || kind === "final";
}
