/**
 * The Reflexion operations and the graph's nodes. The operations (act,
 * evaluate, reflect, refine, remember, recall) are what both the graph's nodes
 * and the ReflexionAgent class call; each node is one operation on the state.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { InMemoryStore, type BaseStore, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ensureReflexionConfig, type ReflexionConfig, type ReflexionConfigInput } from "./configuration.js";
import { withSpecLimitsInEffect, type EnsureOptions } from "../settings.js";
import { ProviderError } from "../errors.js";
import { loadChatModel, resolveModel, type ModelRequest, type ModelSource } from "../models.js";
import { withModelOption } from "../model-option.js";
import { callModel, PROVIDER_RETRY_POLICY } from "../shared/model-call.js";
import { bound } from "../shared/text.js";
import type { TokenUsage } from "../shared/usage.js";
import { resolveSpec } from "../specs/registry.js";
import type { RuntimeSpecLimits } from "../specs/limits.js";
import { checkText } from "../specs/check.js";
import { admitsToLongTerm, DEFAULT_RETRIEVAL_LIMIT, getRelevantMemories, type StepRecord } from "./memory.js";
import { memoryNamespace, StoreMemory } from "./memory-store.js";
import { actorPrompt, EVALUATOR_PROMPT, evaluatorPrompt, REFLECTOR_PROMPT, reflectorPrompt, REFLEXION_PROMPT, refinePrompt } from "./prompts.js";
import { parseScore } from "./score.js";
import type { ModelCall, TaskStateType, TaskUpdate } from "./state.js";

/** What the Reflexion graph's nodes are built with: the model (or a factory per role) and default settings. */
export interface ReflexionNodeOptions extends EnsureOptions<ReflexionConfigInput> {
  /** The chat model for every role, or a factory asked per run and role. A model's name here is taken as the default `model` setting. */
  model?: ModelSource | string;
  /** Limits on the specs runs supply (inline JSON) other than the defaults and the operator's RUNTIME_SPEC_LIMITS; a run cannot change them. */
  specLimits?: Partial<RuntimeSpecLimits>;
}

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

/** The Reflexion operations, for one set of graph options. */
export function makeReflexionOperations(given: ReflexionNodeOptions) {
  const options = withSpecLimitsInEffect(withModelOption(given));
  // Without a model of its own, a builder given an environment builds the models its runs name with it.
  const { env } = options;
  const source = options.model ?? (env === undefined ? undefined : (request: ModelRequest) => loadChatModel(request, env));
  const settings = (config?: RunnableConfig): ReflexionConfig => ensureReflexionConfig(config, options);
  const model = (cfg: ReflexionConfig, role: "actor" | "evaluator" | "reflector"): Promise<BaseChatModel> => {
    const name = role === "actor" ? cfg.actorModel : role === "evaluator" ? cfg.evaluatorModel : cfg.reflectorModel;
    return resolveModel(source, { model: name, temperature: role === "evaluator" ? 0 : cfg.temperature, role });
  };
  const call = async (
    cfg: ReflexionConfig,
    role: "actor" | "evaluator" | "reflector",
    system: string,
    prompt: string,
    node: string,
    config?: RunnableConfig,
  ) => {
    // An empty answer is poor output here (the evaluator scores it, an empty reflection teaches nothing), not a fault.
    const answer = await callModel(await model(cfg, role), [new SystemMessage(system), new HumanMessage(prompt)], { node, config, allowEmpty: true });
    // An answer the provider did not finish (cut, withheld or ended without its stop) is no step to score or learn
    // from: a provider fault, tried again by the node's retry policy, and the task's error when it persists.
    const unfinished = answer.truncated ?? answer.unfinished;
    if (unfinished !== undefined) {
      throw new ProviderError(`Model provider did not finish the answer in node "${node}" (${unfinished})`, { node, transient: true });
    }
    return { text: answer.text, usage: answer.usage };
  };
  const kept = (answer: Answer): Answer => ({ text: recorded(answer.text), usage: answer.usage });

  return {
    settings,
    /** The check step's errors for a response against the run's spec (empty only when valid); null when the run has no spec. */
    async gate(cfg: ReflexionConfig, response: string): Promise<string[] | null> {
      if (cfg.spec === undefined) return null;
      const verdict = await checkText(resolveSpec(cfg.spec, { specLimits: options.specLimits }), response, "model");
      return verdict.valid ? [] : verdict.errors;
    },
    async act(cfg: ReflexionConfig, task: string, memories: readonly StepRecord[], config?: RunnableConfig): Promise<Answer> {
      return kept(await call(cfg, "actor", cfg.systemPrompt ?? REFLEXION_PROMPT, actorPrompt(task, memories), "actor", config));
    },
    async evaluate(cfg: ReflexionConfig, task: string, response: string, validationErrors: string[] | null, config?: RunnableConfig) {
      const answer = await call(cfg, "evaluator", EVALUATOR_PROMPT, evaluatorPrompt(task, response, validationErrors), "evaluator", config);
      // The score is read from the whole evaluation, which is then kept bounded.
      return { evaluation: recorded(answer.text), score: parseScore(answer.text).score, usage: answer.usage };
    },
    async reflect(
      cfg: ReflexionConfig,
      task: string,
      response: string,
      evaluation: string,
      validationErrors: string[] | null,
      config?: RunnableConfig,
    ): Promise<Answer> {
      return kept(await call(cfg, "reflector", REFLECTOR_PROMPT, reflectorPrompt(task, response, evaluation, validationErrors), "reflector", config));
    },
    async refine(
      cfg: ReflexionConfig,
      task: string,
      original: string,
      evaluation: string,
      reflection: string,
      validationErrors: string[] | null,
      config?: RunnableConfig,
    ): Promise<Answer> {
      return kept(
        await call(
          cfg,
          "actor",
          cfg.systemPrompt ?? REFLEXION_PROMPT,
          refinePrompt(task, original, evaluation, reflection, validationErrors),
          "refine",
          config,
        ),
      );
    },
    /** Store a step in long-term memory when the reference admits it (score > 0.8, or `iteration == maxLoops - 1`). */
    async remember(cfg: ReflexionConfig, memory: StoreMemory, step: StepRecord): Promise<boolean> {
      return admitsToLongTerm(step, cfg.maxLoops) ? (await memory.add(step)).added : false;
    },
    /** The memories relevant to a task: short-term (given) and long-term (from the store). */
    async recall(memory: StoreMemory, task: string, shortTerm: readonly StepRecord[], limit = DEFAULT_RETRIEVAL_LIMIT): Promise<StepRecord[]> {
      return getRelevantMemories(task, shortTerm, await memory.current(), limit);
    },
  };
}

type ReflexionOperations = ReturnType<typeof makeReflexionOperations>;

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

/** The nodes of one task's loop. */
export function makeTaskNodes(ops: ReflexionOperations, store?: BaseStore) {
  return {
    /** The first response, with the lessons of the memories retrieved for the task. */
    actor: (state: TaskStateType, config: LangGraphRunnableConfig) =>
      orFailure(config, async () => {
        const answer = await ops.act(ops.settings(config), state.task, state.memories, config);
        return { response: answer.text, ...spent(state, answer.usage, "actor") };
      }),

    /** The gate (with a spec) and the evaluator's verdict and score. */
    evaluator: (state: TaskStateType, config: LangGraphRunnableConfig) =>
      orFailure(config, async () => {
        const cfg = ops.settings(config);
        const validationErrors = await ops.gate(cfg, state.response);
        const result = await ops.evaluate(cfg, state.task, state.response, validationErrors, config);
        return { evaluation: result.evaluation, score: result.score, validationErrors, ...spent(state, result.usage, "evaluator") };
      }),

    /** A self-reflection on the response and its evaluation. */
    reflector: (state: TaskStateType, config: LangGraphRunnableConfig) =>
      orFailure(config, async () => {
        const answer = await ops.reflect(ops.settings(config), state.task, state.response, state.evaluation, state.validationErrors, config);
        return { reflection: answer.text, ...spent(state, answer.usage, "reflector") };
      }),

    /** Records the finished iteration: in the task's steps, and in long-term memory when admitted. */
    memory: async (state: TaskStateType, config: LangGraphRunnableConfig): Promise<TaskUpdate> => {
      const cfg = ops.settings(config);
      const step: StepRecord = {
        task: state.task,
        response: state.response,
        evaluation: state.evaluation,
        reflection: state.reflection,
        score: state.score,
        iteration: state.iteration,
      };
      await ops.remember(cfg, storeMemoryFor(config, cfg, store), step);
      return { steps: [step], passed: [state.validationErrors === null || state.validationErrors.length === 0] };
    },

    /** The next iteration's response, from the previous one, its evaluation and its reflection. */
    refine: (state: TaskStateType, config: LangGraphRunnableConfig) =>
      orFailure(config, async () => {
        const iteration = state.iteration + 1;
        const answer = await ops.refine(ops.settings(config), state.task, state.response, state.evaluation, state.reflection, state.validationErrors, config);
        return { iteration, response: answer.text, ...spent({ ...state, iteration }, answer.usage, "refine") };
      }),
  };
}
