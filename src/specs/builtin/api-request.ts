/** An HTTP API request payload: method, URL, headers, body, timeout and retries. */
import { describeValue } from "../../shared/text.js";
import { defineSpec } from "../spec.js";

const BODYLESS = new Set(["GET", "DELETE", "HEAD"]);

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
        return BODYLESS.has(v.method) && body !== undefined && body !== null
          ? `body is present; method=${v.method} requires no body (omit body or set it to null)`
          : null;
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
        if (body === undefined || body === null) problems.push(`body is ${body === null ? "null" : "missing"}; method=${v.method} requires an object body`);
        const contentType = Object.hasOwn(v.headers, "Content-Type") ? v.headers["Content-Type"] : undefined;
        if (contentType !== "application/json") {
          problems.push(
            `headers["Content-Type"] is ${contentType === undefined ? "missing" : describeValue(contentType)}; method=${v.method} requires "application/json"`,
          );
        }
        return problems;
      },
    },
    {
      id: "retried-post-needs-idempotency-key",
      description: 'A POST with retries > 0 must send an "Idempotency-Key" header, so a retry cannot apply twice.',
      inputs: { method: "string", retries: "integer", headers: "object" },
      check: (v) =>
        v.method === "POST" && v.retries > 0 && typeof v.headers["Idempotency-Key"] !== "string"
          ? `headers["Idempotency-Key"] is ${Object.hasOwn(v.headers, "Idempotency-Key") ? describeValue(v.headers["Idempotency-Key"]) : "missing"}; method=POST with retries=${v.retries} requires an Idempotency-Key header`
          : null,
    },
    {
      id: "retry-budget",
      description: "timeout_ms * (retries + 1) must not exceed 120000 (two minutes in total).",
      inputs: { timeout_ms: "integer", retries: "integer" },
      check: (v) => {
        const total = v.timeout_ms * (v.retries + 1);
        return total > 120000
          ? `timeout_ms is ${v.timeout_ms} with retries=${v.retries}: ${total} ms in total; timeout_ms * (retries + 1) must be <= 120000`
          : null;
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
