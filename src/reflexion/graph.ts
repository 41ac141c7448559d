/**
 * The Reflexion graph:
 *
 *   START → memory ─┬─ new task → actor ──┐
 *                   ├─ refine → refine ───┴→ evaluator → reflector → memory
 *                   └─ all tasks done → END
 *
 * memory records each finished step (short-term in state, long-term in the
 * Store), decides whether the task goes on (score > 0.9 stops early; maxLoops
 * ends it), closes finished tasks with their best response, and retrieves the
 * memories relevant to the next task before the actor sees it.
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { END, START, StateGraph } from "@langchain/langgraph";
import { checkTasks, ensureReflexionConfig, MAX_TASKS, ReflexionConfigSchema } from "../configuration.js";
import { checkedContext, checkedInput } from "../shared/guards.js";
import { channelsOf, stateObject } from "../shared/state.js";
import { PROVIDER_RETRY_POLICY } from "../shared/model-call.js";
import { resolveSpec } from "../specs/registry.js";
import { failTaskOnProviderError, makeReflexionNodes, type ReflexionNodeOptions } from "./nodes.js";
import { ReflexionInputSchema, ReflexionOutputSchema, ReflexionState } from "./state.js";

export interface ReflexionGraphOptions extends ReflexionNodeOptions {
  checkpointer?: BaseCheckpointSaver | boolean;
  store?: BaseStore;
}

/** Enough graph steps for the largest run allowed: MAX_TASKS tasks of 10 loops, 4 steps a loop. */
export const REFLEXION_RECURSION_LIMIT = 1 + MAX_TASKS * (1 + 4 * 10) + 10;

/** The uncompiled graph, for callers that compile it with their own checkpointer and store. */
export function createReflexionGraphBuilder(options: ReflexionNodeOptions = {}) {
  const nodes = makeReflexionNodes(options);
  const input = stateObject({ tasks: checkedInput(ReflexionInputSchema.shape.tasks, (value) => void checkTasks(value)) });
  const context = checkedContext(ReflexionConfigSchema, (given) => {
    const cfg = ensureReflexionConfig({ context: given }, options);
    if (cfg.spec !== undefined) resolveSpec(cfg.spec);
  }, ["memoryOwner"]);
  const modelNode = { retryPolicy: PROVIDER_RETRY_POLICY, errorHandler: failTaskOnProviderError, ends: ["memory"] };
  return new StateGraph({
    // Channels from the zod state (see channelsOf); nodes are typed from the zod state itself.
    state: channelsOf(ReflexionState) as unknown as typeof ReflexionState,
    input: input as unknown as typeof ReflexionInputSchema,
    output: ReflexionOutputSchema,
    // The full schema at run time (Studio's configuration form); typed loosely so callers may pass any subset.
    context: context as unknown as import("zod").ZodObject<{}>,
  })
    .addNode("memory", nodes.memory)
    .addNode("actor", nodes.actor, modelNode)
    .addNode("refine", nodes.refine, modelNode)
    .addNode("evaluator", nodes.evaluator, modelNode)
    .addNode("reflector", nodes.reflector, modelNode)
    .addEdge(START, "memory")
    .addConditionalEdges("memory", nodes.routeAfterMemory, { actor: "actor", refine: "refine", [END]: END })
    .addEdge("actor", "evaluator")
    .addEdge("refine", "evaluator")
    .addEdge("evaluator", "reflector")
    .addEdge("reflector", "memory");
}

/** The compiled Reflexion graph. */
export function buildReflexionGraph(options: ReflexionGraphOptions = {}) {
  const { checkpointer, store, ...nodeOptions } = options;
  const compiled = createReflexionGraphBuilder(nodeOptions).compile({ checkpointer, store });
  compiled.name = "Reflexion";
  return compiled.withConfig({ recursionLimit: REFLEXION_RECURSION_LIMIT });
}
