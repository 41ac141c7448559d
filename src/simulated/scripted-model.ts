/**
 * A chat model that answers in process, without a network: from a script, or computed by a subclass (the
 * built-in simulated model). Token usage is estimated from the text's size. The tests, benchmarks and the
 * evaluation script their models with it too.
 */
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { BaseChatModel, type BaseChatModelCallOptions, type BindToolsInput } from "@langchain/core/language_models/chat_models";
import { AIMessage, type AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { estimateTokens } from "../shared/usage.js";

/** The provider declines to answer, as the default provider marks it (`refusal`; the content stays empty). */
interface ScriptedRefusal {
  refusal: string;
}

/** What a call answers: a text, a refusal, an error to throw, or a whole message (one that calls tools). */
export type ScriptedReply = string | Error | ScriptedRefusal | AIMessage;

/** One scripted answer: a reply, or a function of the prompt giving one. */
export type ScriptedAnswer = ScriptedReply | ((messages: BaseMessage[]) => ScriptedReply);

/** A tool as the model was given it (bindTools), in the provider's format. */
export interface BoundTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface ScriptedCallOptions extends BaseChatModelCallOptions {
  /** The tools bound with bindTools. */
  tools?: BoundTool[];
}

export interface ScriptedChatModelOptions {
  /** The answers in call order. */
  answers?: readonly ScriptedAnswer[];
  /** Cycle through the answers; otherwise a call past the last one throws, so a test that makes an unplanned call fails. */
  repeat?: boolean;
  /** Keep each call's messages in `calls` (default true); benchmarks that make many calls turn it off. */
  record?: boolean;
  /** Wait this long before answering (default 0). */
  latencyMs?: number;
}

/** Characters of a prompt, as the usage estimate counts them. */
function promptChars(prompt: readonly BaseMessage[]): number {
  let n = 0;
  for (const m of prompt) n += typeof m.content === "string" ? m.content.length : String(m.content).length;
  return n;
}

/** A reply with token usage roughly proportional to the text (4 characters a token), as a provider would report it. */
export function aiReply(text: string, prompt: readonly BaseMessage[] = []): AIMessage {
  const input = estimateTokens(promptChars(prompt));
  const output = estimateTokens(text.length);
  return new AIMessage({ content: text, usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output } });
}

export class ScriptedChatModel extends BaseChatModel<ScriptedCallOptions> {
  /** Every call's messages, in order (empty when recording is off). */
  readonly calls: { messages: BaseMessage[]; options: unknown }[] = [];
  private readonly answers: readonly ScriptedAnswer[];
  private readonly repeat: boolean;
  private readonly record: boolean;
  private readonly latencyMs: number;
  private count = 0;

  constructor(options: ScriptedChatModelOptions = {}) {
    super({});
    this.answers = options.answers ?? [];
    this.repeat = options.repeat ?? false;
    this.record = options.record ?? true;
    this.latencyMs = options.latencyMs ?? 0;
  }

  /** How many times the model was called. */
  get callCount(): number {
    return this.count;
  }

  _llmType(): string {
    return "scripted";
  }

  /** Binds tools as a provider's client does: they reach each call's options (`tools`, `tool_choice`). */
  override bindTools(tools: BindToolsInput[], kwargs?: Partial<ScriptedCallOptions>): Runnable<BaseLanguageModelInput, AIMessageChunk, ScriptedCallOptions> {
    return this.withConfig({ ...kwargs, tools: tools.map((t) => convertToOpenAITool(t) as BoundTool) });
  }

  /** The answer to call number `call` (0-based); a model that computes its answers overrides this. */
  protected answer(messages: BaseMessage[], call: number, _options?: ScriptedCallOptions): ScriptedReply {
    const scripted = this.repeat && this.answers.length > 0 ? this.answers[call % this.answers.length] : this.answers[call];
    if (scripted === undefined) return new Error(`ScriptedChatModel: no answer scripted for call ${call + 1} (${this.answers.length} scripted)`);
    return typeof scripted === "function" ? scripted(messages) : scripted;
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const call = this.count++;
    if (this.record) this.calls.push({ messages: [...messages], options });
    const value = this.answer(messages, call, options);
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    if (value instanceof Error) throw value;
    if (AIMessage.isInstance(value)) {
      if (value.usage_metadata === undefined) value.usage_metadata = aiReply(value.text + JSON.stringify(value.tool_calls ?? []), messages).usage_metadata;
      return { generations: [{ text: value.text, message: value }] };
    }
    if (typeof value !== "string") {
      // Where the model factory's client puts a provider's refusal; usage counts the refusal's text.
      const reply = aiReply(value.refusal, messages);
      return {
        generations: [
          { text: "", message: new AIMessage({ content: "", additional_kwargs: { refusal: value.refusal }, usage_metadata: reply.usage_metadata }) },
        ],
      };
    }
    return { generations: [{ text: value, message: aiReply(value, messages) }] };
  }
}
