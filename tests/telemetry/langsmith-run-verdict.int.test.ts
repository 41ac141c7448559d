/**
 * The verdict on the graph's LangSmith run, on the wire: LangChain's own tracer (`LangChainTracer`) with
 * langsmith's own `Client` sends the runs to a scripted LangSmith endpoint on 127.0.0.1, and the graph's
 * run as the endpoint stores it carries the verdict as metadata and tags, for a valid run and for a
 * failed one, in the client's multipart batches (its default) and in its one-run-at-a-time requests
 * (where the verdict arrives in the update, after the run was created without it).
 */
import { randomUUID } from "node:crypto";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import { HumanMessage } from "@langchain/core/messages";
import { createAgent } from "langchain";
import { Client } from "langsmith";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { roleModels } from "../../testkit/role-models.js";
import { validatedResponseMiddleware } from "../../src/agents/index.js";
import { answerTurn, REQUEST as AGENT_REQUEST, scriptedTurns, threeDefects, valid } from "../agents/agent.support.js";
import { scriptedModel } from "../../testkit/scripted-model.js";
import { startLangSmithEndpoint, type LangSmithEndpoint } from "../support/langsmith-endpoint.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const REQUEST = "A deployment config for payments-api";

let endpoint: LangSmithEndpoint;
beforeEach(async () => {
  endpoint = await startLangSmithEndpoint();
});
afterEach(async () => {
  await endpoint.close();
});

/**
 * A run traced through a LangChainTracer over langsmith's Client (batched, its default, or one run at a time):
 * what the run returned, its own run as the endpoint stored it, and every run stored.
 */
async function traced<T>(invoke: (config: { runId: string; callbacks: LangChainTracer[] }) => Promise<T>, options: { autoBatchTracing?: boolean } = {}) {
  const client = new Client({ apiUrl: endpoint.url, apiKey: "test-key", autoBatchTracing: options.autoBatchTracing ?? true });
  const tracer = new LangChainTracer({ client, projectName: "trustworthy-output" });
  const runId = randomUUID();
  const out = await invoke({ runId, callbacks: [tracer] });
  // The tracer's handlers may run in the background: wait for them, then for the client's requests.
  await awaitAllCallbacks();
  await client.awaitPendingTraceBatches();
  const runs = endpoint.runs();
  return { out, run: runs.get(runId), runs };
}

/** A run of the validation graph, traced. */
const tracedRun = (answers: string[], options: { maxAttempts?: number; autoBatchTracing?: boolean } = {}) =>
  traced(
    (config) =>
      buildValidationGraph({ model: scriptedModel(answers) }).invoke({ request: REQUEST }, { ...config, context: { maxAttempts: options.maxAttempts ?? 3 } }),
    options,
  );

type StoredRun = ReturnType<LangSmithEndpoint["runs"]> extends Map<string, infer R> ? R : never;

/** The verdict on a stored run: its metadata and tags say it, and its tags say no other validity. */
function expectVerdict(run: StoredRun | undefined, verdict: { valid: boolean; attempts: number; stopReasons: string[]; spec?: string }): void {
  expect(run?.extra?.metadata).toMatchObject({
    trustworthy_valid: verdict.valid,
    trustworthy_attempts: verdict.attempts,
    trustworthy_stop_reason: verdict.stopReasons.join(","),
    ...(verdict.spec !== undefined ? { trustworthy_spec: verdict.spec } : {}),
  });
  const validity = verdict.valid ? "trustworthy:valid" : "trustworthy:invalid";
  expect(run?.tags).toEqual(expect.arrayContaining([validity, ...verdict.stopReasons.map((reason) => `trustworthy:stop:${reason}`)]));
  expect(run?.tags).not.toContain(verdict.valid ? "trustworthy:invalid" : "trustworthy:valid");
}

describe("the verdict on the graph's LangSmith run", () => {
  it("a valid run: metadata and tags on the graph's run, sent in the client's multipart batches", async () => {
    const { out, run, runs } = await tracedRun(["not json", VALID]);
    expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 2 });
    expect(endpoint.received.some((r) => r.path === "/runs/multipart")).toBe(true);
    expect(run?.name).toBe("Deterministic validation");
    expectVerdict(run, { valid: true, attempts: 2, stopReasons: ["valid"], spec: "deployment-config" });
    // On the graph's run only: its steps and model calls carry none of it.
    const others = [...runs.values()].filter((r) => r.id !== run!.id);
    expect(others.length).toBeGreaterThan(3);
    expect(others.filter((r) => r.extra?.metadata?.trustworthy_valid !== undefined || r.tags?.some((t) => t.startsWith("trustworthy:")))).toEqual([]);
  });

  it("a failed run: valid false with its stop reason", async () => {
    const { out, run } = await tracedRun(["not json", "still not json"], { maxAttempts: 2 });
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 2 });
    expectVerdict(run, { valid: false, attempts: 2, stopReasons: ["max_attempts"], spec: "deployment-config" });
  });

  it("one run at a time: created without a verdict, updated with it", async () => {
    const { run } = await tracedRun(["not json"], { maxAttempts: 1, autoBatchTracing: false });
    const created = endpoint.received.find((r) => r.method === "POST" && r.path === "/runs" && r.body?.id === run?.id);
    const updated = endpoint.received.find((r) => r.method === "PATCH" && r.path === `/runs/${run?.id}`);
    expect((created?.body?.extra as { metadata?: object } | undefined)?.metadata).not.toHaveProperty("trustworthy_valid");
    expect(updated?.body).toMatchObject({
      extra: { metadata: { trustworthy_valid: false, trustworthy_attempts: 1, trustworthy_stop_reason: "max_attempts" } },
      tags: expect.arrayContaining(["trustworthy:invalid", "trustworthy:stop:max_attempts"]),
    });
  });
});

describe("the verdict on Reflexion's LangSmith run", () => {
  // The first task ends early on a valid answer scored 9.5; the second uses its two rounds on answers scored 3.
  const tracedReflexion = (context: Record<string, unknown>) => {
    const m = roleModels({
      actor: ["not json", VALID, "not json", "still not json"],
      evaluator: ["Weak. Final score: 4/10", "Good. Final score: 9.5/10", "Poor. Final score: 3/10", "Poor. Final score: 3/10"],
      reflector: ["Answer with JSON.", "Answer with JSON.", "Answer with JSON.", "Answer with JSON."],
    });
    return traced((config) => buildReflexionGraph({ model: m.factory }).invoke({ tasks: ["A deployment config", "Another"] }, { ...config, context }));
  };

  it("with a spec: valid when every task's result passed, each task's stop reason, and the rounds over its tasks", async () => {
    const { out, run } = await tracedReflexion({ spec: "deployment-config", maxLoops: 2 });
    expect(out.outcomes.map((o) => [o.stopReason, o.valid, o.iterations])).toEqual([
      ["early_stop", true, 2],
      ["max_loops", false, 2],
    ]);
    expectVerdict(run, { valid: false, attempts: 4, stopReasons: ["early_stop", "max_loops"], spec: "deployment-config" });
  });

  it("without a spec: no validity is claimed, only how each task stopped and the rounds", async () => {
    const { out, run } = await tracedReflexion({ maxLoops: 2 });
    expect(out.outcomes.map((o) => [o.stopReason, o.valid, o.iterations])).toEqual([
      ["early_stop", null, 2],
      ["max_loops", null, 2],
    ]);
    expect(run?.extra?.metadata).toMatchObject({ trustworthy_attempts: 4, trustworthy_stop_reason: "early_stop,max_loops" });
    expect(run?.extra?.metadata).not.toHaveProperty("trustworthy_valid");
    expect(run?.extra?.metadata).not.toHaveProperty("trustworthy_spec");
    expect(run?.tags?.filter((t) => t === "trustworthy:valid" || t === "trustworthy:invalid")).toEqual([]);
  });
});

describe("the verdict on a createAgent run with the middleware", () => {
  const tracedAgent = (turns: Parameters<typeof scriptedTurns>[0]) =>
    traced((config) =>
      createAgent({ model: scriptedTurns(turns), tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 2 })] }).invoke(
        { messages: [new HumanMessage(AGENT_REQUEST)] },
        config,
      ),
    );

  it("an accepted answer: the agent's run carries it; none of its steps does", async () => {
    const { out, run, runs } = await tracedAgent([() => answerTurn(threeDefects), () => answerTurn(valid)]);
    expect(out.responseOutcome).toMatchObject({ success: true, stopReason: "valid", attempts: 2 });
    expectVerdict(run, { valid: true, attempts: 2, stopReasons: ["valid"], spec: "deployment-config" });
    const others = [...runs.values()].filter((r) => r.id !== run!.id);
    expect(others.filter((r) => r.tags?.some((t) => t.startsWith("trustworthy:")))).toEqual([]);
  });

  it("out of attempts: invalid, with its stop reason", async () => {
    const { out, run } = await tracedAgent([() => answerTurn(threeDefects), () => answerTurn(threeDefects)]);
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 2 });
    expectVerdict(run, { valid: false, attempts: 2, stopReasons: ["max_attempts"], spec: "deployment-config" });
  });
});
