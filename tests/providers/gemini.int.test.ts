/**
 * `google-genai/…` models through the real @langchain/google-genai client, pointed (GOOGLE_BASE_URL) at a
 * scripted server speaking Gemini's generateContent API: "auto" sends the subset of the spec's schema Gemini
 * takes as responseSchema, usage is read from usageMetadata, and finishReason MAX_TOKENS is a cut.
 */
import { afterEach, describe, expect, it } from "vitest";
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
  const env: Environment = { ...readEnvironment({}), googleApiKey: "gemini-test-key", googleBaseUrl: server.baseURL, maxRetries: 0 };
  return buildValidationGraph({ model: (request: ModelRequest) => loadChatModel(request, env) });
}

describe("google-genai/… through ChatGoogleGenerativeAI", () => {
  it("auto sends responseSchema (the subset Gemini takes) with JSON output; usage is usageMetadata's", async () => {
    const graph = await graphFor([{ text: VALID, usage: { input: 700, output: 70 } }]);
    const out = await graph.invoke(REQUEST, { context: { model: "google-genai/gemini-2.5-flash" } });
    expect(out).toMatchObject({ success: true, attempts: 1, result: SPEC.example });
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
