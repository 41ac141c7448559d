/**
 * Scripted HTTP servers speaking two providers' own wire formats, for tests that drive the real
 * @langchain/anthropic and @langchain/ollama clients through the graphs:
 *
 *   startScriptedAnthropicServer: POST /v1/messages, the Anthropic Messages API: a JSON message, or
 *     SSE events (message_start, content_block_*, message_delta, message_stop) when `stream: true`;
 *     text or tool_use blocks; any stop_reason ("end_turn", "tool_use", "max_tokens", "refusal"); usage.
 *   startScriptedGeminiServer: Gemini's generateContent and streamGenerateContent (SSE).
 *   startScriptedOllamaServer: POST /api/chat, Ollama's chat API: one JSON object when `stream: false`,
 *     NDJSON lines ending with `done: true` (done_reason, prompt_eval_count, eval_count) otherwise.
 *
 * Replies are taken in order; when they run out the server answers HTTP 500, so a test that relies on
 * a missing reply fails loudly. Every request is recorded with its body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted answer: text, or a tool call whose input is the JSON text given; or an HTTP error. */
export type ProviderReply =
  | {
      text?: string;
      /**
       * A tool call (Anthropic tool_use block, Ollama message.tool_calls); `input` is JSON text, or absent for a
       * block that carries none. The name defaults to the request's first tool.
       */
      toolUse?: { name?: string; input?: string };
      /**
       * Anthropic's stop_reason (default "end_turn", or "tool_use" with a tool call), Ollama's done_reason (default
       * "stop") or Gemini's finishReason (default "STOP"); null: none at all (a stream that ends without the provider's stop).
       */
      stopReason?: string | null;
      /** Token counts the provider reports (default: characters ÷ 4). */
      usage?: { input: number; output: number };
      /** Ollama only: the stream's last line is `{"error": streamError}` (a fault mid-answer) instead of the `done` line. */
      streamError?: unknown;
    }
  | { status: number; body: unknown };

export interface RecordedProviderRequest {
  path: string;
  body: any;
  headers: IncomingMessage["headers"];
}

export interface ScriptedProviderServer {
  /** The base URL to give the client (ANTHROPIC_BASE_URL, OLLAMA_BASE_URL). */
  baseURL: string;
  requests: RecordedProviderRequest[];
  close(): Promise<void>;
}

interface Rendered {
  headers: Record<string, string>;
  body: string;
}
type Render = (reply: Exclude<ProviderReply, { status: number }>, request: RecordedProviderRequest, index: number) => Rendered;

async function serveScript(path: string | RegExp, replies: ProviderReply[], render: Render): Promise<ScriptedProviderServer> {
  const requests: RecordedProviderRequest[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const routed = typeof path === "string" ? req.url === path : path.test(req.url ?? "");
    if (req.method !== "POST" || !routed) return send(res, 404, { error: `no route ${req.method} ${req.url}` });
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(res, 400, { error: "body is not JSON" });
    }
    const request = { path: req.url ?? "", body, headers: req.headers };
    const index = requests.push(request) - 1;
    const reply = replies[index];
    if (reply === undefined) return send(res, 500, { error: `no scripted reply for request ${index}` });
    if ("status" in reply) return send(res, reply.status, reply.body);
    const { headers, body: text } = render(reply, request, index);
    res.writeHead(200, headers);
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const tokens = (chars: number) => Math.max(1, Math.ceil(chars / 4));

function promptChars(messages: unknown): number {
  return JSON.stringify(messages ?? "").length;
}

/** The text pieces a provider streams: a few characters each. */
function pieces(text: string, size = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function startScriptedAnthropicServer(replies: ProviderReply[]): Promise<ScriptedProviderServer> {
  return serveScript("/v1/messages", replies, (reply, request, index): Rendered => {
    const toolName = reply.toolUse?.name ?? request.body.tools?.[0]?.name ?? "tool";
    const answered = reply.toolUse?.input ?? reply.text ?? "";
    const usage = {
      input_tokens: reply.usage?.input ?? tokens(promptChars(request.body.messages) + String(request.body.system ?? "").length),
      output_tokens: reply.usage?.output ?? tokens(answered.length),
    };
    const stopReason = reply.stopReason === null ? null : (reply.stopReason ?? (reply.toolUse ? "tool_use" : "end_turn"));
    const id = `msg_scripted_${index}`;
    const blocks: Array<Record<string, unknown>> = [];
    if (reply.text !== undefined) blocks.push({ type: "text", text: reply.text });
    if (reply.toolUse)
      blocks.push({ type: "tool_use", id: `toolu_scripted_${index}`, name: toolName, ...(reply.toolUse.input !== undefined ? { input: {} } : {}) });
    const message = { id, type: "message", role: "assistant", model: request.body.model, stop_reason: null, stop_sequence: null };
    if (request.body.stream !== true) {
      const content = blocks.map((block) =>
        block.type === "tool_use" && reply.toolUse!.input !== undefined ? { ...block, input: JSON.parse(reply.toolUse!.input) } : block,
      );
      return { headers: { "content-type": "application/json" }, body: JSON.stringify({ ...message, content, stop_reason: stopReason, usage }) };
    }
    const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    // As the API streams: input tokens at the start (output 1), the output count with the stop reason at the end.
    let out = event("message_start", { message: { ...message, content: [], usage: { input_tokens: usage.input_tokens, output_tokens: 1 } } });
    blocks.forEach((block, i) => {
      out += event("content_block_start", { index: i, content_block: block.type === "text" ? { type: "text", text: "" } : block });
      for (const piece of pieces(block.type === "text" ? String(block.text) : (reply.toolUse!.input ?? ""))) {
        out += event("content_block_delta", {
          index: i,
          delta: block.type === "text" ? { type: "text_delta", text: piece } : { type: "input_json_delta", partial_json: piece },
        });
      }
      out += event("content_block_stop", { index: i });
    });
    if (stopReason !== null) {
      out += event("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
      out += event("message_stop", {});
    }
    return { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" }, body: out };
  });
}

export function startScriptedOllamaServer(replies: ProviderReply[]): Promise<ScriptedProviderServer> {
  return serveScript("/api/chat", replies, (reply, request): Rendered => {
    const toolName = reply.toolUse?.name ?? request.body.tools?.[0]?.function?.name ?? "tool";
    const text = reply.text ?? "";
    const toolCalls = reply.toolUse ? [{ function: { name: toolName, arguments: JSON.parse(reply.toolUse.input ?? "{}") } }] : undefined;
    const base = { model: request.body.model, created_at: new Date(0).toISOString() };
    const done = {
      ...base,
      done: true,
      ...(reply.stopReason !== null ? { done_reason: reply.stopReason ?? "stop" } : {}),
      total_duration: 1,
      prompt_eval_count: reply.usage?.input ?? tokens(promptChars(request.body.messages)),
      eval_count: reply.usage?.output ?? tokens((reply.toolUse?.input ?? text).length),
    };
    if (request.body.stream === false) {
      return {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...done, message: { role: "assistant", content: text, ...(toolCalls ? { tool_calls: toolCalls } : {}) } }),
      };
    }
    const lines = pieces(text).map((piece) => ({ ...base, message: { role: "assistant", content: piece }, done: false }));
    if (toolCalls) lines.push({ ...base, message: { role: "assistant", content: "", tool_calls: toolCalls } as never, done: false });
    lines.push("streamError" in reply ? ({ error: reply.streamError } as never) : ({ ...done, message: { role: "assistant", content: "" } } as never));
    return { headers: { "content-type": "application/x-ndjson" }, body: lines.map((line) => JSON.stringify(line)).join("\n") + "\n" };
  });
}

/**
 * Gemini's generateContent API: POST /v1beta/models/{model}:generateContent (JSON) and
 * :streamGenerateContent?alt=sse (SSE `data:` lines), text parts or a functionCall part, finishReason and usageMetadata.
 */
export function startScriptedGeminiServer(replies: ProviderReply[]): Promise<ScriptedProviderServer> {
  return serveScript(/^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent\?alt=sse)$/, replies, (reply, request): Rendered => {
    const text = reply.text ?? "";
    const usageMetadata = {
      promptTokenCount: reply.usage?.input ?? tokens(promptChars(request.body.contents)),
      candidatesTokenCount: reply.usage?.output ?? tokens(text.length),
    };
    // A function call is one part, whole (Gemini streams a call in one event): its arguments as an object.
    const call = reply.toolUse && {
      functionCall: {
        name: reply.toolUse.name ?? request.body.tools?.[0]?.functionDeclarations?.[0]?.name ?? "tool",
        args: reply.toolUse.input === undefined ? undefined : JSON.parse(reply.toolUse.input),
      },
    };
    const body = (part: string, finishReason?: string | null) => ({
      candidates: [{ content: { role: "model", parts: [call ?? { text: part }] }, index: 0, ...(finishReason ? { finishReason } : {}) }],
      usageMetadata: { ...usageMetadata, totalTokenCount: usageMetadata.promptTokenCount + usageMetadata.candidatesTokenCount },
    });
    const finishReason = reply.stopReason === null ? null : (reply.stopReason ?? "STOP");
    if (call !== undefined && request.path.endsWith("alt=sse"))
      return { headers: { "content-type": "text/event-stream" }, body: `data: ${JSON.stringify(body("", finishReason))}\r\n\r\n` };
    if (!request.path.endsWith("alt=sse")) return { headers: { "content-type": "application/json" }, body: JSON.stringify(body(text, finishReason)) };
    const parts = pieces(text);
    const out = parts.map((part, i) => `data: ${JSON.stringify(body(part, i === parts.length - 1 ? finishReason : undefined))}\r\n\r\n`).join("");
    return { headers: { "content-type": "text/event-stream" }, body: out };
  });
}
