/**
 * The createAgent middleware's answer spans through the real ChatOpenAI against the scripted OpenAI-compatible
 * server: each answer a `chat <model>` span naming the model and its provider as the client reports them, with the
 * usage the server sent, a cut answer's finish reason in the provider's words, and the verdict.
 */
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { validatedResponseMiddleware } from "../../src/agents/index.js";
import { startScriptedOpenAIServer, type ScriptedReply, type ScriptedServer } from "../../testkit/openai-server.js";
import { ANSWER, REQUEST, threeDefects, valid } from "../agents/agent.support.js";
import { recordTelemetry, spansNamed, type Recording } from "./support.js";

let server: ScriptedServer;
let telemetry: Recording;
beforeAll(async () => {
  server = await startScriptedOpenAIServer();
  telemetry = recordTelemetry();
});
afterAll(async () => {
  await telemetry.stop();
  await server?.close();
});
beforeEach(() => telemetry.spans.reset());

const answer = (args: unknown, extra: Partial<Extract<ScriptedReply, { content: string | null }>> = {}): ScriptedReply => ({
  content: null,
  toolCalls: [{ id: "call_1", name: ANSWER, arguments: JSON.stringify(args) }],
  ...extra,
});

describe("the createAgent middleware through ChatOpenAI", () => {
  it("names the model and provider on each answer's span, with the server's usage and a cut answer's finish reason", async () => {
    server.setReplies([
      answer(threeDefects, { usage: { prompt_tokens: 120, completion_tokens: 30 } }),
      answer(valid, { finishReason: "length" }),
      answer(valid, { usage: { prompt_tokens: 300, completion_tokens: 40 } }),
    ]);
    const model = new ChatOpenAI({ model: "gpt-test", apiKey: "test", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
    const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] });
    const out = await agent.invoke({ messages: [new HumanMessage(REQUEST)] });
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 3 });

    const spans = spansNamed(telemetry.spans, "chat");
    expect(spans.map((span) => span.name)).toEqual(["chat gpt-test", "chat gpt-test", "chat gpt-test"]);
    expect(spans.map((span) => span.attributes)).toMatchObject([
      {
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
        "trustworthy.valid": false,
        "trustworthy.error_class": "spec",
      },
      { "trustworthy.valid": false, "trustworthy.error_class": "truncated", "gen_ai.response.finish_reasons": ['finish_reason "length"'] },
      { "gen_ai.usage.input_tokens": 300, "gen_ai.usage.output_tokens": 40, "trustworthy.valid": true, "trustworthy.stop_reason": "valid" },
    ]);
  }, 60_000);
});
