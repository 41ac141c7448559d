/** State of the validation graph: input, per-attempt records and the explicit outcome. */
import type { UpdateType } from "@langchain/langgraph/zod";
import { z } from "zod";
import type { SpecRecord } from "../specs/registry.js";
import { appendChannel, stateObject, TokenUsageSchema, usageChannel } from "../shared/state.js";

export const StopReasonSchema = z
  .enum(["valid", "max_attempts", "no_progress"])
  .describe("Why the run ended: valid output, out of attempts, or the same errors twice in a row");
export type StopReason = z.infer<typeof StopReasonSchema>;

export const AttemptRecordSchema = z.object({
  attempt: z.number().describe("1-based attempt number"),
  output: z.string().describe("The model's raw answer (bounded)"),
  errors: z.array(z.string()).describe("Validation errors of this attempt; empty when valid"),
  valid: z.boolean(),
  usage: TokenUsageSchema,
});
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;

const request = z.string().describe("What to generate, in plain words, e.g. 'A deployment config for payments-api with 8 replicas'");

export const ValidationInputSchema = stateObject({ request });

const outcome = {
  success: z.boolean().default(false).describe("True only when the last attempt passed the validator"),
  result: z.unknown().default(null).describe("The parsed value of the last attempt (null when it was not JSON)"),
  errors: z.array(z.string()).default([]).describe("The last attempt's validation errors"),
  attempts: z.number().default(0).describe("Attempts made (model answers received)"),
  stopReason: StopReasonSchema.nullable().default(null).describe("Why the run ended (valid, max_attempts, no_progress); null until it ends"),
  spec: z.string().default("").describe("Name of the spec the output was validated against"),
  history: appendChannel(AttemptRecordSchema, "One record per attempt: raw output, errors, token usage"),
  usage: usageChannel(),
};

export const ValidationOutputSchema = stateObject(outcome);

/** The settings a run was started with, fixed for the whole run (a resume uses these, whatever it passes). */
export const RunSettingsSchema = z
  .object({
    request: z.string(),
    spec: z.record(z.string(), z.unknown()) as unknown as z.ZodType<SpecRecord>,
    maxAttempts: z.number(),
    model: z.string(),
    temperature: z.number(),
    stopOnNoProgress: z.boolean(),
  })
  .describe("The request and settings the current run was started with");
export type RunSettings = z.infer<typeof RunSettingsSchema>;

export const ValidationState = stateObject({
  request,
  ...outcome,
  run: RunSettingsSchema.nullable().default(null),
  /** The latest answer, waiting for the validate node. */
  draft: z
    .object({ output: z.string(), usage: TokenUsageSchema })
    .nullable()
    .default(null)
    .describe("The latest model answer, before validation"),
});

export type ValidationStateType = z.output<typeof ValidationState>;
export type ValidationUpdate = UpdateType<typeof ValidationState>;
