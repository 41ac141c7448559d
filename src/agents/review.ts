/**
 * A person finishes what the model could not (`onFailure: "interrupt"`): the
 * run pauses with LangGraph's interrupt, showing the request, the last answer
 * and its exact errors, in the validation graph's review payload and form, and
 * reads the answer with the validation graph's reader (../validation/nodes.ts). A
 * corrected value is held to the same spec (text read exactly, an object as
 * JSON data); a value that fails is shown again with its errors.
 *
 * The pause is inside one step: each answer resumes the step, which replays
 * the earlier answers before it reaches the new one, so a review takes at most
 * MAX_REVIEW_ANSWERS answers; after that many refused answers in a row it ends
 * as "rejected", keeping the work (and what a checkpoint holds) bounded.
 */
import { interrupt } from "@langchain/langgraph";
import { checkRequestText } from "../settings.js";
import type { Spec } from "../specs/spec.js";
import { readReviewAnswer, REVIEW_ANSWERS, reviewAnswerSchema, type ReviewRequest } from "../validation/nodes.js";
import { judgePersonAnswer, type JudgeOptions } from "./answer.js";
import type { ResponseOutcome } from "./outcome.js";

/** Answers one review takes; past it, with every one refused, the answer is rejected. */
export const MAX_REVIEW_ANSWERS = 10;

export type Failure<T> = Extract<ResponseOutcome<T>, { success: false }>;

export type ReviewResult<T> =
  | { kind: "accepted"; outcome: Extract<ResponseOutcome<T>, { success: true }> }
  | { kind: "rejected"; outcome: Failure<T> }
  /** A new request: the model tries again, with a fresh attempt budget. */
  | { kind: "request"; request: string };

export async function review<T>(spec: Spec<T>, failure: Failure<T>, request: string, judging: JudgeOptions = {}): Promise<ReviewResult<T>> {
  let output = failure.lastAnswer;
  let errors = failure.errors;
  for (let answers = 1; ; answers++) {
    const payload: ReviewRequest = { kind: "review", request, spec: spec.name, output, errors, attempts: failure.attempts, answers: REVIEW_ANSWERS };
    // The validation graph's form (Studio renders it from the JSON Schema); the check step alone judges the answer.
    const decision = readReviewAnswer(interrupt<ReviewRequest, unknown>(payload, { responseSchema: reviewAnswerSchema(spec) }));
    if (decision.kind === "reject") {
      return { kind: "rejected", outcome: { ...failure, stopReason: "rejected", errors: decision.reason ? [...failure.errors, `rejected at review: ${decision.reason}`] : failure.errors } };
    }
    if (decision.kind === "request") {
      try {
        return { kind: "request", request: checkRequestText(decision.request, "the new request") };
      } catch (error) {
        errors = [(error as Error).message];
      }
    } else if (decision.kind === "invalid") {
      errors = [decision.problem];
    } else {
      const { verdict, shown } = await judgePersonAnswer(spec, decision.value, judging);
      if (verdict.valid) {
        return { kind: "accepted", outcome: { success: true, stopReason: "valid", value: verdict.value as T, by: "human", errors: [], attempts: failure.attempts, spec: spec.name } };
      }
      // Nothing invalid passes because a person typed it: it is shown again with its errors.
      output = shown;
      errors = verdict.errors;
    }
    if (answers >= MAX_REVIEW_ANSWERS) {
      const limit = `${MAX_REVIEW_ANSWERS} answers in a row were refused at the review; it ended without an accepted answer`;
      return { kind: "rejected", outcome: { ...failure, stopReason: "rejected", errors: [...errors, limit], lastAnswer: output } };
    }
  }
}
