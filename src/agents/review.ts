/**
 * A person finishes what the model could not (`onFailure: "interrupt"`): the
 * run pauses with LangGraph's interrupt, showing the request, the last answer
 * and its exact errors, in the validation graph's review payload and form, and
 * reads the answer with the validation graph's reader (../protocol/review.ts). A
 * corrected value is held to the same spec (text read exactly, an object as
 * JSON data); a value that fails is shown again with its errors.
 *
 * One answer per step, as the validation graph's review: `reviewStep` calls
 * interrupt() once and returns what that one answer decided; asking again is a
 * new step (the middleware loops through the graph). LangGraph re-runs a step
 * from its start when it resumes and replays the earlier answers of that step
 * from their stored copies, which are not always the values first judged
 * (its checkpoint serializer revives some object shapes): with one answer per
 * step there is nothing to replay, and each answer is judged once, as given.
 */
import { interrupt } from "@langchain/langgraph";
import { checkRequestText } from "../settings.js";
import type { Spec } from "../specs/spec.js";
import { readReviewAnswer, REVIEW_ANSWERS, reviewAnswerSchema, type ReviewRequest } from "../protocol/review.js";
import { judgePersonAnswer, type JudgeOptions } from "./answer.js";
import type { ResponseOutcome } from "./outcome.js";

/** The answer while the run waits for a person: the last answer refused (the model's, then the person's) and its errors. */
type AwaitingReview<T> = Extract<ResponseOutcome<T>, { stopReason: "awaiting_review" }>;

type ReviewResult<T> =
  | { kind: "accepted"; outcome: Extract<ResponseOutcome<T>, { success: true }> }
  | { kind: "rejected"; outcome: ResponseOutcome<T> & { stopReason: "rejected" } }
  /** A new request: the model tries again, with a fresh attempt budget. */
  | { kind: "request"; request: string }
  /** The answer was refused (or not understood): the review asks again, showing this. */
  | { kind: "again"; outcome: AwaitingReview<T> };

/** One answer at the review: pause, read the person's answer, judge it once. */
export async function reviewStep<T>(spec: Spec<T>, awaiting: AwaitingReview<T>, request: string, judging: JudgeOptions = {}): Promise<ReviewResult<T>> {
  const payload: ReviewRequest = {
    kind: "review",
    request,
    spec: spec.name,
    output: awaiting.lastAnswer,
    errors: awaiting.errors,
    attempts: awaiting.attempts,
    answers: REVIEW_ANSWERS,
  };
  // The validation graph's form (Studio renders it from the JSON Schema); the check step alone judges the answer.
  const decision = readReviewAnswer(interrupt<ReviewRequest, unknown>(payload, { responseSchema: reviewAnswerSchema(spec) }));
  const again = (errors: string[], lastAnswer = awaiting.lastAnswer): ReviewResult<T> => ({ kind: "again", outcome: { ...awaiting, errors, lastAnswer } });
  if (decision.kind === "reject") {
    const errors = decision.reason ? [...awaiting.errors, `rejected at review: ${decision.reason}`] : awaiting.errors;
    return { kind: "rejected", outcome: { ...awaiting, stopReason: "rejected", errors } };
  }
  if (decision.kind === "invalid") return again([decision.problem]);
  if (decision.kind === "request") {
    try {
      return { kind: "request", request: checkRequestText(decision.request, "the new request") };
    } catch (error) {
      return again([(error as Error).message]);
    }
  }
  const { verdict, shown } = await judgePersonAnswer(spec, decision.value, judging);
  if (verdict.valid) {
    return {
      kind: "accepted",
      outcome: { success: true, stopReason: "valid", value: verdict.value as T, by: "human", errors: [], attempts: awaiting.attempts, spec: spec.name },
    };
  }
  // Nothing invalid passes because a person typed it: it is shown again with its errors.
  return again(verdict.errors, shown);
}
