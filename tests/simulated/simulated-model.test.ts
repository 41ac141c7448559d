/**
 * The built-in simulated model, chosen by its exact name through the environment and the model factory:
 * a validation run and a Reflexion run with no provider at all, the run settings naming the model, and
 * honest replies where its rules have no answer (an inline spec, a free-text task).
 */
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { readEnvironment, SIMULATED_MODEL } from "../../src/environment.js";
import { ConfigurationError } from "../../src/errors.js";
import { createChatModel } from "../../src/models.js";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { SimulatedChatModel } from "../../src/simulated/model.js";
import { checkValue } from "../../src/specs/check.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";

/** No key, no base URL: only LLM_MODEL. */
const simulatedEnv = readEnvironment({ LLM_MODEL: "simulated" });

describe("the built-in simulated model", () => {
  it("LLM_MODEL=simulated runs the validation graph with no provider: errors fed back, a valid value, the run settings naming the model", async () => {
    expect(simulatedEnv).toMatchObject({ model: SIMULATED_MODEL, openaiApiKey: undefined, openaiBaseUrl: undefined });
    const checkpointer = new MemorySaver();
    const graph = buildValidationGraph({ env: simulatedEnv, checkpointer });
    const config = { configurable: { thread_id: "simulated-validation" } };
    const out = await graph.invoke({ request: "A deployment config for payments-api with 8 replicas" }, config);
    expect(out.success).toBe(true);
    expect(out.stopReason).toBe("valid");
    // Its first answer is the spec's example with seeded defects, which the validator's errors name; a retry fixes them.
    expect(out.history[0].valid).toBe(false);
    expect(out.history[0].errors.length).toBeGreaterThan(0);
    expect(out.history.at(-1)!.valid).toBe(true);
    expect((await checkValue(builtinSpecs.get("deployment-config")!, out.result)).valid).toBe(true);
    expect(out.usage.calls).toBe(out.attempts);
    const state = await graph.getState(config);
    expect(state.values.run.model).toBe(SIMULATED_MODEL);
  });

  it("is chosen only by its exact name: no provider and another name is still the error that names the variables", () => {
    expect(createChatModel({ model: "simulated", role: "generate" }, readEnvironment({}))).toBeInstanceOf(SimulatedChatModel);
    for (const name of ["gpt-4o-mini", "Simulated", "simulated-1", " simulated"]) {
      expect(() => createChatModel({ model: name, role: "generate" }, readEnvironment({})), name).toThrow(ConfigurationError);
    }
    expect(() => createChatModel({ model: readEnvironment({}).model, role: "generate" }, readEnvironment({}))).toThrow(/OPENAI_API_KEY.*OPENAI_BASE_URL.*LLM_MODEL=simulated/s);
    // One model per role, whatever the provider settings say.
    const generator = createChatModel({ model: "simulated", role: "generate" }, { ...simulatedEnv, openaiApiKey: "sk-test" });
    expect(createChatModel({ model: "simulated", role: "generate" }, simulatedEnv)).toBe(generator);
    expect(createChatModel({ model: "simulated", role: "evaluator" }, simulatedEnv)).not.toBe(generator);
  });

  it("an inline spec has no example: every answer says so, and the run ends not valid", async () => {
    const spec = { name: "discount", description: "A discount code.", schema: { type: "object", required: ["code"], properties: { code: { type: "string" } } } };
    const out = await buildValidationGraph({ env: simulatedEnv }).invoke({ request: "A discount code" }, { context: { spec, maxAttempts: 2 } });
    expect(out.success).toBe(false);
    expect(out.stopReason).toBe("max_attempts");
    for (const record of out.history) expect(record.output).toMatch(/built-in simulated model.*not from a language model.*spec is not one of them/s);
  });

  it("runs Reflexion with a gate spec; its evaluations say where they came from; a free-text task is answered with what it cannot do", async () => {
    const graph = buildReflexionGraph({ env: simulatedEnv, store: new InMemoryStore() });
    const gated = await graph.invoke({ tasks: ["A deployment config for payments-api with 8 replicas"] }, { context: { spec: "deployment-config", maxLoops: 3 } });
    expect(gated.outcomes[0]).toMatchObject({ valid: true, error: null });
    expect((await checkValue(builtinSpecs.get("deployment-config")!, JSON.parse(gated.results[0]!))).valid).toBe(true);
    for (const step of gated.steps[0]) expect(step.evaluation).toMatch(/^\(built-in simulated model "simulated": seeded rules, not a language model\)\n.*Final score: /s);

    const free = await graph.invoke({ tasks: ["Explain recursion to a beginner."] }, { context: { maxLoops: 1, useMemory: false } });
    expect(free.results[0]).toMatch(/built-in simulated model.*does not say which of them it is for/s);
    expect(free.steps[0][0].score).toBe(0);
  });
});
