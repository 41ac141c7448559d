/**
 * The deterministic validation graph:
 *
 *   START ─(new request)→ generate → validate ─┬─ retry  → generate
 *                                              ├─ failed → review ─┬─ again       → review    (onFailure: "interrupt")
 *                                              │                   ├─ new request → generate
 *                                              │                   └─ valid or rejected → END
 *                                              └─ done   → END   (valid; or out of attempts / no progress with onFailure: "end")
 *
 * A new input fixes the run's settings on the edge from START, which hands them
 * to `generate` as a Send: the first attempt clears the thread's previous run in
 * the same step as its model call, so a run takes two steps per attempt and none
 * of its own. `validate` and `review` route with Command. Resuming an
 * interrupted run continues where it stopped, with the settings recorded.
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { END, START } from "@langchain/langgraph";
import { TracedStateGraph } from "../graph/traced-graph.js";
import { withModelOption } from "../model-option.js";
import { checkRequestText, modelInEffect, showingModelInEffect, withDefaultsShown, withSpecLimitsInEffect } from "../settings.js";
import { MAX_RUN_ATTEMPTS } from "../settings.js";
import { validationStepLimit, ValidationConfigSchema, type CheckedSettings } from "./configuration.js";
import { DirectCall } from "../graph/direct-call.js";
import { checkedContext, checkedInput } from "../graph/guards.js";
import { channelsOf, stateObject } from "../graph/state.js";
import { resolveSpec } from "../specs/registry.js";
import { PROVIDER_RETRY_POLICY, STREAM_TOKENS_KEY } from "../providers/model-call.js";
import { builderDefaults, ValidationNodeContext, type ValidationNodeOptions } from "./node-context.js";
import { generate, review, startRun, validate } from "./nodes.js";
import { tracedGenerate, tracedReview, tracedStartRun, tracedValidate } from "./telemetry.js";
import { ValidationInputSchema, ValidationOutputSchema, ValidationState } from "./state.js";

/** Options of the validation graph builders: the model, default settings, checkpointer and store. */
export interface ValidationGraphOptions extends ValidationNodeOptions {
  checkpointer?: BaseCheckpointSaver | boolean;
  store?: BaseStore;
}

/**
 * The input and context schemas the graph is built with, carrying the
 * front-door checks: a bad request or bad settings are refused with a
 * readable ConfigurationError before any node runs, on every path.
 */
function frontDoor(options: ValidationNodeOptions, settings: CheckedSettings) {
  const defaults = builderDefaults(options);
  const input = stateObject({
    request: checkedInput(ValidationInputSchema.shape.request, (value) => void checkRequestText(value, "request")),
  });
  // Defaults only shown, not applied: the check reads what the run set, with the builder's defaults under it.
  const context = checkedContext(
    withDefaultsShown(showingModelInEffect(ValidationConfigSchema, modelInEffect(defaults))),
    (given) => {
      // Resolving the spec compiles it: a spec that does not compile is refused here.
      resolveSpec(settings.check(given).spec, { specLimits: options.specLimits });
    },
    // Read from `configurable` only: a run's request to stream model tokens (see streamsTokens).
    [STREAM_TOKENS_KEY],
  );
  return { input, context };
}

/**
 * The uncompiled graph, for callers that compile it with their own checkpointer and store.
 *
 * @example
 * ```ts
 * import { MemorySaver } from "@langchain/langgraph";
 * import { createValidationGraphBuilder } from "langgraph-trustworthy-output";
 *
 * const graph = createValidationGraphBuilder({ spec: "api-request" }).compile({ checkpointer: new MemorySaver() });
 * await graph.invoke({ request: "POST /orders with a JSON body" }, { configurable: { thread_id: "t1" } });
 * ```
 */
export function createValidationGraphBuilder(given: Omit<ValidationGraphOptions, "checkpointer" | "store"> = {}) {
  const options = withSpecLimitsInEffect(withModelOption(given));
  const nodes = new ValidationNodeContext(options);
  const { input, context } = frontDoor(options, nodes.settings);
  return (
    new TracedStateGraph({
      // Channels from the zod state (see channelsOf); nodes are typed from the zod state itself.
      state: channelsOf(ValidationState) as unknown as typeof ValidationState,
      input: input as unknown as typeof ValidationInputSchema,
      output: ValidationOutputSchema,
      // The full schema at run time (Studio's configuration form); typed loosely so callers may pass any subset
      // (LangGraph types `context` as every field required). Typed settings: `satisfies ValidationSettings`, or generateValidated.
      context: context as unknown as LooseContext,
    })
      // generate and validate take their config as an argument and run as plain calls (see DirectCall); review calls interrupt().
      // Each node reports what it did to OpenTelemetry (./telemetry.ts): a no-op without an SDK.
      .addNode("generate", new DirectCall(nodes.bind(tracedGenerate(generate))), { retryPolicy: PROVIDER_RETRY_POLICY })
      .addNode("validate", new DirectCall(nodes.bind(tracedValidate(validate))), { ends: ["generate", "review", END] })
      .addNode("review", nodes.bind(tracedReview(review)), { ends: ["review", "generate", END] })
      .addConditionalEdges(START, new DirectCall(nodes.bind(tracedStartRun(startRun))), ["generate"])
      .addEdge("generate", "validate")
  );
}

type LooseContext = import("zod").ZodObject<{}>;

/**
 * The compiled validation graph.
 *
 * @example
 * ```ts
 * import { buildValidationGraph } from "langgraph-trustworthy-output";
 *
 * const out = await buildValidationGraph().invoke({ request: "A deployment config for payments-api with 8 replicas" }, { context: { maxAttempts: 3 } });
 * console.log(out.success, out.stopReason, out.errors);
 * ```
 */
export function buildValidationGraph(options: ValidationGraphOptions = {}) {
  const { checkpointer, store, ...nodeOptions } = options;
  // LangGraph fixes a run's recursion limit before any node reads the run's settings, so the graph's default is
  // the one the largest settings need: every run ends on its own attempt bound. A run's own recursionLimit wins.
  const graph = createValidationGraphBuilder(nodeOptions)
    .compile({ checkpointer, store })
    .withConfig({ recursionLimit: validationStepLimit(MAX_RUN_ATTEMPTS) });
  graph.name = "Deterministic validation";
  return graph;
}
