/**
 * A chat model that answers instantly, in process, from a fixed list of
 * answers taken in turn (or from a function of the prompt), with token usage
 * proportional to the text. The smallest BaseChatModel: no network, no
 * recording, so what is timed around it is the caller's own work.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

export class InstantModel extends BaseChatModel {
  private next = 0;

  constructor(private readonly answers: readonly string[] | ((messages: BaseMessage[]) => string)) {
    super({});
  }

  _llmType(): string {
    return "instant";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const text = typeof this.answers === "function" ? this.answers(messages) : this.answers[this.next++ % this.answers.length];
    let promptChars = 0;
    for (const m of messages) promptChars += typeof m.content === "string" ? m.content.length : 0;
    const input = Math.max(1, Math.ceil(promptChars / 4));
    const output = Math.max(1, Math.ceil(text.length / 4));
    const message = new AIMessage({ content: text, usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output } });
    return { generations: [{ text, message }] };
  }
}
