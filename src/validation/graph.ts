/**
 * The deterministic validation graph:
 *
 *   START → begin → generate → validate ─┬─ retry → generate
 *                                        └─ done  → END   (valid, out of attempts, or no progress)
 *
 * `begin` runs once per new request: it fixes the run's settings and clears
 * the thread's previous run. Resuming an interrupted run continues where it
 * stopped, with those settings.
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { END, START, StateGraph } from "@langchain/langgraph";
import { checkRequestText, ensureValidationConfig, ValidationConfigSchema } from "../configuration.js";
import { checkedContext, checkedInput } from "../shared/guards.js";
import { channelsOf, stateObject } from "../shared/state.js";
import { resolveSpec } from "../specs/registry.js";
import { PROVIDER_RETRY_POLICY } from "../shared/model-call.js";
import { builderDefaults, makeValidationNodes, type ValidationNodeOptions } from "./nodes.js";
import { ValidationInputSchema, ValidationOutputSchema, ValidationState } from "./state.js";

export interface ValidationGraphOptions extends ValidationNodeOptions {
  checkpointer?: BaseCheckpointSaver | boolean;
  store?: BaseStore;
}

/**
 * The input and context schemas the graph is built with, carrying the
 * front-door checks: a bad request or bad settings are refused with a
 * readable ConfigurationError before any node runs, on every path.
 */
function frontDoor(options: ValidationNodeOptions) {
  const defaults = builderDefaults(options);
  const input = stateObject({
    request: checkedInput(ValidationInputSchema.shape.request, (value) => void checkRequestText(value, "request")),
  });
  const context = checkedContext(ValidationConfigSchema, (given) => {
    // Resolving the spec compiles it: a spec that does not compile is refused here.
    resolveSpec(ensureValidationConfig({ context: given }, defaults).spec);
  });
  return { input, context };
}

/** The uncompiled graph, for callers that compile it with their own checkpointer and store. */
export function createValidationGraphBuilder(options: ValidationNodeOptions = {}) {
  const { begin, generate, validate, routeAfterValidate } = makeValidationNodes(options);
  const { input, context } = frontDoor(options);
  return new StateGraph({
    // Channels from the zod state (see channelsOf); nodes are typed from the zod state itself.
    state: channelsOf(ValidationState) as unknown as typeof ValidationState,
    input: input as unknown as typeof ValidationInputSchema,
    output: ValidationOutputSchema,
    // The full schema at run time (Studio's configuration form); typed loosely so callers may pass any subset.
    context: context as unknown as LooseContext,
  })
    .addNode("begin", begin)
    .addNode("generate", generate, { retryPolicy: PROVIDER_RETRY_POLICY })
    .addNode("validate", validate)
    .addEdge(START, "begin")
    .addEdge("begin", "generate")
    .addEdge("generate", "validate")
    .addConditionalEdges("validate", routeAfterValidate, { generate: "generate", [END]: END });
}

/** LangGraph types `context` as the schema's output (every field required); callers pass any subset. */
type LooseContext = import("zod").ZodObject<{}>;

/** The compiled validation graph. */
export function buildValidationGraph(options: ValidationGraphOptions = {}) {
  const { checkpointer, store, ...nodeOptions } = options;
  const graph = createValidationGraphBuilder(nodeOptions).compile({ checkpointer, store });
  graph.name = "Deterministic validation";
  return graph;
}
