/**
 * generateValidated, streamed: the same run of the validation graph, yielding
 * each attempt's value as it arrives (typed as a deep partial of the spec's
 * type, with the fields that are complete and the errors already certain),
 * the end of each attempt (and whether its request was stopped early), then
 * the outcome. The partials inform; the outcome's verdict is the check step's.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { TrustworthyOutputError } from "../errors.js";
import { STREAM_TOKENS_KEY } from "../providers/model-call.js";
import { fanOut } from "./fan-out.js";
import type { AttemptEndEvent, DeepPartial, PartialEvent } from "../streaming/attempt.js";
import { holdThread, outcomeOf, prepareRun, type GenerateValidatedOptions, type ValidationOutcome } from "./generate.js";
import { checkedLease, type ThreadLease } from "../persistence/threads.js";
import type { ValidationStateType } from "./state.js";

export type { AttemptEndEvent, DeepPartial, PartialEvent, StoppedAnswer } from "../streaming/attempt.js";

/** The outcome, once the run ends: the same as generateValidated's. */
export interface OutcomeEvent<T = unknown> {
  kind: "outcome";
  outcome: ValidationOutcome<T>;
}

/** What streamValidated yields: partials and the end of each attempt while the model answers, then the outcome. */
export type ValidationStreamEvent<T = unknown> = PartialEvent<T> | AttemptEndEvent<T> | OutcomeEvent<T>;

/**
 * What streamValidated returns: the events, as an async generator (its return
 * value is the outcome), and the shape of the AI SDK's `streamObject` beside
 * them — the value as it arrives and a promise of the outcome. Read whichever
 * you need; they share one run.
 */
export interface ValidationStream<T = unknown> extends AsyncGenerator<ValidationStreamEvent<T>, ValidationOutcome<T>, undefined> {
  /**
   * The value as it arrives (a deep partial of the spec's type), from the
   * moment you start reading: each partial value, then each attempt's value
   * as it ended. A retry starts again from its first field. Partials inform;
   * the verdict is the outcome's.
   */
  readonly partialObjectStream: AsyncGenerator<DeepPartial<T>, void, undefined>;
  /**
   * The outcome, the same as generateValidated's (success or not: a failed
   * run resolves, with `success: false`). Reading it keeps the run going to
   * its end even when nothing else reads the stream. It rejects when the run
   * fails (e.g. bad settings) or is stopped before it ends (every reader left).
   */
  readonly outcome: Promise<ValidationOutcome<T>>;
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
 *   else if (event.kind === "outcome") console.log(event.outcome.success ? event.outcome.value : event.outcome.errors);
 * }
 *
 * // Or as the AI SDK's streamObject reads:
 * const stream = streamValidated({ spec: "deployment-config", request: "payments-api with 8 replicas" });
 * for await (const partial of stream.partialObjectStream) console.log(partial);
 * const outcome = await stream.outcome;
 * ```
 */
export function streamValidated<T = unknown, C = Record<string, unknown>>(options: GenerateValidatedOptions<T, C>): ValidationStream<T> {
  let finished: ValidationOutcome<T> | undefined;
  const events = fanOut(runEvents<T, C>(options, (outcome) => (finished = outcome)));
  const finalOutcome = (): ValidationOutcome<T> => {
    if (finished === undefined) throw new TrustworthyOutputError("the validation stream was closed before the run ended, so it has no outcome");
    return finished;
  };
  let outcome: Promise<ValidationOutcome<T>> | undefined;
  const all = (async function* () {
    yield* events.subscribe();
    return finalOutcome();
  })();
  return Object.defineProperties(all, {
    partialObjectStream: {
      get: () =>
        (async function* () {
          let whole: number | undefined; // the attempt whose whole value was last given
          for await (const event of events.subscribe()) {
            if (event.kind === "outcome" || event.value === undefined) continue;
            // An attempt's end repeats its last partial when that one was already the whole value.
            if (event.kind === "final" && whole === event.attempt) continue;
            whole = event.complete.includes("") ? event.attempt : undefined;
            yield event.value;
          }
        })(),
    },
    outcome: {
      get: () => {
        if (outcome === undefined) {
          outcome = (async () => {
            for await (const _ of events.subscribe({ keep: false })) void _;
            return finalOutcome();
          })();
          // Rejections reach whoever awaits it; one left unread must not crash the process.
          outcome.catch(() => undefined);
        }
        return outcome;
      },
    },
  }) as ValidationStream<T>;
}

/**
 * The run's events: partials and the end of each attempt, then the outcome.
 * The generate node's events come straight from the run's own `writer` (a
 * field of LangGraph's run configuration), not through the graph's "custom"
 * stream, which hands each one through several web streams; only the states
 * ("values") go through the graph's stream. Same events, same order.
 */
async function* runEvents<T, C>(
  options: GenerateValidatedOptions<T, C>,
  onOutcome: (outcome: ValidationOutcome<T>) => void,
): AsyncGenerator<ValidationStreamEvent<T>, void, undefined> {
  const { graph, input, config } = prepareRun(options);
  // A named thread is held until the stream ends, however it ends (read to the end, left early, or failed).
  const lease = await holdThread(options);
  try {
    yield* threadEvents(graph, input, lease ? { ...config, signal: lease.signal } : config, lease, onOutcome);
  } finally {
    await lease?.release();
  }
}

type RunParts = ReturnType<typeof prepareRun>;

/** The events of a run whose thread, if named, is held (the lease's signal is already in `config`). */
async function* threadEvents<T>(
  graph: RunParts["graph"],
  input: RunParts["input"],
  config: RunParts["config"],
  lease: ThreadLease | undefined,
  onOutcome: (outcome: ValidationOutcome<T>) => void,
): AsyncGenerator<ValidationStreamEvent<T>, void, undefined> {
  const events: Array<PartialEvent<T> | AttemptEndEvent<T>> = [];
  let wake: (() => void) | undefined;
  // Tokens are asked for through the run's configuration, so the generate node reads the answer as it
  // arrives; no callback handler is attached, so LangChain dispatches no token to one.
  // The writer is the run configuration's own field (LangGraph keeps a writer it is given, as it does for a subgraph's run).
  const writer: Pick<LangGraphRunnableConfig, "writer"> = {
    writer: (chunk: unknown) => {
      if (!isAttemptEvent(chunk)) return;
      events.push(chunk as PartialEvent<T> | AttemptEndEvent<T>);
      wake?.();
    },
  };
  const stream = await graph.stream(input, {
    ...config,
    ...writer,
    configurable: { ...config.configurable, [STREAM_TOKENS_KEY]: true },
    streamMode: "values",
  });
  let last: ValidationStateType | undefined;
  let ended = false;
  let failure: { error: unknown } | undefined;
  const states = (async () => {
    try {
      for await (const state of stream as AsyncIterable<ValidationStateType>) last = state;
    } catch (error) {
      failure = { error };
    } finally {
      ended = true;
      wake?.();
    }
  })();
  try {
    for (let next = 0; ;) {
      if (next < events.length) {
        const event = events[next];
        events[next++] = undefined as never; // released as soon as it is given
        if (next === events.length) ((events.length = 0), (next = 0));
        yield event;
        continue;
      }
      if (ended) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    // A reader that leaves before the run ends stops it, as leaving the graph's stream does.
    if (!ended) await stream.return?.();
    await states;
  }
  if (failure) throw checkedLease(lease, failure.error);
  checkedLease(lease, last);
  if (last === undefined) throw new TrustworthyOutputError("the validation run ended without a state");
  const outcome = outcomeOf<T>(last);
  onOutcome(outcome);
  yield { kind: "outcome", outcome };
}

function isAttemptEvent(chunk: unknown): boolean {
  const kind = (chunk as { kind?: unknown } | null)?.kind;
  return kind === "partial" || kind === "final";
}
