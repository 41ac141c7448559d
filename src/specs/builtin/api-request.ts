/** An HTTP API request payload: method, URL, headers, body, timeout and retries. */
import { describeValue } from "../../shared/text.js";
import { defineSpec } from "../spec.js";

const BODYLESS = new Set(["GET", "DELETE", "HEAD"]);

/** The rules' messages, exported so that tests and tools match a rule through its message function, never a copy of its wording. */
export const apiRequestMessages = {
  bodyNotAllowed: (method: string) => `body is present; method=${method} requires no body (omit body or set it to null)`,
  bodyRequired: (body: null | undefined, method: string) => `body is ${body === null ? "null" : "missing"}; method=${method} requires an object body`,
  contentType: (contentType: unknown, method: string) =>
    `headers["Content-Type"] is ${contentType === undefined ? "missing" : describeValue(contentType)}; method=${method} requires "application/json"`,
  idempotencyKey: (headers: Record<string, unknown>, retries: number) =>
    `headers["Idempotency-Key"] is ${Object.hasOwn(headers, "Idempotency-Key") ? describeValue(headers["Idempotency-Key"]) : "missing"}; method=POST with retries=${retries} requires an Idempotency-Key header`,
  retryBudget: (timeoutMs: number, retries: number) =>
    `timeout_ms is ${timeoutMs} with retries=${retries}: ${timeoutMs * (retries + 1)} ms in total; timeout_ms * (retries + 1) must be <= 120000`,
};

export const apiRequestSpec = defineSpec({
  name: "api-request",
  description: "An outgoing HTTP API request: method, HTTPS URL, headers, JSON body, timeout and retry count.",
  schema: {
    type: "object",
    required: ["method", "url", "headers", "timeout_ms", "retries"],
    additionalProperties: false,
    properties: {
      method: { type: "string", enum: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] },
      url: { type: "string", pattern: "^https://[^\\s/]+(/\\S*)?$", maxLength: 2048 },
      headers: {
        type: "object",
        additionalProperties: { type: "string", maxLength: 1024 },
        propertyNames: { pattern: "^[A-Za-z0-9-]+$" },
      },
      body: { type: ["object", "null"] },
      timeout_ms: { type: "integer", minimum: 100, maximum: 60000 },
      retries: { type: "integer", minimum: 0, maximum: 5 },
    },
  },
  rules: [
    {
      id: "bodyless-methods",
      description: "GET, HEAD and DELETE requests must not have a body (omit it or set it to null).",
      inputs: { method: "string" },
      check: (v, doc) => {
        const body = (doc as { body?: unknown }).body;
        return BODYLESS.has(v.method) && body !== undefined && body !== null ? apiRequestMessages.bodyNotAllowed(v.method) : null;
      },
    },
    {
      id: "body-needs-content-type",
      description: 'POST, PUT and PATCH requests must have an object body and headers["Content-Type"] = "application/json".',
      inputs: { method: "string", headers: "object" },
      check: (v, doc) => {
        if (BODYLESS.has(v.method)) return null;
        const problems: string[] = [];
        const body = (doc as { body?: unknown }).body;
        if (body === undefined || body === null) problems.push(apiRequestMessages.bodyRequired(body, v.method));
        const contentType = Object.hasOwn(v.headers, "Content-Type") ? v.headers["Content-Type"] : undefined;
        if (contentType !== "application/json") problems.push(apiRequestMessages.contentType(contentType, v.method));
        return problems;
      },
    },
    {
      id: "retried-post-needs-idempotency-key",
      description: 'A POST with retries > 0 must send an "Idempotency-Key" header, so a retry cannot apply twice.',
      inputs: { method: "string", retries: "integer", headers: "object" },
      check: (v) =>
        v.method === "POST" && v.retries > 0 && typeof v.headers["Idempotency-Key"] !== "string"
          ? apiRequestMessages.idempotencyKey(v.headers, v.retries)
          : null,
    },
    {
      id: "retry-budget",
      description: "timeout_ms * (retries + 1) must not exceed 120000 (two minutes in total).",
      inputs: { timeout_ms: "integer", retries: "integer" },
      check: (v) => {
        return v.timeout_ms * (v.retries + 1) > 120000 ? apiRequestMessages.retryBudget(v.timeout_ms, v.retries) : null;
      },
    },
  ],
  example: {
    method: "POST",
    url: "https://api.example.com/v1/orders",
    headers: { "Content-Type": "application/json", "Idempotency-Key": "order-42" },
    body: { sku: "A-1", quantity: 2 },
    timeout_ms: 5000,
    retries: 2,
  },
});
