/**
 * The verdict's feedback through langsmith's own `Client` to a scripted LangSmith endpoint on 127.0.0.1: what
 * arrives is the graph's run id with `valid` and `attempts`.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "langsmith";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerdictFeedbackHandler } from "../../src/telemetry/langsmith-feedback.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

const received: { method: string; path: string; body: Record<string, unknown> }[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      received.push({ method: req.method ?? "", path: req.url ?? "", body: text.startsWith("{") ? JSON.parse(text) : {} });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: randomUUID() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("VerdictFeedbackHandler with langsmith's Client", () => {
  it("sends the run's valid and attempts scores to the endpoint", async () => {
    const feedback = new VerdictFeedbackHandler(new Client({ apiUrl: base, apiKey: "test-key" }));
    const runId = randomUUID();
    const valid = builtinSpecs.get("deployment-config")!.example;
    await buildValidationGraph({ model: scriptedModel(["not json", JSON.stringify(valid)]) }).invoke(
      { request: "A deployment config for payments-api" },
      { runId, callbacks: [feedback] },
    );
    await feedback.flush();
    const sent = received.filter((r) => r.method === "POST" && r.path.startsWith("/feedback"));
    expect(sent.map((r) => [r.body.run_id, r.body.key, r.body.score, r.body.comment ?? null])).toEqual([
      [runId, "valid", 1, "valid"],
      [runId, "attempts", 2, null],
    ]);
  });
});
