/**
 * ReflexionAgent: the reference's methods in TypeScript, for code. `run` is the
 * compiled Reflexion graph; `act`, `evaluate`, `reflect`, `refine` and the
 * memory calls are the same operations the graph's nodes call; `step` is the
 * reference's one iteration built from them.
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { InMemoryStore } from "@langchain/langgraph";
import { checkRequestText } from "../settings.js";
import { checkTasks, ensureReflexionConfig, type ReflexionConfig, type ReflexionConfigInput } from "./configuration.js";
import { ConfigurationError } from "../errors.js";
import type { ModelSource } from "../models.js";
import { readModelOption } from "../model-option.js";
import type { TokenUsage } from "../shared/usage.js";
import { buildReflexionGraph } from "./graph.js";
import { DEFAULT_RETRIEVAL_LIMIT, ShortTermMemory, type MemoryEntry, type StepRecord } from "./memory.js";
import { ReflexionNodeContext } from "./node-context.js";
import { act, evaluate, gate, recall, reflect, refineResponse, remember, storeMemoryFor } from "./nodes.js";
import type { ModelCall, TaskOutcome } from "./state.js";

/** Options of a ReflexionAgent: the Reflexion settings, the model and where memory lives. */
export interface ReflexionAgentOptions extends Omit<ReflexionConfigInput, "model"> {
  /** The chat model, or a factory per role; defaults to the environment's OpenAI-compatible model. A model's name here is taken as `modelName`. */
  model?: ModelSource | string;
  /** Model name for every role (the reference's `model_name`). */
  modelName?: string;
  /** Long-term memory's store; defaults to an in-memory store owned by this agent. */
  store?: BaseStore;
  checkpointer?: BaseCheckpointSaver;
  /** Whose memories this agent reads and writes (namespace), default "anonymous". */
  owner?: string;
}

/** One turn of a ReflexionAgent's conversation: who spoke, and what. */
type ConversationTurn = ReflexionAgent["conversation"][number];

interface RunOptions {
  includeIntermediates?: boolean;
}

/** What a ReflexionAgent run reports: the best response per task, each task's steps and outcome, every model call and the total usage. */
export interface RunReport {
  /** The best response per task; null when there is none to use (the task failed before any response, or a spec is set and no response passed it). */
  results: (string | null)[];
  steps: StepRecord[][];
  outcomes: TaskOutcome[];
  /** Every model call with its node, iteration and usage. */
  calls: ModelCall[];
  usage: TokenUsage;
}

/** Short-term memory of this agent and its long-term memory in the store. */
export class AgentMemory {
  readonly shortTerm = new ShortTermMemory();

  constructor(private readonly longTerm: () => ReturnType<typeof storeMemoryFor>) {}

  /** The reference's `get_relevant_memories`: short-term then long-term entries ranked by relevance to the task, top `limit`. */
  getRelevantMemories(task: string, limit = DEFAULT_RETRIEVAL_LIMIT): Promise<StepRecord[]> {
    return recall(this.longTerm(), task, this.shortTerm.entries(), limit);
  }

  /** Long-term entries, oldest first. */
  longTermEntries(): Promise<MemoryEntry[]> {
    return this.longTerm().entries();
  }
}

/**
 * The Reflexion agent with the reference's methods (act, evaluate, reflect, refine, step, run); `run` is the compiled Reflexion graph.
 *
 * @example
 * ```ts
 * import { ReflexionAgent } from "langgraph-trustworthy-output";
 *
 * const agent = new ReflexionAgent({ maxLoops: 2 });
 * const [best] = await agent.run(["Explain in two sentences why validators beat self-review for JSON."]);
 * console.log(best);
 * ```
 */
export class ReflexionAgent {
  readonly agentName: string;
  readonly graph: ReturnType<typeof buildReflexionGraph>;
  readonly memory: AgentMemory;
  readonly conversation: Array<{ role: "user" | "assistant"; content: string }> = [];
  private readonly config: ReflexionConfig;
  private readonly runConfig: { context: ReflexionConfigInput; configurable: Record<string, unknown> };
  /** What the operations take from this agent: its model and default settings (the graph's nodes take the same). */
  private readonly nodes: ReflexionNodeContext;
  private readonly store: BaseStore;

  constructor(options: ReflexionAgentOptions = {}) {
    const { model: given, modelName: givenName, store, checkpointer, owner, ...settings } = options;
    const { model, name: modelName } = readModelOption(given, givenName, "modelName");
    const context: ReflexionConfigInput = { ...settings, ...(modelName !== undefined ? { model: modelName } : {}) };
    // Refuse bad settings now, before any model call.
    this.config = ensureReflexionConfig({ context });
    this.agentName = this.config.agentName;
    this.store = store ?? new InMemoryStore();
    this.runConfig = { context, configurable: owner ? { memoryOwner: owner } : {} };
    this.nodes = new ReflexionNodeContext({ model, defaults: context });
    this.graph = buildReflexionGraph({ model, store: this.store, checkpointer, defaults: context });
    this.memory = new AgentMemory(() => storeMemoryFor(this.runConfig, this.config, this.store));
  }

  /** The actor's response to a task, using the reflections of `relevantMemories`. */
  async act(task: string, relevantMemories: StepRecord[] = []): Promise<string> {
    return (await act(this.nodes, this.config, checkRequestText(task, "task"), relevantMemories)).text;
  }

  /** The evaluation of a response and its score (0-1; 0.5 when the evaluation has none). */
  async evaluate(task: string, response: string): Promise<{ evaluation: string; score: number }> {
    const { evaluation, score } = await evaluate(this.nodes, this.config, task, response, await gate(this.nodes, this.config, response));
    return { evaluation, score };
  }

  /** A self-reflection on a response and its evaluation. */
  async reflect(task: string, response: string, evaluation: string): Promise<string> {
    return (await reflect(this.nodes, this.config, task, response, evaluation, await gate(this.nodes, this.config, response))).text;
  }

  /** A refined response, from the original, its evaluation and the reflection. */
  async refine(task: string, originalResponse: string, evaluation: string, reflection: string): Promise<string> {
    const errors = await gate(this.nodes, this.config, originalResponse);
    return (await refineResponse(this.nodes, this.config, task, originalResponse, evaluation, reflection, errors)).text;
  }

  /**
   * The reference's one iteration: from the second iteration on (`iteration > 0`),
   * retrieve the relevant memories; act with them (or take `previousResponse`),
   * evaluate, reflect; record the step in short-term memory, and in long-term
   * memory when its score is above 0.8 or `iteration == maxLoops - 1`.
   */
  async step(task: string, iteration = 0, previousResponse?: string): Promise<StepRecord> {
    checkRequestText(task, "task");
    if (!Number.isInteger(iteration) || iteration < 0) throw new ConfigurationError(`iteration must be a non-negative integer; got ${iteration}.`);
    const memories = iteration > 0 ? await this.memory.getRelevantMemories(task) : [];
    const response = previousResponse ?? (await this.act(task, memories));
    const { evaluation, score } = await this.evaluate(task, response);
    const reflection = await this.reflect(task, response, evaluation);
    const step: StepRecord = { task, response, evaluation, reflection, score, iteration };
    this.memory.shortTerm.add(step);
    await remember(this.config, storeMemoryFor(this.runConfig, this.config, this.store), step);
    return step;
  }

  /**
   * Run tasks one at a time through the Reflexion graph: the best response per
   * task (null where there is none to use: with a spec, a task whose responses
   * all failed it), or each task's step records. `run([])` is `[]`.
   */
  async run(tasks: string[], options?: { includeIntermediates?: false }): Promise<(string | null)[]>;
  async run(tasks: string[], options: { includeIntermediates: true }): Promise<StepRecord[][]>;
  async run(tasks: string[], options: RunOptions = {}): Promise<(string | null)[] | StepRecord[][]> {
    const report = await this.runWithReport(tasks);
    return options.includeIntermediates ? report.steps : report.results;
  }

  /** Like `run`, with outcomes (stop reason, best score) and token usage. */
  async runWithReport(tasks: string[]): Promise<RunReport> {
    // The reference returns [] for no tasks.
    if (Array.isArray(tasks) && tasks.length === 0)
      return { results: [], steps: [], outcomes: [], calls: [], usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 } };
    checkTasks(tasks);
    const out = await this.graph.invoke({ tasks }, { ...this.runConfig, configurable: { ...this.runConfig.configurable, thread_id: crypto.randomUUID() } });
    for (const steps of out.steps) for (const step of steps) this.memory.shortTerm.add(step);
    this.conversation.push(...(out.conversation as ConversationTurn[]));
    return { results: out.results, steps: out.steps, outcomes: out.outcomes, calls: out.calls, usage: out.usage };
  }
}
