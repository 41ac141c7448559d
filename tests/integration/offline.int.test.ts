/**
 * Offline-safe model calls: with streaming on (SSE tokens through LangGraph's stream modes, the
 * events stream the server uses, the CLI, the Reflexion agent), the package fetches nothing but the
 * configured model endpoint. Every fetch of the process is recorded; any other URL fails the test.
 *
 * The path that would fetch: ChatOpenAI built with `streaming: true` makes invoke() estimate tokens
 * with tiktoken (`getNumTokens` → `encodingForModel` in @langchain/core, which downloads
 * https://tiktoken.pages.dev/js/<encoding>.json on first use). The control case shows the recorder
 * catches exactly that; the package's factory never sets `streaming`, and usage comes from the provider.
 */
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel, type ModelRequest } from "../../src/models.js";
import { ReflexionAgent } from "../../src/reflexion/agent.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { runCli } from "../../testkit/cli.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const REQUEST = { request: "A deployment config for payments-api" };

let server: ScriptedServer;
const realFetch = globalThis.fetch;
/** Every URL fetched since the last reset, and those that were not the model endpoint. */
let fetched: string[] = [];
let foreign: string[] = [];

beforeAll(async () => {
  server = await startScriptedOpenAIServer();
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    fetched.push(url);
    if (!url.startsWith(server.baseURL)) {
      foreign.push(url);
      // Refused at once, worded so LangChain's caller does not retry it ("Cancel…"): a real offline
      // failure ("fetch failed") is retried six times with backoff, the minute's stall this test prevents.
      throw new Error(`Cancelled: offline, only the model endpoint may be fetched; got ${url}`);
    }
    return realFetch(input, init);
  }) as typeof fetch;
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  await server?.close();
});
beforeEach(() => {
  fetched = [];
  foreign = [];
  server.setResponder((req) => {
    const system = req.messages[0]?.content ?? "";
    if (system.includes("evaluator")) return "Clear. Final score: 9.5/10";
    if (system.includes("reflect")) return "Keep it short.";
    if (system.toLowerCase().includes("json")) return VALID;
    return "Recursion is a function calling itself.";
  });
});

function factory() {
  const env = { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
  return (request: ModelRequest) => createChatModel(request, env);
}

/** Only the model endpoint was fetched, and it was fetched (so the recorder saw the calls). */
function expectOnlyTheModelEndpoint() {
  expect(foreign).toEqual([]);
  expect(fetched.length).toBeGreaterThan(0);
  expect(fetched.every((url) => url === `${server.baseURL}/chat/completions`)).toBe(true);
}

describe("no fetch but the model endpoint, streaming on", () => {
  it("validation graph, token streaming (messages mode, SSE)", async () => {
    let final: Record<string, any> = {};
    for await (const [mode, chunk] of await buildValidationGraph({ model: factory() }).stream(REQUEST, { streamMode: ["messages", "values"] })) {
      if (mode === "values") final = chunk as Record<string, any>;
    }
    expect(final.success).toBe(true);
    expect(server.requests.at(-1)!.stream).toBe(true);
    expectOnlyTheModelEndpoint();
  });

  it("validation graph, the events stream the LangGraph server runs (streamEvents v2 with stream modes)", async () => {
    let tokens = 0;
    const events = buildValidationGraph({ model: factory() }).streamEvents(REQUEST, { version: "v2", streamMode: ["messages", "values", "updates"] });
    for await (const event of events) {
      if (event.event === "on_chat_model_stream") tokens++;
    }
    expect(tokens).toBeGreaterThan(0);
    expectOnlyTheModelEndpoint();
  });

  it("validation graph invoke, the Reflexion agent and the model's own stream()/invoke()", async () => {
    expect((await buildValidationGraph({ model: factory() }).invoke(REQUEST)).success).toBe(true);
    const [answer] = await new ReflexionAgent({ model: factory(), maxLoops: 1 }).run(["Explain recursion"]);
    expect(answer).toContain("Recursion");
    const model = factory()({ model: "gpt-4o-mini", role: "generate" });
    for await (const _ of await model.stream([new HumanMessage("Return JSON")])) void _;
    await model.invoke([new HumanMessage("Return JSON")]);
    expectOnlyTheModelEndpoint();
  });

  it("the command line", async () => {
    const r = await runCli(["x"], { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0" });
    expect(r.code, r.stderr).toBe(0);
    expectOnlyTheModelEndpoint();
  });

  it("control: ChatOpenAI with `streaming: true` would fetch tiktoken's data on invoke(), and the recorder catches it", async () => {
    const warn = console.warn;
    console.warn = () => undefined; // LangChain warns that it fell back to an approximate count
    try {
      const streaming = new ChatOpenAI({
        model: "gpt-4o-mini",
        apiKey: "test-key",
        configuration: { baseURL: server.baseURL },
        streaming: true,
        maxRetries: 0,
      });
      await streaming.invoke([new HumanMessage("Return JSON")]);
    } finally {
      console.warn = warn;
    }
    expect(foreign.some((url) => url.startsWith("https://tiktoken.pages.dev/js/"))).toBe(true);
  });
});
