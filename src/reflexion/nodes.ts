/**
 * The Reflexion graph's nodes and the operations they share with the
 * ReflexionAgent class: act, evaluate, reflect and refine each make one model
 * call; the memory node records steps, decides what comes next and retrieves
 * memories for each new task.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Command, InMemoryStore, Overwrite, type BaseStore, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ensureReflexionConfig, type EnsureOptions, type ReflexionConfig, type ReflexionConfigInput } from "../configuration.js";
import { ProviderError } from "../errors.js";
import { resolveModel, type ModelSource } from "../models.js";
import { extractJson } from "../shared/json.js";
import { callModel } from "../shared/model-call.js";
import { bound } from "../shared/text.js";
import { addUsage, ZERO_USAGE, type TokenUsage } from "../shared/usage.js";
import { resolveSpec } from "../specs/registry.js";
import { validateAgainstSpec } from "../validation/validate.js";
import { pickBest, taskStop } from "./loop.js";
import { admitsToLongTerm, DEFAULT_RETRIEVAL_LIMIT, getRelevantMemories, SHORT_TERM_SIZE, type StepRecord } from "./memory.js";
import { memoryNamespace, StoreMemory } from "./memory-store.js";
import { actorPrompt, EVALUATOR_PROMPT, evaluatorPrompt, REFLECTOR_PROMPT, reflectorPrompt, REFLEXION_PROMPT, refinePrompt } from "./prompts.js";
import { parseScore } from "./score.js";
import type { ModelCall, ReflexionStateType, ReflexionUpdate, TaskOutcome } from "./state.js";

export interface ReflexionNodeOptions extends EnsureOptions<ReflexionConfigInput> {
  /** The chat model for every role, or a factory asked per run and role. */
  model?: ModelSource;
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

/** The four model-calling operations of Reflexion, for one configuration. */
export function makeReflexionOperations(options: ReflexionNodeOptions) {
  const settings = (config?: RunnableConfig): ReflexionConfig => ensureReflexionConfig(config, options);
  const model = (cfg: ReflexionConfig, role: "actor" | "evaluator" | "reflector"): BaseChatModel => {
    const name = role === "actor" ? cfg.actorModel : role === "evaluator" ? cfg.evaluatorModel : cfg.reflectorModel;
    return resolveModel(options.model, { model: name, temperature: role === "evaluator" ? 0 : cfg.temperature, role });
  };
  const call = (cfg: ReflexionConfig, role: "actor" | "evaluator" | "reflector", system: string, prompt: string, node: string, config?: RunnableConfig) =>
    // An empty answer is poor output here (the evaluator scores it, an empty reflection teaches nothing), not a fault.
    callModel(model(cfg, role), [new SystemMessage(system), new HumanMessage(prompt)], { node, config, allowEmpty: true });

  return {
    settings,
    /** Validation errors of a response against the run's spec; null when the run has no spec. */
    gate(cfg: ReflexionConfig, response: string): string[] | null {
      if (cfg.spec === undefined) return null;
      const parsed = extractJson(response);
      return parsed.ok ? validateAgainstSpec(resolveSpec(cfg.spec), parsed.value).errors : [parsed.error];
    },
    act(cfg: ReflexionConfig, task: string, memories: readonly StepRecord[], config?: RunnableConfig): Promise<Answer> {
      return call(cfg, "actor", cfg.systemPrompt ?? REFLEXION_PROMPT, actorPrompt(task, memories), "actor", config);
    },
    async evaluate(cfg: ReflexionConfig, task: string, response: string, validationErrors: string[] | null, config?: RunnableConfig) {
      const answer = await call(cfg, "evaluator", EVALUATOR_PROMPT, evaluatorPrompt(task, response, validationErrors), "evaluator", config);
      return { evaluation: answer.text, score: parseScore(answer.text).score, usage: answer.usage };
    },
    reflect(cfg: ReflexionConfig, task: string, response: string, evaluation: string, validationErrors: string[] | null, config?: RunnableConfig): Promise<Answer> {
      return call(cfg, "reflector", REFLECTOR_PROMPT, reflectorPrompt(task, response, evaluation, validationErrors), "reflector", config);
    },
    refine(
      cfg: ReflexionConfig,
      task: string,
      original: string,
      evaluation: string,
      reflection: string,
      validationErrors: string[] | null,
      config?: RunnableConfig,
    ): Promise<Answer> {
      return call(cfg, "actor", cfg.systemPrompt ?? REFLEXION_PROMPT, refinePrompt(task, original, evaluation, reflection, validationErrors), "refine", config);
    },
  };
}

export type ReflexionOperations = ReturnType<typeof makeReflexionOperations>;

/** Longest text kept in a step record, so that a flood from the model cannot bloat state and memory. */
export const MAX_RECORDED_TEXT_CHARS = 50_000;

const recorded = (text: string) => bound(text, MAX_RECORDED_TEXT_CHARS);

/** Usage bookkeeping shared by every model-calling node. */
function spent(state: ReflexionStateType, usage: TokenUsage, node: ModelCall["node"]): Pick<ReflexionUpdate, "usage" | "taskUsage" | "calls"> {
  return { usage, taskUsage: addUsage(state.taskUsage, usage), calls: [{ task: state.taskIndex, iteration: state.iteration, node, usage }] };
}

/**
 * After a model node's retries: a provider failure ends the current task (not
 * the run) and goes straight to memory, which closes the task and moves on;
 * anything else fails the run.
 */
export function failTaskOnProviderError(_state: unknown, nodeError: { error: Error }) {
  if (nodeError.error instanceof ProviderError) return new Command({ update: { failure: nodeError.error.message }, goto: "memory" });
  throw nodeError.error;
}

export function makeReflexionNodes(options: ReflexionNodeOptions) {
  const ops = makeReflexionOperations(options);
  const task = (state: ReflexionStateType) => state.tasks[state.taskIndex];

  async function actor(state: ReflexionStateType, config: LangGraphRunnableConfig): Promise<ReflexionUpdate> {
    const cfg = ops.settings(config);
    const answer = await ops.act(cfg, task(state), state.memories, config);
    return { response: recorded(answer.text), ...spent(state, answer.usage, "actor") };
  }

  async function refine(state: ReflexionStateType, config: LangGraphRunnableConfig): Promise<ReflexionUpdate> {
    const cfg = ops.settings(config);
    const answer = await ops.refine(cfg, task(state), state.response, state.evaluation, state.reflection, state.validationErrors, config);
    return { response: recorded(answer.text), ...spent(state, answer.usage, "refine") };
  }

  async function evaluator(state: ReflexionStateType, config: LangGraphRunnableConfig): Promise<ReflexionUpdate> {
    const cfg = ops.settings(config);
    const validationErrors = ops.gate(cfg, state.response);
    const result = await ops.evaluate(cfg, task(state), state.response, validationErrors, config);
    return { evaluation: recorded(result.evaluation), score: result.score, validationErrors, ...spent(state, result.usage, "evaluator") };
  }

  async function reflector(state: ReflexionStateType, config: LangGraphRunnableConfig): Promise<ReflexionUpdate> {
    const cfg = ops.settings(config);
    const answer = await ops.reflect(cfg, task(state), state.response, state.evaluation, state.validationErrors, config);
    return { reflection: recorded(answer.text), pending: true, ...spent(state, answer.usage, "reflector") };
  }

  async function memory(state: ReflexionStateType, config: LangGraphRunnableConfig): Promise<ReflexionUpdate> {
    const cfg = ops.settings(config);
    const longTerm = storeMemoryFor(config, cfg);

    let update: ReflexionUpdate = {};
    let view = state;
    const apply = (u: ReflexionUpdate) => {
      update = { ...update, ...u };
      view = { ...view, ...(u as Partial<ReflexionStateType>) };
    };

    if (!state.pending && state.failure === null) {
      // Entered from START: a new run of the thread.
      apply({ results: [], steps: [], outcomes: [], conversation: [], shortTerm: [], taskIndex: -1 });
      update.usage = new Overwrite({ ...ZERO_USAGE }) as never;
      update.calls = new Overwrite([]) as never;
    } else if (state.failure !== null) {
      apply(finishTask(view, "error", state.failure, cfg.spec !== undefined));
    } else {
      const step: StepRecord = {
        task: task(state),
        response: state.response,
        evaluation: state.evaluation,
        reflection: state.reflection,
        score: state.score,
        iteration: state.iteration,
      };
      const steps = [...state.steps];
      steps[state.taskIndex] = [...(steps[state.taskIndex] ?? []), step];
      const passed = [...state.passed, state.validationErrors === null || state.validationErrors.length === 0];
      apply({ steps, passed, pending: false, shortTerm: [...state.shortTerm, step].slice(-SHORT_TERM_SIZE) });
      const isLast = state.iteration + 1 >= cfg.maxLoops;
      if (admitsToLongTerm(step, isLast)) await longTerm.add(step);

      const stop = taskStop(step.score, passed[passed.length - 1], state.iteration, cfg.maxLoops);
      if (stop === null) {
        apply({ iteration: state.iteration + 1, next: "refine" });
        return update;
      }
      apply(finishTask(view, stop, null, cfg.spec !== undefined));
    }

    // Move on to the next task, with the memories relevant to it.
    const nextIndex = view.taskIndex + 1;
    if (nextIndex >= view.tasks.length) {
      apply({ taskIndex: nextIndex, next: "__end__" });
      return update;
    }
    const nextTask = view.tasks[nextIndex];
    const memories = cfg.useMemory ? getRelevantMemories(nextTask, view.shortTerm, await longTerm.index(), DEFAULT_RETRIEVAL_LIMIT) : [];
    apply({
      taskIndex: nextIndex,
      iteration: 0,
      memories,
      passed: [],
      response: "",
      evaluation: "",
      reflection: "",
      score: 0,
      validationErrors: null,
      failure: null,
      pending: false,
      taskUsage: { ...ZERO_USAGE },
      next: "actor",
    });
    return update;
  }

  function routeAfterMemory(state: ReflexionStateType): "actor" | "refine" | "__end__" {
    return state.next;
  }

  return { actor, evaluator, reflector, refine, memory, routeAfterMemory, operations: ops };
}

/** Close the current task: its best response, outcome and conversation turns. */
function finishTask(state: ReflexionStateType, stopReason: TaskOutcome["stopReason"], error: string | null, gated: boolean): ReflexionUpdate {
  const steps = state.steps[state.taskIndex] ?? [];
  const best = pickBest(steps.map((s) => s.score), state.passed);
  const task = state.tasks[state.taskIndex];
  const response = best >= 0 ? steps[best].response : null;
  const results = [...state.results];
  results[state.taskIndex] = response;
  const outcome: TaskOutcome = {
    task,
    stopReason,
    iterations: steps.length,
    bestIteration: best >= 0 ? steps[best].iteration : null,
    bestScore: best >= 0 ? steps[best].score : null,
    valid: gated && best >= 0 ? state.passed[best] : null,
    usage: state.taskUsage,
    error,
  };
  const stepsList = [...state.steps];
  stepsList[state.taskIndex] = steps;
  return {
    results,
    steps: stepsList,
    outcomes: [...state.outcomes, outcome],
    conversation: [...state.conversation, { role: "user", content: task }, { role: "assistant", content: response ?? "" }],
    failure: null,
    pending: false,
  };
}
