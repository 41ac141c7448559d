/**
 * Scripted OpenAI-compatible HTTP server for integration tests, benchmarks and
 * child-process (CLI) tests.
 *
 * Endpoints:
 *   POST /v1/chat/completions  -> scripted reply (JSON or SSE when `stream: true`)
 *   GET  /v1/models            -> small static model list
 *   anything else              -> 404 JSON error
 *
 * Faults: HTTP status, connection reset, no answer, stalled body after the
 * headers, an answer dripped one byte a second, a cut stream, invalid JSON,
 * no choices, null content, and an error body echoing the Authorization header.
 * A content reply may carry a refusal (`message.refusal`, or `delta.refusal`
 * pieces when streaming), as OpenAI's structured outputs send one.
 *
 * Replies are chosen by the responder (if set) or taken in order from the
 * scripted `replies` list. When the list is exhausted the server answers
 * HTTP 500 so that a test relying on a missing reply fails loudly.
 *
 * Run directly to use from another process:
 *   npx tsx testkit/openai-server.ts --port 0 --replies-file replies.json
 * prints one line `READY <baseURL>` on stdout and serves until SIGINT/SIGTERM.
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { readFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";

export type ScriptedReply =
  | string
  | {
      content: string | null;
      /** Tool calls the assistant makes (arguments as the JSON text the provider sends). */
      toolCalls?: ScriptedToolCall[];
      /** The provider declines (OpenAI's `message.refusal`; streamed as `delta.refusal` pieces); usually with `content: null`. */
      refusal?: string;
      /** The choice's finish_reason (default "tool_calls" with tool calls, else "stop"); "length" is a cut at the output limit. */
      finishReason?: string;
      delayMs?: number;
      usage?: { prompt_tokens: number; completion_tokens: number };
      /** Streamed, the content in pieces of this many characters (a provider sends about one token a piece); default: three pieces. */
      pieceChars?: number;
    }
  | { fault: "status"; status: number; body?: unknown; headers?: Record<string, string> }
  | { fault: "reset" }
  | { fault: "hang" }
  /** Send the response headers (and, streaming, the first chunk), then nothing more: a stalled body. */
  | { fault: "stall-after-headers" }
  /** Send the whole answer one byte every `intervalMs` (default 1000): a body that never completes in time. */
  | { fault: "drip"; content: string; intervalMs?: number }
  /** An error whose body echoes the request's Authorization header, as some proxies do. */
  | { fault: "echo-auth"; status?: number }
  | { fault: "cut-stream"; partial: string }
  | { fault: "invalid-json" }
  | { fault: "no-choices" }
  | { fault: "null-content" };

export interface RecordedRequest {
  /** 0-based position among the chat-completion requests received by this server. */
  index: number;
  model: string;
  stream: boolean;
  messages: Array<{ role: string; content: string }>;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

/** A request's system prompt ("" without one). */
export const systemPromptOf = (req: RecordedRequest): string => req.messages.find((m) => m.role === "system")?.content ?? "";

/** A request's user messages, one per line. */
export const userTextOf = (req: RecordedRequest): string =>
  req.messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n");

export type Responder = (req: RecordedRequest, index: number) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedServerOptions {
  replies?: ScriptedReply[];
  responder?: Responder;
  /** Delay applied before every chat-completion answer (including faults). */
  latencyMs?: number;
  /** Answer from `replies` in a cycle (a benchmark's many runs) instead of failing past the last. */
  repeat?: boolean;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (pick a free port). */
  port?: number;
}

export interface ScriptedServer {
  /** e.g. http://127.0.0.1:PORT/v1 */
  baseURL: string;
  port: number;
  requests: RecordedRequest[];
  /**
   * Replace the scripted list. The next request takes `r[0]`, and so on.
   * Also clears any responder so the new list takes effect.
   */
  setReplies(r: ScriptedReply[]): void;
  /** Install a responder; it takes precedence over the scripted list. */
  setResponder(fn: Responder): void;
  close(): Promise<void>;
}

export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: string;
}

type ContentReply = {
  content: string | null;
  toolCalls?: ScriptedToolCall[];
  refusal?: string;
  finishReason?: string;
  delayMs?: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
  pieceChars?: number;
};

const JSON_HEADERS = { "content-type": "application/json" } as const;

function flattenContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (content == null) return "";
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) => {
        if (typeof part === "string") return part;
        if (part && typeof part === "object") {
          const p = part as Record<string, unknown>;
          if (typeof p.text === "string") return p.text;
          if (typeof p.refusal === "string") return p.refusal;
        }
        return "";
      })
      .join("");
  }
  return JSON.stringify(content);
}

function roughTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/** Split text into up to `pieces` non-empty, roughly equal parts, or into parts of `size` characters. */
function splitContent(text: string, pieces = 3, size = Math.ceil(text.length / Math.min(pieces, text.length))): string[] {
  if (text.length === 0) return [];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function defaultErrorMessage(status: number): { message: string; type: string; code: string | null } {
  if (status === 429) {
    return { message: "Rate limit reached (scripted)", type: "requests", code: "rate_limit_exceeded" };
  }
  if (status >= 500) {
    return { message: "Internal server error (scripted)", type: "server_error", code: "server_error" };
  }
  if (status === 401) {
    return { message: "Incorrect API key provided (scripted)", type: "invalid_request_error", code: "invalid_api_key" };
  }
  return { message: `Scripted error (status ${status})`, type: "invalid_request_error", code: null };
}

export async function startScriptedOpenAIServer(opts: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const host = opts.host ?? "127.0.0.1";
  const latencyMs = opts.latencyMs ?? 0;
  let replies: ScriptedReply[] = opts.replies ?? [];
  let replyCursor = 0;
  let responder: Responder | undefined = opts.responder;
  let chatCount = 0;
  let closed = false;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Map<NodeJS.Timeout, () => void>();

  /** Resolves after `ms` (or immediately on close()); returns false if closed. */
  function sleep(ms: number): Promise<boolean> {
    if (closed) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve(!closed);
      }, ms);
      timers.set(t, () => resolve(false));
    });
  }

  const gone = (res: ServerResponse): boolean => closed || res.destroyed || res.writableEnded;

  function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
    if (gone(res)) return;
    const text = typeof payload === "string" ? payload : JSON.stringify(payload);
    res.writeHead(status, {
      ...JSON_HEADERS,
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }

  function destroySocketSoon(res: ServerResponse): void {
    // Give the already-written bytes a moment to reach the client, then cut.
    void sleep(10).then(() => res.socket?.destroy());
  }

  function completionBody(
    rec: RecordedRequest,
    content: string | null,
    usage: { prompt_tokens: number; completion_tokens: number },
    toolCalls?: ScriptedToolCall[],
    refusal?: string,
    finishReason?: string,
  ) {
    const calls = toolCalls?.map((c, i) => ({ id: c.id ?? `call_${rec.index}_${i}`, type: "function", function: { name: c.name, arguments: c.arguments } }));
    return {
      id: `chatcmpl-scripted-${rec.index}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: rec.model,
      system_fingerprint: null,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, refusal: refusal ?? null, ...(calls?.length ? { tool_calls: calls } : {}) },
          logprobs: null,
          finish_reason: finishReason ?? (calls?.length ? "tool_calls" : "stop"),
        },
      ],
      usage: {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.prompt_tokens + usage.completion_tokens,
      },
    };
  }

  function defaultUsage(rec: RecordedRequest, content: string | null) {
    let promptChars = 0;
    for (const m of rec.messages) promptChars += m.content.length;
    return {
      prompt_tokens: roughTokens(promptChars),
      completion_tokens: roughTokens(content?.length ?? 0),
    };
  }

  function chunk(rec: RecordedRequest, created: number, delta: Record<string, unknown>, finish: string | null) {
    return {
      id: `chatcmpl-scripted-${rec.index}`,
      object: "chat.completion.chunk",
      created,
      model: rec.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
  }

  const sse = (data: unknown): string => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

  function startSse(res: ServerResponse): void {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
    });
  }

  /** The full response for a content reply: status line headers and body text, JSON or SSE. */
  function contentResponse(rec: RecordedRequest, reply: ContentReply): { headers: Record<string, string>; body: string } {
    const content = reply.content;
    const usage = reply.usage ?? defaultUsage(rec, content ?? reply.refusal ?? null);
    if (!rec.stream) {
      const text = JSON.stringify(completionBody(rec, content, usage, reply.toolCalls, reply.refusal, reply.finishReason));
      return { headers: { ...JSON_HEADERS, "content-length": String(Buffer.byteLength(text)) }, body: text };
    }
    const created = Math.floor(Date.now() / 1000);
    let out = sse(
      chunk(rec, created, { role: "assistant", content: content === null ? null : "", ...(reply.refusal !== undefined ? { refusal: "" } : {}) }, null),
    );
    for (const piece of splitContent(content ?? "", 3, reply.pieceChars)) {
      out += sse(chunk(rec, created, { content: piece }, null));
    }
    for (const piece of splitContent(reply.refusal ?? "")) out += sse(chunk(rec, created, { refusal: piece }, null));
    (reply.toolCalls ?? []).forEach((c, i) => {
      // As providers stream them: id and name first, then the arguments in pieces.
      const id = c.id ?? `call_${rec.index}_${i}`;
      out += sse(chunk(rec, created, { tool_calls: [{ index: i, id, type: "function", function: { name: c.name, arguments: "" } }] }, null));
      for (const piece of splitContent(c.arguments)) out += sse(chunk(rec, created, { tool_calls: [{ index: i, function: { arguments: piece } }] }, null));
    });
    out += sse(chunk(rec, created, {}, reply.finishReason ?? (reply.toolCalls?.length ? "tool_calls" : "stop")));
    if (rec.body?.stream_options?.include_usage === true) {
      out += sse({
        id: `chatcmpl-scripted-${rec.index}`,
        object: "chat.completion.chunk",
        created,
        model: rec.model,
        system_fingerprint: null,
        choices: [],
        usage: {
          prompt_tokens: usage.prompt_tokens,
          completion_tokens: usage.completion_tokens,
          total_tokens: usage.prompt_tokens + usage.completion_tokens,
        },
      });
    }
    out += sse("[DONE]");
    return { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" }, body: out };
  }

  function sendContent(res: ServerResponse, rec: RecordedRequest, reply: ContentReply): void {
    if (gone(res)) return;
    const { headers, body } = contentResponse(rec, reply);
    res.writeHead(200, headers);
    res.end(body);
  }

  async function answer(res: ServerResponse, rec: RecordedRequest, reply: ScriptedReply): Promise<void> {
    if (typeof reply === "string") {
      sendContent(res, rec, { content: reply });
      return;
    }
    if (!("fault" in reply)) {
      if (reply.delayMs && !(await sleep(reply.delayMs))) return;
      sendContent(res, rec, reply);
      return;
    }
    if (gone(res)) return;
    switch (reply.fault) {
      case "status": {
        const def = defaultErrorMessage(reply.status);
        const payload = reply.body !== undefined ? reply.body : { error: def };
        sendJson(res, reply.status, payload, reply.headers ?? {});
        return;
      }
      case "reset":
        res.socket?.destroy();
        return;
      case "hang":
        // Never answer; close() destroys the socket.
        return;
      case "stall-after-headers": {
        const { headers, body } = contentResponse(rec, { content: "{}" });
        res.writeHead(200, headers);
        // Streaming: the role chunk arrives, then nothing; plain JSON: the first byte, then nothing.
        res.write(rec.stream ? body.slice(0, body.indexOf("\n\n") + 2) : body.slice(0, 1));
        return;
      }
      case "drip": {
        const { headers, body } = contentResponse(rec, { content: reply.content });
        res.writeHead(200, headers);
        const bytes = Buffer.from(body);
        for (let i = 0; i < bytes.length; i++) {
          if (gone(res)) return;
          res.write(bytes.subarray(i, i + 1));
          if (!(await sleep(reply.intervalMs ?? 1_000))) return;
        }
        if (!gone(res)) res.end();
        return;
      }
      case "echo-auth": {
        const auth = String(rec.headers.authorization ?? "");
        sendJson(res, reply.status ?? 401, {
          error: {
            message: `Invalid credentials in header "Authorization: ${auth}" (echoed by the proxy)`,
            type: "invalid_request_error",
            code: "invalid_api_key",
          },
        });
        return;
      }
      case "cut-stream": {
        if (rec.stream) {
          const created = Math.floor(Date.now() / 1000);
          let out = sse(chunk(rec, created, { role: "assistant", content: "" }, null));
          for (const piece of splitContent(reply.partial)) {
            out += sse(chunk(rec, created, { content: piece }, null));
          }
          startSse(res);
          res.write(out, () => destroySocketSoon(res));
        } else {
          const text = JSON.stringify(completionBody(rec, reply.partial, defaultUsage(rec, reply.partial)));
          res.writeHead(200, { ...JSON_HEADERS, "content-length": String(Buffer.byteLength(text)) });
          res.write(text.slice(0, Math.floor(text.length / 2)), () => destroySocketSoon(res));
        }
        return;
      }
      case "invalid-json": {
        if (rec.stream) {
          startSse(res);
          res.end(sse("{this is not json") + sse("[DONE]"));
        } else {
          sendJson(res, 200, "<html>this is not json</html>");
        }
        return;
      }
      case "no-choices": {
        const created = Math.floor(Date.now() / 1000);
        if (rec.stream) {
          const c = { ...chunk(rec, created, {}, null), choices: [] };
          startSse(res);
          res.end(sse(c) + sse("[DONE]"));
        } else {
          sendJson(res, 200, { ...completionBody(rec, "", defaultUsage(rec, "")), choices: [] });
        }
        return;
      }
      case "null-content":
        sendContent(res, rec, { content: null });
        return;
      default: {
        const unknownFault = (reply as { fault: unknown }).fault;
        sendJson(res, 500, {
          error: { message: `scripted server: unknown fault ${String(unknownFault)}`, type: "scripted_server_error", code: null },
        });
      }
    }
  }

  async function handleChat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (gone(res)) return;
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      sendJson(res, 400, {
        error: { message: "scripted server: request body is not valid JSON", type: "invalid_request_error", code: null },
      });
      return;
    }
    const index = chatCount++;
    const rawMessages: unknown[] = Array.isArray(body?.messages) ? body.messages : [];
    const rec: RecordedRequest = {
      index,
      model: typeof body?.model === "string" ? body.model : "",
      stream: body?.stream === true,
      messages: rawMessages.map((m) => {
        const msg = (m ?? {}) as Record<string, unknown>;
        return { role: String(msg.role ?? ""), content: flattenContent(msg.content) };
      }),
      body,
      headers: req.headers,
    };
    requests.push(rec);

    let reply: ScriptedReply | undefined;
    try {
      if (responder) {
        reply = await responder(rec, index);
      } else if (replyCursor < replies.length) {
        reply = replies[replyCursor++];
        if (opts.repeat && replyCursor === replies.length) replyCursor = 0;
      }
    } catch (err) {
      if (!(await sleep(latencyMs))) return;
      sendJson(res, 500, {
        error: {
          message: `scripted server: responder threw for request ${index}: ${err instanceof Error ? err.message : String(err)}`,
          type: "scripted_server_error",
          code: null,
        },
      });
      return;
    }
    if (!(await sleep(latencyMs))) return;
    if (reply === undefined) {
      sendJson(res, 500, {
        error: {
          message: `scripted server: no reply scripted for request ${index}`,
          type: "scripted_server_error",
          code: null,
        },
      });
      return;
    }
    await answer(res, rec, reply);
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0]!.replace(/\/+$/, "");
    if (req.method === "POST" && path === "/v1/chat/completions") {
      handleChat(req, res).catch((err: unknown) => {
        sendJson(res, 500, {
          error: { message: `scripted server: ${err instanceof Error ? err.message : String(err)}`, type: "scripted_server_error", code: null },
        });
      });
      return;
    }
    // Drain any request body before answering.
    req.resume();
    if (req.method === "GET" && path === "/v1/models") {
      sendJson(res, 200, {
        object: "list",
        data: [
          { id: "scripted", object: "model", created: 0, owned_by: "scripted-server" },
          { id: "gpt-4o-mini", object: "model", created: 0, owned_by: "scripted-server" },
        ],
      });
      return;
    }
    sendJson(res, 404, {
      error: { message: `scripted server: no route for ${req.method} ${req.url}`, type: "invalid_request_error", code: "not_found" },
    });
  });

  server.keepAliveTimeout = 30_000;
  server.headersTimeout = 35_000;
  server.requestTimeout = 0;
  server.maxConnections = Infinity;
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // Client-side resets are expected in fault tests; never crash on them.
  server.on("clientError", (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port: opts.port ?? 0, backlog: 4096 }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address();
  if (!addr || typeof addr === "string") throw new Error("scripted server: unexpected listen address");
  const port = addr.port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    baseURL: `http://${urlHost}:${port}/v1`,
    port,
    requests,
    setReplies(r: ScriptedReply[]) {
      replies = r;
      replyCursor = 0;
      responder = undefined;
    },
    setResponder(fn: Responder) {
      responder = fn;
    },
    close() {
      if (closing) return closing;
      closed = true;
      closing = new Promise<void>((resolve) => {
        for (const [t, wake] of timers) {
          clearTimeout(t);
          wake();
        }
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections?.();
        for (const s of sockets) s.destroy();
        sockets.clear();
      });
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------
// CLI: npx tsx testkit/openai-server.ts [--port N] [--host H]
//        [--replies-file F.json] [--repeat] [--latency-ms N]
// Prints `READY <baseURL>` once listening.
// ---------------------------------------------------------------------------
async function main(argv: string[]): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const repliesFile = arg("--replies-file");
  let replies: ScriptedReply[] = [];
  if (repliesFile) {
    const parsed: unknown = JSON.parse(await readFile(repliesFile, "utf8"));
    const list = Array.isArray(parsed) ? parsed : (parsed as { replies?: unknown }).replies;
    if (!Array.isArray(list)) throw new Error(`${repliesFile}: expected a JSON array of replies`);
    replies = list as ScriptedReply[];
  }
  const server = await startScriptedOpenAIServer({
    replies,
    port: Number(arg("--port") ?? 0),
    host: arg("--host") ?? "127.0.0.1",
    latencyMs: Number(arg("--latency-ms") ?? 0),
    repeat: argv.includes("--repeat"),
  });
  process.stdout.write(`READY ${server.baseURL}\n`);
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
