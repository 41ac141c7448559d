/** Scripted in-process chat models for fast unit tests (no network). */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";

export type ScriptedAnswer = string | Error | ((messages: BaseMessage[]) => string | Error);

/** A reply with token usage roughly proportional to the text, as a provider would report it. */
export function aiReply(text: string, prompt: BaseMessage[] = []): AIMessage {
  const input = Math.max(1, Math.ceil(prompt.reduce((n, m) => n + String(m.content).length, 0) / 4));
  const output = Math.max(1, Math.ceil(text.length / 4));
  return new AIMessage({ content: text, usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output } });
}

/** A chat model that answers with the given replies in order and records every call; a further call throws. */
export function scriptedModel(answers: ScriptedAnswer[]) {
  const model = fakeModel();
  for (const answer of answers) {
    model.respond((messages: BaseMessage[]) => {
      const value = typeof answer === "function" ? answer(messages) : answer;
      return value instanceof Error ? value : aiReply(value, messages);
    });
  }
  return model;
}

/** The text of every message of the n-th call (0-based). */
export function promptOf(model: ReturnType<typeof fakeModel>, call: number): string {
  return model.calls[call].messages.map((m) => String(m.content)).join("\n---\n");
}
