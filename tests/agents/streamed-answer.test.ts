/**
 * The createAgent middleware reads its answer as it streams: a scripted chat model streams the answer tool
 * call's arguments in pieces (as a provider's client does, `tool_call_chunks` with an index); the partial
 * checks publish the validation graph's events on LangGraph's `custom` stream, and the stop policy ends a
 * request that can no longer give a valid answer, before the rest of it is read.
 */
import { AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { answerToolName } from "../../src/agents/answer.js";
import { validatedResponseMiddleware } from "../../src/agents/validated-response.js";
import { orderSpec } from "./server-agent/order-spec.js";
import type { StreamEvent } from "../../src/streaming/attempt.js";

const spec = orderSpec;
const TOOL = answerToolName(spec);
const PIECE = 6;

/** A chat model that streams each scripted answer as the answer tool's call, its arguments in pieces of PIECE characters; it counts the pieces it sent. */
class StreamingAnswerModel extends BaseChatModel {
  sent: number[] = [];
  prompts: BaseMessage[][] = [];
  constructor(private readonly answers: string[]) {
    super({});
  }
  _llmType(): string {
    return "streaming-answer";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(): Promise<ChatResult> {
    throw new Error("this model only streams");
  }
  override async *_streamResponseChunks(messages: BaseMessage[], options: this["ParsedCallOptions"], runManager?: CallbackManagerForLLMRun) {
    this.prompts.push(messages);
    const args = this.answers[this.sent.length] ?? "{}";
    this.sent.push(0);
    const n = this.sent.length - 1;
    for (let at = 0; at < args.length; at += PIECE) {
      if (options.signal?.aborted) throw new Error("aborted");
      const first = at === 0;
      const message = new AIMessageChunk({
        content: "",
        tool_call_chunks: [{ type: "tool_call_chunk", index: 0, args: args.slice(at, at + PIECE), ...(first ? { name: TOOL, id: `call_${n}` } : {}) }],
      });
      const chunk = new ChatGenerationChunk({ text: "", message });
      this.sent[n] += 1;
      yield chunk;
      await runManager?.handleLLMNewToken("", undefined, undefined, undefined, undefined, { chunk });
    }
  }
}

const pieces = (text: string) => Math.ceil(text.length / PIECE);

async function run(model: StreamingAnswerModel, options: Partial<Parameters<typeof validatedResponseMiddleware>[0]> = {}) {
  const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec, maxAttempts: 2, streamAnswer: true, ...options })] });
  const events: StreamEvent[] = [];
  let state: Record<string, unknown> | undefined;
  for await (const [mode, chunk] of await agent.stream({ messages: [{ role: "user", content: "two apples" }] }, { streamMode: ["custom", "values"] })) {
    if (mode === "custom") events.push(chunk as StreamEvent);
    else state = chunk as Record<string, unknown>;
  }
  return { events, state: state! };
}

const VALID = JSON.stringify({ item: "apple", quantity: 2, note: "green ones, please, and not too ripe" });

describe("the middleware's answer, streamed and checked", () => {
  it("publishes the validation graph's partial events as the arguments arrive, then the attempt's end", async () => {
    const model = new StreamingAnswerModel([VALID]);
    const { events, state } = await run(model);
    expect(state.responseOutcome).toMatchObject({ success: true, value: JSON.parse(VALID), attempts: 1 });
    const partials = events.filter((event) => event.kind === "partial");
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.every((event) => event.attempt === 1)).toBe(true);
    // Fields are reported complete as they close, before the whole answer has arrived.
    expect(partials.some((event) => event.complete.includes("item") && !event.complete.includes(""))).toBe(true);
    expect(events.at(-1)).toEqual({ kind: "final", attempt: 1, value: JSON.parse(VALID), complete: [""], errors: [], chars: VALID.length, stopped: null });
    expect(model.sent).toEqual([pieces(VALID)]);
  });

  it('stops a hopeless answer at its first certain error ("first-error"), gives the model the errors, and takes the next answer', async () => {
    const hopeless = JSON.stringify({ item: "apple", quantity: 50, note: "a long note that the model would otherwise keep writing for a while" });
    const model = new StreamingAnswerModel([hopeless, VALID]);
    const { events, state } = await run(model, { stopEarly: "first-error" });
    expect(model.sent[0]).toBeLessThan(pieces(hopeless));
    const end = events.find((event) => event.kind === "final" && event.attempt === 1);
    expect(end).toMatchObject({ kind: "final", attempt: 1, errors: ["quantity is 50; it must be <= 5"], stopped: { reason: "first-error" } });
    expect(state.responseOutcome).toMatchObject({ success: true, value: JSON.parse(VALID), attempts: 2 });
    const feedback = String(model.prompts[1].at(-1)!.content);
    expect(feedback).toContain("quantity is 50; it must be <= 5");
    expect(feedback).toMatch(/The answer was stopped after \d+ characters at its first error/);
    expect(events.filter((event) => event.kind === "partial" && event.attempt === 2).length).toBeGreaterThan(0);
  });

  it('by default ("useless") a fixable error does not stop the answer; an answer that is not JSON does, and out of attempts it fails', async () => {
    const wrong = JSON.stringify({ item: "apple", quantity: 50, note: "n" });
    const broken = '{"item": "apple", "quantity": 2, "note": "x" ] and then a great deal more text that is never read';
    const model = new StreamingAnswerModel([wrong, broken]);
    const { events, state } = await run(model);
    expect(model.sent[0]).toBe(pieces(wrong));
    expect(model.sent[1]).toBeLessThan(pieces(broken));
    expect(events.find((event) => event.kind === "final" && event.attempt === 2)).toMatchObject({ stopped: { reason: "broken-json" } });
    expect(state.responseOutcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 2 });
  });

  it('"never" reads and publishes, and stops nothing', async () => {
    const hopeless = JSON.stringify({ item: "apple", quantity: 50, note: "a long note" });
    const model = new StreamingAnswerModel([hopeless, VALID]);
    const { events } = await run(model, { stopEarly: "never" });
    expect(model.sent).toEqual([pieces(hopeless), pieces(VALID)]);
    expect(events.find((event) => event.kind === "final" && event.attempt === 1)).toMatchObject({
      errors: ["quantity is 50; it must be <= 5"],
      stopped: null,
    });
  });

  it("by default the answer is read as it streams when the run streams the model's tokens (messages mode)", async () => {
    const model = new StreamingAnswerModel([VALID]);
    const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec })] });
    const custom: StreamEvent[] = [];
    for await (const [mode, chunk] of await agent.stream({ messages: [{ role: "user", content: "two apples" }] }, { streamMode: ["custom", "messages"] })) {
      if (mode === "custom") custom.push(chunk as StreamEvent);
    }
    expect(custom.some((event) => event.kind === "partial")).toBe(true);
    expect(custom.at(-1)).toMatchObject({ kind: "final", attempt: 1, stopped: null });
  });

  it("refuses an unknown stop policy when built", () => {
    expect(() => validatedResponseMiddleware({ spec, stopEarly: "sometimes" as never })).toThrow(/stopEarly must be one of "never", "useless", "first-error"/);
  });
});
