/**
 * An OpenAI-compatible chat-completions server that streams like a provider:
 * one token (four characters) per SSE chunk with a pause between tokens, text
 * content or a tool call's arguments, usage at the end when asked for. It
 * notices when the client goes away and generates nothing more, and records,
 * per request, how many tokens it sent of how many. Plain JSON when the
 * request does not stream.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A reply: text content, or the arguments of a call to `tool`. */
export type TokenReply = { content: string } | { tool: string; args: string };

export interface ServedRequest {
  body: any;
  /** Tokens in the whole reply. */
  tokens: number;
  /** Tokens sent before the reply ended or the client went away. */
  sent: number;
  /** The client closed the connection before the reply was complete. */
  cut: boolean;
}

export interface TokenServer {
  /** e.g. http://127.0.0.1:PORT/v1 */
  baseURL: string;
  served: ServedRequest[];
  close(): Promise<void>;
}

const tokensOf = (text: string) => text.match(/[\s\S]{1,4}/g) ?? [];

/** Start the server; `reply` chooses each request's reply from its body (the messages). */
export async function startTokenServer(reply: (body: any) => TokenReply, options: { tokenMs?: number } = {}): Promise<TokenServer> {
  const tokenMs = options.tokenMs ?? 4;
  const served: ServedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    let answer: TokenReply;
    try {
      answer = reply(body);
    } catch (error) {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: String((error as Error).message) } }));
      return;
    }
    const text = "content" in answer ? answer.content : answer.args;
    const record: ServedRequest = { body, tokens: tokensOf(text).length, sent: 0, cut: false };
    served.push(record);
    const usage = { prompt_tokens: 100, completion_tokens: record.tokens, total_tokens: 100 + record.tokens };
    const base = { id: `chatcmpl-${served.length}`, object: "chat.completion.chunk", created: 0, model: body.model };
    const call = (args: string) => ({ id: `call_${served.length}`, type: "function", function: { name: (answer as { tool: string }).tool, arguments: args } });
    if (!body.stream) {
      const message = "content" in answer ? { role: "assistant", content: text } : { role: "assistant", content: null, tool_calls: [call(text)] };
      record.sent = record.tokens;
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: "stop" }], usage }));
      return;
    }
    let closed = false;
    res.on("close", () => {
      closed = true;
      if (record.sent < record.tokens) record.cut = true;
    });
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (delta: object, finish: string | null = null) =>
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    send({ role: "assistant", content: "content" in answer ? "" : null });
    if (!("content" in answer)) send({ tool_calls: [{ index: 0, ...call("") }] });
    for (const token of tokensOf(text)) {
      await new Promise((resolve) => setTimeout(resolve, tokenMs));
      if (closed) return;
      send("content" in answer ? { content: token } : { tool_calls: [{ index: 0, function: { arguments: token } }] });
      record.sent++;
    }
    send({}, "content" in answer ? "stop" : "tool_calls");
    if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    served,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
