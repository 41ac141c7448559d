/**
 * One call for embedding users: generate a value that passes a spec, with
 * exact-error retries, typed from the spec. It runs the compiled validation
 * graph (the same nodes, checks and limits), not a second loop.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { DEFAULT_MAX_ATTEMPTS, validationStepLimit, type ValidationConfigInput } from "./configuration.js";
import type { ModelSource } from "../models.js";
import { readModelOption } from "../model-option.js";
import { MAX_RUN_ATTEMPTS } from "../settings.js";
import type { TokenUsage } from "../shared/usage.js";
import { isSchemaInCode, resolveSpec, type SpecLike, type SpecRef } from "../specs/registry.js";
import { buildValidationGraph } from "./graph.js";
import { checkedLease, threadLocksFor, type MultitaskOptions } from "../persistence/threads.js";
import type { OutcomeBase, OutcomeFailure, OutcomeSuccess } from "../shared/outcome.js";
import type { AttemptRecord, StopReason, ValidationStateType } from "./state.js";

/** Run settings of the validation graph (the `context` of a run); unknown keys are compile errors and refused at run time. */
export type ValidationSettings = Partial<ValidationConfigInput>;

/** What every validation outcome carries, valid or not: the shared fields, the attempts' records and the usage. */
export interface ValidationOutcomeBase extends OutcomeBase {
  history: AttemptRecord[];
  /** Tokens and calls of the whole run. */
  usage: TokenUsage;
  /** The same, per model name (a run with `models` escalates through several). */
  usageByModel: Record<string, TokenUsage>;
}

/**
 * What a validation run ended with, in the vocabulary of every outcome here
 * (OutcomeSuccess, OutcomeFailure): on success `value` has the spec's type; on
 * failure it is the JSON value the last answer was read as (null when there was none).
 */
export type ValidationOutcome<T = unknown> =
  | (ValidationOutcomeBase & OutcomeSuccess<T>)
  | (ValidationOutcomeBase &
      OutcomeFailure<Exclude<StopReason, "valid">> & {
        value: unknown;
        /** The provider's refusal (secrets redacted), when the run ended "refused". */
        refusal?: string;
      });

/**
 * The outcome a run's final state says, in the shared vocabulary of outcomes.
 */
export function outcomeOf<T = unknown>(
  state: Pick<ValidationStateType, "success" | "stopReason" | "value" | "errors" | "attempts" | "spec" | "history" | "usage" | "usageByModel" | "refusal">,
): ValidationOutcome<T> {
  const judged = state.success
    ? { success: true, stopReason: "valid", value: state.value, by: state.history.at(-1)?.by ?? "model", errors: [] }
    : { success: false, stopReason: state.stopReason, value: state.value, errors: state.errors, lastAnswer: lastAnswerOf(state.history) };
  return {
    ...judged,
    attempts: state.attempts,
    spec: state.spec,
    history: state.history,
    usage: state.usage,
    usageByModel: state.usageByModel ?? {},
    ...(state.refusal !== null && state.refusal !== undefined ? { refusal: state.refusal } : {}),
  } as ValidationOutcome<T>;
}

/**
 * The last answer given, the model's or a person's, as its record keeps it (bounded). A refusal is not an
 * answer, nor are the review's marks of a rejection or a new request (a person's record with no errors
 * that is not valid: a person's refused answer always has errors).
 */
function lastAnswerOf(history: readonly AttemptRecord[]): string {
  const answer = history.findLast((record) => record.refusal === undefined && !(record.by === "human" && !record.valid && record.errors.length === 0));
  return answer?.output ?? "";
}

/** Options of generateValidated and streamValidated: the spec, the request, the model and the run's settings. */
export interface GenerateValidatedOptions<T, C = Record<string, unknown>> extends Omit<ValidationSettings, "spec" | "model" | "ruleContext"> {
  /** The chat model (or a factory); defaults to the environment's OpenAI-compatible model. A model's name here is taken as `modelName`. */
  model?: ModelSource | string;
  /** The model name asked of the factory (the run setting `model`); defaults to LLM_MODEL. */
  modelName?: string;
  /** The spec: a zod schema or a Spec from defineSpec (both type the result), a built-in name or an inline JSON spec. */
  spec: SpecLike<T, C>;
  /** Facts the spec's code rules read (their third argument), typed from the spec. */
  ruleContext?: C;
  /** What to generate, in plain words. */
  request: string;
  /** With a checkpointer, the run is durable and resumable on this thread. */
  checkpointer?: BaseCheckpointSaver;
  /**
   * When each step's checkpoint is written (with a checkpointer): "sync" before the next step starts (a crash
   * loses only the step in flight), "async" while the next step runs (LangGraph's default; a crash can also lose
   * the last finished step), "exit" once when the run ends (cheapest; a crash restarts the run). Default "sync".
   */
  durability?: "sync" | "async" | "exit";
  /**
   * With a checkpointer, the thread to run on (default: a new one). A named thread is held for the whole run,
   * one run at a time: across every process on the database when the checkpointer comes from openPersistence
   * on PostgreSQL, in this process otherwise.
   */
  threadId?: string;
  /** What this run does when another run holds its thread (default: enqueue, waiting up to 60 s behind at most 16). */
  multitask?: MultitaskOptions;
  signal?: AbortSignal;
}

type CompiledValidationGraph = ReturnType<typeof buildValidationGraph>;

/**
 * Compiling the graph is a fifth of a short call's cost, and nothing in it
 * depends on the call but the model and the checkpointer: the spec and the
 * settings go in the run's context. So one compiled graph serves every call
 * with the same model source and checkpointer, and is freed with them.
 */
const compiled = new WeakMap<object, WeakMap<object, CompiledValidationGraph>>();
const NO_MODEL = {};
const NO_CHECKPOINTER = {};

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
 * Generate, validate, feed the exact errors back, retry; resolves with the outcome (it throws only for bad settings or provider failures).
 *
 * @example
 * ```ts
 * import { generateValidated } from "langgraph-trustworthy-output";
 *
 * const outcome = await generateValidated({ spec: "deployment-config", request: "payments-api with 8 replicas", maxAttempts: 3 });
 * if (outcome.success) console.log(outcome.value);
 * else console.error(outcome.stopReason, outcome.errors);
 * ```
 */
export async function generateValidated<T = unknown, C = Record<string, unknown>>(options: GenerateValidatedOptions<T, C>): Promise<ValidationOutcome<T>> {
  const { graph, input, config } = prepareRun(options);
  const lease = await holdThread(options);
  try {
    const state = await graph.invoke(input, lease ? { ...config, signal: lease.signal } : config);
    return outcomeOf<T>(checkedLease(lease, state));
  } catch (error) {
    throw checkedLease(lease, error);
  } finally {
    await lease?.release();
  }
}

/**
 * The thread, held for the run when the call names one with a checkpointer (a new thread is nobody
 * else's); the lease's signal then carries the caller's. undefined when there is nothing to hold.
 */
export async function holdThread(options: Pick<GenerateValidatedOptions<unknown>, "checkpointer" | "threadId" | "multitask" | "signal">) {
  const { checkpointer, threadId, multitask, signal } = options;
  if (checkpointer === undefined || threadId === undefined) return undefined;
  return threadLocksFor(checkpointer).acquire(threadId, { ...multitask, signal });
}

/**
 * The compiled graph, the input and the run's config for one call's options
 * (generateValidated invokes them; streamValidated streams them): the spec and
 * the settings in the run's context, a thread and durability with a checkpointer.
 */
export function prepareRun<T, C>(options: GenerateValidatedOptions<T, C>) {
  const { model: given, modelName: givenName, spec, request, checkpointer, threadId, signal, ruleContext, durability, multitask, ...rest } = options;
  const { model, name: modelName } = readModelOption(given, givenName, "modelName");
  const settings: ValidationSettings = {
    ...rest,
    ...(modelName === undefined ? {} : { model: modelName }),
    ...(ruleContext === undefined ? {} : { ruleContext: ruleContext as Record<string, unknown> }),
  };
  const attempts = settings.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  return {
    graph: graphFor(model, checkpointer),
    input: { request },
    config: {
      // A schema in code goes into the run's settings as its Spec (made once per schema), as a Spec from defineSpec does;
      // a function that is none (an Effect schema not wrapped) is refused there, naming its library.
      context: { ...settings, spec: isSchemaInCode(spec) || typeof spec === "function" ? resolveSpec(spec as SpecRef) : (spec as SpecRef) },
      signal,
      // The run's own bound (the graph's default fits the largest; a maxAttempts the front door refuses keeps it).
      ...(attempts >= 1 && attempts <= MAX_RUN_ATTEMPTS ? { recursionLimit: validationStepLimit(attempts) } : {}),
      ...(checkpointer ? { configurable: { thread_id: threadId ?? crypto.randomUUID() }, durability: durability ?? ("sync" as const) } : {}),
    },
  };
}
