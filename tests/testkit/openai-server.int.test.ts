/**
 * Integration tests for the scripted OpenAI-compatible server, driven by the
 * real ChatOpenAI client (@langchain/openai 1.5.x on openai 6.x).
 *
 * Observed behaviour of each fault through ChatOpenAI (maxRetries: 0):
 *
 * | fault          | invoke (stream: false)                       | streaming: true, invoke() / .stream()                        |
 * |----------------|----------------------------------------------|--------------------------------------------------------------|
 * | status 500     | InternalServerError, status 500,             | same                                                         |
 * |                | "500 Internal server error (scripted)"       |                                                              |
 * | status 429     | RateLimitError, status 429,                  | same                                                         |
 * |                | lc_error_code MODEL_RATE_LIMIT               |                                                              |
 * | reset          | APIConnectionError "Connection error."       | same (before any chunk is yielded)                           |
 * |                | (cause: TypeError "fetch failed")            |                                                              |
 * | hang + timeout | Error name "TimeoutError",                   | same                                                         |
 * |                | message "Request timed out."                 |                                                              |
 * | cut-stream     | TypeError "terminated"                       | TypeError "terminated"; .stream() yields the partial         |
 * |                | (cause: SocketError "other side closed")     | chunks first, then throws                                    |
 * | invalid-json   | SyntaxError "... is not valid JSON"          | SyntaxError (JSON.parse of the SSE data line)                |
 * | no-choices     | TypeError "Cannot read properties of         | invoke(): same TypeError; .stream(): completes, yields       |
 * |                | undefined (reading 'message')"               | no chunks at all (no error!)                                 |
 * | null-content   | resolves, content "" and no tool calls       | resolves, content ""                                         |
 * | exhausted      | InternalServerError                          | same                                                         |
 * |                | "500 scripted server: no reply scripted ..." |                                                              |
 *
 * Note: with `streaming: true`, ChatOpenAI.invoke() always estimates token
 * counts with tiktoken, which downloads its encoding from
 * https://tiktoken.pages.dev. Without network access that download is retried
 * with back-off for minutes. These tests make that download fail immediately
 * with a non-retryable error, so the client falls back to approximate counts.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChatOpenAI } from "@langchain/openai";
import type { AIMessageChunk } from "@langchain/core/messages";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { startScriptedOpenAIServer, type ScriptedReply, type ScriptedServer, type ScriptedServerOptions } from "../../testkit/openai-server.js";

const servers: ScriptedServer[] = [];
const realFetch = globalThis.fetch;
const realWarn = console.warn;

beforeAll(() => {
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (url.startsWith("https://tiktoken.pages.dev/")) {
      // status 404 marks the error as non-retryable for LangChain's AsyncCaller.
      throw Object.assign(new Error("tiktoken download disabled in tests"), { status: 404 });
    }
    return realFetch(input, init);
  }) as typeof fetch;
  console.warn = (...args: unknown[]) => {
    if (String(args[0]).startsWith("Failed to calculate number of tokens")) return;
    realWarn(...args);
  };
});

afterAll(() => {
  globalThis.fetch = realFetch;
  console.warn = realWarn;
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(opts: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const server = await startScriptedOpenAIServer(opts);
  servers.push(server);
  return server;
}

function chat(server: ScriptedServer, extra: Partial<ConstructorParameters<typeof ChatOpenAI>[0] & object> = {}) {
  return new ChatOpenAI({
    model: "scripted",
    apiKey: "test",
    configuration: { baseURL: server.baseURL },
    maxRetries: 0,
    ...extra,
  });
}

async function collectStream(llm: ChatOpenAI, input: string) {
  const chunks: AIMessageChunk[] = [];
  let error: unknown;
  try {
    for await (const c of await llm.stream(input)) chunks.push(c);
  } catch (err) {
    error = err;
  }
  const text = chunks.map((c) => (typeof c.content === "string" ? c.content : "")).join("");
  return { chunks, text, error };
}

type Usage = { input_tokens?: number; output_tokens?: number; total_tokens?: number };
const usage = (msg: { usage_metadata?: unknown }): Usage | undefined => msg.usage_metadata as Usage | undefined;

async function rejection(p: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error("expected promise to reject");
}

describe("scripted OpenAI server via ChatOpenAI", () => {
  it("(1) non-streaming invoke returns scripted content and usage", async () => {
    const server = await start({
      replies: [{ content: "Hello from the scripted server", usage: { prompt_tokens: 11, completion_tokens: 7 } }, "default usage"],
    });
    const llm = chat(server);
    const msg = await llm.invoke("hi there");
    expect(msg.content).toBe("Hello from the scripted server");
    expect(usage(msg)?.input_tokens).toBe(11);
    expect(usage(msg)?.output_tokens).toBe(7);
    expect(usage(msg)?.total_tokens).toBe(18);

    const second = await llm.invoke("another prompt");
    expect(second.content).toBe("default usage");
    expect(usage(second)?.input_tokens).toBeGreaterThanOrEqual(1);
    expect(usage(second)?.output_tokens).toBeGreaterThanOrEqual(1);
    expect(server.requests.map((r) => r.stream)).toEqual([false, false]);
  });

  it("(2) streaming invoke() and .stream() assemble the content from chunks", async () => {
    const content = "The quick brown fox jumps over the lazy dog";
    const server = await start({
      replies: [content, { content, usage: { prompt_tokens: 5, completion_tokens: 9 } }],
    });
    const llm = chat(server, { streaming: true, streamUsage: true });

    const msg = await llm.invoke("stream please");
    expect(msg.content).toBe(content);

    const { chunks, text, error } = await collectStream(llm, "stream again");
    expect(error).toBeUndefined();
    expect(text).toBe(content);
    expect(chunks.filter((c) => c.content !== "").length).toBeGreaterThanOrEqual(3);
    const merged = chunks.reduce((a, b) => a.concat(b));
    expect(usage(merged)?.input_tokens).toBe(5);
    expect(usage(merged)?.output_tokens).toBe(9);

    expect(server.requests).toHaveLength(2);
    for (const r of server.requests) {
      expect(r.stream).toBe(true);
      expect(r.body.stream_options?.include_usage).toBe(true);
    }
  });

  it("(3) 429 with retry-after: 0 then success succeeds with maxRetries: 2", async () => {
    const server = await start({
      replies: [{ fault: "status", status: 429, headers: { "retry-after": "0" } }, "recovered"],
    });
    const msg = await chat(server, { maxRetries: 2 }).invoke("retry me");
    expect(msg.content).toBe("recovered");
    expect(server.requests).toHaveLength(2);
  }, 60_000);

  it("429 with maxRetries: 0 rejects with a RateLimitError", async () => {
    const server = await start({ replies: [{ fault: "status", status: 429, headers: { "retry-after": "0" } }] });
    const err = await rejection(chat(server).invoke("x"));
    expect(err.constructor.name).toBe("RateLimitError");
    expect(err.status).toBe(429);
    expect(err.message).toContain("Rate limit reached (scripted)");
  });

  it("(4) 500 with maxRetries: 0 rejects with the scripted message", async () => {
    const server = await start({
      replies: [
        { fault: "status", status: 500 },
        { fault: "status", status: 503, body: { error: { message: "custom overload", type: "server_error", code: null } } },
      ],
    });
    const llm = chat(server);
    const err = await rejection(llm.invoke("x"));
    expect(err.message).toContain("Internal server error (scripted)");
    expect(err.status).toBe(500);
    const err2 = await rejection(llm.invoke("y"));
    expect(err2.message).toContain("custom overload");
    expect(err2.status).toBe(503);
    expect(server.requests).toHaveLength(2);
  });

  it("(5) hang with timeout rejects, and close() returns with hanging requests, cutting them", async () => {
    const server = await startScriptedOpenAIServer({ replies: [{ fault: "hang" }, { fault: "hang" }] });
    try {
      const err = await rejection(chat(server, { timeout: 300 }).invoke("x"));
      expect(err.name).toBe("TimeoutError");
      expect(err.message).toMatch(/timed out/i);

      // Leave a second request hanging on the server and close underneath it.
      const pending = realFetch(`${server.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hang" }] }),
      });
      pending.catch(() => undefined);
      while (server.requests.length < 2) await new Promise((r) => setTimeout(r, 10));
      // close() does not wait for the hanging request (the test's timeout would catch it); the request is cut.
      await server.close();
      await expect(pending).rejects.toThrow();
    } finally {
      await server.close();
    }
  }, 30_000);

  it("(6) records the messages sent, flattening content parts", async () => {
    const server = await start({ replies: ["ok"] });
    await chat(server).invoke([
      new SystemMessage("You are terse."),
      new HumanMessage({
        content: [
          { type: "text", text: "part one, " },
          { type: "text", text: "part two" },
        ],
      }),
    ]);
    expect(server.requests).toHaveLength(1);
    const rec = server.requests[0]!;
    expect(rec.index).toBe(0);
    expect(rec.model).toBe("scripted");
    expect(rec.stream).toBe(false);
    expect(rec.messages).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "part one, part two" },
    ]);
    expect(rec.headers.authorization).toBe("Bearer test");
    expect(rec.body.model).toBe("scripted");
  });

  it("(7) an exhausted script answers 500 with a loud error", async () => {
    const server = await start({ replies: ["only one"] });
    const llm = chat(server);
    expect((await llm.invoke("a")).content).toBe("only one");
    const err = await rejection(llm.invoke("b"));
    expect(err.status).toBe(500);
    expect(err.message).toContain("scripted server: no reply scripted for request 1");
  });

  it("pieceChars streams the content in pieces of that many characters; repeat answers from the list in a cycle", async () => {
    const content = '{"items": [1, 2, 3]}';
    const server = await start({ replies: [{ content, pieceChars: 4 }, "second"], repeat: true });
    const llm = chat(server);
    const pieces = async () => (await collectStream(llm, "stream")).chunks.map((c) => c.content).filter((c) => c !== "");
    expect(await pieces()).toEqual(['{"it', 'ems"', ": [1", ", 2,", " 3]}"]);
    expect(await pieces()).toEqual(["se", "co", "nd"]);
    // Past the last reply, the list starts again.
    expect(await pieces()).toEqual(['{"it', 'ems"', ": [1", ", 2,", " 3]}"]);
  });

  it("responder takes precedence and receives the request and index", async () => {
    const server = await start({ replies: ["unused"] });
    server.setResponder((req, index) => `echo ${index}: ${req.messages.at(-1)?.content}`);
    const llm = chat(server);
    expect((await llm.invoke("first")).content).toBe("echo 0: first");
    expect((await llm.invoke("second")).content).toBe("echo 1: second");
    server.setReplies(["from list again"]);
    expect((await llm.invoke("third")).content).toBe("from list again");
    expect(server.requests.map((r) => r.index)).toEqual([0, 1, 2]);
  });

  it("a throwing responder yields a 500", async () => {
    const server = await start({
      responder: () => {
        throw new Error("boom");
      },
    });
    const err = await rejection(chat(server).invoke("x"));
    expect(err.message).toContain("responder threw for request 0: boom");
  });

  it("latencyMs and delayMs delay the answer", async () => {
    const server = await start({ latencyMs: 100, replies: [{ content: "slow", delayMs: 100 }] });
    const started = Date.now();
    expect((await chat(server).invoke("x")).content).toBe("slow");
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it("serves GET /v1/models and 404s other paths", async () => {
    const server = await start();
    const models = await realFetch(`${server.baseURL}/models`);
    expect(models.status).toBe(200);
    const list = (await models.json()) as { object: string; data: Array<{ id: string }> };
    expect(list.object).toBe("list");
    expect(list.data.length).toBeGreaterThan(0);

    const missing = await realFetch(`${server.baseURL}/embeddings`, { method: "POST", body: "{}" });
    expect(missing.status).toBe(404);
    const body = (await missing.json()) as { error: { message: string } };
    expect(body.error.message).toContain("no route");
    expect(server.requests).toHaveLength(0);
  });

  // 250 is enough to show that nothing is serialised or dropped; the concurrency benchmark runs 1,000 at full size.
  it("handles 250 concurrent requests", async () => {
    const server = await start({ responder: (_req, i) => `reply ${i}` });
    const llm = chat(server);
    const results = await Promise.all(Array.from({ length: 250 }, (_, i) => llm.invoke(`req ${i}`)));
    expect(results).toHaveLength(250);
    expect(new Set(results.map((m) => m.content)).size).toBe(250);
    expect(server.requests).toHaveLength(250);
  });
});

describe("fault behaviour through ChatOpenAI (see table above)", () => {
  // logLevel "off" keeps openai's own "Could not parse message" logging quiet.
  const plain = async (reply: ScriptedReply) => {
    const server = await start({ replies: [reply] });
    return { server, llm: chat(server, { configuration: { baseURL: server.baseURL, logLevel: "off" } }) };
  };
  const streaming = async (reply: ScriptedReply) => {
    const server = await start({ replies: [reply, reply] });
    const configuration = { baseURL: server.baseURL, logLevel: "off" as const };
    return { server, llm: chat(server, { streaming: true, streamUsage: true, configuration }) };
  };

  it("reset -> APIConnectionError 'Connection error.'", async () => {
    for (const make of [plain, streaming]) {
      const { llm } = await make({ fault: "reset" });
      const err = await rejection(llm.invoke("x"));
      expect(err.constructor.name).toBe("APIConnectionError");
      expect(err.message).toBe("Connection error.");
    }
    const { llm } = await streaming({ fault: "reset" });
    const { chunks, error } = await collectStream(llm, "x");
    expect(chunks).toHaveLength(0);
    expect((error as Error).constructor.name).toBe("APIConnectionError");
  });

  it("cut-stream -> TypeError 'terminated' (stream yields the partial chunks first)", async () => {
    const { llm } = await plain({ fault: "cut-stream", partial: "half an answer" });
    const err = await rejection(llm.invoke("x"));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe("terminated");

    const s = await streaming({ fault: "cut-stream", partial: "half an answer" });
    const err2 = await rejection(s.llm.invoke("x"));
    expect(err2).toBeInstanceOf(TypeError);
    expect(err2.message).toBe("terminated");
    const { text, error } = await collectStream(s.llm, "x");
    expect(text).toBe("half an answer");
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe("terminated");
  });

  it("invalid-json -> SyntaxError", async () => {
    const { llm } = await plain({ fault: "invalid-json" });
    const err = await rejection(llm.invoke("x"));
    expect(err).toBeInstanceOf(SyntaxError);
    expect(err.message).toContain("is not valid JSON");
    const s = await streaming({ fault: "invalid-json" });
    expect(await rejection(s.llm.invoke("x"))).toBeInstanceOf(SyntaxError);
    const { error } = await collectStream(s.llm, "x");
    expect(error).toBeInstanceOf(SyntaxError);
  });

  it("no-choices -> TypeError on invoke, silently empty .stream()", async () => {
    const { llm } = await plain({ fault: "no-choices" });
    const err = await rejection(llm.invoke("x"));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain("reading 'message'");

    const s = await streaming({ fault: "no-choices" });
    const err2 = await rejection(s.llm.invoke("x"));
    expect(err2).toBeInstanceOf(TypeError);
    const { chunks, error } = await collectStream(s.llm, "x");
    expect(error).toBeUndefined();
    expect(chunks).toHaveLength(0);
  });

  it("null-content -> resolves with empty content", async () => {
    const { llm } = await plain({ fault: "null-content" });
    const msg = await llm.invoke("x");
    expect(msg.content).toBe("");
    expect(msg.tool_calls ?? []).toHaveLength(0);

    const s = await streaming({ fault: "null-content" });
    expect((await s.llm.invoke("x")).content).toBe("");
    const { text, error } = await collectStream(s.llm, "x");
    expect(error).toBeUndefined();
    expect(text).toBe("");
  });
});

describe("CLI entry", () => {
  it("prints READY <baseURL> and serves the replies file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "scripted-openai-"));
    const repliesFile = join(dir, "replies.json");
    await writeFile(repliesFile, JSON.stringify(["from the child process"]));
    const serverFile = fileURLToPath(new URL("../../testkit/openai-server.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", serverFile, "--port", "0", "--replies-file", repliesFile], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const baseURL = await new Promise<string>((resolve, reject) => {
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        child.once("exit", (code) => reject(new Error(`server exited early (${code}): ${stderr}`)));
        createInterface({ input: child.stdout }).on("line", (line) => {
          const m = /^READY (\S+)$/.exec(line);
          if (m?.[1]) resolve(m[1]);
        });
      });
      expect(baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const llm = new ChatOpenAI({ model: "scripted", apiKey: "test", configuration: { baseURL }, maxRetries: 0 });
      expect((await llm.invoke("hello")).content).toBe("from the child process");
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
