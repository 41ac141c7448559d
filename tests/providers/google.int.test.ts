/**
 * `google/…` models through the real @langchain/google client (ChatGoogle), pointed (GOOGLE_BASE_URL) at a
 * scripted server speaking Gemini's generateContent API: "auto" sends the spec's schema as
 * `responseJsonSchema`, in the JSON Schema subset Gemini documents (`$ref`, `$defs`, `anyOf`, numeric
 * bounds kept), with the rest listed as left out; only finishReason STOP finishes an answer; a refused
 * schema falls back; the transport the factory gives ChatGoogle (its `apiClient`) carries the key, the base
 * URL, a whole-answer deadline and the client's retries.
 */
import { HumanMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import { readEnvironment, type Environment } from "../../src/environment.js";
import { loadChatModel, type ModelRequest } from "../../src/models.js";
import { MODEL_PROVIDERS } from "../../src/providers/index.js";
import { defineSpec } from "../../src/specs/spec.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { callModelInMode } from "../../src/validation/output-mode.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { startScriptedGeminiServer, type ProviderReply, type ScriptedProviderServer } from "../../testkit/provider-servers.js";
import { describeGeminiTransport, geminiPiece } from "../support/gemini-transport.js";
import { trackTimers } from "../../testkit/live-timers.js";
import { fileURLToPath } from "node:url";

const SOURCE = fileURLToPath(new URL("../../src/", import.meta.url));

const SPEC = builtinSpecs.get("deployment-config")!;
const VALID = JSON.stringify(SPEC.example);
const REQUEST = { request: "A deployment config for payments-api with 8 replicas" };
const MODEL = "google/gemini-2.5-flash";

let server: ScriptedProviderServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const environment = (baseUrl: string, extra: Partial<Environment> = {}): Environment => ({
  ...readEnvironment({}),
  providers: { google: { apiKey: "gemini-test-key", baseUrl } },
  maxRetries: 0,
  ...extra,
});

async function graphFor(replies: ProviderReply[], extra: Partial<Environment> = {}) {
  server = await startScriptedGeminiServer(replies);
  const env = environment(server.baseURL, extra);
  return buildValidationGraph({ model: (request: ModelRequest) => loadChatModel(request, env) });
}

/** A spec whose schema uses what `responseJsonSchema` takes and what it does not. */
const ORDER = defineSpec({
  name: "gemini-order",
  description: "An order",
  schema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    $defs: {
      line: { type: "object", properties: { sku: { type: "string", pattern: "^[A-Z]{3}$" }, qty: { type: "integer", minimum: 1 } }, required: ["sku", "qty"] },
    },
    properties: {
      id: { oneOf: [{ type: "string", minLength: 3 }, { type: "integer" }] },
      lines: { type: "array", items: { $ref: "#/$defs/line" }, minItems: 1, uniqueItems: true },
      note: { type: ["string", "null"] },
    },
    required: ["id", "lines"],
    additionalProperties: false,
  },
  example: { id: "A-1", lines: [{ sku: "ABC", qty: 2 }], note: null },
});

describe("google/… through ChatGoogle", () => {
  it("auto sends responseJsonSchema (JSON Schema, $ref and bounds kept) with JSON output; the key in Gemini's header; usage is usageMetadata's", async () => {
    const graph = await graphFor([{ text: JSON.stringify(ORDER.example), usage: { input: 700, output: 70 } }]);
    const out = await graph.invoke({ request: "An order" }, { context: { model: MODEL, spec: ORDER } });
    expect(out).toMatchObject({ success: true, attempts: 1, value: ORDER.example });
    const [sent] = server!.requests;
    expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent.headers["x-goog-api-key"]).toBe("gemini-test-key");
    expect(sent.body.generationConfig.responseMimeType).toBe("application/json");
    expect(sent.body.generationConfig).not.toHaveProperty("responseSchema");
    expect(sent.body.generationConfig.responseJsonSchema).toEqual({
      type: "object",
      $defs: { line: { type: "object", properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 } }, required: ["sku", "qty"] } },
      properties: {
        id: { anyOf: [{ type: "string" }, { type: "integer" }] },
        lines: { type: "array", items: { $ref: "#/$defs/line" }, minItems: 1 },
        note: { type: ["string", "null"] },
      },
      required: ["id", "lines"],
      additionalProperties: false,
    });
    expect(out.history[0]).toMatchObject({
      mode: "json_schema",
      schemaDropped: ["/$defs/line/properties/sku: pattern", "/properties/id/oneOf/0: minLength", "/properties/lines: uniqueItems"],
      usage: { inputTokens: 700, outputTokens: 70, totalTokens: 770, calls: 1 },
    });
  });

  it("what Gemini's decoding cannot hold is still judged: an answer breaking a dropped keyword is refused and retried with the exact error", async () => {
    const bad = { id: "A-1", lines: [{ sku: "abc", qty: 2 }] };
    const graph = await graphFor([{ text: JSON.stringify(bad) }, { text: JSON.stringify(ORDER.example) }]);
    const out = await graph.invoke({ request: "An order" }, { context: { model: MODEL, spec: ORDER } });
    expect(out).toMatchObject({ success: true, attempts: 2, value: ORDER.example });
    expect(out.history[0].valid).toBe(false);
    expect(JSON.stringify(out.history[0].errors)).toContain("lines[0].sku");
    const retry = server!.requests[1].body.contents.map((c: { parts: Array<{ text?: string }> }) => c.parts.map((p) => p.text).join("")).join("\n");
    expect(retry).toContain("lines[0].sku");
  });

  it("a schema Gemini refuses (HTTP 400) falls back to text; the refusal is recorded", async () => {
    const graph = await graphFor([
      { status: 400, body: { error: { code: 400, message: "Invalid JSON payload: responseJsonSchema is not supported", status: "INVALID_ARGUMENT" } } },
      { text: VALID },
    ]);
    const out = await graph.invoke(REQUEST, { context: { model: MODEL } });
    expect(out).toMatchObject({ success: true, attempts: 1, value: SPEC.example });
    expect(out.history[0].mode).toBe("text");
    expect(out.history[0].fallbacks?.[0]).toMatch(/^json_schema refused \(.*HTTP 400.*responseJsonSchema is not supported.*\); fell back to /);
    expect(server!.requests[1].body.generationConfig).not.toHaveProperty("responseJsonSchema");
  });

  it('finishReason "MAX_TOKENS" is a cut, "OTHER" did not finish, "SAFETY" withheld: none of them is valid', async () => {
    const graph = await graphFor([
      { text: VALID.slice(0, 40), stopReason: "MAX_TOKENS" },
      { text: VALID, stopReason: "OTHER" },
      { text: VALID, stopReason: "SAFETY" },
    ]);
    const out = await graph.invoke(REQUEST, { context: { model: MODEL, outputMode: "text", maxAttempts: 3 } });
    expect(out.success).toBe(false);
    expect(out.history[0].truncated).toBe('finishReason "MAX_TOKENS"');
    expect(out.history[1]).toMatchObject({ valid: false, unfinished: 'finishReason "OTHER"' });
    expect(out.history[2].refusal).toMatch(/^finishReason "SAFETY"/);
  });

  it("the client's retries: a 503 is tried again (maxRetries), and one still failing after the last try is the provider's error", async () => {
    const busy = { status: 503, body: { error: { code: 503, message: "The model is overloaded", status: "UNAVAILABLE" } } };
    const graph = await graphFor([busy, { text: VALID }], { maxRetries: 1 });
    const out = await graph.invoke(REQUEST, { context: { model: MODEL } });
    expect(out).toMatchObject({ success: true, attempts: 1 });
    expect(server!.requests).toHaveLength(2);
    await server!.close();
    server = await startScriptedGeminiServer([busy]);
    const model = await loadChatModel({ model: MODEL, role: "generate" }, environment(server.baseURL));
    const failed = await callModelInMode(model, [new HumanMessage("hi")], "text", SPEC, { node: "generate" }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ProviderError);
    expect((failed as ProviderError).status).toBe(503);
    expect((failed as Error).message).toMatch(/HTTP 503/);
  });
});

describe("the retries keep nothing of a failed try", () => {
  it("a 503 then an answer: the failed try's body is let go, so no deadline timer outlives the call", async () => {
    const tracker = trackTimers();
    try {
      server = await startScriptedGeminiServer([{ status: 503, body: { error: { code: 503, message: "overloaded" } } }, { text: VALID }]);
      const model = await loadChatModel({ model: MODEL, role: "generate" }, environment(server.baseURL, { maxRetries: 1, timeoutMs: 600_000 }));
      tracker.reset();
      const answer = await callModelInMode(model, [new HumanMessage("hi")], "text", SPEC, { node: "generate" });
      expect(answer.text).toBe(VALID);
      expect(server.requests).toHaveLength(2);
      await server.close();
      server = undefined;
      await tracker.socketsClosed();
      const deadlines = tracker.liveTimers().filter((timer) => timer.stack.includes(`${SOURCE}providers/deadline.ts`));
      expect(deadlines).toEqual([]);
    } finally {
      tracker.stop();
    }
  });
});

describe("tool mode: one function declaration, called by name", () => {
  it.each(["google", "google-genai"] as const)("%s: the call's arguments are the answer, judged and kept", async (provider) => {
    server = await startScriptedGeminiServer([
      { toolUse: { input: JSON.stringify({ ...(SPEC.example as object), replicas: 9 }) } },
      { toolUse: { input: VALID } },
    ]);
    const env: Environment = { ...readEnvironment({}), providers: { [provider]: { apiKey: "gemini-test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
    const graph = buildValidationGraph({ model: (request: ModelRequest) => loadChatModel(request, env) });
    const out = await graph.invoke(REQUEST, { context: { model: `${provider}/gemini-2.5-flash`, outputMode: "tool" } });
    expect(out).toMatchObject({ success: true, attempts: 2, value: SPEC.example });
    expect(out.history.map((record) => record.mode)).toEqual(["tool", "tool"]);
    expect(out.history[0].valid).toBe(false);
    const [sent] = server!.requests;
    const [declaration] = sent.body.tools[0].functionDeclarations;
    expect(sent.body.toolConfig.functionCallingConfig).toMatchObject({ mode: "ANY", allowedFunctionNames: [declaration.name] });
    expect(Object.keys(declaration.parameters.properties).sort()).toEqual(Object.keys(SPEC.schema.properties!).sort());
  });
});

describeGeminiTransport("google", "the transport the factory gives ChatGoogle", ({ wire, gemini, streamed, ask }) => {
  it("relies on ChatGoogle naming itself `google`, tracing as google_genai, and sending every request through the apiClient it is given", async () => {
    const model = await gemini();
    // If an upgrade renames the client or stops taking an apiClient, the row no longer recognises or bounds it: this fails.
    expect(model._llmType()).toBe(MODEL_PROVIDERS.google.client);
    expect((model as unknown as { getLsParams(o: object): { ls_provider: string } }).getLsParams({}).ls_provider).toBe(MODEL_PROVIDERS.google.traced);
    wire().answer(() => ({
      headers: { "content-type": "application/json" },
      body: Buffer.from(JSON.stringify({ candidates: [{ content: { parts: [{ text: VALID }] }, finishReason: "STOP" }] })),
      end: "close",
    }));
    expect(await ask()).toMatchObject({ text: VALID });
    expect(wire().requests.at(-1)).toMatchObject({ path: "/v1beta/models/gemini-2.5-flash:generateContent" });
  });

  it("an event the client cannot read (not JSON) is never a finished answer, even with STOP after it", async () => {
    const body = geminiPiece('{"service":') + "data: {not json\r\n\r\n" + geminiPiece('"x"}', "STOP");
    wire().answer(() => ({ headers: { "content-type": "text/event-stream" }, body: Buffer.from(body), end: "close" }));
    // ChatGoogle turns the unreadable event into a piece with its own finishReason "stop", merged with the real one.
    expect(await ask(undefined, streamed())).toMatchObject({ unfinished: 'finishReason "stopSTOP"' });
  });
});
