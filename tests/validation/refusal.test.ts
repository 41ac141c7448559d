/**
 * Provider refusals: an answer the provider marks as a refusal is recorded as one, not validated as a
 * broken answer; the same request is asked once more, and a second refusal (or one at the last attempt)
 * ends the run "refused" with the provider's text, secrets redacted. Prose that only reads like a
 * refusal is an answer like any other.
 */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { firstAttemptPrompt, retryPrompt } from "../../src/protocol/feedback.js";
import { ScriptedChatModel, scriptedModel } from "../../testkit/scripted-model.js";

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const BROKEN = JSON.stringify({ ...VALID, replicas: 8 });
const REQUEST = "A deployment config for payments-api with 8 replicas";
const NO = { refusal: "I'm sorry, I can't help with that." };
const userPrompt = (model: ScriptedChatModel, call: number) => String(model.calls[call].messages.at(-1)!.content);

describe("provider refusals", () => {
  it("a refusal is recorded, not validated; the retry asks the same request again, and a valid answer ends the run", async () => {
    const model = scriptedModel([NO, JSON.stringify(VALID)]);
    const out = await buildValidationGraph({ model }).invoke({ request: REQUEST }, { context: { model: "m" } });
    expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 2, refusal: null });
    expect(out.history[0]).toMatchObject({ attempt: 1, output: "", errors: [], valid: false, refusal: NO.refusal, model: "m" });
    expect(out.history[0].usage.calls).toBe(1);
    expect(userPrompt(model, 1)).toBe(firstAttemptPrompt(REQUEST));
  });

  it("a second refusal ends the run 'refused' after one retry, with the provider's text", async () => {
    const model = new ScriptedChatModel({ answers: [NO], repeat: true });
    const out = await buildValidationGraph({ model }).invoke({ request: REQUEST }, { context: { maxAttempts: 5 } });
    expect(model.callCount).toBe(2);
    expect(out).toMatchObject({ success: false, stopReason: "refused", attempts: 2, refusal: NO.refusal, errors: [], value: null });
    expect(out.history.map((h) => h.refusal)).toEqual([NO.refusal, NO.refusal]);
  });

  it("a refusal at the last attempt ends the run 'refused'", async () => {
    const model = scriptedModel([NO]);
    const out = await buildValidationGraph({ model }).invoke({ request: REQUEST }, { context: { maxAttempts: 1 } });
    expect(out).toMatchObject({ stopReason: "refused", attempts: 1, refusal: NO.refusal });
  });

  it("after a refusal the retry quotes the last real answer and its exact errors; the run keeps them when it ends refused", async () => {
    const model = scriptedModel([BROKEN, NO, NO]);
    const out = await buildValidationGraph({ model }).invoke({ request: REQUEST }, { context: { maxAttempts: 5 } });
    const errors = [RULES.replicasNeedCpu(0.5, 8)];
    expect(userPrompt(model, 2)).toBe(retryPrompt(REQUEST, out.history[0].output, errors));
    expect(out).toMatchObject({ stopReason: "refused", attempts: 3, errors, value: JSON.parse(BROKEN) });
  });

  it("the provider's text is redacted like any other provider text, and bounded", async () => {
    const model = scriptedModel([{ refusal: `No. (Authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123) ${"x".repeat(5_000)}` }]);
    const out = await generateValidated({ model, spec: "deployment-config", request: REQUEST, maxAttempts: 1 });
    expect(out.stopReason).toBe("refused");
    if (out.success) throw new Error("unreachable");
    expect(out.refusal).toContain("[redacted]");
    expect(out.refusal).not.toContain("sk-proj-abcdefghijklmnopqrstuvwxyz0123");
    expect(out.refusal!.length).toBeLessThan(2_100);
    expect(out.history[0].refusal).toBe(out.refusal);
  });

  it("prose that reads like a refusal, without the provider's mark, is an answer: validated, and its errors fed back", async () => {
    const model = new ScriptedChatModel({ answers: ["I'm sorry, but I can't help with that."], repeat: true });
    const out = await buildValidationGraph({ model }).invoke({ request: REQUEST }, { context: { maxAttempts: 2 } });
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 2, refusal: null });
    expect(out.errors.length).toBeGreaterThan(0);
    expect(out.history.every((h) => h.refusal === undefined)).toBe(true);
  });

  it("with onFailure 'interrupt' a refused run goes to review, showing the refusal", async () => {
    const model = new ScriptedChatModel({ answers: [NO], repeat: true });
    const graph = buildValidationGraph({ model, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "refused-review" }, context: { onFailure: "interrupt" as const } };
    await graph.invoke({ request: REQUEST }, config);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["review"]);
    const shown = state.tasks.flatMap((t) => t.interrupts).at(-1)?.value as Record<string, unknown>;
    expect(shown).toMatchObject({ kind: "review", refusal: NO.refusal, output: "" });
  });
});
