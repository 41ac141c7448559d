/**
 * The cases every Gemini client the model factory builds must pass on the wire (both rows send the same
 * generateContent requests): a stream reset mid-answer is a ProviderError, a stream the run stops ends at
 * once with what arrived, and a server that stalls after its headers ends at the deadline, streamed or not;
 * none of them leaves a promise rejected with nobody listening. A row's own cases go in `extra`.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { ProviderError } from "../../src/errors.js";
import { loadChatModel } from "../../src/models.js";
import type { ModelProvider } from "../../src/providers/index.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { callModelInMode } from "../../src/validation/output-mode.js";
import { startWireServer, type WireServer } from "./wire-server.js";

const SPEC = builtinSpecs.get("deployment-config")!;
const SSE = { "content-type": "text/event-stream" };

/** One Gemini SSE event carrying a text piece (and the finishReason, when given). */
export const geminiPiece = (text: string, finishReason?: string) =>
  `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) }] })}\r\n\r\n`;

type Watch = () => { write(text: string): void; stop: AbortSignal };

export interface GeminiWireKit {
  wire(): WireServer;
  /** The row's chat model, sent to the wire server. */
  gemini(timeoutMs?: number): Promise<BaseChatModel>;
  /** A watch that reads the stream and never stops it (or stops when `stop` is aborted). */
  streamed(stop?: AbortSignal): Watch;
  /** One model call in text mode: its answer, or what it threw. */
  ask(timeoutMs?: number, watch?: Watch): Promise<unknown>;
}

export function describeGeminiTransport(provider: ModelProvider, title: string, extra: (kit: GeminiWireKit) => void): void {
  describe(title, () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    let wire: WireServer;
    beforeAll(async () => {
      process.on("unhandledRejection", onUnhandled);
      wire = await startWireServer();
    });
    afterAll(async () => {
      await wire?.close();
      process.off("unhandledRejection", onUnhandled);
    });

    const kit: GeminiWireKit = {
      wire: () => wire,
      gemini: (timeoutMs = 60_000) =>
        loadChatModel(
          { model: `${provider}/gemini-2.5-flash`, role: "generate" },
          { ...readEnvironment({}), providers: { [provider]: { apiKey: "gemini-test-key", baseUrl: wire.baseURL } }, maxRetries: 0, timeoutMs },
        ),
      streamed: (stop) => () => ({ write() {}, stop: stop ?? new AbortController().signal }),
      ask: async (timeoutMs, watch) =>
        callModelInMode(await kit.gemini(timeoutMs), [new HumanMessage("hi")], "text", SPEC, { node: "generate", watch }).then(
          (answer) => answer,
          (error: unknown) => error,
        ),
    };
    const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

    extra(kit);

    it("a stream reset mid-answer is a ProviderError, and nothing is left unhandled", async () => {
      wire.answer(() => ({ headers: SSE, body: Buffer.from(geminiPiece('{"service')), end: "reset" }));
      expect(await kit.ask(undefined, kit.streamed())).toBeInstanceOf(ProviderError);
      await settle();
      expect(unhandled).toEqual([]);
    });

    it("a stream stopped by the run (its signal aborted) ends at once, with what arrived, and nothing is left unhandled", async () => {
      const stop = new AbortController();
      wire.answer(() => ({ headers: SSE, body: Buffer.from(geminiPiece('{"service')), end: "stall" }));
      expect(await kit.ask(undefined, () => ({ write: () => stop.abort(), stop: stop.signal }))).toMatchObject({ stopped: true });
      await settle();
      expect(unhandled).toEqual([]);
    });

    it("a server that stalls after its headers ends at the deadline, streamed or not", async () => {
      wire.answer(() => ({ headers: SSE, body: Buffer.from(geminiPiece('{"service')), end: "stall" }));
      const streamedOutcome = await kit.ask(300, kit.streamed());
      expect(streamedOutcome).toBeInstanceOf(ProviderError);
      expect((streamedOutcome as Error).message).toMatch(/timed out: no complete answer within 300 ms/);
      wire.answer(() => ({ headers: { "content-type": "application/json" }, body: Buffer.from('{"candidates": ['), end: "stall" }));
      const whole = await kit.ask(300);
      expect(whole).toBeInstanceOf(ProviderError);
      expect((whole as Error).message).toMatch(/timed out: no complete answer within 300 ms/);
      await settle();
      expect(unhandled).toEqual([]);
    });
  });
}
