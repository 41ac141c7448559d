/**
 * The built-in simulated model, chosen by its exact name through the environment and the model factory:
 * a validation run and a Reflexion run with no provider at all, the run settings naming the model, and
 * answers drawn from the JSON Schema of a spec it does not know, honest replies where its rules have no
 * answer (a free-text task).
 */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { readEnvironment, SIMULATED_MODEL } from "../../src/environment.js";
import { ConfigurationError } from "../../src/errors.js";
import { createChatModel } from "../../src/models.js";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { SimulatedChatModel } from "../../src/simulated/model.js";
import { checkValue } from "../../src/specs/check.js";
import { defineSpec } from "../../src/specs/spec.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";

/** No key, no base URL: only LLM_MODEL. */
const simulatedEnv = readEnvironment({ LLM_MODEL: "simulated" });

describe("the built-in simulated model", () => {
  it("LLM_MODEL=simulated runs the validation graph with no provider: errors fed back, a valid value, the run settings naming the model", async () => {
    expect(simulatedEnv.model).toBe(SIMULATED_MODEL);
    expect(simulatedEnv.providers.openai).toEqual({});
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
    expect((await checkValue(builtinSpecs.get("deployment-config")!, out.value)).valid).toBe(true);
    expect(out.usage.calls).toBe(out.attempts);
    const state = await graph.getState(config);
    expect(state.values.run.model).toBe(SIMULATED_MODEL);
  });

  it("is chosen only by its exact name: no provider and another name is still the error that names the variables", () => {
    expect(createChatModel({ model: "simulated", role: "generate" }, readEnvironment({}))).toBeInstanceOf(SimulatedChatModel);
    for (const name of ["gpt-4o-mini", "Simulated", "simulated-1", " simulated"]) {
      expect(() => createChatModel({ model: name, role: "generate" }, readEnvironment({})), name).toThrow(ConfigurationError);
    }
    expect(() => createChatModel({ model: readEnvironment({}).model, role: "generate" }, readEnvironment({}))).toThrow(
      /OPENAI_API_KEY.*OPENAI_BASE_URL.*LLM_MODEL=simulated/s,
    );
    // One model per role, whatever the provider settings say.
    const generator = createChatModel({ model: "simulated", role: "generate" }, { ...simulatedEnv, providers: { openai: { apiKey: "sk-test" } } });
    expect(createChatModel({ model: "simulated", role: "generate" }, simulatedEnv)).toBe(generator);
    expect(createChatModel({ model: "simulated", role: "evaluator" }, simulatedEnv)).not.toBe(generator);
  });

  it("an inline spec with no example: answers drawn from its JSON Schema, the first with seeded defects the validator names, the retry valid", async () => {
    const spec = {
      name: "discount",
      description: "A discount code.",
      schema: {
        type: "object",
        required: ["code", "percent", "tags"],
        additionalProperties: false,
        properties: {
          code: { type: "string", pattern: "^VIP-[A-Z0-9]{4}$" },
          percent: { type: "integer", minimum: 1, maximum: 90 },
          tags: { type: "array", minItems: 1, uniqueItems: true, items: { enum: ["new", "loyal", "staff"] } },
          contact: { type: "string", format: "email" },
        },
      },
    };
    const out = await buildValidationGraph({ env: simulatedEnv }).invoke({ request: "A discount code" }, { context: { spec, maxAttempts: 3 } });
    expect(out.success, JSON.stringify(out.errors)).toBe(true);
    expect(out.history[0].valid).toBe(false);
    expect(out.history[0].errors.length).toBeGreaterThan(0);
    expect(out.value).toMatchObject({ code: expect.stringMatching(/^VIP-[A-Z0-9]{4}$/) });
  });

  it("a zod spec with a rule the schema cannot say: the retry draws again the fields the rule's message names", async () => {
    const spec = defineSpec({
      name: "deployment",
      description: "A service deployment.",
      schema: z
        .object({ service_name: z.string(), replicas: z.number().int().min(1).max(20), resources: z.object({ cpu_limit: z.number().min(0.1) }) })
        .superRefine((v, ctx) => {
          if (v.replicas > 5 && v.resources.cpu_limit < 1)
            ctx.addIssue({ code: "custom", path: ["resources", "cpu_limit"], message: `replicas=${v.replicas} needs a cpu_limit of at least 1.0` });
        }),
    });
    for (const request of ["payments-api with 8 replicas", "search-api", "billing with 12 replicas"]) {
      const out = await buildValidationGraph({ env: simulatedEnv, spec, maxAttempts: 4 }).invoke({ request });
      expect(out.success, `${request}: ${JSON.stringify(out.history.map((h) => h.errors))}`).toBe(true);
      expect(out.history[0].valid).toBe(false);
    }
  });

  it("a number the request gives a field by name is the answer's, where the field's schema admits it; other numbers are drawn", async () => {
    const spec = defineSpec({
      name: "deployment",
      description: "A service deployment.",
      schema: z.object({ service_name: z.string(), replicas: z.number().int().min(1).max(20), resources: z.object({ cpu_limit: z.number().min(0.1) }) }),
    });
    const model = createChatModel({ model: "simulated", role: "generate" }, simulatedEnv);
    for (const [request, replicas] of [
      ["payments-api with 8 replicas", 8],
      ["billing with 12 replicas", 12],
    ] as const) {
      const outcome = await generateValidated({ model, spec, request, maxAttempts: 3 });
      expect(outcome.success && outcome.value.replicas, request).toBe(replicas);
      expect(outcome.history.every((record) => (JSON.parse(record.output) as { replicas?: unknown }).replicas !== 17)).toBe(true);
    }
    // 40 is past the schema's maximum and 2.5 not an integer: drawn instead, as without the request's number.
    for (const request of ["search with 40 replicas", "search with 2.5 replicas"]) {
      const outcome = await generateValidated({ model, spec, request, maxAttempts: 3 });
      expect(outcome.success, request).toBe(true);
      expect(outcome.success && [40, 2.5]).not.toContain(outcome.success && outcome.value.replicas);
    }
  });

  it("an inline spec whose prompt carries no JSON Schema it can read: a reply saying so, not JSON, and the run ends not valid", async () => {
    const model = new SimulatedChatModel({ seed: 1 }, "generator");
    const reply = await model.invoke([
      new SystemMessage("You write JSON objects of this kind: A discount code."),
      new HumanMessage("Request:\nA discount code"),
    ]);
    expect(reply.text).toMatch(/built-in simulated model.*not from a language model.*no JSON Schema in its prompt/s);
  });

  it("runs Reflexion with a gate spec; its evaluations say where they came from; a free-text task is answered with what it cannot do", async () => {
    const graph = buildReflexionGraph({ env: simulatedEnv, store: new InMemoryStore() });
    const gated = await graph.invoke(
      { tasks: ["A deployment config for payments-api with 8 replicas"] },
      { context: { spec: "deployment-config", maxLoops: 3 } },
    );
    expect(gated.outcomes[0]).toMatchObject({ valid: true, error: null });
    expect((await checkValue(builtinSpecs.get("deployment-config")!, JSON.parse(gated.results[0]!))).valid).toBe(true);
    for (const step of gated.steps[0])
      expect(step.evaluation).toMatch(/^\(built-in simulated model "simulated": seeded rules, not a language model\)\n.*Final score: /s);

    const free = await graph.invoke({ tasks: ["Explain recursion to a beginner."] }, { context: { maxLoops: 1, useMemory: false } });
    expect(free.results[0]).toMatch(/built-in simulated model.*does not say which of them it is for/s);
    expect(free.steps[0][0].score).toBe(0);
  });
});
