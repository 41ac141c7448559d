/**
 * What the validatedResponseMiddleware middleware leaves in a createAgent's state: the
 * typed outcome of the agent's structured answer (`responseOutcome`), and the
 * private bookkeeping of the answer's attempts. No LangChain import: the types
 * are usable without the optional peer.
 */
import { z } from "zod";
import { ANSWERED_BY, type OutcomeFailure, type OutcomeSuccess } from "../shared/outcome.js";

/** Why a structured answer ended without being accepted: the model ran out of attempts, it kept calling other tools and gave no answer, or a person rejected it at the review. */
const RESPONSE_STOP_REASONS = ["max_attempts", "no_answer", "rejected"] as const;

/**
 * How the agent's structured answer stands, in the vocabulary of every outcome
 * here (OutcomeSuccess, OutcomeFailure). On success `value` is the spec's
 * output (zod transforms and defaults applied), typed from the spec, and is
 * also the agent's `structuredResponse`; on failure there is no value, only
 * the errors and the last answer as it was given (bounded). While the run is
 * paused for a person (`onFailure: "interrupt"`), the stop reason is
 * `"awaiting_review"`: the answer has not ended, and resuming the run ends it.
 */
export type ResponseOutcome<T = unknown> = OutcomeSuccess<T> | OutcomeFailure<(typeof RESPONSE_STOP_REASONS)[number]> | OutcomeFailure<"awaiting_review">;

const outcomeShape = z
  .object({
    success: z.boolean().meta({ description: "True only when an answer passed the spec" }),
    stopReason: z.enum(["valid", ...RESPONSE_STOP_REASONS, "awaiting_review"]).meta({
      description:
        "Why the answer ended: valid, out of attempts, no answer (only other tools called), rejected at the review; awaiting_review while the run waits for a person",
    }),
    value: z.unknown().optional().meta({ description: "The accepted answer (the spec's output); absent on failure" }),
    by: z.enum(ANSWERED_BY).optional().meta({ description: "Who gave the accepted answer" }),
    errors: z.array(z.string()).meta({ description: "The last answer's errors; empty on success" }),
    lastAnswer: z.string().optional().meta({ description: "The last refused answer as given (bounded); absent on success" }),
    attempts: z.number().meta({ description: "Answers the model gave" }),
    spec: z.string().meta({ description: "Name of the spec the answer was held to" }),
  })
  .meta({ title: "Response outcome", description: "How the agent's structured answer stands; null until it ends or pauses for a person" });

/** Where the middleware is between model calls; private to it (LangChain keeps `_` keys out of the agent's input and output). */
const progressShape = z.object({
  /** Answers judged since the run (or the person's new request) began. */
  attempts: z.number(),
  /** The attempt number that is the last one allowed. */
  limit: z.number(),
  /** Model turns since the run began that called the agent's other tools. */
  toolTurns: z.number(),
  /** What the step after the model call does: ask again, end the run, or take a person's answer (one per step, so no answer is replayed). */
  next: z.enum(["retry", "end", "review"]).nullable(),
  /** The facts the spec's code rules read, computed once from the context the run started with (a resumed run keeps them). */
  ruleContext: z.unknown().optional(),
});
/** Where the middleware is between model calls (see progressShape). */
export type AnswerProgress = z.infer<typeof progressShape>;

/** The middleware's state, typed from the spec's output. */
export function responseStateSchema<T>() {
  return z.object({
    responseOutcome: (outcomeShape as unknown as z.ZodType<ResponseOutcome<T> | null>).nullable().default(null),
    _answerProgress: progressShape.optional(),
  });
}
