/**
 * The review protocol: what a person sees when the model could not give a valid answer, and what they may
 * answer (a corrected value held to the same spec, a new request, or a rejection). The validation graph's
 * review step and the createAgent middleware's review both speak it; Studio renders its form from
 * `reviewAnswerSchema`.
 */
import type { JsonSchema, Spec } from "../specs/spec.js";

/** Refused answers in a row recorded at one review; later ones are judged and shown, not recorded. */
export const MAX_RECORDED_REFUSED_ANSWERS = 10;

/** What a person may answer at the review step, by decision (`type`, as LangChain's review decisions are typed). */
export const REVIEW_ANSWERS = {
  edit: 'a corrected value, {"type": "edit", "value": <JSON text or an object>}: it must pass the same spec',
  retry: 'a new request, {"type": "retry", "request": "…"}: the model tries again with a fresh attempt budget',
  reject: 'a rejection, {"type": "reject", "message"?: "why"}: the run ends with success false',
} as const;

/**
 * The answers a person may give, as JSON Schema (the interrupt's
 * `response_schema`, from which Studio renders a form): the corrected value
 * described by the spec's own schema, a new request, or a rejection. A spec
 * whose schema refers to itself (`$ref`, `$id`) cannot be moved under
 * `value` without breaking its references, so the form then asks for a value
 * of its type and names the spec.
 */
export function reviewAnswerSchema(spec: Spec): JsonSchema {
  const { $schema: _dialect, ...schema } = spec.schema;
  const selfReferring = /"\$(ref|id|dynamicRef|recursiveRef|anchor|dynamicAnchor)"\s*:/.test(JSON.stringify(schema));
  const value = selfReferring
    ? { ...(schema.type !== undefined ? { type: schema.type } : {}), description: `A value that passes the spec ${JSON.stringify(spec.name)}.` }
    : schema;
  return {
    title: "Review answer",
    oneOf: [
      {
        title: "Corrected value",
        type: "object",
        required: ["type", "value"],
        additionalProperties: false,
        properties: { type: { const: "edit", description: REVIEW_ANSWERS.edit }, value },
      },
      {
        title: "New request",
        type: "object",
        required: ["type", "request"],
        additionalProperties: false,
        properties: { type: { const: "retry", description: REVIEW_ANSWERS.retry }, request: { type: "string", minLength: 1 } },
      },
      {
        title: "Reject",
        type: "object",
        required: ["type"],
        additionalProperties: false,
        properties: { type: { const: "reject", description: REVIEW_ANSWERS.reject }, message: { type: "string", maxLength: 500 } },
      },
    ],
  };
}

/** The review step's interrupt payload: what the person sees. */
export interface ReviewRequest {
  kind: "review";
  request: string;
  spec: string;
  output: string;
  errors: string[];
  attempts: number;
  /** The provider's refusal, when the model's last attempt was refused. */
  refusal?: string;
  answers: typeof REVIEW_ANSWERS;
}

/**
 * What a person answers at the review step (the `resume` of `Command({ resume })`): a decision typed as
 * LangChain's review decisions are.
 */
export type ReviewAnswer = { type: "edit"; value: unknown } | { type: "retry"; request: string } | { type: "reject"; message?: string };

type ReviewDecision =
  { kind: "value"; value: unknown } | { kind: "request"; request: unknown } | { kind: "reject"; reason?: string } | { kind: "invalid"; problem: string };

const REASON_CHARS = 500;
const reasonOf = (text: unknown): string | undefined => (typeof text === "string" ? text.slice(0, REASON_CHARS) : undefined);
/** Whether `a` has exactly the keys `required`, plus any of `optional`. */
const hasKeys = (a: Record<string, unknown>, required: string[], optional: string[] = []) =>
  required.every((key) => Object.hasOwn(a, key)) && Object.keys(a).every((key) => required.includes(key) || optional.includes(key));

/** A resume value: a typed decision (`edit`, `retry`, `reject`); anything else is invalid, with the forms it may take. */
export function readReviewAnswer(answer: unknown): ReviewDecision {
  if (answer !== null && typeof answer === "object" && !Array.isArray(answer)) {
    const a = answer as Record<string, unknown>;
    if (a.type === "edit" && hasKeys(a, ["type", "value"])) return { kind: "value", value: a.value };
    if (a.type === "retry" && hasKeys(a, ["type", "request"])) return { kind: "request", request: a.request };
    if (a.type === "reject" && hasKeys(a, ["type"], ["message"])) return { kind: "reject", reason: reasonOf(a.message) };
    if (a.type === "approve") {
      return {
        kind: "invalid",
        problem: 'approve is not a decision here: the answer did not pass its spec; give {"type": "edit", "value": <the corrected JSON>} instead',
      };
    }
  }
  return {
    kind: "invalid",
    problem:
      'the review answer must be one of {"type": "edit", "value": <the corrected JSON>}, {"type": "retry", "request": "<a new request>"} or {"type": "reject", "message"?: "…"}',
  };
}
