/**
 * A run through the package's server, traced: the run's span and its attempts' spans, in the test's in-memory
 * exporter, and none left open, for a run that ends valid and for one its client leaves while it runs.
 *
 * The dev server (`langgraphjs dev`, tests/server/server.int.test.ts) runs graphs in a process of its own, where
 * an exporter registered in the test cannot see them (docs/tracing.md says how to register the SDK there). So
 * this test runs at the closest seam in this process: the graph src/server serves, driven through the official
 * SDK's client by @langchain/langgraph-api's embedded server, which runs it with the executor the dev server's
 * workers use (`streamState`: LangGraph's streamEvents under the server's run config and cancellation), against
 * the scripted OpenAI-compatible model server.
 */
import { serve, type ServerType } from "@hono/node-server";
import { MemorySaver } from "@langchain/langgraph";
import type { ThreadSaver } from "@langchain/langgraph-api/experimental/embed";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_MODEL } from "../../src/environment.js";
import { validationGraph } from "../../src/server/graphs.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { systemPromptOf, startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { parentOf, recordTelemetry, spansNamed, type Recording } from "../telemetry/support.js";

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const REQUEST = "A deployment config for payments-api with 8 replicas";

/** Threads in memory, as the embedded server asks for them. */
function memoryThreads(): ThreadSaver {
  const threads = new Map<string, { thread_id: string; metadata: Record<string, unknown> }>();
  return {
    get: async (id) => {
      const thread = threads.get(id);
      if (thread === undefined) throw new Error(`thread ${id} not found`);
      return thread;
    },
    set: async (id, { metadata }) => {
      const thread = { thread_id: id, metadata: { ...threads.get(id)?.metadata, ...metadata } };
      threads.set(id, thread);
      return thread;
    },
    delete: async (id) => void threads.delete(id),
  };
}

let model: ScriptedServer;
let telemetry: Recording;
let http: ServerType;
let client: Client;
const env = { OPENAI_BASE_URL: process.env.OPENAI_BASE_URL, OPENAI_API_KEY: process.env.OPENAI_API_KEY };
/** The server's modules log what reaches the process's uncaught-error events: listeners taken off again after. */
const PROCESS_EVENTS = ["uncaughtException", "unhandledRejection"].map((event) => event as NodeJS.Signals);
const listenersBefore = new Map(PROCESS_EVENTS.map((event) => [event, process.listeners(event)]));

beforeAll(async () => {
  const { createEmbedServer } = await import("@langchain/langgraph-api/experimental/embed");
  model = await startScriptedOpenAIServer();
  telemetry = recordTelemetry();
  // The served graph reads its model from the environment at each run, as on the server.
  process.env.OPENAI_BASE_URL = model.baseURL;
  process.env.OPENAI_API_KEY = "test";
  // A copy of the served graph: the embedded server sets its checkpointer on the graph it is given.
  const app = createEmbedServer({ graph: { validation: validationGraph.withConfig({}) }, threads: memoryThreads(), checkpointer: new MemorySaver() });
  const port = await new Promise<number>((resolve) => {
    http = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => resolve(info.port));
  });
  client = new Client({ apiUrl: `http://127.0.0.1:${port}`, apiKey: null });
});
afterAll(async () => {
  for (const event of PROCESS_EVENTS) {
    for (const listener of process.listeners(event)) if (!listenersBefore.get(event)!.includes(listener)) process.off(event, listener);
  }
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  await new Promise((resolve) => http?.close(resolve));
  await telemetry?.stop();
  await model?.close();
});
beforeEach(() => telemetry.spans.reset());

describe("a run through the package's server", () => {
  it("is a run span with a chat span per attempt under it, ended with the run's verdict", async () => {
    model.setReplies([JSON.stringify({ ...VALID, replicas: 8 }), JSON.stringify(VALID)]);
    const thread = await client.threads.create();
    let last: Record<string, unknown> | undefined;
    for await (const chunk of client.runs.stream(thread.thread_id, "validation", { input: { request: REQUEST }, streamMode: "values" })) {
      if (chunk.event === "values") last = chunk.data as Record<string, unknown>;
    }
    expect(last).toMatchObject({ success: true, stopReason: "valid", attempts: 2 });
    expect(model.requests.map((request) => systemPromptOf(request).length > 0)).toEqual([true, true]);

    const [run] = spansNamed(telemetry.spans, "invoke_agent Deterministic validation");
    expect(run.attributes).toMatchObject({
      "gen_ai.request.model": DEFAULT_MODEL,
      "gen_ai.provider.name": "openai",
      "trustworthy.stop_reason": "valid",
      "trustworthy.attempts": 2,
    });
    const attempts = spansNamed(telemetry.spans, "chat ");
    expect(attempts.map((span) => [span.name, span.attributes["trustworthy.valid"], parentOf(span)])).toEqual([
      [`chat ${DEFAULT_MODEL}`, false, run.spanContext().spanId],
      [`chat ${DEFAULT_MODEL}`, true, run.spanContext().spanId],
    ]);
    expect(telemetry.openSpans()).toEqual([]);
  });

  it("a run its client leaves while the model answers is cancelled by the server, and ends its spans cancelled", async () => {
    const ended = telemetry.nextEnded("invoke_agent");
    const leave = new AbortController();
    // The model never answers: the client leaves once the request reached it, and the server's cancel ends the call.
    model.setResponder(() => {
      leave.abort();
      return { fault: "hang" };
    });
    const thread = await client.threads.create();
    const stream = client.runs.stream(thread.thread_id, "validation", { input: { request: REQUEST }, streamMode: "values", signal: leave.signal });
    await expect(
      (async () => {
        for await (const _chunk of stream);
      })(),
    ).rejects.toThrow();
    const run = await ended;
    expect(run.attributes).toMatchObject({ "error.type": "cancelled" });
    expect(telemetry.openSpans()).toEqual([]);
  });
});
