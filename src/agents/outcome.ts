/**
 * What the validatedResponse middleware leaves in a createAgent's state: the
 * typed outcome of the agent's structured answer (`responseOutcome`), and the
 * private bookkeeping of the answer's attempts. No LangChain import: the types
 * are usable without the optional peer.
 */
import { z } from "zod";

/** Why a structured answer was not accepted: the model ran out of attempts, or a person rejected it (or gave too many refused answers) at the review. */
export type ResponseStopReason = "max_attempts" | "rejected";

interface OutcomeBase {
  /** Name of the spec the answer was held to. */
  spec: string;
  /** Answers the model gave in this run (a person's answer at the review is not counted). */
  attempts: number;
}

/**
 * How the agent's structured answer ended. On success `value` is the spec's
 * output (zod transforms and defaults applied), typed from the spec, and is
 * also the agent's `structuredResponse`; on failure there is no value, only
 * the errors and the last answer as it was given (bounded).
 */
export type ResponseOutcome<T = unknown> =
  | (OutcomeBase & { success: true; stopReason: "valid"; value: T; by: "model" | "human"; errors: [] })
  | (OutcomeBase & { success: false; stopReason: ResponseStopReason; errors: string[]; lastAnswer: string });

const outcomeShape = z
  .object({
    success: z.boolean().meta({ description: "True only when an answer passed the spec" }),
    stopReason: z.enum(["valid", "max_attempts", "rejected"]).meta({ description: "Why the answer ended: valid, out of attempts, or rejected at the review" }),
    value: z.unknown().optional().meta({ description: "The accepted answer (the spec's output); absent on failure" }),
    by: z.enum(["model", "human"]).optional().meta({ description: "Who gave the accepted answer" }),
    errors: z.array(z.string()).meta({ description: "The last answer's errors; empty on success" }),
    lastAnswer: z.string().optional().meta({ description: "The last refused answer as given (bounded); absent on success" }),
    attempts: z.number().meta({ description: "Answers the model gave" }),
    spec: z.string().meta({ description: "Name of the spec the answer was held to" }),
  })
  .meta({ title: "Response outcome", description: "How the agent's structured answer ended; null until it ends" });

/** Where the middleware is between model calls; private to it (LangChain keeps `_` keys out of the agent's input and output). */
export interface AnswerProgress {
  /** Answers judged since the run (or the person's new request) began. */
  attempts: number;
  /** The attempt number that is the last one allowed. */
  limit: number;
  /** What the step after the model call does: ask again, end the run, or pause for a person. */
  next: "retry" | "end" | "review" | null;
}

const progressShape = z.object({
  attempts: z.number(),
  limit: z.number(),
  next: z.enum(["retry", "end", "review"]).nullable(),
});

/** The middleware's state, typed from the spec's output. */
export function responseStateSchema<T>() {
  return z.object({
    responseOutcome: (outcomeShape as unknown as z.ZodType<ResponseOutcome<T> | null>).nullable().default(null),
    _answerProgress: (progressShape as z.ZodType<AnswerProgress>).optional(),
  });
}
