/** The model factory, the whole-answer deadline of model requests, and provider error text. */
import { readFileSync } from "node:fs";
import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it, vi } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { ConfigurationError, ModelTimeoutError, ProviderError, redactSecrets, registerSecret } from "../../src/errors.js";
import { createChatModel } from "../../src/models.js";
import { fetchWithDeadline } from "../../src/providers/deadline.js";

const env = { ...readEnvironment({}), providers: { openai: { baseUrl: "http://127.0.0.1:9/v1" } } };

describe("model factory", () => {
  it("builds a ChatOpenAI for any OpenAI-compatible server, with the environment's timeout and retries", () => {
    const model = createChatModel({ model: "llama3.1", temperature: 0.2, role: "generate" }, { ...env, timeoutMs: 1234, maxRetries: 1 });
    expect(model).toBeInstanceOf(ChatOpenAI);
    const openai = model as ChatOpenAI;
    expect(openai.model).toBe("llama3.1");
    expect(openai.temperature).toBe(0.2);
    expect(openai.timeout).toBe(1234);
  });

  it("reuses one client per distinct setting, so a busy process does not build one per call", () => {
    const a = createChatModel({ model: "m", temperature: 0, role: "generate" }, env);
    expect(createChatModel({ model: "m", temperature: 0, role: "actor" }, env)).toBe(a);
    expect(createChatModel({ model: "m", temperature: 0.5, role: "generate" }, env)).not.toBe(a);
    expect(createChatModel({ model: "other", temperature: 0, role: "generate" }, env)).not.toBe(a);
    expect(
      createChatModel({ model: "m", temperature: 0, role: "generate" }, { ...env, providers: { openai: { baseUrl: "http://127.0.0.1:10/v1" } } }),
    ).not.toBe(a);
  });

  it("without a key and a base URL, names both variables", () => {
    expect(() => createChatModel({ model: "m", role: "generate" }, readEnvironment({}))).toThrow(ConfigurationError);
    expect(() => createChatModel({ model: "m", role: "generate" }, readEnvironment({}))).toThrow(/OPENAI_API_KEY.*OPENAI_BASE_URL/s);
  });

  it("bad environment values are refused with the variable's name", () => {
    expect(() => readEnvironment({ LLM_TIMEOUT_MS: "soon" })).toThrow(/LLM_TIMEOUT_MS must be an integer/);
    expect(() => readEnvironment({ LLM_MAX_RETRIES: "-1" })).toThrow(/LLM_MAX_RETRIES must be an integer from 0 to 10/);
  });
});

describe("the whole-answer deadline of a model request", () => {
  /** A fetch whose response headers arrive at once and whose body never ends. */
  const stalled =
    (contentType: string): typeof fetch =>
    async (_input, init) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(contentType.includes("event-stream") ? "data: {}\n\n" : "{"));
          init?.signal?.addEventListener("abort", () => controller.error(init.signal!.reason), { once: true });
        },
      });
      return new Response(body, { headers: { "content-type": contentType } });
    };

  it("a body still unfinished at the deadline fails with a ModelTimeoutError naming LLM_TIMEOUT_MS", async () => {
    const response = await fetchWithDeadline(50, stalled("application/json"))("http://model.test/v1/chat/completions");
    const error = await response.text().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelTimeoutError);
    expect((error as ModelTimeoutError).name).toBe("TimeoutError");
    expect((error as ModelTimeoutError).streamed).toBe(false);
    expect((error as Error).message).toBe("Request timed out: no complete answer within 50 ms (LLM_TIMEOUT_MS)");
    // The client retried it (no stream had started): the node does not retry it again.
    expect(ProviderError.from(error, "generate").transient).toBe(false);
  });

  it("a stream that stalls after it started says so, and the graph node may retry it", async () => {
    const response = await fetchWithDeadline(50, stalled("text/event-stream"))("http://model.test/v1/chat/completions");
    const reader = response.body!.getReader();
    await reader.read();
    const error = await reader.read().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as ModelTimeoutError).streamed).toBe(true);
    const wrapped = ProviderError.from(error, "generate");
    expect(wrapped.message).toMatch(/TimeoutError: Request timed out: no complete answer within 50 ms \(LLM_TIMEOUT_MS\); the answer had started streaming/);
    expect(wrapped.transient).toBe(true);
  });

  it("a finished request keeps no timer: after N requests read whole, failed or cancelled, no deadline is left pending", async () => {
    vi.useFakeTimers();
    try {
      const answer: typeof fetch = async () => new Response('{"ok": true}', { headers: { "content-type": "application/json" } });
      const fetcher = fetchWithDeadline(60_000, answer);
      const before = vi.getTimerCount();
      for (let i = 0; i < 20; i++) expect(await (await fetcher("http://model.test/")).json()).toEqual({ ok: true });
      for (let i = 0; i < 5; i++) await (await fetcher("http://model.test/")).body!.cancel();
      await expect(fetchWithDeadline(60_000, async () => Promise.reject(new Error("refused")))("http://model.test/")).rejects.toThrow("refused");
      const empty = await fetchWithDeadline(60_000, async () => new Response(null, { status: 204 }))("http://model.test/");
      expect(empty.status).toBe(204);
      expect(vi.getTimerCount()).toBe(before);
    } finally {
      vi.useRealTimers();
    }
  });

  it("the caller's own abort still cancels the request", async () => {
    const caller = new AbortController();
    const pending = fetchWithDeadline(
      60_000,
      (_input, init) => new Promise((_, reject) => init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason))),
    )("http://model.test/", { signal: caller.signal });
    caller.abort(new Error("caller stopped"));
    await expect(pending).rejects.toThrow("caller stopped");
  });

  it("the factory's ChatOpenAI uses it", () => {
    const model = createChatModel({ model: "deadline-check", role: "generate" }, { ...env, timeoutMs: 4321 }) as ChatOpenAI;
    expect(typeof (model as unknown as { clientConfig: { fetch?: unknown } }).clientConfig.fetch).toBe("function");
  });
});

describe("secrets in provider error text", () => {
  it("the configured key, Bearer tokens, sk- keys and URL credentials are redacted; the provider's words stay", () => {
    registerSecret("local-proxy-key-42");
    const said =
      'proxy says: bad key local-proxy-key-42 in "Authorization: Bearer abc.def-ghi" for sk-proj-AbC123456789xyz at http://admin:hunter2@proxy.local/v1';
    const error = ProviderError.from(Object.assign(new Error(said), { status: 401 }), "generate");
    expect(error.message).toBe(
      'Model provider failed in node "generate" with HTTP 401: proxy says: bad key [redacted] in "Authorization: Bearer [redacted]" for [redacted] at http://[redacted]@proxy.local/v1',
    );
  });

  it("every ProviderError is redacted, however it was built", () => {
    expect(new ProviderError("token Bearer sk-abcdefghijkl leaked").message).toBe("token Bearer [redacted] leaked");
    expect(redactSecrets("a task-abcdefghij name is not a key")).toBe("a task-abcdefghij name is not a key");
  });

  it("a connection fault says what lies under it and is not retried again by the node", () => {
    class APIConnectionError extends Error {}
    const error = new APIConnectionError("Connection error.", {
      cause: new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:9") }),
    });
    const wrapped = ProviderError.from(error, "generate");
    expect(wrapped.message).toBe(
      'Model provider failed in node "generate": APIConnectionError: Connection error. (fetch failed: connect ECONNREFUSED 127.0.0.1:9)',
    );
    expect(wrapped.transient).toBe(false);
  });
});

describe("secrets read from the environment", () => {
  it("every provider key the environment module reads is redacted from error text, and errors.ts reads no environment itself", () => {
    readEnvironment({ OPENAI_API_KEY: "env-openai-key-0001", ANTHROPIC_API_KEY: "env-anthropic-key-0002", GEMINI_API_KEY: "env-gemini-key-0003" });
    const said = "echo: env-openai-key-0001 env-anthropic-key-0002 env-gemini-key-0003";
    expect(redactSecrets(said)).toBe("echo: [redacted] [redacted] [redacted]");
    expect(readFileSync(new URL("../../src/errors.ts", import.meta.url), "utf8")).not.toMatch(/process\.env/);
  });
});
