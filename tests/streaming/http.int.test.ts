/**
 * Stopping early over real HTTP: the real ChatOpenAI (built by the package's
 * model factory) against an OpenAI-compatible server that streams one token
 * per SSE chunk with a pause between tokens and stops when the client goes
 * away. In every output mode (content in text, json_object and json_schema;
 * tool-call arguments in tool mode) a stopped attempt aborts the HTTP request,
 * so the server generates no more tokens; the attempt's usage counts the
 * tokens received; the retry carries the errors; a run that does not stream is
 * unchanged (plain JSON requests).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/configuration.js";
import { createChatModel } from "../../src/models.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated } from "../../src/validation/stream.js";

const spec = builtinSpecs.get("deployment-config")!;
const example = spec.example as Record<string, unknown>;
const VALID = JSON.stringify(example, null, 2);
const BAD_NAME = JSON.stringify({ ...example, service_name: "Payments API" }, null, 2);
const NAME_ERROR = 'service_name is "Payments API"; it must match the pattern ^[a-z][a-z0-9-]*$';
const TOOL = "deployment-config_output";

interface Served {
  body: any;
  tokens: number;
  sent: number;
  /** The client closed the connection before the answer was complete. */
  cut: boolean;
}

/** Replies in order: text content, or a tool call's arguments. */
type Reply = { content: string } | { args: string };

let server: Server;
let baseURL = "";
let replies: Reply[] = [];
const served: Served[] = [];
const TOKEN_MS = 4;

const tokensOf = (text: string) => text.match(/[\s\S]{1,4}/g) ?? [];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const reply = replies.shift();
    if (!reply) {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "no reply scripted" } }));
      return;
    }
    const text = "content" in reply ? reply.content : reply.args;
    const record: Served = { body, tokens: tokensOf(text).length, sent: 0, cut: false };
    served.push(record);
    const usage = { prompt_tokens: 100, completion_tokens: record.tokens, total_tokens: 100 + record.tokens };
    const base = { id: "chatcmpl-t", object: "chat.completion.chunk", created: 0, model: body.model };
    if (!body.stream) {
      const message = "content" in reply ? { role: "assistant", content: text } : { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: TOOL, arguments: text } }] };
      record.sent = record.tokens;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason: "stop" }], usage }));
      return;
    }
    let closed = false;
    res.on("close", () => {
      closed = true;
      if (record.sent < record.tokens) record.cut = true;
    });
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (delta: object, finish: string | null = null) => res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    send({ role: "assistant", content: "content" in reply ? "" : null });
    if ("args" in reply) send({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: TOOL, arguments: "" } }] });
    for (const token of tokensOf(text)) {
      await new Promise((resolve) => setTimeout(resolve, TOKEN_MS));
      if (closed) return;
      send("content" in reply ? { content: token } : { tool_calls: [{ index: 0, function: { arguments: token } }] });
      record.sent++;
    }
    send({}, "content" in reply ? "stop" : "tool_calls");
    if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function model() {
  const env = { ...readEnvironment({}), openaiApiKey: "test-key", openaiBaseUrl: baseURL, maxRetries: 0 };
  return (request: Parameters<typeof createChatModel>[0]) => createChatModel(request, env);
}

describe("stopping early through ChatOpenAI over HTTP", () => {
  for (const outputMode of ["text", "json_object", "json_schema", "tool"] as const) {
    it(`${outputMode}: the first error stops the request; the server generates no more; the retry carries the error`, async () => {
      const reply = (text: string): Reply => (outputMode === "tool" ? { args: text } : { content: text });
      replies = [reply(BAD_NAME), reply(VALID)];
      const before = served.length;
      let outcome: any;
      const partialValues: unknown[] = [];
      for await (const event of streamValidated({ model: model(), spec, request: "payments-api", outputMode, stopEarly: "first-error" })) {
        if (event.kind === "partial" && event.attempt === 1) partialValues.push(event.value);
        if (event.kind === "outcome") outcome = event.outcome;
      }
      const [first, second] = served.slice(before);
      expect(first.body.stream).toBe(true);
      // The client went away: the server stopped well before the end of the answer.
      await expect.poll(() => first.cut).toBe(true);
      expect(first.sent).toBeLessThan(first.tokens / 2);
      expect(outcome).toMatchObject({ success: true, attempts: 2 });
      const record = outcome.history[0];
      expect(record).toMatchObject({ valid: false, mode: outputMode, stopped: { reason: "first-error" } });
      expect(record.errors[0]).toBe(NAME_ERROR);
      // No usage arrives for a stopped answer: its output is the pieces received (one token each here).
      expect(record.usage.outputTokens).toBeGreaterThan(0);
      expect(record.usage.outputTokens).toBeLessThanOrEqual(first.sent);
      expect(JSON.stringify(second.body.messages)).toContain("it must match the pattern");
      // The provider's own count for the complete answer.
      expect(outcome.history[1].usage).toMatchObject({ inputTokens: 100, outputTokens: second.tokens });
      expect(partialValues.length).toBeGreaterThan(0);
    });
  }

  it("tool mode: arguments that were cut off are judged as sent, never completed by a lenient parser", async () => {
    replies = [{ args: VALID.slice(0, VALID.lastIndexOf(",")) }, { args: VALID }];
    let outcome: any;
    for await (const event of streamValidated({ model: model(), spec, request: "payments-api", outputMode: "tool", stopEarly: "never" })) if (event.kind === "outcome") outcome = event.outcome;
    expect(outcome).toMatchObject({ success: true, attempts: 2 });
    expect(outcome.history[0].errors[0]).toMatch(/truncated/);
  });

  it("a run that does not stream tokens sends whole-answer requests, as before", async () => {
    replies = [{ content: BAD_NAME }, { content: VALID }];
    const before = served.length;
    const out = await buildValidationGraph({ model: model(), spec }).invoke({ request: "payments-api" }, { context: { stopEarly: "first-error" } });
    expect(served.slice(before).map((s) => s.body.stream ?? false)).toEqual([false, false]);
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history[0].errors).toEqual([NAME_ERROR]);
    expect(out.history[0].stopped).toBeUndefined();
  });
});
