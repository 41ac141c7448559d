/**
 * Each provider's stop reasons as its LangChain client leaves them on the message: a cut at the output limit
 * is read as truncated, a refusal or a safety stop as a refusal, the provider's "finished" stops as neither,
 * and anything else (another stop, an unknown one, none at all from a provider's client) as unfinished.
 * Messages are built here the way each client builds them (Gemini's `finishReason` in additional_kwargs);
 * tests/providers/stream-endings.int.test.ts drives the same through the real clients.
 */
import { AIMessage, AIMessageChunk } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { ChatOpenAI } from "@langchain/openai";
import { answerEnd, callModel, providerOf, refusalOf, stopReasonOf } from "../../src/providers/model-call.js";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { MODEL_PROVIDERS, providerOfTrace, type ModelProvider } from "../../src/providers/index.js";
import { ScriptedChatModel } from "../../src/simulated/scripted-model.js";

/** The client (`_llmType`) whose messages carry each stop field. */
const CLIENT_OF: Record<string, string> = { finish_reason: "openai", stop_reason: "anthropic", done_reason: "ollama", finishReason: "googlegenerativeai" };

/** A model that answers with this message, as the provider's client (`_llmType`) built it: by default the client whose field it carries. */
const answering = (message: AIMessage, client?: string) =>
  ({
    invoke: async () => message,
    _llmType: () => client ?? CLIENT_OF[stopReasonOf(message)?.field ?? "finish_reason"],
  }) as unknown as BaseChatModel;

describe("stop reasons, per provider", () => {
  it.each([
    ["OpenAI", new AIMessage({ content: '{"a":', response_metadata: { finish_reason: "length" } }), 'finish_reason "length"'],
    ["Anthropic", new AIMessage({ content: '{"a":', response_metadata: { stop_reason: "max_tokens" } }), 'stop_reason "max_tokens"'],
    ["Anthropic, streamed", new AIMessageChunk({ content: '{"a":', additional_kwargs: { stop_reason: "max_tokens" } }), 'stop_reason "max_tokens"'],
    ["Ollama", new AIMessage({ content: '{"a":', response_metadata: { done_reason: "length" } }), 'done_reason "length"'],
    ["Gemini", new AIMessage({ content: '{"a":', additional_kwargs: { finishReason: "MAX_TOKENS" } }), 'finishReason "MAX_TOKENS"'],
  ])("%s: a cut at the output limit is truncated, not a refusal", async (_provider, message, truncated) => {
    const answer = await callModel(answering(message), [], { node: "generate" });
    expect(answer).toMatchObject({ text: '{"a":', truncated });
    expect(answer.refusal).toBeUndefined();
  });

  it("a finished answer is neither truncated, unfinished nor refused", async () => {
    for (const metadata of [
      { finish_reason: "stop" },
      { finish_reason: "tool_calls" },
      { stop_reason: "end_turn" },
      { done_reason: "stop" },
      { finishReason: "STOP" },
    ]) {
      const answer = await callModel(answering(new AIMessage({ content: "{}", response_metadata: metadata })), [], { node: "generate" });
      expect(answer).toEqual({ text: "{}", usage: expect.anything() });
    }
  });

  it("is an allow-list: every stop a provider's table does not call finished, cut or withheld is unfinished, in the provider's words", async () => {
    const others: Array<[string, string]> = [
      ["stop_reason", "pause_turn"],
      ["finishReason", "RECITATION"],
      ["finishReason", "OTHER"],
      ["finishReason", "LANGUAGE"],
      ["finishReason", "MALFORMED_FUNCTION_CALL"],
      ["finishReason", "UNEXPECTED_TOOL_CALL"],
      ["finishReason", "TOO_MANY_TOOL_CALLS"],
      ["finishReason", "FINISH_REASON_UNSPECIFIED"],
      ["done_reason", "load"],
      ["finish_reason", "eos"],
      ["finish_reason", "something_new"],
    ];
    for (const [field, reason] of others) {
      const answer = await callModel(answering(new AIMessage({ content: "1234", additional_kwargs: { [field]: reason } })), [], { node: "generate" });
      const said = `${field} "${reason}"`;
      // RECITATION is Gemini's withheld answer: a refusal; the rest did not finish.
      if (reason === "RECITATION") expect(answer.refusal).toBe(`${said}: 1234`);
      else expect(answer).toMatchObject({ text: "1234", unfinished: said });
      expect(answer.truncated).toBeUndefined();
    }
    const window = await callModel(answering(new AIMessage({ content: "12", response_metadata: { stop_reason: "model_context_window_exceeded" } })), [], {
      node: "generate",
    });
    expect(window.truncated).toBe('stop_reason "model_context_window_exceeded"');
  });

  it("no stop at all is unfinished from a provider's client, and finished from a chat model of no known provider", async () => {
    const clients = Object.entries(MODEL_PROVIDERS) as Array<[ModelProvider, (typeof MODEL_PROVIDERS)[ModelProvider]]>;
    for (const [provider, row] of clients) {
      const answer = await callModel(answering(new AIMessage({ content: "1234" }), row.client), [], { node: "generate" });
      expect(answer.unfinished, provider).toBe(`no ${row.stops[0].field}: the answer ended without the provider's stop`);
      expect(answerEnd(new AIMessage({ content: "1234" }), provider).kind).toBe("unfinished");
    }
    // The scripted model (and a chat model of your own) reports no stop: it has no provider's word to give.
    const own = await callModel(new ScriptedChatModel({ answers: ["1234"] }), [], { node: "generate" });
    expect(own.unfinished).toBeUndefined();
    // A provider's client is read in its own field only: Anthropic's stop on an OpenAI client's message is no stop of its.
    const foreign = await callModel(answering(new AIMessage({ content: "1234", response_metadata: { stop_reason: "end_turn" } }), "openai"), [], {
      node: "generate",
    });
    expect(foreign.unfinished).toBe("no finish_reason: the answer ended without the provider's stop");
    // A stop it does report is read by the same table.
    const reported = await callModel(answering(new AIMessage({ content: "1234", response_metadata: { finish_reason: "length" } }), "mine"), [], {
      node: "generate",
    });
    expect(reported.truncated).toBe('finish_reason "length"');
    // Through bindings (bindTools, withConfig) the client is still known.
    const openai = new ChatOpenAI({ apiKey: "test-key" });
    expect(providerOf(openai.bindTools([{ type: "function", function: { name: "t", parameters: {} } }]).withConfig({}))).toBe("openai");
    expect(providerOf(new ScriptedChatModel().withConfig({}))).toBeUndefined();
  });

  it("a model given by name whose provider the table does not have: no stop at all is unfinished, a reported stop is read by the table", () => {
    const named = { unknownProvider: "named" } as const;
    expect(answerEnd(new AIMessage({ content: "1234" }), undefined, undefined, named)).toEqual({
      kind: "unfinished",
      said: "no stop: the answer of a model given by name ended without a stop reason this package reads",
    });
    expect(answerEnd(new AIMessage({ content: "1234", response_metadata: { finish_reason: "stop" } }), undefined, undefined, named)).toEqual({
      kind: "finished",
    });
    expect(answerEnd(new AIMessage({ content: "1234" }), undefined, { finish_reason: "length" }, named)).toMatchObject({ kind: "cut" });
    // A chat model of your own keeps its meaning: no stop, finished.
    expect(answerEnd(new AIMessage({ content: "1234" }), undefined, undefined, { unknownProvider: "own" })).toEqual({ kind: "finished" });
    // The provider a chat model names to its callbacks (ls_provider), per row; both Gemini clients name the same one,
    // which is read by the same stop words either way.
    for (const provider of Object.keys(MODEL_PROVIDERS) as ModelProvider[]) {
      const traced = providerOfTrace(MODEL_PROVIDERS[provider].traced)!;
      expect(MODEL_PROVIDERS[traced].stops, provider).toEqual(MODEL_PROVIDERS[provider].stops);
    }
    expect(new Set(Object.values(MODEL_PROVIDERS).map((row) => row.traced)).size).toBe(Object.keys(MODEL_PROVIDERS).length - 1);
    expect([providerOfTrace("azure"), providerOfTrace(undefined)]).toEqual([undefined, undefined]);
  });

  it("Anthropic's refusal stop and Gemini's safety stop are refusals, with any text that came with them", () => {
    expect(refusalOf(new AIMessage({ content: "", response_metadata: { stop_reason: "refusal" } }))).toBe('stop_reason "refusal"');
    expect(refusalOf(new AIMessage({ content: [{ type: "text", text: "I can't." }], response_metadata: { stop_reason: "refusal" } }))).toBe(
      'stop_reason "refusal": I can\'t.',
    );
    expect(refusalOf(new AIMessage({ content: "", additional_kwargs: { finishReason: "SAFETY" } }))).toBe('finishReason "SAFETY"');
    // An answer that merely reads like a refusal is an answer.
    expect(refusalOf(new AIMessage({ content: "I can't help with that.", response_metadata: { stop_reason: "end_turn" } }))).toBeUndefined();
    expect(stopReasonOf(new AIMessage({ content: "" }))).toBeUndefined();
  });
});
