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
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel } from "../../src/models.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated } from "../../src/validation/stream.js";
import { startTokenServer, type TokenReply, type TokenServer } from "./token-server.js";

const spec = builtinSpecs.get("deployment-config")!;
const example = spec.example as Record<string, unknown>;
const VALID = JSON.stringify(example, null, 2);
const BAD_NAME = JSON.stringify({ ...example, service_name: "Payments API" }, null, 2);
// A fenced answer with a wrong field, then a long explanation: its errors are certain once the block's closing
// line ends (nothing after it could be read instead), so it is stopped there and the rest (about 500 tokens) is
// never generated, with a wide margin for a busy machine, where the client may read the stream late.
const STOPPABLE = `\`\`\`json\n${BAD_NAME}\n\`\`\`\n${"The service runs with a health check and sensible limits. ".repeat(35)}`;
const NAME_ERROR = 'service_name is "Payments API"; it must match the pattern ^[a-z][a-z0-9-]*$';
const TOOL = "deployment-config_output";

/** Replies in order. */
let replies: TokenReply[] = [];
let server: TokenServer;

beforeAll(async () => {
  server = await startTokenServer(() => {
    const next = replies.shift();
    if (!next) throw new Error("no reply scripted");
    return next;
  });
});

afterAll(async () => {
  await server?.close();
});

function model() {
  const env = { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
  return (request: Parameters<typeof createChatModel>[0]) => createChatModel(request, env);
}

describe("stopping early through ChatOpenAI over HTTP", () => {
  for (const outputMode of ["text", "json_object", "json_schema", "tool"] as const) {
    it(`${outputMode}: the first error stops the request; the server generates no more; the retry carries the error`, async () => {
      const reply = (text: string): TokenReply => (outputMode === "tool" ? { tool: TOOL, args: text } : { content: text });
      replies = [reply(STOPPABLE), reply(VALID)];
      const before = server.served.length;
      let outcome: any;
      const partialValues: unknown[] = [];
      for await (const event of streamValidated({ model: model(), spec, request: "payments-api", outputMode, stopEarly: "first-error" })) {
        if (event.kind === "partial" && event.attempt === 1) partialValues.push(event.value);
        if (event.kind === "outcome") outcome = event.outcome;
      }
      const [first, second] = server.served.slice(before);
      expect(first.body.stream).toBe(true);
      // The client went away: the server stopped well before the end of the answer.
      await expect.poll(() => first.cut, { timeout: 15_000 }).toBe(true);
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
    replies = [
      { tool: TOOL, args: VALID.slice(0, VALID.lastIndexOf(",")) },
      { tool: TOOL, args: VALID },
    ];
    let outcome: any;
    for await (const event of streamValidated({ model: model(), spec, request: "payments-api", outputMode: "tool", stopEarly: "never" }))
      if (event.kind === "outcome") outcome = event.outcome;
    expect(outcome).toMatchObject({ success: true, attempts: 2 });
    expect(outcome.history[0].errors[0]).toMatch(/truncated/);
  });

  it("a run that does not stream tokens sends whole-answer requests, as before", async () => {
    replies = [{ content: BAD_NAME }, { content: VALID }];
    const before = server.served.length;
    const out = await buildValidationGraph({ model: model(), spec }).invoke({ request: "payments-api" }, { context: { stopEarly: "first-error" } });
    expect(server.served.slice(before).map((s) => s.body.stream ?? false)).toEqual([false, false]);
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history[0].errors).toEqual([NAME_ERROR]);
    expect(out.history[0].stopped).toBeUndefined();
  });
});
