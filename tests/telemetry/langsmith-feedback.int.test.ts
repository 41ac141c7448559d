/**
 * The verdict's feedback through langsmith's own `Client` to a scripted LangSmith endpoint on 127.0.0.1: what
 * arrives is the graph's run id with `valid` and `attempts`.
 */
import { randomUUID } from "node:crypto";
import { Client } from "langsmith";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerdictFeedbackHandler } from "../../src/telemetry/langsmith-feedback.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";
import { startLangSmithEndpoint, type LangSmithEndpoint } from "../support/langsmith-endpoint.js";

let endpoint: LangSmithEndpoint;
beforeAll(async () => {
  endpoint = await startLangSmithEndpoint();
});
afterAll(async () => {
  await endpoint.close();
});

describe("VerdictFeedbackHandler with langsmith's Client", () => {
  it("sends the run's valid and attempts scores to the endpoint", async () => {
    const feedback = new VerdictFeedbackHandler(new Client({ apiUrl: endpoint.url, apiKey: "test-key" }));
    const runId = randomUUID();
    const valid = builtinSpecs.get("deployment-config")!.example;
    await buildValidationGraph({ model: scriptedModel(["not json", JSON.stringify(valid)]) }).invoke(
      { request: "A deployment config for payments-api" },
      { runId, callbacks: [feedback] },
    );
    await feedback.flush();
    const sent = endpoint.received.filter((r) => r.method === "POST" && r.path.startsWith("/feedback"));
    expect(sent.map((r) => [r.body?.run_id, r.body?.key, r.body?.score, r.body?.comment ?? null])).toEqual([
      [runId, "valid", 1, "valid"],
      [runId, "attempts", 2, null],
    ]);
  });
});
