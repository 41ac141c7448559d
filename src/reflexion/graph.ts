/**
 * The Reflexion graph, as the reference's `run()` reads: an outer progression
 * over the tasks, one at a time, and an inner loop per task.
 *
 *   START → each_task → END          for each task, in order: recall its memories, run the task's loop
 *
 *   the task's loop (a subgraph):
 *   START → actor → evaluator → reflector → memory ─┬─ score > 0.9 (and valid), or maxLoops reached → END
 *                      ↑                            └─ otherwise → refine ─┐
 *                      └───────────────────────────────────────────────────┘
 *   (a provider failure on a model node's last attempt ends the task: → END)
 *
 * `memory` records each finished iteration (in the task's steps, and in
 * long-term memory when the reference admits it). Each task's loop runs as a
 * LangGraph task with a step limit sized for its own maxLoops, so neither
 * level needs more than LangGraph's default recursion limit, however the
 * graph is compiled; a finished task is not run again when an interrupted run
 * resumes.
 */
import type { BaseCheckpointSaver, BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import { END, START, StateGraph, task as durableTask } from "@langchain/langgraph";
import { checkTasks, ensureReflexionConfig, ReflexionConfigSchema, type ReflexionConfig } from "./configuration.js";
import { checkedContext } from "../graph/guards.js";
import { withModelOption } from "../model-option.js";
import { modelInEffect, showingModelInEffect, withSpecLimitsInEffect } from "../settings.js";
import { DirectCall } from "../graph/direct-call.js";
import { PROVIDER_RETRY_POLICY } from "../providers/model-call.js";
import { channelsOf } from "../graph/state.js";
import { addUsage, ZERO_USAGE } from "../shared/usage.js";
import { HeldSpecs } from "../specs/held.js";
import { resolveSpec, type SpecRecord } from "../specs/registry.js";

/** A Reflexion run's settings as its checkpoint keeps them. */
type FixedSettings = Omit<ReflexionConfig, "spec"> & { specRecord?: SpecRecord };
import { closeTask } from "./loop.js";
import { SHORT_TERM_SIZE, type StepRecord } from "./memory.js";
import { ReflexionNodeContext, type ReflexionNodeOptions } from "./node-context.js";
import { actor, afterMemory, evaluator, memory, recall, refine, reflector, storeMemoryFor } from "./nodes.js";
import {
  ReflexionInputSchema,
  ReflexionOutputSchema,
  ReflexionState,
  TaskInputSchema,
  TaskState,
  type ReflexionStateType,
  type ReflexionUpdate,
  type TaskStateType,
} from "./state.js";
import { markReflexionVerdict, traceTask } from "./telemetry.js";

/** Options of the Reflexion graph builders: models, defaults, checkpointer and store. */
export interface ReflexionGraphOptions extends ReflexionNodeOptions {
  checkpointer?: BaseCheckpointSaver | boolean;
  store?: BaseStore;
}

/** Graph steps one task's loop takes at most: its input, then 4 nodes per iteration, with room to spare. */
function taskStepLimit(maxLoops: number): number {
  return 4 * maxLoops + 5;
}

/**
 * The run configuration's schema with the package's checks (src/graph/guards.ts): bad or unknown
 * settings (or a spec that cannot be resolved) are refused with a ConfigurationError before any node
 * runs, whoever compiled the graph. `memoryOwner` is read from `configurable`. (The input's `tasks`
 * are checked by their own schema, in state.ts.)
 */
function reflexionContext(options: ReflexionNodeOptions) {
  return checkedContext(
    showingModelInEffect(ReflexionConfigSchema, modelInEffect(options)),
    (given) => {
      const cfg = ensureReflexionConfig({ context: given }, options);
      if (cfg.spec !== undefined) resolveSpec(cfg.spec, { specLimits: options.specLimits });
    },
    ["memoryOwner"],
  );
}

/** Where the task's loop goes after a model node: on, or out when the provider failed. */
const onUnlessFailed =
  <T extends string>(next: T) =>
  (state: TaskStateType): T | typeof END =>
    state.failure !== null ? END : next;

/** One task's loop: the reference's iterations of act (or refine), evaluate, reflect. */
function createTaskGraphBuilder(nodes: ReflexionNodeContext) {
  const modelNode = { retryPolicy: PROVIDER_RETRY_POLICY };
  return (
    new StateGraph({
      state: channelsOf(TaskState) as unknown as typeof TaskState,
      input: TaskInputSchema,
    })
      // Every node and edge of the loop takes its config as an argument and runs as a plain call (see DirectCall).
      .addNode("actor", new DirectCall(nodes.bind(actor)), modelNode)
      .addNode("evaluator", new DirectCall(nodes.bind(evaluator)), modelNode)
      .addNode("reflector", new DirectCall(nodes.bind(reflector)), modelNode)
      .addNode("memory", new DirectCall(nodes.bind(memory)))
      .addNode("refine", new DirectCall(nodes.bind(refine)), modelNode)
      .addEdge(START, "actor")
      .addConditionalEdges("actor", new DirectCall(onUnlessFailed("evaluator")), ["evaluator", END])
      .addConditionalEdges("evaluator", new DirectCall(onUnlessFailed("reflector")), ["reflector", END])
      .addConditionalEdges("reflector", new DirectCall(onUnlessFailed("memory")), ["memory", END])
      .addConditionalEdges("memory", new DirectCall(nodes.bind(afterMemory)), ["refine", END])
      .addConditionalEdges("refine", new DirectCall(onUnlessFailed("evaluator")), ["evaluator", END])
  );
}

/**
 * The uncompiled Reflexion graph, for callers that compile it with their own checkpointer and store.
 *
 * @example
 * ```ts
 * import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
 * import { createReflexionGraphBuilder } from "langgraph-trustworthy-output";
 *
 * const graph = createReflexionGraphBuilder().compile({ checkpointer: new MemorySaver(), store: new InMemoryStore() });
 * await graph.invoke({ tasks: ["Explain recursion."] }, { configurable: { thread_id: "t1" } });
 * ```
 */
export function createReflexionGraphBuilder(given: Omit<ReflexionGraphOptions, "checkpointer"> = {}) {
  const options = withSpecLimitsInEffect(withModelOption(given));
  const { store, ...nodeOptions } = options;
  const nodes = new ReflexionNodeContext(nodeOptions, store);
  const taskGraph = createTaskGraphBuilder(nodes).compile({ name: "reflexion_task" });

  // Code-defined specs cannot be kept in a checkpoint; a run, resumed or not, finds the one it started with here.
  const specs = new HeldSpecs({ specLimits: options.specLimits });

  /**
   * The run's settings, fixed when it starts: a durable task's result is kept, so a resumed run gets
   * the settings (and spec) it was started with, whatever the resuming call passes.
   */
  const fixSettings = durableTask("reflexion_settings", async (settings: FixedSettings) => settings);

  // One task's loop as a durable LangGraph task: its result is kept, so a resumed run does not redo it.
  const runTask = durableTask("reflexion_task", async (input: { task: string; taskIndex: number; memories: StepRecord[]; settings: FixedSettings }) => {
    const { settings, ...taskInput } = input;
    return (await taskGraph.invoke(taskInput, { recursionLimit: taskStepLimit(settings.maxLoops), context: contextOf(settings) })) as TaskStateType;
  });

  /** The settings as they are kept: the spec as a record (a built-in by name, an inline spec as JSON, a code-defined one by fingerprint). */
  function fixed(cfg: ReflexionConfig): FixedSettings {
    const { spec, ...rest } = cfg;
    return spec === undefined ? rest : { ...rest, specRecord: specs.record(spec) };
  }

  /** The run context the task's loop reads its settings from. */
  function contextOf(settings: FixedSettings): Record<string, unknown> {
    const { specRecord, ...rest } = settings;
    return specRecord ? { ...rest, spec: specs.find(specRecord) } : rest;
  }

  /** The reference's `run()`: each task in order, with the memories relevant to it. */
  async function eachTask(state: ReflexionStateType, config: LangGraphRunnableConfig): Promise<ReflexionUpdate> {
    const settings = await fixSettings(fixed(nodes.settings(config)));
    const cfg = nodes.settings({ context: contextOf(settings) });
    const tasks = checkTasks(state.tasks);
    const longTerm = storeMemoryFor(config, cfg, store);
    const out: Required<Omit<ReflexionStateType, "tasks">> = { results: [], steps: [], outcomes: [], conversation: [], calls: [], usage: { ...ZERO_USAGE } };
    let shortTerm: StepRecord[] = [];
    for (const [taskIndex, task] of tasks.entries()) {
      const memories = cfg.useMemory ? await recall(longTerm, task, shortTerm) : [];
      // Each task under its OpenTelemetry span, a round's score on a span of its own (./telemetry.ts).
      const { done, result, outcome } = await traceTask({ model: cfg.model, spec: settings.specRecord, taskIndex }, async () => {
        const done = await runTask({ task, taskIndex, memories, settings });
        const gated = cfg.spec !== undefined;
        const closed = closeTask({ task, steps: done.steps, passed: done.passed, usage: done.usage, failure: done.failure, gated, maxLoops: cfg.maxLoops });
        return { done, ...closed, steps: done.steps, passed: done.passed };
      });
      shortTerm = [...shortTerm, ...done.steps].slice(-SHORT_TERM_SIZE);
      out.results.push(result);
      out.steps.push(done.steps);
      out.outcomes.push(outcome);
      out.conversation.push({ role: "user", content: task }, { role: "assistant", content: result ?? "" });
      out.calls.push(...done.calls);
      out.usage = addUsage(out.usage, done.usage);
    }
    markReflexionVerdict(config, out.outcomes, settings.specRecord?.name);
    return out;
  }

  return new StateGraph({
    // Channels from the zod state (see channelsOf); nodes are typed from the zod state itself.
    state: channelsOf(ReflexionState) as unknown as typeof ReflexionState,
    input: ReflexionInputSchema,
    output: ReflexionOutputSchema,
    // The full schema at run time (Studio's configuration form); typed loosely so callers may pass any subset.
    context: reflexionContext(nodeOptions) as unknown as import("zod").ZodObject<{}>,
  })
    .addNode("each_task", eachTask, { subgraphs: [taskGraph] })
    .addEdge(START, "each_task")
    .addEdge("each_task", END);
}

/**
 * The compiled Reflexion graph.
 *
 * @example
 * ```ts
 * import { buildReflexionGraph } from "langgraph-trustworthy-output";
 *
 * const out = await buildReflexionGraph().invoke({ tasks: ["Explain recursion to a beginner."] }, { context: { maxLoops: 2 } });
 * console.log(out.results);
 * ```
 */
export function buildReflexionGraph(options: ReflexionGraphOptions = {}) {
  const { checkpointer, store, ...nodeOptions } = options;
  const graph = createReflexionGraphBuilder({ ...nodeOptions, store }).compile({ checkpointer, store });
  graph.name = "Reflexion";
  return graph;
}
