/**
 * The one vocabulary of a judged answer's outcome, shared by the validation
 * graph's calls (`ValidationOutcome`, from generateValidated and
 * streamValidated) and the createAgent middleware (`ResponseOutcome`): the
 * judged value is `value`, and every failure has the same fields. Types only,
 * and the list of who may give an answer.
 */

/** Who gave an answer: the model, or a person at the review. */
export const ANSWERED_BY = ["model", "human"] as const;

/** What every outcome carries, valid or not. */
export interface OutcomeBase {
  /** True only when an answer passed the spec. */
  success: boolean;
  /** Why it ended: "valid" on success; on failure, why not. */
  stopReason: string;
  /** The last answer's errors; empty on success. */
  errors: string[];
  /** Answers the model gave (a person's answer at the review is not counted). */
  attempts: number;
  /** Name of the spec the answer was held to. */
  spec: string;
}

/** An accepted answer: `value` is the spec's output (zod transforms and defaults applied), typed from the spec. */
export interface OutcomeSuccess<T = unknown> extends OutcomeBase {
  success: true;
  stopReason: "valid";
  value: T;
  /** Who gave the accepted answer. */
  by: (typeof ANSWERED_BY)[number];
  errors: [];
}

/** An answer that was not accepted: why, its errors, and the last answer as it was given (bounded; empty when there was none). */
export interface OutcomeFailure<S extends string = string> extends OutcomeBase {
  success: false;
  stopReason: S;
  errors: string[];
  lastAnswer: string;
}
