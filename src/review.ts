/**
 * The review protocol: what a person sees when the model could not give a valid answer, and what they may
 * answer (a corrected value held to the same spec, a new request, or a rejection). The validation graph's
 * review step and the createAgent middleware's review both speak it; Studio renders its form from
 * `reviewAnswerSchema`.
 */
import type { JsonSchema, Spec } from "./specs/spec.js";

/** Refused answers in a row recorded at one review; later ones are judged and shown, not recorded. */
export const MAX_RECORDED_REFUSED_ANSWERS = 10;

/** What a person may answer at the review step. */
export const REVIEW_ANSWERS = {
  value: "a corrected value (JSON text or an object): it must pass the same spec",
  request: "a new request: the model tries again with a fresh attempt budget",
  reject: "a rejection (optionally with a reason): the run ends with success false",
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
        required: ["value"],
        additionalProperties: false,
        properties: { value: { ...value, description: REVIEW_ANSWERS.value } },
      },
      {
        title: "New request",
        type: "object",
        required: ["request"],
        additionalProperties: false,
        properties: { request: { type: "string", minLength: 1, description: REVIEW_ANSWERS.request } },
      },
      {
        title: "Reject",
        type: "object",
        required: ["reject"],
        additionalProperties: false,
        properties: { reject: { const: true, description: REVIEW_ANSWERS.reject }, reason: { type: "string", maxLength: 500 } },
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

/** What a person answers at the review step (the `resume` of `Command({ resume })`). */
export type ReviewAnswer = { value: unknown } | { request: string } | { reject: true; reason?: string };

type ReviewDecision =
  { kind: "value"; value: unknown } | { kind: "request"; request: unknown } | { kind: "reject"; reason?: string } | { kind: "invalid"; problem: string };

/** A resume value: `{ value }`, `{ request }` or `{ reject: true, reason? }`. */
export function readReviewAnswer(answer: unknown): ReviewDecision {
  if (answer !== null && typeof answer === "object" && !Array.isArray(answer)) {
    const a = answer as Record<string, unknown>;
    const keys = Object.keys(a).filter((k) => k !== "reason");
    if (keys.length === 1 && keys[0] === "value") return { kind: "value", value: a.value };
    if (keys.length === 1 && keys[0] === "request") return { kind: "request", request: a.request };
    if (keys.length === 1 && keys[0] === "reject" && a.reject === true)
      return { kind: "reject", reason: typeof a.reason === "string" ? a.reason.slice(0, 500) : undefined };
  }
  return {
    kind: "invalid",
    problem: 'the review answer must be one of {"value": <the corrected JSON>}, {"request": "<a new request>"} or {"reject": true, "reason"?: "…"}',
  };
}
