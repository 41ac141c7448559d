/** State of the validation graph: input, per-attempt records and the explicit outcome. */
import { registry, type UpdateType } from "@langchain/langgraph/zod";
import { z } from "zod";
import type { SpecRecord } from "../specs/registry.js";
import { appendChannel, stateObject, TokenUsageSchema, usageChannel } from "../graph/state.js";
import { ANSWERED_BY } from "../shared/outcome.js";
import { addUsageByModel, type TokenUsage } from "../shared/usage.js";
import { EARLY_STOP_REASONS } from "../streaming/partial-check.js";
import { EnsuredConfigSchema } from "./configuration.js";
import { ANSWER_MODES } from "./output-mode.js";

const StopReasonSchema = z.enum(["valid", "max_attempts", "no_progress", "rejected", "refused", "budget"]).meta({
  title: "Stop reason",
  description:
    "Why the run ended: valid output (the model's or a person's), out of attempts, the same errors twice in a row, a person rejected it, " +
    "the provider refused to answer (twice, or at the last attempt), or the next model call would have passed the token budget (maxTokens)",
});
/** Why a validation run ended. */
export type StopReason = z.infer<typeof StopReasonSchema>;

const AttemptRecordSchema = z
  .object({
    attempt: z.number().meta({ title: "Attempt", description: "1-based attempt number" }),
    output: z.string().meta({ title: "Model output", description: "The model's raw answer (bounded)" }),
    errors: z.array(z.string()).meta({ title: "Errors", description: "Validation errors of this attempt; empty when valid" }),
    valid: z.boolean().meta({ title: "Valid", description: "Whether this attempt passed the validator" }),
    usage: TokenUsageSchema,
    mode: z.enum(ANSWER_MODES).optional().meta({ title: "Output mode", description: "How the model was asked for this answer" }),
    fallbacks: z.array(z.string()).optional().meta({ title: "Fallbacks", description: "Output modes the provider refused on the way to this answer" }),
    schemaDropped: z.array(z.string()).optional().meta({
      title: "Schema keywords not sent",
      description:
        "Keywords of the spec's schema left out of the request because the provider's mode does not take them; the validator checked the answer against all of them",
    }),
    strict: z.boolean().optional().meta({
      title: "Strict",
      description:
        "Sent with strict: true (the json_schema request in the strict form of the spec's schema, or a strict forced tool): the provider held the answer to the schema while it decoded",
    }),
    notStrict: z.string().optional().meta({
      title: "Not strict",
      description:
        "Why the json_schema request, or the forced tool, was sent without strict: true (a documented limit passed, or a construct strict mode cannot carry)",
    }),
    mappedBack: z.array(z.string()).optional().meta({
      title: "Mapped back",
      description:
        "What was changed in the answer, asked in the strict form of the spec's schema, before it was judged: the nulls that stood for a field left out, removed; a wrapped root, unwrapped",
    }),
    by: z
      .enum(ANSWERED_BY)
      .optional()
      .meta({ title: "By", description: "Who made this attempt: the model, or a person at the review step (absent: the model)" }),
    model: z.string().optional().meta({ title: "Model", description: "The model name that made this attempt (absent for a person's answer)" }),
    refusal: z
      .string()
      .optional()
      .meta({ title: "Refusal", description: "The provider's refusal (bounded, secrets redacted), when it declined to answer: the attempt was not validated" }),
    repairs: z
      .array(z.string())
      .optional()
      .meta({ title: "Repairs", description: "Syntax slips repaired in the model's answer before it was judged (the repairSyntax setting)" }),
    correction: z
      .object({
        text: z.string().meta({ title: "Correction", description: "The model's reply: a JSON Patch (RFC 6902) to its previous answer (bounded)" }),
        applied: z.boolean().meta({
          title: "Applied",
          description:
            "Whether it was applied: the output is then the corrected answer; otherwise the previous answer, and the next retry asks for the whole answer",
        }),
        problem: z
          .string()
          .optional()
          .meta({ title: "Problem", description: "Why it was not used (not JSON Patch, not applicable, a path outside the answer, or more errors)" }),
      })
      .optional()
      .meta({
        title: "Correction",
        description: "Set when this attempt was asked for corrections only (the retryWith setting); the output is the resulting answer, judged whole",
      }),
    stopped: z
      .object({
        at: z.number().meta({ title: "At", description: "Characters of the answer received when it was stopped" }),
        reason: z.enum(EARLY_STOP_REASONS).meta({ title: "Reason", description: "Why the rest of the answer could not help" }),
        detail: z.string().meta({ title: "Detail", description: "The reason in words" }),
      })
      .optional()
      .meta({
        title: "Stopped",
        description: "Set when the model's request was stopped while the answer streamed (the stopEarly setting); the output is what arrived",
      }),
    truncated: z.string().optional().meta({
      title: "Truncated",
      description:
        'Set when the provider cut the answer at its output limit, in its words (e.g. stop_reason "max_tokens"): the attempt is not valid, and its retry asks for a compact answer',
    }),
    unfinished: z.string().optional().meta({
      title: "Unfinished",
      description:
        'Set when the provider did not say the model finished, in its words (another stop, e.g. finishReason "OTHER", or none at all: a stream that ended without its stop): the attempt is not valid',
    }),
  })
  .meta({ title: "Attempt record" });
/** One attempt of a validation run, as its history keeps it: the answer, its errors, its usage and how it was asked for. */
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;

/** Token usage per model name: each update's entries are added to the running totals. */
function usageByModelChannel() {
  return z
    .record(z.string(), TokenUsageSchema)
    .meta({ title: "Usage by model", description: "Token usage per model name (escalation runs use several)", default: {} })
    .register(registry, {
      reducer: { fn: (total: Record<string, TokenUsage>, next: Record<string, TokenUsage>) => addUsageByModel(total, next) },
      default: () => ({}),
    });
}

const request = z
  .string()
  .meta({ title: "Request", description: "What to generate, in plain words, e.g. 'A deployment config for payments-api with 8 replicas'" });

export const ValidationInputSchema = stateObject({ request });

const outcome = {
  success: z.boolean().default(false).meta({ title: "Success", description: "True only when the last attempt passed the validator" }),
  value: z.unknown().default(null).meta({ title: "Value", description: "The parsed value of the last attempt (null when it was not JSON)" }),
  errors: z.array(z.string()).default([]).meta({ title: "Errors", description: "The last attempt's validation errors" }),
  attempts: z.number().default(0).meta({ title: "Attempts", description: "Attempts made (model answers received)" }),
  stopReason: StopReasonSchema.nullable()
    .default(null)
    .meta({ title: "Stop reason", description: "Why the run ended (valid, max_attempts, no_progress, rejected, refused, budget); null until it ends" }),
  spec: z.string().default("").meta({ title: "Spec", description: "Name of the spec the output was validated against" }),
  history: appendChannel(AttemptRecordSchema, "One record per attempt: raw output, errors, token usage", "History"),
  usage: usageChannel(),
  usageByModel: usageByModelChannel(),
  refusal: z
    .string()
    .nullable()
    .default(null)
    .meta({ title: "Refusal", description: "The provider's refusal text when the last attempt was refused (secrets redacted); null otherwise" }),
};

export const ValidationOutputSchema = stateObject(outcome);
/**
 * The validation graph's output: what its `invoke` returns, and what a server thread's state and Studio show.
 */
export type ValidationGraphOutput = z.output<typeof ValidationOutputSchema>;

/**
 * The settings a run was started with, fixed for the whole run (a resume uses these, whatever it passes):
 * every run setting as ensureValidationConfig completes it (declared once, in configuration.ts), and what
 * the run adds: its request, its spec as recorded, and the budgets a person's new request renews.
 */
export const RunSettingsSchema = EnsuredConfigSchema.extend({
  request: z.string(),
  spec: z.record(z.string(), z.unknown()) as unknown as z.ZodType<SpecRecord>,
  /** The last model attempt allowed (a person's new request gives the model a fresh budget). */
  attemptLimit: z.number(),
  /** The total the run may reach (a person's new request gives the model a fresh budget, as with attempts). */
  tokenLimit: z.number().optional(),
  /** The run's span (W3C traceparent) when OpenTelemetry records it: a resumed run's spans nest under it (../telemetry/open-telemetry.ts). */
  trace: z.string().optional(),
}).describe("The request and settings the current run was started with");
export type RunSettings = z.infer<typeof RunSettingsSchema>;

export const ValidationState = stateObject({
  request,
  ...outcome,
  run: RunSettingsSchema.nullable().default(null),
  /** The latest answer, waiting for the validate node. */
  draft: z
    .object({
      output: z.string(),
      usage: TokenUsageSchema,
      mode: z.string().optional(),
      fallbacks: z.array(z.string()).optional(),
      schemaDropped: z.array(z.string()).optional(),
      /** Asked in the strict form of the spec's schema: the answer is mapped back before it is judged. */
      strict: z.boolean().optional(),
      /** With `strict`: the provider whose strict form was sent (its row's dialect maps the answer back). */
      strictBy: z.string().optional(),
      notStrict: z.string().optional(),
      /** The model name that answered. */
      model: z.string().optional(),
      /** Set when the model was asked for corrections only: the answer is a JSON Patch to the previous answer. */
      corrections: z.boolean().optional(),
      /** The provider declined to answer (redacted, bounded); the attempt is recorded, not validated. */
      refusal: z.string().optional(),
      /** The provider cut the answer at its output limit (its stop reason, e.g. `finish_reason "length"`). */
      truncated: z.string().optional(),
      /** The provider did not say the model finished (another stop, or none), in its words. */
      unfinished: z.string().optional(),
      /** The model called other tools than the answer's: the error saying so (the answer is missing). */
      missing: z.string().optional(),
      /** Set instead of an answer when the call was not made: it would have passed the token budget. */
      budget: z.object({ spent: z.number(), nextInput: z.number(), limit: z.number() }).optional(),
      /** Set when the request was stopped early: where, why, and the errors already certain. */
      stopped: z
        .object({ at: z.number(), reason: AttemptRecordSchema.shape.stopped.unwrap().shape.reason, detail: z.string(), errors: z.array(z.string()) })
        .optional(),
    })
    .nullable()
    .default(null)
    .meta({ title: "Draft", description: "The latest model answer, before validation" }),
});

export type ValidationStateType = z.output<typeof ValidationState>;
export type ValidationUpdate = UpdateType<typeof ValidationState>;
