/**
 * The whole-answer deadline on the real ChatOpenAI built by the model factory, against the scripted
 * server: a body that stalls after its headers and an answer dripped one byte a second both fail the
 * call with the timeout, in plain JSON (invoke) and in SSE (stream). The same faults through the
 * validation graph are in tests/reliability/provider-faults.ts.
 */
import { HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel } from "../../src/models.js";
import { startScriptedOpenAIServer, type ScriptedReply, type ScriptedServer } from "../../testkit/openai-server.js";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedOpenAIServer();
});
afterAll(async () => {
  await server?.close();
});

const TIMED_OUT = /Request timed out: no complete answer within 500 ms \(LLM_TIMEOUT_MS\)/;
const faults: Array<[string, ScriptedReply]> = [
  ["a body that stalls after the headers", { fault: "stall-after-headers" }],
  ["an answer dripped one byte a second", { fault: "drip", content: "a long enough answer" }],
];

describe("ChatOpenAI from the factory: LLM_TIMEOUT_MS covers the whole answer", () => {
  const model = (timeoutMs = 500) =>
    createChatModel(
      { model: "deadline", role: "generate" },
      { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, timeoutMs, maxRetries: 0 },
    );

  for (const [name, fault] of faults) {
    it(`${name}: invoke() (JSON) fails with the timeout`, async () => {
      server.setReplies([fault]);
      await expect(model().invoke([new HumanMessage("hi")])).rejects.toThrow(TIMED_OUT);
      expect(server.requests.at(-1)!.stream).toBe(false);
    });

    it(`${name}: stream() (SSE) fails with the timeout`, async () => {
      server.setReplies([fault]);
      const read = async () => {
        for await (const _ of await model().stream([new HumanMessage("hi")])) void _;
      };
      await expect(read()).rejects.toThrow(TIMED_OUT);
      expect(server.requests.at(-1)!.stream).toBe(true);
    });
  }

  it("an answer that arrives in time is unaffected, streamed or not", async () => {
    // A deadline a healthy answer from this process's own server always beats, however busy the machine.
    const onTime = model(10_000);
    server.setReplies(["on time", "on time"]);
    expect((await onTime.invoke([new HumanMessage("hi")])).content).toBe("on time");
    let text = "";
    for await (const chunk of await onTime.stream([new HumanMessage("hi")])) text += String(chunk.content);
    expect(text).toBe("on time");
  });
});
