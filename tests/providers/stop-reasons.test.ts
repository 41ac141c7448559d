/**
 * Each provider's stop reasons as its LangChain client leaves them on the message: a cut at the output limit
 * is read as truncated, a refusal or a safety stop as a refusal, an ordinary stop as neither. Gemini has no
 * scripted server in the suite, so its messages are built here the way @langchain/google-genai builds them
 * (`finishReason` in additional_kwargs).
 */
import { AIMessage, AIMessageChunk } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { callModel, refusalOf, stopReasonOf } from "../../src/shared/model-call.js";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";

/** A model that answers with this message, as the provider's client built it. */
const answering = (message: AIMessage) => ({ invoke: async () => message }) as unknown as BaseChatModel;

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

  it("a finished answer is neither truncated nor refused", async () => {
    for (const metadata of [{ finish_reason: "stop" }, { stop_reason: "end_turn" }, { done_reason: "stop" }]) {
      const answer = await callModel(answering(new AIMessage({ content: "{}", response_metadata: metadata })), [], { node: "generate" });
      expect(answer.truncated).toBeUndefined();
      expect(answer.refusal).toBeUndefined();
    }
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
