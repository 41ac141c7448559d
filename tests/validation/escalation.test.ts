/**
 * Escalation (the run setting `models`): a cheap model first, a stronger one after it failed, each asked
 * of the model factory by name; the stronger model's retry carries the same exact errors; each attempt
 * says which model made it, and usage is kept per model.
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import type { ModelRequest } from "../../src/models.js";
import { addUsage, ZERO_USAGE } from "../../src/shared/usage.js";
import { builtinSpecs, resolveSpec } from "../../src/specs/registry.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { generationSystemPrompt } from "../../src/validation/prompts.js";
import { retryPrompt } from "../../src/protocol/feedback.js";
import { ScriptedChatModel, scriptedModel } from "../../testkit/scripted-model.js";

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const BROKEN = JSON.stringify({ ...VALID, replicas: 8 });
const REQUEST = "A deployment config for payments-api with 8 replicas";

/** A factory with one scripted model per name, recording the names it was asked for. */
function factory(models: Record<string, ScriptedChatModel>) {
  const asked: string[] = [];
  const source = (request: ModelRequest) => {
    asked.push(request.model);
    const model = models[request.model];
    if (!model) throw new Error(`no model named ${request.model}`);
    return model;
  };
  return { source, asked };
}

describe("escalation (models)", () => {
  it("the small model makes its attempts, then the large one; its retry carries the same exact errors; records and usage say which model", async () => {
    const small = new ScriptedChatModel({ answers: [BROKEN], repeat: true });
    const large = scriptedModel([JSON.stringify(VALID)]);
    const { source, asked } = factory({ small, large });
    const out = await buildValidationGraph({ model: source }).invoke(
      { request: REQUEST },
      { context: { maxAttempts: 3, models: [{ model: "small", attempts: 2 }, { model: "large" }] } },
    );
    expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 3 });
    expect(asked).toEqual(["small", "small", "large"]);
    expect(out.history.map((h) => h.model)).toEqual(["small", "small", "large"]);
    expect(out.history[1].errors).toEqual([RULES.replicasNeedCpu(0.5, 8)]);
    // The stronger model gets exactly the retry prompt the small one would have had.
    const prompt = large.calls[0].messages;
    expect(prompt.map((m) => m.content)).toEqual([
      generationSystemPrompt(resolveSpec("deployment-config")),
      retryPrompt(REQUEST, out.history[1].output, out.history[1].errors),
    ]);
    // Usage per model adds up to the run's usage.
    expect(out.usageByModel.small.calls).toBe(2);
    expect(out.usageByModel.large.calls).toBe(1);
    expect(addUsage(out.usageByModel.small, out.usageByModel.large)).toEqual(out.usage);
    expect(out.usageByModel.small).toEqual(out.history.slice(0, 2).reduce((t, h) => addUsage(t, h.usage), { ...ZERO_USAGE }));
  });

  it("a step's attempts default to 1; the last model makes every attempt left", async () => {
    const small = new ScriptedChatModel({ answers: [BROKEN], repeat: true });
    const large = new ScriptedChatModel({ answers: [BROKEN], repeat: true });
    const { source, asked } = factory({ small, large });
    const out = await buildValidationGraph({ model: source }).invoke(
      { request: REQUEST },
      { context: { maxAttempts: 4, models: [{ model: "small" }, { model: "large" }] } },
    );
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 4 });
    expect(asked).toEqual(["small", "large", "large", "large"]);
    expect(Object.keys(out.usageByModel).sort()).toEqual(["large", "small"]);
  });

  it("without models, every record names the run's model and usageByModel has that one entry", async () => {
    const out = await buildValidationGraph({ model: scriptedModel([BROKEN, JSON.stringify(VALID)]) }).invoke(
      { request: REQUEST },
      { context: { model: "gpt-test" } },
    );
    expect(out.history.map((h) => h.model)).toEqual(["gpt-test", "gpt-test"]);
    expect(out.usageByModel).toEqual({ "gpt-test": out.usage });
  });

  it("a model named __proto__ is an ordinary key of usageByModel", async () => {
    const m = new ScriptedChatModel({ answers: [BROKEN, JSON.stringify(VALID)] });
    const out = await buildValidationGraph({ model: () => m }).invoke(
      { request: REQUEST },
      { context: { models: [{ model: "__proto__" }, { model: "constructor" }] } },
    );
    expect(Object.hasOwn(out.usageByModel, "__proto__")).toBe(true);
    expect(out.usageByModel.constructor).toMatchObject({ calls: 1 });
    expect(Object.getPrototypeOf(out.usageByModel)).toBe(Object.prototype);
  });

  it("after a person's new request the list starts again from the first model", async () => {
    const small = new ScriptedChatModel({ answers: [BROKEN], repeat: true });
    const large = new ScriptedChatModel({ answers: [BROKEN, JSON.stringify(VALID)] });
    const { source, asked } = factory({ small, large });
    const graph = buildValidationGraph({ model: source, checkpointer: new MemorySaver() });
    const config = {
      configurable: { thread_id: "escalate-review" },
      context: { maxAttempts: 2, onFailure: "interrupt" as const, models: [{ model: "small" }, { model: "large" }] },
    };
    await graph.invoke({ request: REQUEST }, config);
    expect((await graph.getState(config)).next).toEqual(["review"]);
    const out = await graph.invoke(new Command({ resume: { type: "retry", request: "payments-api, 3 replicas" } }), config);
    expect(asked).toEqual(["small", "large", "small", "large"]);
    expect(out).toMatchObject({ success: true, attempts: 4 });
  });

  it("generateValidated takes models and reports usage per model", async () => {
    const small = new ScriptedChatModel({ answers: [BROKEN], repeat: true });
    const large = scriptedModel([JSON.stringify(VALID)]);
    const { source } = factory({ small, large });
    const outcome = await generateValidated({ model: source, spec: "deployment-config", request: REQUEST, models: [{ model: "small" }, { model: "large" }] });
    expect(outcome).toMatchObject({ success: true, attempts: 2 });
    expect(outcome.history.map((h) => h.model)).toEqual(["small", "large"]);
    expect(Object.keys(outcome.usageByModel)).toEqual(["small", "large"]);
  });

  it("refuses settings that cannot mean what they say, before any model call", async () => {
    const model = new ScriptedChatModel({ answers: [JSON.stringify(VALID)], repeat: true });
    const graph = buildValidationGraph({ model: () => model });
    const run = (context: Record<string, unknown>) => graph.invoke({ request: REQUEST }, { context });
    await expect(run({ model: "a", models: [{ model: "b" }] })).rejects.toThrow(/Give either model or models/);
    await expect(run({ maxAttempts: 2, models: [{ model: "a", attempts: 2 }, { model: "b" }] })).rejects.toThrow(
      /"b" would never be asked|use 2 attempt\(s\) and maxAttempts is 2/,
    );
    await expect(run({ models: [] })).rejects.toThrow(/at least one model/);
    await expect(run({ models: Array.from({ length: 6 }, (_, i) => ({ model: `m${i}` })) })).rejects.toThrow(/at most 5 models/);
    await expect(run({ models: [{ model: "a", atempts: 2 }] })).rejects.toThrow(/atempts/);
    await expect(run({ models: [{ model: "a", attempts: 0 }, { model: "b" }] })).rejects.toThrow(/attempts must be an integer from 1 to 20/);
    expect(model.callCount).toBe(0);
    // One chat model cannot be asked for another by name: refused rather than silently not escalating.
    const fixed = buildValidationGraph({ model });
    await expect(fixed.invoke({ request: REQUEST }, { context: { models: [{ model: "a" }, { model: "b" }] } })).rejects.toThrow(/needs a model factory/);
    expect(model.callCount).toBe(0);
  });

  it("a run's models override a builder's default model", async () => {
    const model = new ScriptedChatModel({ answers: [JSON.stringify(VALID)] });
    const asked: string[] = [];
    const graph = buildValidationGraph({ model: (r) => (asked.push(r.model), model), defaults: { model: "builder-default" } });
    await graph.invoke({ request: REQUEST }, { context: { models: [{ model: "first" }, { model: "second" }] } });
    expect(asked).toEqual(["first"]);
  });

  it("a run's models override the model in effect, which a form (Studio's) fills in as the model field's default", async () => {
    const model = new ScriptedChatModel({ answers: [JSON.stringify(VALID)] });
    const asked: string[] = [];
    const graph = buildValidationGraph({ model: (r) => (asked.push(r.model), model), env: readEnvironment({ LLM_MODEL: "local-default" }) });
    await graph.invoke({ request: REQUEST }, { context: { model: "local-default", models: [{ model: "first" }, { model: "second" }] } });
    expect(asked).toEqual(["first"]);
    // Another model beside models is still two answers to one question.
    await expect(graph.invoke({ request: REQUEST }, { context: { model: "other", models: [{ model: "first" }] } })).rejects.toThrow(
      /Give either model or models/,
    );
  });
});
