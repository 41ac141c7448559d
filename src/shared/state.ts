/**
 * State definitions both graphs share: the token-usage ledger and the
 * append-only list channel used for per-attempt and per-step records.
 * Zod schemas (not Annotation) so that Studio gets real forms and types.
 */
import { ReducedValue } from "@langchain/langgraph";
import { z } from "zod";
import { addUsage, ZERO_USAGE, type TokenUsage } from "./usage.js";

export const TokenUsageSchema = z
  .object({
    inputTokens: z.number().describe("Prompt tokens"),
    outputTokens: z.number().describe("Completion tokens"),
    totalTokens: z.number().describe("Prompt + completion tokens"),
    calls: z.number().describe("Model calls"),
  })
  .describe("Token usage");

/** A usage channel: each update is added to the running total. */
export function usageChannel(description = "Total token usage of the run") {
  return new ReducedValue(TokenUsageSchema.default({ ...ZERO_USAGE }).describe(description), {
    reducer: (total: TokenUsage, next: TokenUsage) => addUsage(total, next),
  });
}

/** An append-only list channel: each update's items are appended. */
export function appendChannel<T extends z.ZodType>(item: T, description: string) {
  return new ReducedValue(z.array(item).default([]).describe(description), {
    reducer: (list: z.output<T>[], next: z.output<T>[]) => list.concat(next),
  });
}
