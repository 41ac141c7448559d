/**
 * `anthropic/…` and `ollama/…` models through their own clients (@langchain/anthropic, @langchain/ollama),
 * against scripted servers speaking each provider's wire format: each provider's native structured output
 * ("auto"), usage read from its fields, escalation across providers, refusals, cuts at the output limit,
 * and validated streaming (Anthropic SSE, Ollama NDJSON). The OpenAI cut is read from its finish_reason.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readEnvironment, type Environment } from "../../src/environment.js";
import { loadChatModel, type ModelRequest } from "../../src/models.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { missingAnswerError, truncatedAnswerError, unfinishedAnswerError } from "../../src/protocol/feedback.js";
import { ProviderError } from "../../src/errors.js";
import { HumanMessage } from "@langchain/core/messages";
import { callModel } from "../../src/providers/model-call.js";
import { streamValidated } from "../../src/validation/stream.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { startScriptedAnthropicServer, startScriptedOllamaServer, type ProviderReply, type ScriptedProviderServer } from "../../testkit/provider-servers.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const SPEC = builtinSpecs.get("deployment-config")!;
const VALID = JSON.stringify(SPEC.example);
const BROKEN = JSON.stringify({ ...(SPEC.example as object), replicas: 8 });
const CUT = VALID.slice(0, Math.floor(VALID.length / 2));
const REQUEST = { request: "A deployment config for payments-api with 8 replicas" };
const TOOL = "deployment-config_output";

let anthropic: ScriptedProviderServer | undefined;
let ollama: ScriptedProviderServer | undefined;
let openai: ScriptedServer;
beforeAll(async () => {
  openai = await startScriptedOpenAIServer();
});
afterAll(async () => {
  await Promise.all([anthropic?.close(), ollama?.close(), openai?.close()]);
});
beforeEach(async () => {
  await Promise.all([anthropic?.close(), ollama?.close()]);
  anthropic = ollama = undefined;
});

async function script(anthropicReplies: ProviderReply[], ollamaReplies: ProviderReply[] = []): Promise<Environment> {
  anthropic = await startScriptedAnthropicServer(anthropicReplies);
  ollama = await startScriptedOllamaServer(ollamaReplies);
  return {
    ...readEnvironment({}),
    providers: {
      anthropic: { apiKey: "sk-ant-test", baseUrl: anthropic.baseURL },
      ollama: { baseUrl: ollama.baseURL },
      openai: { apiKey: "test-key", baseUrl: openai.baseURL },
    },
    maxRetries: 0,
  };
}

const graphWith = (env: Environment) => buildValidationGraph({ model: (request: ModelRequest) => loadChatModel(request, env) });

describe("anthropic/… through ChatAnthropic and the Messages API", () => {
  it("auto asks for a forced strict tool_use block with the spec's schema; the tool's input is the answer; usage is Anthropic's", async () => {
    const env = await script([{ toolUse: { input: VALID }, usage: { input: 1200, output: 80 } }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5" } });
    expect(out).toMatchObject({ success: true, attempts: 1, value: SPEC.example });
    const [sent] = anthropic!.requests;
    expect(sent.path).toBe("/v1/messages");
    expect(sent.body.model).toBe("claude-sonnet-4-5");
    expect(sent.body.tool_choice).toEqual({ type: "tool", name: TOOL });
    // A strict tool (Anthropic's strict tool use): the schema in Anthropic's subset, objects closed (tests/providers/anthropic-strict.int.test.ts).
    expect(sent.body.tools).toEqual([
      expect.objectContaining({ name: TOOL, strict: true, input_schema: expect.objectContaining({ type: "object", additionalProperties: false }) }),
    ]);
    expect(Object.keys(sent.body.tools[0].input_schema.properties)).toEqual(Object.keys(SPEC.schema.properties as object));
    expect(sent.headers["x-api-key"]).toBe("sk-ant-test");
    expect(out.history[0]).toMatchObject({
      mode: "tool",
      model: "anthropic/claude-sonnet-4-5",
      usage: { inputTokens: 1200, outputTokens: 80, totalTokens: 1280, calls: 1 },
    });
    expect(out.usageByModel).toEqual({ "anthropic/claude-sonnet-4-5": { inputTokens: 1200, outputTokens: 80, totalTokens: 1280, calls: 1 } });
  });

  it('stop_reason "refusal" is a refusal: recorded, not validated; a second one ends the run as refused', async () => {
    const env = await script([
      { text: "", stopReason: "refusal" },
      { text: "I won't write that.", stopReason: "refusal" },
    ]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5", outputMode: "text" } });
    expect(out).toMatchObject({ success: false, stopReason: "refused", attempts: 2 });
    expect(out.history.map((h: { refusal?: string }) => h.refusal)).toEqual(['stop_reason "refusal"', 'stop_reason "refusal": I won\'t write that.']);
    expect(out.history.every((h: { errors: string[] }) => h.errors.length === 0)).toBe(true);
  });

  it('stop_reason "max_tokens" is a truncated attempt, whose retry asks for a compact answer rather than a fix of the cut JSON', async () => {
    const env = await script([{ text: CUT, stopReason: "max_tokens" }, { text: VALID }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5", outputMode: "text" } });
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history[0]).toMatchObject({ valid: false, truncated: 'stop_reason "max_tokens"', errors: [truncatedAnswerError('stop_reason "max_tokens"')] });
    const retry = anthropic!.requests[1].body.messages.at(-1).content;
    expect(JSON.stringify(retry)).toContain("compact JSON object");
  });

  it("a complete-looking answer the provider cut is still not valid: only a finished answer can be", async () => {
    const env = await script([{ text: VALID, stopReason: "max_tokens" }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5", outputMode: "text", maxAttempts: 1 } });
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts", value: null });
    expect(out.history[0].truncated).toBe('stop_reason "max_tokens"');
  });

  it("the token budget counts Anthropic's reported tokens", async () => {
    const env = await script([{ text: BROKEN, usage: { input: 9_000, output: 900 } }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5", outputMode: "text", maxTokens: 10_000 } });
    expect(out).toMatchObject({ success: false, stopReason: "budget", attempts: 1 });
    expect(out.usage).toMatchObject({ inputTokens: 9_000, outputTokens: 900, totalTokens: 9_900 });
    expect(anthropic!.requests).toHaveLength(1);
  });

  it("streams over SSE: tool_use input_json_delta pieces are checked as they arrive, and the verdict is the check step's", async () => {
    const env = await script([{ toolUse: { input: BROKEN } }, { toolUse: { input: VALID } }]);
    const events: string[] = [];
    const stream = streamValidated({
      model: (request) => loadChatModel(request, env),
      modelName: "anthropic/claude-sonnet-4-5",
      spec: "deployment-config",
      request: REQUEST.request,
      outputMode: "auto",
    });
    let next = await stream.next();
    while (!next.done) {
      events.push(next.value.kind);
      next = await stream.next();
    }
    expect(anthropic!.requests.map((r) => r.body.stream)).toEqual([true, true]);
    expect(events).toContain("partial");
    expect(next.value).toMatchObject({ success: true, attempts: 2 });
    expect(next.value.history[0].errors).toEqual([RULES.replicasNeedCpu(0.5, 8)]);
  });
});

describe("cuts at the output limit while streaming", () => {
  it('a streamed answer Anthropic cut (stop_reason "max_tokens" in message_delta) is recorded as truncated', async () => {
    const env = await script([{ text: CUT, stopReason: "max_tokens" }, { text: VALID }]);
    const stream = streamValidated({
      model: (request) => loadChatModel(request, env),
      modelName: "anthropic/claude-sonnet-4-5",
      spec: "deployment-config",
      request: REQUEST.request,
      outputMode: "text",
    });
    let next = await stream.next();
    while (!next.done) next = await stream.next();
    expect(anthropic!.requests.map((r) => r.body.stream)).toEqual([true, true]);
    expect(next.value).toMatchObject({ success: true, attempts: 2 });
    expect(next.value.history[0]).toMatchObject({ truncated: 'stop_reason "max_tokens"', errors: [truncatedAnswerError('stop_reason "max_tokens"')] });
  });
});

describe("ollama/… through ChatOllama and /api/chat", () => {
  it("auto sends the spec's JSON Schema as format; a retry carries the exact errors; usage is prompt_eval_count and eval_count", async () => {
    const env = await script(
      [],
      [
        { text: BROKEN, usage: { input: 300, output: 40 } },
        { text: VALID, usage: { input: 350, output: 45 } },
      ],
    );
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "ollama/llama3.2" } });
    expect(out).toMatchObject({ success: true, attempts: 2 });
    const [first, second] = ollama!.requests;
    expect(first.path).toBe("/api/chat");
    expect(first.body).toMatchObject({ model: "llama3.2", format: { type: "object", properties: SPEC.schema.properties } });
    expect(first.body.format.$schema).toBeUndefined();
    expect(JSON.stringify(second.body.messages)).toContain(JSON.stringify(RULES.replicasNeedCpu(0.5, 8)).slice(1, -1));
    expect(out.history.map((h: { mode?: string }) => h.mode)).toEqual(["json_schema", "json_schema"]);
    expect(out.usage).toMatchObject({ inputTokens: 650, outputTokens: 85, totalTokens: 735, calls: 2 });
  });

  it('done_reason "length" is a truncated attempt', async () => {
    const env = await script([], [{ text: CUT, stopReason: "length" }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "ollama/llama3.2", maxAttempts: 1 } });
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts" });
    expect(out.history[0].truncated).toBe('done_reason "length"');
  });

  it("streams NDJSON lines into the validated stream", async () => {
    const env = await script([], [{ text: VALID }]);
    const kinds = new Set<string>();
    const stream = streamValidated({
      model: (request) => loadChatModel(request, env),
      modelName: "ollama/llama3.2",
      spec: "deployment-config",
      request: REQUEST.request,
    });
    let next = await stream.next();
    while (!next.done) {
      kinds.add(next.value.kind);
      next = await stream.next();
    }
    expect(kinds.has("partial")).toBe(true);
    expect(next.value).toMatchObject({ success: true, attempts: 1, value: SPEC.example });
  });
});

describe("explicit output modes, as each provider takes them", () => {
  it("anthropic json_schema sends output_config.format; json_object, which Anthropic lacks, is asked as text and recorded", async () => {
    const env = await script([{ text: VALID }, { text: VALID }]);
    const schemaRun = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5", outputMode: "json_schema" } });
    // The subset Anthropic's structured output takes: no bounds or patterns, every object closed.
    const sentSchema = anthropic!.requests[0].body.output_config.format.schema;
    expect(anthropic!.requests[0].body.output_config.format.type).toBe("json_schema");
    expect(sentSchema.properties.replicas).toEqual({ type: "integer" });
    expect(sentSchema.additionalProperties).toBe(false);
    expect(sentSchema.properties.resources.additionalProperties).toBe(false);
    expect(schemaRun.history[0].mode).toBe("json_schema");
    expect(schemaRun.history[0].schemaDropped).toEqual(
      expect.arrayContaining(["/properties/service_name: pattern", "/properties/replicas: minimum", "/properties/replicas: maximum"]),
    );
    const objectRun = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5", outputMode: "json_object" } });
    expect(anthropic!.requests[1].body.output_config).toBeUndefined();
    expect(objectRun.history[0]).toMatchObject({ mode: "text", fallbacks: ["json_object: anthropic has no such mode; fell back to text"] });
  });

  it("a schema keyword Anthropic refuses (HTTP 400) falls back to text, and the record says what the provider said", async () => {
    const error = { type: "error", error: { type: "invalid_request_error", message: "output_config.format.schema: property 'minLength' is not supported" } };
    const env = await script([{ status: 400, body: error }, { text: VALID }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5", outputMode: "json_schema" } });
    expect(out).toMatchObject({ success: true, attempts: 1 });
    expect(out.history[0].mode).toBe("text");
    expect(out.history[0].fallbacks).toEqual([
      expect.stringMatching(/^json_schema refused \(.*minLength.*\); fell back to json_object$/),
      "json_object: anthropic has no such mode; fell back to text",
    ]);
  });

  it('ollama json_object sends format "json"; tool sends the tool (Ollama has no forced tool choice)', async () => {
    const env = await script([], [{ text: VALID }, { toolUse: { input: VALID } }]);
    expect((await graphWith(env).invoke(REQUEST, { context: { model: "ollama/llama3.2", outputMode: "json_object" } })).success).toBe(true);
    expect(ollama!.requests[0].body.format).toBe("json");
    const toolRun = await graphWith(env).invoke(REQUEST, { context: { model: "ollama/llama3.2", outputMode: "tool" } });
    expect(toolRun).toMatchObject({ success: true, history: [{ mode: "tool" }] });
    expect(ollama!.requests[1].body.tools).toEqual([expect.objectContaining({ type: "function", function: expect.objectContaining({ name: TOOL }) })]);
  });
});

describe("escalation across providers", () => {
  it("ollama/… first, anthropic/… after: each through its own client and native mode, usage kept per model", async () => {
    const env = await script([{ toolUse: { input: VALID }, usage: { input: 500, output: 60 } }], [{ text: BROKEN, usage: { input: 400, output: 50 } }]);
    const out = await graphWith(env).invoke(REQUEST, {
      context: { models: [{ model: "ollama/llama3.2", attempts: 1 }, { model: "anthropic/claude-sonnet-4-5" }] },
    });
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history.map((h: { model?: string; mode?: string }) => [h.model, h.mode])).toEqual([
      ["ollama/llama3.2", "json_schema"],
      ["anthropic/claude-sonnet-4-5", "tool"],
    ]);
    expect(out.usageByModel).toEqual({
      "ollama/llama3.2": { inputTokens: 400, outputTokens: 50, totalTokens: 450, calls: 1 },
      "anthropic/claude-sonnet-4-5": { inputTokens: 500, outputTokens: 60, totalTokens: 560, calls: 1 },
    });
    // The anthropic attempt carries the ollama attempt's exact errors.
    expect(JSON.stringify(anthropic!.requests[0].body.messages)).toContain("Your previous answer:");
  });
});

describe("openai/… through ChatOpenAI", () => {
  it('finish_reason "length" is a truncated attempt, not broken JSON', async () => {
    const env = await script([]);
    openai.setReplies([{ content: CUT, finishReason: "length" }, VALID]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "openai/gpt-4o-mini", outputMode: "text" } });
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history[0]).toMatchObject({ truncated: 'finish_reason "length"', errors: [truncatedAnswerError('finish_reason "length"')] });
  });
});

describe("an answer is finished only on the provider's finished stop", () => {
  const streamRun = async (env: Environment, modelName: string, outputMode: "text" | "auto" = "text", maxAttempts = 2) => {
    const stream = streamValidated({
      model: (request) => loadChatModel(request, env),
      modelName,
      spec: "deployment-config",
      request: REQUEST.request,
      outputMode,
      maxAttempts,
    });
    let next = await stream.next();
    while (!next.done) next = await stream.next();
    return next.value;
  };

  it("an Anthropic stream that ends without message_delta and message_stop is unfinished, whatever its text; the retry asks for the whole answer", async () => {
    const env = await script([{ text: VALID, stopReason: null }, { text: VALID }]);
    const out = await streamRun(env, "anthropic/claude-sonnet-4-5");
    expect(out).toMatchObject({ success: true, attempts: 2 });
    const said = "no stop_reason: the answer ended without the provider's stop";
    expect(out.history[0]).toMatchObject({ valid: false, unfinished: said, errors: [unfinishedAnswerError(said)] });
    expect(JSON.stringify(anthropic!.requests[1].body.messages)).toContain("Answer again with the whole JSON object");
  });

  it("an Anthropic tool_use stream with no stop is not valid either, and the last attempt ends the run unfinished, not valid", async () => {
    const env = await script([{ toolUse: { input: VALID }, stopReason: null }]);
    const out = await streamRun(env, "anthropic/claude-sonnet-4-5", "auto", 1);
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts", value: null });
    expect(out.history[0].unfinished).toBe("no stop_reason: the answer ended without the provider's stop");
  });

  it('stop_reason "model_context_window_exceeded" is a cut and "pause_turn" did not finish: neither is valid', async () => {
    const env = await script([
      { text: VALID, stopReason: "model_context_window_exceeded" },
      { text: VALID, stopReason: "pause_turn" },
    ]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5", outputMode: "text", maxAttempts: 2 } });
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts", value: null });
    expect(out.history[0].truncated).toBe('stop_reason "model_context_window_exceeded"');
    expect(out.history[1]).toMatchObject({ unfinished: 'stop_reason "pause_turn"', errors: [unfinishedAnswerError('stop_reason "pause_turn"')] });
  });

  it("an Anthropic tool_use block with no input is an empty answer, judged, not a crash", async () => {
    const env = await script([{ toolUse: {} }, { toolUse: { input: VALID } }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "anthropic/claude-sonnet-4-5" } });
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history[0]).toMatchObject({ mode: "tool", valid: false, output: "" });
    expect(out.history[0].errors[0]).toMatch(/empty/i);
  });

  it('an Ollama answer whose last line has no done_reason, or "load", is not valid', async () => {
    const env = await script(
      [],
      [
        { text: VALID, stopReason: null },
        { text: VALID, stopReason: "load" },
      ],
    );
    const out = await graphWith(env).invoke(REQUEST, { context: { model: "ollama/llama3.2", outputMode: "text", maxAttempts: 2 } });
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts" });
    expect(out.history.map((h: { unfinished?: string }) => h.unfinished)).toEqual([
      "no done_reason: the answer ended without the provider's stop",
      'done_reason "load"',
    ]);
  });

  it("an Ollama error whose body holds an object says the provider's message, not [object Object]", async () => {
    const env = await script([], [{ status: 400, body: { error: { message: "model 'llama-x' not found, try pulling it first", type: "api_error" } } }]);
    const model = await loadChatModel({ model: "ollama/llama-x", role: "generate" }, env);
    const error = await callModel(model, [new HumanMessage("hi")], { node: "generate" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toContain("model 'llama-x' not found, try pulling it first");
    expect((error as Error).message).not.toContain("[object Object]");
  });

  it("an Ollama error inside the stream says the provider's message, whether the line's error is an object or a string", async () => {
    const said = "model runner has unexpectedly stopped, this may be due to resource limitations";
    const env = await script(
      [],
      [
        { text: VALID, streamError: { message: said, type: "api_error" } },
        { text: VALID, streamError: said },
        { text: VALID, streamError: { code: 503 } },
      ],
    );
    const model = await loadChatModel({ model: "ollama/llama-x", role: "generate" }, env);
    const fail = () =>
      callModel(model, [new HumanMessage("hi")], { node: "generate" }).then(
        () => undefined,
        (e: unknown) => e,
      );
    for (const expected of [said, said, '{"code":503}']) {
      const error = await fail();
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).toBe(`Model provider failed in node "generate": ResponseError: ${expected}`);
      // Not a validation attempt: the node tries it again.
      expect((error as ProviderError).transient).toBe(true);
    }
  });

  it("an Ollama error inside the stream ends the validation run with an error in the provider's words, after the node's retries", async () => {
    const said = "an error was encountered while running the model: unexpected EOF";
    const env = await script(
      [],
      [1, 2, 3].map(() => ({ text: '{"service_name": "payments-api", ', streamError: { message: said } })),
    );
    const error = await graphWith(env)
      .invoke(REQUEST, { context: { model: "ollama/llama3.2", outputMode: "text" } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toContain(said);
    expect((error as Error).message).not.toContain("[object Object]");
  });

  it("OpenAI under a streaming listener (messages mode, the LangGraph server): the finish_reason is still read, so a finished answer is finished", async () => {
    const env = await script([]);
    openai.setReplies([VALID, { content: VALID, finishReason: "length" }]);
    const model = await loadChatModel({ model: "openai/gpt-4o-mini", role: "generate" }, env);
    const tokens: string[] = [];
    const listener = { lc_prefer_streaming: true, handleLLMNewToken: (token: string) => void tokens.push(token) };
    const config = { callbacks: [listener] };
    const finished = await callModel(model, [new HumanMessage("hi")], { node: "reflector", config });
    expect(finished).toMatchObject({ text: VALID });
    expect(finished.unfinished).toBeUndefined();
    expect(tokens.join("")).toBe(VALID);
    expect(openai.requests.at(-1)!.stream).toBe(true);
    const cut = await callModel(model, [new HumanMessage("hi")], { node: "reflector", config });
    expect(cut.truncated).toBe('finish_reason "length"');
  });

  it("OpenAI: an unknown finish_reason is not valid; a call to another tool than the answer's is a missing answer that says what was called", async () => {
    const env = await script([]);
    openai.setReplies([
      { content: VALID, finishReason: "eos" },
      { content: null, toolCalls: [{ name: "search_web", arguments: VALID }] },
      { content: null, toolCalls: [{ name: TOOL, arguments: VALID }] },
    ]);
    const text = await graphWith(env).invoke(REQUEST, { context: { model: "openai/gpt-4o-mini", outputMode: "text", maxAttempts: 1 } });
    expect(text).toMatchObject({ success: false, history: [{ unfinished: 'finish_reason "eos"' }] });
    const tool = await graphWith(env).invoke(REQUEST, { context: { model: "openai/gpt-4o-mini", outputMode: "tool", maxAttempts: 2 } });
    expect(tool).toMatchObject({ success: true, attempts: 2 });
    expect(tool.history[0]).toMatchObject({ valid: false, errors: [missingAnswerError(TOOL, ["search_web"])] });
  });
});
