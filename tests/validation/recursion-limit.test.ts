/**
 * A run ends on its own attempt bound, never on LangGraph's recursion limit: the limit is derived from the
 * attempts (two graph steps each, plus the input's step and a review), on the compiled graph (the largest
 * settings) and per run where the settings are known (generateValidated, streamValidated). LangGraph's default
 * of 25 would stop a run of 20 attempts after 12. A recursionLimit the caller gives is LangGraph's to honour.
 */
import { Command, GraphRecursionError, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { ModelRequest } from "../../src/models.js";
import { MAX_RUN_ATTEMPTS } from "../../src/settings.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated } from "../../src/validation/stream.js";
import { ScriptedChatModel } from "../../testkit/scripted-model.js";

/** An answer the deployment-config spec refuses, every time. */
const BROKEN = JSON.stringify({ service_name: "payments-api", replicas: 8 });
const REQUEST = "A deployment config for payments-api with 8 replicas";
const broken = () => new ScriptedChatModel({ answers: [BROKEN], repeat: true });

/** A model factory with an always-wrong model per name, counting each model's calls. */
function escalation() {
  const calls: Record<string, number> = {};
  const models: Record<string, ScriptedChatModel> = {};
  const source = (request: ModelRequest) => {
    calls[request.model] = (calls[request.model] ?? 0) + 1;
    return (models[request.model] ??= broken());
  };
  return { source, calls };
}
const THREE_BY_EIGHT = [
  { model: "small", attempts: 8 },
  { model: "medium", attempts: 8 },
  { model: "large", attempts: 8 },
];

describe("the recursion limit follows the attempt bound", () => {
  it("allows runs past what LangGraph's default limit fits", () => {
    expect(MAX_RUN_ATTEMPTS).toBeGreaterThanOrEqual(20);
  });

  it("generateValidated: 20 attempts, all refused, end with max_attempts", async () => {
    const outcome = await generateValidated({ model: broken(), spec: "deployment-config", request: REQUEST, maxAttempts: 20 });
    expect(outcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 20 });
    expect(outcome.history).toHaveLength(20);
  });

  it("generateValidated: an escalation list of 3 × 8 under maxAttempts 20 spends its 20 attempts", async () => {
    const { source, calls } = escalation();
    const outcome = await generateValidated({ model: source, spec: "deployment-config", request: REQUEST, maxAttempts: 20, models: THREE_BY_EIGHT });
    expect(outcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 20 });
    expect(calls).toEqual({ small: 8, medium: 8, large: 4 });
  });

  it("streamValidated: 20 attempts end with the run's own outcome", async () => {
    const outcome = await streamValidated({ model: broken(), spec: "deployment-config", request: REQUEST, maxAttempts: 20 }).outcome;
    expect(outcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 20 });
  });

  it("graph.invoke on the built graph, given no recursionLimit: 20 attempts, and 3 × 8 escalating, end with max_attempts", async () => {
    const out = await buildValidationGraph({ model: broken() }).invoke({ request: REQUEST }, { context: { spec: "deployment-config", maxAttempts: 20 } });
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 20 });

    const { source, calls } = escalation();
    const escalated = await buildValidationGraph({ model: source }).invoke(
      { request: REQUEST },
      { context: { spec: "deployment-config", maxAttempts: 20, models: THREE_BY_EIGHT } },
    );
    expect(escalated).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 20 });
    expect(calls).toEqual({ small: 8, medium: 8, large: 4 });
  });

  it('onFailure "interrupt": 20 attempts pause for review, and a new request from the review runs 20 more in one invocation', async () => {
    const graph = buildValidationGraph({ model: broken(), checkpointer: new MemorySaver() });
    const config = { context: { spec: "deployment-config", maxAttempts: 20, onFailure: "interrupt" }, configurable: { thread_id: "review" } };
    await graph.invoke({ request: REQUEST }, config);
    let state = await graph.getState(config);
    expect(state.next).toEqual(["review"]);
    expect(state.values).toMatchObject({ attempts: 20 });
    await graph.invoke(new Command({ resume: { type: "retry", request: "The same for orders-api" } }), config);
    state = await graph.getState(config);
    expect(state.next).toEqual(["review"]);
    expect(state.values).toMatchObject({ attempts: 40 });
  });

  it("a recursionLimit the caller gives is honoured, smaller as larger", async () => {
    const graph = buildValidationGraph({ model: broken() });
    const context = { spec: "deployment-config", maxAttempts: 20 };
    await expect(graph.invoke({ request: REQUEST }, { context, recursionLimit: 10 })).rejects.toBeInstanceOf(GraphRecursionError);
    const out = await graph.invoke({ request: REQUEST }, { context, recursionLimit: 500 });
    expect(out).toMatchObject({ stopReason: "max_attempts", attempts: 20 });
  });
});
