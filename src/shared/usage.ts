/** The token-usage ledger both graphs keep: per call, per attempt or task, and in total. */
import type { AIMessage } from "@langchain/core/messages";

/** Tokens and calls: input, output and total tokens, and model calls. */
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

/**
 * The usage of one model call, from the message's `usage_metadata`. A budget is only as good as
 * these counts, so a provider's count is taken only when it is a finite number, at least 0. A
 * count out of that range (a negative count would buy calls back) is estimated instead, as the
 * scripted models count (4 characters a token): the output from the answer, the input from the
 * prompt's characters when the caller gives them. The total is never less than input plus output.
 * A provider that sends no usage at all is counted as zeros, as before.
 */
export function usageOf(message: Pick<AIMessage, "usage_metadata"> & { content?: unknown }, promptChars = 0): TokenUsage {
  const u = message.usage_metadata;
  if (u === undefined || u === null) return { inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 1 };
  const input = count(u.input_tokens) ?? (promptChars > 0 ? estimateTokens(promptChars) : 0);
  const output = count(u.output_tokens) ?? estimateTokens(charsOf(message.content));
  const total = Math.max(count(u.total_tokens) ?? 0, input + output);
  return { inputTokens: input, outputTokens: output, totalTokens: total, calls: 1 };
}

function count(n: unknown): number | undefined {
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

function charsOf(content: unknown): number {
  if (typeof content === "string") return content.length;
  try {
    return JSON.stringify(content ?? "").length;
  } catch {
    return 0;
  }
}

/** Token usage per model name. */
type UsageByModel = Record<string, TokenUsage>;

/** Per-model totals plus an update's entries (own keys only: a model may be named anything, "__proto__" included). */
export function addUsageByModel(total: UsageByModel, next: UsageByModel): UsageByModel {
  const out = new Map<string, TokenUsage>(Object.entries(total));
  for (const [model, usage] of Object.entries(next)) out.set(model, addUsage(out.get(model) ?? ZERO_USAGE, usage));
  return Object.fromEntries(out);
}

/**
 * Tokens estimated from characters (4 a token), as the scripted and simulated models count them. A run's
 * token budget uses it for the input of a call not yet made.
 */
export function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}
