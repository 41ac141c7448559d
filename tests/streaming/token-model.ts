/**
 * An in-process chat model that streams its answers token by token (about four
 * characters a token), with a delay before the first token and between tokens,
 * and stops generating when its request is aborted. It counts the tokens it
 * generated per call, so tests and the streaming benchmark can see what a stop
 * saved. A whole-answer call (invoke without streaming) takes as long as
 * streaming every token would.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel, type BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";

/** An answer: a text, or a function of the prompt (the retry prompt carries the errors) giving one. */
export type TokenAnswer = string | ((messages: BaseMessage[], call: number) => string);

export interface TokenModelOptions {
  answers: readonly TokenAnswer[];
  /** Cycle through the answers (a benchmark); otherwise a call past the last throws. */
  repeat?: boolean;
  /** Characters a token (default 4). */
  tokenChars?: number;
  /** Delay before the first token, ms (default 0). */
  firstTokenMs?: number;
  /** Delay between tokens, ms (default 0: the next token comes on the next turn of the event loop). */
  tokenMs?: number;
  /** Extra random delay per token, up to this many ms, from a seeded generator (default 0). */
  jitterMs?: number;
  random?: () => number;
}

/** What one call did. */
export interface TokenCall {
  messages: BaseMessage[];
  answer: string;
  /** Tokens generated (sent) before the answer ended or the request was aborted. */
  generated: number;
  /** Tokens in the whole answer. */
  tokens: number;
  aborted: boolean;
  streamed: boolean;
}

function tokensOf(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function promptTokens(messages: readonly BaseMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += typeof m.content === "string" ? m.content.length : JSON.stringify(m.content).length;
  return Math.max(1, Math.ceil(chars / 4));
}

export class TokenStreamingModel extends BaseChatModel {
  readonly calls: TokenCall[] = [];
  private readonly options: TokenModelOptions;

  constructor(options: TokenModelOptions) {
    super({});
    this.options = options;
  }

  _llmType(): string {
    return "token-streaming";
  }

  private answerFor(messages: BaseMessage[]): TokenCall {
    const call = this.calls.length;
    const list = this.options.answers;
    const scripted = this.options.repeat ? list[call % list.length] : list[call];
    if (scripted === undefined) throw new Error(`TokenStreamingModel: no answer scripted for call ${call + 1}`);
    const answer = typeof scripted === "function" ? scripted(messages, call) : scripted;
    const record: TokenCall = {
      messages,
      answer,
      generated: 0,
      tokens: tokensOf(answer, this.options.tokenChars ?? 4).length,
      aborted: false,
      streamed: false,
    };
    this.calls.push(record);
    return record;
  }

  private async wait(ms: number, signal?: AbortSignal): Promise<void> {
    const jitter = (this.options.jitterMs ?? 0) * (this.options.random?.() ?? 0);
    const total = ms + jitter;
    if (total <= 0) return new Promise((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, total);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const call = this.answerFor(messages);
    await this.wait(this.options.firstTokenMs ?? 0, options.signal);
    for (let i = 0; i < call.tokens; i++) {
      if (options.signal?.aborted) throw new Error("aborted");
      await this.wait(this.options.tokenMs ?? 0, options.signal);
      call.generated++;
    }
    const input = promptTokens(messages);
    const message = new AIMessage({
      content: call.answer,
      usage_metadata: { input_tokens: input, output_tokens: call.tokens, total_tokens: input + call.tokens },
    });
    return { generations: [{ text: call.answer, message }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: BaseChatModelCallOptions,
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const call = this.answerFor(messages);
    call.streamed = true;
    // The consumer may stop reading without resuming this generator: the abort itself says it was stopped.
    const onAbort = () => {
      if (call.generated < call.tokens) call.aborted = true;
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      await this.wait(this.options.firstTokenMs ?? 0, options.signal);
      for (const token of tokensOf(call.answer, this.options.tokenChars ?? 4)) {
        if (options.signal?.aborted) {
          call.aborted = true;
          return;
        }
        if (call.generated > 0) await this.wait(this.options.tokenMs ?? 0, options.signal);
        if (options.signal?.aborted) {
          call.aborted = true;
          return;
        }
        call.generated++;
        const chunk = new ChatGenerationChunk({ message: new AIMessageChunk({ content: token }), text: token });
        yield chunk;
        await runManager?.handleLLMNewToken(token, undefined, undefined, undefined, undefined, { chunk });
      }
      // As providers do: the usage comes last.
      const input = promptTokens(messages);
      yield new ChatGenerationChunk({
        message: new AIMessageChunk({ content: "", usage_metadata: { input_tokens: input, output_tokens: call.tokens, total_tokens: input + call.tokens } }),
        text: "",
      });
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      // The consumer stopped reading: nothing more is generated.
      if (call.generated < call.tokens) call.aborted = true;
    }
  }
}
