/**
 * The deterministic validation graph:
 *
 *   START → generate → validate ─┬─ retry → generate
 *                                └─ done  → END   (valid, out of attempts, or no progress)
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { END, START, StateGraph } from "@langchain/langgraph";
import type { LooseContext } from "../shared/guards.js";
import { checkRequestText, ensureValidationConfig, ValidationConfigSchema } from "../configuration.js";
import { guardFrontDoor } from "../shared/guards.js";
import { channelsOf } from "../shared/state.js";
import { resolveSpec } from "../specs/registry.js";
import { PROVIDER_RETRY_POLICY } from "../shared/model-call.js";
import { builderDefaults, makeValidationNodes, type ValidationNodeOptions } from "./nodes.js";
import { ValidationInputSchema, ValidationOutputSchema, ValidationState } from "./state.js";

export interface ValidationGraphOptions extends ValidationNodeOptions {
  checkpointer?: BaseCheckpointSaver | boolean;
  store?: BaseStore;
}

/** The uncompiled graph, for callers that compile it with their own checkpointer and store. */
export function createValidationGraphBuilder(options: ValidationNodeOptions = {}) {
  const { generate, validate, routeAfterValidate } = makeValidationNodes(options);
  return new StateGraph({
    // Channels from the zod state (see channelsOf); nodes are typed from the zod state itself.
    state: channelsOf(ValidationState) as unknown as typeof ValidationState,
    input: ValidationInputSchema,
    output: ValidationOutputSchema,
    // The full schema at run time (Studio's configuration form); typed loosely so callers may pass any subset.
    context: ValidationConfigSchema as unknown as LooseContext,
  })
    .addNode("generate", generate, { retryPolicy: PROVIDER_RETRY_POLICY })
    .addNode("validate", validate)
    .addEdge(START, "generate")
    .addEdge("generate", "validate")
    .addConditionalEdges("validate", routeAfterValidate, { generate: "generate", [END]: END });
}

/** The compiled validation graph. */
export function buildValidationGraph(options: ValidationGraphOptions = {}) {
  const { checkpointer, store, ...nodeOptions } = options;
  const graph = createValidationGraphBuilder(nodeOptions).compile({ checkpointer, store });
  graph.name = "Deterministic validation";
  return guardFrontDoor(graph, {
    input: (input) => void checkRequestText(input.request, "request"),
    config: (config) => {
      // Resolving the spec compiles it: a spec that does not compile is refused here.
      resolveSpec(ensureValidationConfig(config, builderDefaults(nodeOptions)).spec);
    },
  });
}
