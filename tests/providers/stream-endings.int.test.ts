/**
 * Every way an answer can end, per provider wire format, through the real client against a server on
 * 127.0.0.1 that sends the provider's bytes: OpenAI JSON and SSE (ChatOpenAI), Anthropic SSE
 * (ChatAnthropic), Gemini SSE (ChatGoogleGenerativeAI), Ollama NDJSON (ChatOllama). The endings: each
 * documented stop reason, an unknown one, none at all, the body cut at every byte boundary, a reset,
 * a stall. Whatever the ending, the call is an outcome (an answer, or a ProviderError), no promise is
 * left rejected with nobody listening, and an answer is taken as finished (no `truncated`, `unfinished`
 * or refusal, so the check step's verdict stands) only when the provider's own "finished" stop arrived
 * whole. The answer is an integer whose every prefix of four digits or more would pass the spec, so a
 * cut answer taken as finished would be seen.
 */
import { HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import { MODEL_PROVIDERS } from "../../src/providers/index.js";
import { loadChatModel } from "../../src/models.js";
import { checkText } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { callModelInMode } from "../../src/validation/output-mode.js";
import { startWireServer, wireEnvironment, type WireReply, type WireServer } from "../support/wire-server.js";

const SPEC = resolveSpec({ name: "count", description: "A count of at least 1000", schema: { type: "integer", minimum: 1000 } });
/** The answer, as the model streams it: every prefix from "1234" on is a valid answer too. */
const PIECES = ["12", "3456", "78"];
const ANSWER = PIECES.join("");

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
let server: WireServer;
beforeAll(async () => {
  process.on("unhandledRejection", onUnhandled);
  server = await startWireServer();
});
afterAll(async () => {
  await server?.close();
  process.off("unhandledRejection", onUnhandled);
});

/** A provider's answer on the wire: its bytes, and the offset from which its stop has arrived whole (none: never). */
interface Rendered {
  headers: Record<string, string>;
  body: Buffer;
  stopEnds?: number;
}

interface WireFormat {
  name: string;
  model: string;
  streamed: boolean;
  stops: { field: string; finished: readonly string[]; cut: readonly string[]; withheld: readonly string[] };
  /** Every stop reason its provider documents (the table's, and those that mean neither finished, cut nor withheld). */
  documented: readonly string[];
  render(stop: string | undefined): Rendered;
}

const SSE = { "content-type": "text/event-stream" };
const JSON_TYPE = { "content-type": "application/json" };

/** The bytes of `parts` joined, and where the part carrying the stop ends. */
function joined(parts: string[], stopPart: number | undefined, headers: Record<string, string>): Rendered {
  const body = Buffer.from(parts.join(""));
  const stopEnds = stopPart === undefined ? undefined : Buffer.byteLength(parts.slice(0, stopPart + 1).join(""));
  return { headers, body, stopEnds };
}

const openaiChunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** Gemini's stop reasons (both Gemini clients read the same stream). */
const GEMINI_DOCUMENTED = [
  "STOP",
  "MAX_TOKENS",
  "SAFETY",
  "RECITATION",
  "LANGUAGE",
  "OTHER",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "MALFORMED_FUNCTION_CALL",
  "IMAGE_SAFETY",
  "UNEXPECTED_TOOL_CALL",
  "TOO_MANY_TOOL_CALLS",
  "FINISH_REASON_UNSPECIFIED",
];

/** Gemini's SSE: one `data:` event per piece, the last with its finishReason. */
function renderGemini(stop: string | undefined) {
  const data = (text: string, finishReason?: string) =>
    `data: ${JSON.stringify({
      candidates: [{ content: { parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) }],
    })}\r\n\r\n`;
  const parts = PIECES.map((p, i) => data(p, i === PIECES.length - 1 ? stop : undefined));
  return joined(parts, stop === undefined ? undefined : parts.length - 1, SSE);
}

const FORMATS: WireFormat[] = [
  {
    name: "OpenAI JSON",
    model: "openai/m",
    streamed: false,
    stops: MODEL_PROVIDERS.openai.stops[0],
    documented: ["stop", "tool_calls", "length", "content_filter", "function_call"],
    render: (stop) => {
      const body = {
        id: "c",
        object: "chat.completion",
        created: 0,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: ANSWER }, finish_reason: stop ?? null }],
        usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
      };
      // The stop is in a JSON body: it counts only once the whole body has arrived.
      return joined([JSON.stringify(body)], stop === undefined ? undefined : 0, JSON_TYPE);
    },
  },
  {
    name: "OpenAI SSE",
    model: "openai/m",
    streamed: true,
    stops: MODEL_PROVIDERS.openai.stops[0],
    documented: ["stop", "tool_calls", "length", "content_filter", "function_call"],
    render: (stop) => {
      const parts = [openaiChunk({ role: "assistant", content: "" }, null), ...PIECES.map((p) => openaiChunk({ content: p }, null))];
      const stopPart = stop === undefined ? undefined : parts.push(openaiChunk({}, stop)) - 1;
      parts.push(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } })}\n\n`, "data: [DONE]\n\n");
      return joined(parts, stopPart, SSE);
    },
  },
  {
    name: "Anthropic SSE",
    model: "anthropic/claude-x",
    streamed: true,
    stops: MODEL_PROVIDERS.anthropic.stops[0],
    documented: ["end_turn", "tool_use", "stop_sequence", "max_tokens", "pause_turn", "refusal", "model_context_window_exceeded"],
    render: (stop) => {
      const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      const message = { id: "msg", role: "assistant", content: [], stop_reason: null };
      const parts = [
        event("message_start", { message: { ...message, usage: { input_tokens: 5, output_tokens: 1 } } }),
        event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        ...PIECES.map((text) => event("content_block_delta", { index: 0, delta: { type: "text_delta", text } })),
        event("content_block_stop", { index: 0 }),
      ];
      const stopPart =
        stop === undefined
          ? undefined
          : parts.push(event("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 4 } })) - 1;
      if (stop !== undefined) parts.push(event("message_stop", {}));
      return joined(parts, stopPart, SSE);
    },
  },
  ...(["google-genai", "google"] as const).map((provider) => ({
    name: `Gemini SSE (${MODEL_PROVIDERS[provider].package})`,
    model: `${provider}/gemini-x`,
    streamed: true,
    stops: MODEL_PROVIDERS[provider].stops[0],
    documented: GEMINI_DOCUMENTED,
    render: renderGemini,
  })),
  {
    name: "Ollama NDJSON",
    model: "ollama/llama-x",
    streamed: true,
    stops: MODEL_PROVIDERS.ollama.stops[0],
    documented: ["stop", "length", "load", "unload"],
    render: (stop) => {
      const parts = PIECES.map((content) => `${JSON.stringify({ message: { role: "assistant", content }, done: false })}\n`);
      // No stop at all: the last line says the answer is done but not why.
      const done = { message: { role: "assistant", content: "" }, done: true, done_reason: stop, prompt_eval_count: 5, eval_count: 4 };
      parts.push(JSON.stringify(done), "\n");
      // The last line is whole without its newline.
      return joined(parts, stop === undefined ? undefined : parts.length - 2, { "content-type": "application/x-ndjson" });
    },
  },
];

const environment = (timeoutMs?: number) => wireEnvironment(server.baseURL, timeoutMs);

/** How one call ended: taken as a finished answer (and whether the check step passed it), not finished, or a ProviderError. */
type Ending = { kind: "finished"; valid: boolean; text: string } | { kind: "not finished"; said: string } | { kind: "provider error"; message: string };

async function call(format: WireFormat, reply: WireReply, timeoutMs?: number): Promise<Ending> {
  server.answer(() => reply);
  const model = await loadChatModel({ model: format.model, role: "generate" }, environment(timeoutMs));
  const watch = format.streamed ? () => ({ write() {}, stop: new AbortController().signal }) : undefined;
  try {
    const answer = await callModelInMode(model, [new HumanMessage("How many?")], "text", SPEC, { node: "generate", watch });
    const said = answer.truncated ?? answer.unfinished ?? answer.refusal ?? (answer.stopped ? "stopped" : undefined);
    if (said !== undefined) return { kind: "not finished", said };
    return { kind: "finished", valid: (await checkText(SPEC, answer.text, "model")).valid, text: answer.text };
  } catch (error) {
    // Anything but a ProviderError is a crash, not an outcome: the test fails with it.
    if (!(error instanceof ProviderError)) throw error;
    return { kind: "provider error", message: error.message };
  }
}

/** Lets a stray rejection of the calls just made reach the listener before it is read. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe.each(FORMATS)("$name: an answer is finished only on the provider's own finished stop", (format) => {
  it("each documented stop reason: only those that mean finished pass; the others are recorded in the provider's words", async () => {
    for (const stop of format.documented) {
      const ending = await call(format, { ...format.render(stop), end: "close" });
      if (format.stops.finished.includes(stop)) expect(ending, stop).toEqual({ kind: "finished", valid: true, text: ANSWER });
      else {
        expect(ending.kind, stop).not.toBe("finished");
        if (ending.kind === "not finished") expect(ending.said).toContain(`${format.stops.field} "${stop}"`);
      }
    }
    await settle();
    expect(unhandled).toEqual([]);
  });

  it("an unknown stop reason, and none at all, are not finished", async () => {
    const unknown = await call(format, { ...format.render("SOMETHING_NEW"), end: "close" });
    expect(unknown).toEqual({ kind: "not finished", said: `${format.stops.field} "SOMETHING_NEW"` });
    const none = await call(format, { ...format.render(undefined), end: "close" });
    expect(none.kind).not.toBe("finished");
    await settle();
    expect(unhandled).toEqual([]);
  });

  it("the body cut at every byte boundary: finished only once the stop has arrived whole", async () => {
    const whole = format.render(format.stops.finished[0]);
    const finishedAt: number[] = [];
    for (let at = 0; at <= whole.body.length; at++) {
      const ending = await call(format, { headers: whole.headers, body: whole.body.subarray(0, at), end: "close" });
      if (ending.kind === "finished") {
        finishedAt.push(at);
        expect(at, `taken as finished after ${at} of ${whole.body.length} bytes`).toBeGreaterThanOrEqual(whole.stopEnds!);
        expect(ending).toEqual({ kind: "finished", valid: true, text: ANSWER });
      }
    }
    // The whole body is a finished answer.
    expect(finishedAt).toContain(whole.body.length);
    await settle();
    expect(unhandled).toEqual([]);
  });

  it("a reset before the stop, at any point, is an outcome and never finished", async () => {
    const whole = format.render(format.stops.finished[0]);
    for (let at = 0; at < whole.stopEnds!; at += Math.max(1, Math.floor(whole.stopEnds! / 12))) {
      const ending = await call(format, { headers: whole.headers, body: whole.body.subarray(0, at), end: "reset" });
      expect(ending.kind, `reset after ${at} bytes`).not.toBe("finished");
    }
    await settle();
    expect(unhandled).toEqual([]);
  });

  it("a stall after part of the answer ends at the deadline: an outcome, never finished", async () => {
    const whole = format.render(format.stops.finished[0]);
    for (const at of [0, Math.floor(whole.stopEnds! / 2)]) {
      const ending = await call(format, { headers: whole.headers, body: whole.body.subarray(0, at), end: "stall" }, 300);
      expect(ending.kind, `stall after ${at} bytes`).toBe("provider error");
      if (ending.kind === "provider error") expect(ending.message).toMatch(/timed out/);
    }
    await settle();
    expect(unhandled).toEqual([]);
  });
});
