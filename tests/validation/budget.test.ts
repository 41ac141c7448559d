/**
 * Token budgets (the run setting `maxTokens`): before each call, the tokens spent plus the call's input
 * (the prompt's characters ÷ 4) must fit; a call that would not is not made, and the run ends "budget"
 * with the last answer, its errors and the usage. Checked at the exact boundary.
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { estimateTokens } from "../../src/shared/usage.js";
import { builtinSpecs, resolveSpec } from "../../src/specs/registry.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { generationSystemPrompt } from "../../src/validation/prompts.js";
import { firstAttemptPrompt, retryPrompt } from "../../src/protocol/feedback.js";
import { ScriptedChatModel } from "../../testkit/scripted-model.js";

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const BROKEN_VALUE = { ...VALID, replicas: 8 };
const BROKEN = JSON.stringify(BROKEN_VALUE);
const REQUEST = "A deployment config for payments-api with 8 replicas";
const SYSTEM = generationSystemPrompt(resolveSpec("deployment-config"));

/** The budget's estimate of a call's input: the prompt's characters ÷ 4. */
const inputOf = (user: string) => estimateTokens(SYSTEM.length + user.length);

async function firstAttempt() {
  const probe = new ScriptedChatModel({ answers: [BROKEN] });
  const out = await buildValidationGraph({ model: probe }).invoke({ request: REQUEST }, { context: { maxAttempts: 1 } });
  const first = out.history[0];
  return { spent: out.usage.totalTokens, nextInput: inputOf(retryPrompt(REQUEST, first.output, first.errors)), first };
}

describe("token budget (maxTokens)", () => {
  it("the estimate is exactly what the scripted model reports as input, so the boundary below is exact", async () => {
    const model = new ScriptedChatModel({ answers: [BROKEN] });
    const out = await buildValidationGraph({ model }).invoke({ request: REQUEST }, { context: { maxAttempts: 1 } });
    expect(out.history[0].usage.inputTokens).toBe(inputOf(firstAttemptPrompt(REQUEST)));
  });

  it("a call that fits exactly is made; one token less and it is not, and the run ends 'budget' with the last answer, its errors and the usage", async () => {
    const { spent, nextInput, first } = await firstAttempt();

    const fits = new ScriptedChatModel({ answers: [BROKEN, JSON.stringify(VALID)] });
    const made = await buildValidationGraph({ model: fits }).invoke({ request: REQUEST }, { context: { maxTokens: spent + nextInput } });
    expect(made).toMatchObject({ success: true, stopReason: "valid", attempts: 2 });
    expect(fits.callCount).toBe(2);

    const short = new ScriptedChatModel({ answers: [BROKEN, JSON.stringify(VALID)] });
    const stopped = await buildValidationGraph({ model: short }).invoke({ request: REQUEST }, { context: { maxTokens: spent + nextInput - 1 } });
    expect(short.callCount).toBe(1);
    expect(stopped).toMatchObject({ success: false, stopReason: "budget", attempts: 1, errors: first.errors, value: BROKEN_VALUE });
    expect(stopped.usage).toMatchObject({ totalTokens: spent, calls: 1 });
    expect(stopped.history).toHaveLength(1);
  });

  it("a first call that would not fit is never made", async () => {
    const model = new ScriptedChatModel({ answers: [JSON.stringify(VALID)] });
    const out = await buildValidationGraph({ model }).invoke({ request: REQUEST }, { context: { maxTokens: inputOf(firstAttemptPrompt(REQUEST)) - 1 } });
    expect(model.callCount).toBe(0);
    expect(out).toMatchObject({ success: false, stopReason: "budget", attempts: 0, errors: [], value: null, history: [] });
    expect(out.usage.totalTokens).toBe(0);
  });

  it("never one call past: a call whose output passes the budget is the last one", async () => {
    // The first call fits on its input alone; its output takes the total past the budget.
    const model = new ScriptedChatModel({ answers: [BROKEN], repeat: true });
    const budget = inputOf(firstAttemptPrompt(REQUEST)) + 1;
    const out = await buildValidationGraph({ model }).invoke({ request: REQUEST }, { context: { maxTokens: budget, maxAttempts: 5 } });
    expect(model.callCount).toBe(1);
    expect(out.usage.totalTokens).toBeGreaterThan(budget);
    expect(out.stopReason).toBe("budget");
  });

  it("with escalation, the budget counts every model's tokens", async () => {
    const { spent, nextInput } = await firstAttempt();
    const small = new ScriptedChatModel({ answers: [BROKEN], repeat: true });
    const large = new ScriptedChatModel({ answers: [JSON.stringify(VALID)], repeat: true });
    const graph = buildValidationGraph({ model: (r) => (r.model === "large" ? large : small) });
    const out = await graph.invoke({ request: REQUEST }, { context: { models: [{ model: "small" }, { model: "large" }], maxTokens: spent + nextInput - 1 } });
    expect(out).toMatchObject({ stopReason: "budget", attempts: 1 });
    expect(large.callCount).toBe(0);
  });

  it("with onFailure 'interrupt' a budget stop goes to review; a person's new request gets a fresh budget", async () => {
    const { spent, nextInput } = await firstAttempt();
    const model = new ScriptedChatModel({ answers: [BROKEN, JSON.stringify(VALID)] });
    const graph = buildValidationGraph({ model, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "budget-review" }, context: { onFailure: "interrupt" as const, maxTokens: spent + nextInput - 1 } };
    await graph.invoke({ request: REQUEST }, config);
    const paused = await graph.getState(config);
    expect(paused.next).toEqual(["review"]);
    expect(paused.values.stopReason).toBe("budget");
    const out = await graph.invoke(new Command({ resume: { type: "retry", request: REQUEST } }), config);
    expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 2 });
    expect(model.callCount).toBe(2);
  });

  it("generateValidated takes maxTokens; bad budgets are refused before any call", async () => {
    const { spent, nextInput } = await firstAttempt();
    const model = new ScriptedChatModel({ answers: [BROKEN, JSON.stringify(VALID)] });
    const outcome = await generateValidated({ model, spec: "deployment-config", request: REQUEST, maxTokens: spent + nextInput - 1 });
    expect(outcome).toMatchObject({ success: false, stopReason: "budget", attempts: 1 });
    for (const maxTokens of [0, 1.5, -3, "100"]) {
      await expect(generateValidated({ model, spec: "deployment-config", request: REQUEST, maxTokens: maxTokens as number })).rejects.toThrow(
        /maxTokens must be an integer from 1 to 100000000/,
      );
    }
    expect(model.callCount).toBe(1);
  });
});
