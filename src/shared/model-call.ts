/**
 * One model call, as every node makes it: messages in; text and usage out; any
 * provider failure turned into a ProviderError that says what the provider said.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { ProviderError } from "../errors.js";
import { usageOf, type TokenUsage } from "./usage.js";

export interface ModelAnswer {
  text: string;
  usage: TokenUsage;
}

/** Provider faults worth another try at the node level (the client already retried HTTP errors). */
export function isTransientProviderError(error: unknown): boolean {
  return error instanceof ProviderError && error.transient;
}

/** Node-level retry for transient provider faults the client does not retry itself (e.g. an empty answer). */
export const PROVIDER_RETRY_POLICY = {
  maxAttempts: 3,
  initialInterval: 1_000,
  backoffFactor: 2,
  maxInterval: 10_000,
  retryOn: isTransientProviderError,
};

export async function callModel(
  model: BaseChatModel,
  messages: BaseMessage[],
  options: { node: string; config?: RunnableConfig; allowEmpty?: boolean; onMessage?: (message: AIMessage) => void },
): Promise<ModelAnswer> {
  let message: AIMessage;
  try {
    message = (await model.invoke(messages, options.config)) as AIMessage;
  } catch (error) {
    throw ProviderError.from(error, options.node);
  }
  if (message !== null && typeof message === "object") options.onMessage?.(message);
  const text = message !== null && typeof message === "object" ? textOf(message.content) : "";
  // No content at all (OpenAI-compatible servers send `content: null` this way) is a provider
  // fault worth another try, not an answer; whitespace is an answer, and the parser says what is wrong with it.
  if (text.length === 0 && !options.allowEmpty && !(message?.tool_calls && message.tool_calls.length > 0)) {
    throw new ProviderError(`Model provider returned no message content in node "${options.node}"`, { node: options.node, transient: true });
  }
  return { text, usage: usageOf(message) };
}

/** The text of a message's content: a string, or the text parts of a content array. */
export function textOf(content: AIMessage["content"] | null | undefined): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof part === "string" ? part : part && typeof part === "object" && "text" in part && typeof part.text === "string" ? part.text : ""))
    .join("");
}
