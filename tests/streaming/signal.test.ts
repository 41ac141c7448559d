/**
 * How streamValidated asks the generate node to stream: through the run's
 * configuration, not a callback handler (a handler makes LangChain dispatch
 * every token to it). The events, stops, history and usage of a fixed
 * scripted stream are compared with a recorded expectation, and the model is
 * shown to receive no callback handler.
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatGenerationChunk } from "@langchain/core/outputs";
import { describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { STREAM_TOKENS_KEY } from "../../src/providers/model-call.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated, type ValidationStreamEvent } from "../../src/validation/stream.js";
import { TokenStreamingModel } from "./token-model.js";

const spec = builtinSpecs.get("deployment-config")!;
const example = spec.example as Record<string, unknown>;
const VALID = JSON.stringify(example, null, 2);
const BAD_NAME = JSON.stringify({ ...example, service_name: "Payments API" }, null, 2);
const fenced = (answer: string) =>
  `Here is the configuration:\n\`\`\`json\n${answer}\n\`\`\`\nThis sets up the service ${"with sensible defaults ".repeat(10)}.`;
const RECORDED = new URL("./signal.recorded.json", import.meta.url);

/** The scripted runs: the default policy over two attempts, a stop at the first error, and a root of the wrong type. */
const RUNS = [
  { name: "default policy, two attempts", answers: [BAD_NAME, VALID], settings: {} },
  { name: "first-error stop, then valid", answers: [fenced(BAD_NAME), VALID], settings: { stopEarly: "first-error" as const } },
  { name: "wrong root stopped, then out of attempts", answers: [fenced(`[\n${VALID}\n]`), BAD_NAME], settings: { maxAttempts: 2 } },
];

/** The token model, recording the callback handlers each streamed call was given. */
class HandlerRecordingModel extends TokenStreamingModel {
  readonly handlers: string[][] = [];
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: BaseChatModelCallOptions,
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    this.handlers.push((runManager?.handlers ?? []).map((handler) => handler.name));
    yield* super._streamResponseChunks(messages, options, runManager);
  }
}

async function runAll() {
  const out: Record<string, { events: ValidationStreamEvent[]; calls: { aborted: boolean; generated: number; streamed: boolean }[] }> = {};
  const handlers: string[][] = [];
  for (const run of RUNS) {
    const model = new HandlerRecordingModel({ answers: run.answers });
    const events: ValidationStreamEvent[] = [];
    for await (const event of streamValidated({ model, spec, request: "A deployment config for payments-api", ...run.settings })) events.push(event);
    out[run.name] = { events, calls: model.calls.map((c) => ({ aborted: c.aborted, generated: c.generated, streamed: c.streamed })) };
    handlers.push(...model.handlers);
  }
  return { recorded: JSON.parse(JSON.stringify(out)) as unknown, handlers };
}

describe("streamValidated signals streaming through the run's configuration", () => {
  it("yields the same events, stops, history and usage as recorded for a fixed scripted stream", async () => {
    const { recorded } = await runAll();
    if (process.env.RECORD_STREAM_EXPECTATION === "1") writeFileSync(RECORDED, `${JSON.stringify(recorded, null, 1)}\n`);
    expect(recorded).toEqual(JSON.parse(readFileSync(RECORDED, "utf8")));
  });

  it("streams every model call with no callback handler attached", async () => {
    const { handlers } = await runAll();
    expect(handlers.length).toBe(6);
    expect(handlers).toEqual(handlers.map(() => []));
  });

  it("a run that gives no context may ask for tokens in `configurable` alone: the answer streams and its events reach the custom stream", async () => {
    const model = new HandlerRecordingModel({ answers: [VALID] });
    const graph = buildValidationGraph({ model, spec });
    const kinds: string[] = [];
    for await (const [mode, chunk] of (await graph.stream(
      { request: "A deployment config" },
      { configurable: { [STREAM_TOKENS_KEY]: true }, streamMode: ["custom", "values"] },
    )) as AsyncIterable<[string, unknown]>) {
      if (mode === "custom") kinds.push((chunk as { kind: string }).kind);
    }
    expect(model.calls.map((c) => c.streamed)).toEqual([true]);
    expect(kinds.at(-1)).toBe("final");
    expect(kinds.filter((k) => k === "partial").length).toBeGreaterThan(0);
  });
});
