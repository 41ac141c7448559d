/**
 * The Reflexion operations and the graph's nodes, at module level. The
 * operations (act, evaluate, reflect, refineResponse, gate, remember, recall)
 * are what both the graph's nodes and the ReflexionAgent class call; each
 * node is one operation on the state. Each takes first what it needs from its
 * builder (see ReflexionNodeContext); graph.ts binds it.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { END, InMemoryStore, type BaseStore, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ReflexionConfig } from "./configuration.js";
import { ProviderError } from "../errors.js";
import { resolveModel } from "../models.js";
import { callModel, PROVIDER_RETRY_POLICY } from "../providers/model-call.js";
import { bound } from "../shared/text.js";
import type { TokenUsage } from "../shared/usage.js";
import { resolveSpec } from "../specs/registry.js";
import { checkText } from "../specs/check.js";
import { taskStop } from "./loop.js";
import { admitsToLongTerm, DEFAULT_RETRIEVAL_LIMIT, getRelevantMemories, type StepRecord } from "./memory.js";
import { memoryNamespace, StoreMemory } from "./memory-store.js";
import type { ReflexionNodeContext } from "./node-context.js";
import { actorPrompt, EVALUATOR_PROMPT, evaluatorPrompt, REFLECTOR_PROMPT, reflectorPrompt, REFLEXION_PROMPT, refinePrompt } from "./prompts.js";
import { parseScore } from "./score.js";
import type { ModelCall, TaskStateType, TaskUpdate } from "./state.js";

/** Used when the graph runs without a store (plain invoke): memory then lives in this process only. */
const processStore = new InMemoryStore();

/**
 * Whose memories a run reads and writes: the authenticated user on the
 * LangGraph server (which a request cannot override), else the caller's
 * `configurable.memoryOwner`, else "anonymous".
 */
export function memoryOwner(config: RunnableConfig | undefined): string {
  const configurable = config?.configurable as { langgraph_auth_user?: { identity?: unknown }; memoryOwner?: unknown } | undefined;
  const identity = configurable?.langgraph_auth_user?.identity;
  if (typeof identity === "string" && identity.length > 0) return identity;
  const owner = configurable?.memoryOwner;
  return typeof owner === "string" && owner.length > 0 ? owner : "anonymous";
}

export function storeMemoryFor(config: LangGraphRunnableConfig | undefined, cfg: ReflexionConfig, store?: BaseStore): StoreMemory {
  return new StoreMemory(store ?? config?.store ?? processStore, memoryNamespace(memoryOwner(config), cfg.agentName), cfg.memoryCapacity);
}

export interface Answer {
  text: string;
  usage: TokenUsage;
}

/** Longest text kept in a step record, so that a flood from the model cannot bloat state and memory. */
export const MAX_RECORDED_TEXT_CHARS = 50_000;

const recorded = (text: string) => bound(text, MAX_RECORDED_TEXT_CHARS);

type Role = "actor" | "evaluator" | "reflector";

/** The model a role uses in this run. */
function modelFor(ctx: ReflexionNodeContext, cfg: ReflexionConfig, role: Role): Promise<BaseChatModel> {
  const name = role === "actor" ? cfg.actorModel : role === "evaluator" ? cfg.evaluatorModel : cfg.reflectorModel;
  return resolveModel(ctx.model, { model: name, temperature: role === "evaluator" ? 0 : cfg.temperature, role });
}

/** One model call of a role, whole: an answer the provider did not finish is a provider fault. */
async function call(
  ctx: ReflexionNodeContext,
  cfg: ReflexionConfig,
  role: Role,
  system: string,
  prompt: string,
  node: string,
  config?: RunnableConfig,
): Promise<Answer> {
  // An empty answer is poor output here (the evaluator scores it, an empty reflection teaches nothing), not a fault.
  const answer = await callModel(await modelFor(ctx, cfg, role), [new SystemMessage(system), new HumanMessage(prompt)], { node, config, allowEmpty: true });
  // An answer the provider did not finish (cut, withheld or ended without its stop) is no step to score or learn
  // from: a provider fault, tried again by the node's retry policy, and the task's error when it persists.
  const unfinished = answer.truncated ?? answer.unfinished;
  if (unfinished !== undefined) {
    throw new ProviderError(`Model provider did not finish the answer in node "${node}" (${unfinished})`, { node, transient: true });
  }
  return { text: answer.text, usage: answer.usage };
}

const kept = (answer: Answer): Answer => ({ text: recorded(answer.text), usage: answer.usage });

/** The check step's errors for a response against the run's spec (empty only when valid); null when the run has no spec. */
export async function gate(ctx: ReflexionNodeContext, cfg: ReflexionConfig, response: string): Promise<string[] | null> {
  if (cfg.spec === undefined) return null;
  const verdict = await checkText(resolveSpec(cfg.spec, { specLimits: ctx.specLimits }), response, "model");
  return verdict.valid ? [] : verdict.errors;
}

/** The actor's response to a task, with the lessons of the memories given. */
export async function act(
  ctx: ReflexionNodeContext,
  cfg: ReflexionConfig,
  task: string,
  memories: readonly StepRecord[],
  config?: RunnableConfig,
): Promise<Answer> {
  return kept(await call(ctx, cfg, "actor", cfg.systemPrompt ?? REFLEXION_PROMPT, actorPrompt(task, memories), "actor", config));
}

/** The evaluator's verdict on a response, and its score. */
export async function evaluate(
  ctx: ReflexionNodeContext,
  cfg: ReflexionConfig,
  task: string,
  response: string,
  validationErrors: string[] | null,
  config?: RunnableConfig,
): Promise<{ evaluation: string; score: number; usage: TokenUsage }> {
  const answer = await call(ctx, cfg, "evaluator", EVALUATOR_PROMPT, evaluatorPrompt(task, response, validationErrors), "evaluator", config);
  // The score is read from the whole evaluation, which is then kept bounded.
  return { evaluation: recorded(answer.text), score: parseScore(answer.text).score, usage: answer.usage };
}

/** A self-reflection on a response and its evaluation. */
export async function reflect(
  ctx: ReflexionNodeContext,
  cfg: ReflexionConfig,
  task: string,
  response: string,
  evaluation: string,
  validationErrors: string[] | null,
  config?: RunnableConfig,
): Promise<Answer> {
  return kept(await call(ctx, cfg, "reflector", REFLECTOR_PROMPT, reflectorPrompt(task, response, evaluation, validationErrors), "reflector", config));
}

/** The next response, from the previous one, its evaluation and the reflection. */
export async function refineResponse(
  ctx: ReflexionNodeContext,
  cfg: ReflexionConfig,
  task: string,
  original: string,
  evaluation: string,
  reflection: string,
  validationErrors: string[] | null,
  config?: RunnableConfig,
): Promise<Answer> {
  const prompt = refinePrompt(task, original, evaluation, reflection, validationErrors);
  return kept(await call(ctx, cfg, "actor", cfg.systemPrompt ?? REFLEXION_PROMPT, prompt, "refine", config));
}

/** Store a step in long-term memory when the reference admits it (score > 0.8, or `iteration == maxLoops - 1`). */
export async function remember(cfg: ReflexionConfig, memory: StoreMemory, step: StepRecord): Promise<boolean> {
  return admitsToLongTerm(step, cfg.maxLoops) ? (await memory.add(step)).added : false;
}

/** The memories relevant to a task: short-term (given) and long-term (from the store). */
export async function recall(memory: StoreMemory, task: string, shortTerm: readonly StepRecord[], limit = DEFAULT_RETRIEVAL_LIMIT): Promise<StepRecord[]> {
  return getRelevantMemories(task, shortTerm, await memory.current(), limit);
}

/**
 * A provider failure on the node's last attempt ends the task (not the run):
 * transient faults are rethrown while LangGraph's retry policy has attempts
 * left; anything that is not a ProviderError fails the run.
 */
async function orFailure(config: LangGraphRunnableConfig, work: () => Promise<TaskUpdate>): Promise<TaskUpdate> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    const attempt = config.executionInfo?.nodeAttempt ?? PROVIDER_RETRY_POLICY.maxAttempts;
    if (error.transient && attempt < PROVIDER_RETRY_POLICY.maxAttempts) throw error;
    return { failure: error.message };
  }
}

/** Usage bookkeeping of a model-calling node. */
function spent(state: TaskStateType, usage: TokenUsage, node: ModelCall["node"]): Pick<TaskUpdate, "usage" | "calls"> {
  return { usage, calls: [{ task: state.taskIndex, iteration: state.iteration, node, usage }] };
}

/** The first response, with the lessons of the memories retrieved for the task. */
export function actor(ctx: ReflexionNodeContext, state: TaskStateType, config: LangGraphRunnableConfig): Promise<TaskUpdate> {
  return orFailure(config, async () => {
    const answer = await act(ctx, ctx.settings(config), state.task, state.memories, config);
    return { response: answer.text, ...spent(state, answer.usage, "actor") };
  });
}

/** The gate (with a spec) and the evaluator's verdict and score. */
export function evaluator(ctx: ReflexionNodeContext, state: TaskStateType, config: LangGraphRunnableConfig): Promise<TaskUpdate> {
  return orFailure(config, async () => {
    const cfg = ctx.settings(config);
    const validationErrors = await gate(ctx, cfg, state.response);
    const result = await evaluate(ctx, cfg, state.task, state.response, validationErrors, config);
    return { evaluation: result.evaluation, score: result.score, validationErrors, ...spent(state, result.usage, "evaluator") };
  });
}

/** A self-reflection on the response and its evaluation. */
export function reflector(ctx: ReflexionNodeContext, state: TaskStateType, config: LangGraphRunnableConfig): Promise<TaskUpdate> {
  return orFailure(config, async () => {
    const answer = await reflect(ctx, ctx.settings(config), state.task, state.response, state.evaluation, state.validationErrors, config);
    return { reflection: answer.text, ...spent(state, answer.usage, "reflector") };
  });
}

/** Records the finished iteration: in the task's steps, and in long-term memory when admitted. */
export async function memory(ctx: ReflexionNodeContext, state: TaskStateType, config: LangGraphRunnableConfig): Promise<TaskUpdate> {
  const cfg = ctx.settings(config);
  const step: StepRecord = {
    task: state.task,
    response: state.response,
    evaluation: state.evaluation,
    reflection: state.reflection,
    score: state.score,
    iteration: state.iteration,
  };
  await remember(cfg, storeMemoryFor(config, cfg, ctx.store), step);
  return { steps: [step], passed: [state.validationErrors === null || state.validationErrors.length === 0] };
}

/** The next iteration's response, from the previous one, its evaluation and its reflection. */
export function refine(ctx: ReflexionNodeContext, state: TaskStateType, config: LangGraphRunnableConfig): Promise<TaskUpdate> {
  return orFailure(config, async () => {
    const iteration = state.iteration + 1;
    const cfg = ctx.settings(config);
    const answer = await refineResponse(ctx, cfg, state.task, state.response, state.evaluation, state.reflection, state.validationErrors, config);
    return { iteration, response: answer.text, ...spent({ ...state, iteration }, answer.usage, "refine") };
  });
}

/** After an iteration is recorded: another (refine), or the task's end (a score above 0.9 and valid, or maxLoops reached). */
export function afterMemory(ctx: ReflexionNodeContext, state: TaskStateType, config: LangGraphRunnableConfig): "refine" | typeof END {
  const last = state.steps.length - 1;
  const stop = taskStop(state.steps[last].score, state.passed[last], state.steps[last].iteration, ctx.settings(config).maxLoops);
  return stop === null ? "refine" : END;
}
