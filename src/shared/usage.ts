/** The token-usage ledger both graphs keep: per call, per attempt or task, and in total. */
import type { AIMessage } from "@langchain/core/messages";

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Model calls counted. */
  calls: number;
}

export const ZERO_USAGE: TokenUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 });

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    calls: a.calls + b.calls,
  };
}

/** The usage of one model call, from the message's `usage_metadata` (zeros when the provider sent none). */
export function usageOf(message: Pick<AIMessage, "usage_metadata">): TokenUsage {
  const u = message.usage_metadata;
  const input = u?.input_tokens ?? 0;
  const output = u?.output_tokens ?? 0;
  return { inputTokens: input, outputTokens: output, totalTokens: u?.total_tokens ?? input + output, calls: 1 };
}
