/**
 * `google-genai/…` models through the real @langchain/google-genai client, pointed (GOOGLE_BASE_URL) at a
 * scripted server speaking Gemini's generateContent API: "auto" sends the subset of the spec's schema Gemini
 * takes as responseSchema, usage is read from usageMetadata, finishReason MAX_TOKENS is a cut and only STOP
 * a finished answer. The client the model factory builds is bounded: the whole-answer deadline covers its
 * requests, and the promise @google/generative-ai makes beside each stream (which LangChain never reads)
 * cannot reach the process when the stream fails, is reset or is stopped.
 */
import { afterEach, describe, expect, it } from "vitest";
import { unfinishedAnswerError } from "../../src/protocol/feedback.js";
import { streamValidated } from "../../src/validation/stream.js";
import { describeGeminiTransport } from "../support/gemini-transport.js";
import { readEnvironment, type Environment } from "../../src/environment.js";
import { loadChatModel, type ModelRequest } from "../../src/models.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { startScriptedGeminiServer, type ProviderReply, type ScriptedProviderServer } from "../../testkit/provider-servers.js";

const SPEC = builtinSpecs.get("deployment-config")!;
const VALID = JSON.stringify(SPEC.example);
const REQUEST = { request: "A deployment config for payments-api with 8 replicas" };

let server: ScriptedProviderServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function graphFor(replies: ProviderReply[]) {
  server = await startScriptedGeminiServer(replies);
  const env: Environment = { ...readEnvironment({}), providers: { "google-genai": { apiKey: "gemini-test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
  return buildValidationGraph({ model: (request: ModelRequest) => loadChatModel(request, env) });
}

describe("google-genai/… through ChatGoogleGenerativeAI", () => {
  it("auto sends responseSchema (the subset Gemini takes) with JSON output; usage is usageMetadata's", async () => {
    const graph = await graphFor([{ text: VALID, usage: { input: 700, output: 70 } }]);
    const out = await graph.invoke(REQUEST, { context: { model: "google-genai/gemini-2.5-flash" } });
    expect(out).toMatchObject({ success: true, attempts: 1, value: SPEC.example });
    const [sent] = server!.requests;
    expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent.headers["x-goog-api-key"]).toBe("gemini-test-key");
    expect(sent.body.generationConfig).toMatchObject({
      responseMimeType: "application/json",
      responseSchema: { type: "object", properties: SPEC.schema.properties },
    });
    expect(out.history[0]).toMatchObject({ mode: "json_schema", usage: { inputTokens: 700, outputTokens: 70, totalTokens: 770, calls: 1 } });
  });

  it('finishReason "MAX_TOKENS" is a truncated attempt', async () => {
    const graph = await graphFor([{ text: VALID.slice(0, 40), stopReason: "MAX_TOKENS" }, { text: VALID }]);
    const out = await graph.invoke(REQUEST, { context: { model: "google-genai/gemini-2.5-flash", outputMode: "text" } });
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history[0].truncated).toBe('finishReason "MAX_TOKENS"');
  });
});

describe("google-genai/…: only finishReason STOP finishes an answer", () => {
  it("a stream with no finishReason is unfinished whatever its text; the retry asks for the whole answer", async () => {
    server = await startScriptedGeminiServer([{ text: VALID, stopReason: null }, { text: VALID }]);
    const env: Environment = { ...readEnvironment({}), providers: { "google-genai": { apiKey: "gemini-test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
    const stream = streamValidated({
      model: (request) => loadChatModel(request, env),
      modelName: "google-genai/gemini-2.5-flash",
      spec: "deployment-config",
      request: REQUEST.request,
      outputMode: "text",
    });
    let next = await stream.next();
    while (!next.done) next = await stream.next();
    expect(next.value).toMatchObject({ success: true, attempts: 2 });
    const said = "no finishReason: the answer ended without the provider's stop";
    expect(next.value.history[0]).toMatchObject({ valid: false, unfinished: said, errors: [unfinishedAnswerError(said)] });
  });

  it('finishReason "OTHER" did not finish and "RECITATION" withheld the answer: neither is valid', async () => {
    const graph = await graphFor([
      { text: VALID, stopReason: "OTHER" },
      { text: VALID, stopReason: "RECITATION" },
    ]);
    const out = await graph.invoke(REQUEST, { context: { model: "google-genai/gemini-2.5-flash", outputMode: "text", maxAttempts: 2 } });
    expect(out.success).toBe(false);
    expect(out.history[0]).toMatchObject({ valid: false, unfinished: 'finishReason "OTHER"' });
    expect(out.history[1].refusal).toMatch(/^finishReason "RECITATION"/);
  });
});

describeGeminiTransport("google-genai", "the Gemini client the factory builds is bounded", ({ gemini }) => {
  it("relies on ChatGoogleGenerativeAI calling its client, a GenerativeModel, which the factory wraps", async () => {
    const client = (await gemini()) as unknown as { client: object };
    // If an upgrade builds or names its client differently, the factory refuses it (ConfigurationError) or this fails.
    expect(Object.getPrototypeOf(client.client).constructor.name).toBe("GenerativeModel");
    expect(Object.hasOwn(client.client, "generateContentStream") && Object.hasOwn(client.client, "generateContent")).toBe(true);
  });
});
