/**
 * OpenAI, and every server that speaks its Chat Completions API (a bare model name means a model there):
 * one row of the providers' table (./index.ts).
 */
import type { BaseMessage, BaseMessageChunk } from "@langchain/core/messages";
import { ChatOpenAI, ChatOpenAICompletions, type ChatOpenAIFields } from "@langchain/openai";
import type { JsonSchema } from "../specs/spec.js";
import { fetchWithDeadline } from "./deadline.js";
import { limitsOf, type ModeRequest, type ProviderRow, type SchemaRequest, sendable } from "./provider.js";
import { strictForm, strictLimitProblem, type StrictDialect, type StrictForm } from "./strict-form.js";

const STRICT_DOCS = "platform.openai.com/docs/guides/structured-outputs#supported-schemas (read 2026-12)";

/** Formats strict mode takes (the same page). */
const FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);

/** Strict mode as the same page documents it: every property required, and these keywords beside the structure. */
const STRICT_DIALECT: StrictDialect = {
  allRequired: true,
  keywords: {
    description: (v) => typeof v === "string",
    title: (v) => typeof v === "string",
    enum: (v) => Array.isArray(v),
    const: () => true,
    pattern: (v) => typeof v === "string",
    format: (v) => typeof v === "string" && FORMATS.has(v),
    minimum: (v) => typeof v === "number",
    maximum: (v) => typeof v === "number",
    exclusiveMinimum: (v) => typeof v === "number",
    exclusiveMaximum: (v) => typeof v === "number",
    multipleOf: (v) => typeof v === "number",
    minItems: (v) => typeof v === "number",
    maxItems: (v) => typeof v === "number",
  },
};

export const openai: ProviderRow = {
  title: "OpenAI",
  example: "gpt-4o-mini",
  help: [
    ["OPENAI_BASE_URL", "any OpenAI-compatible server, e.g. http://localhost:11434/v1 (default: OpenAI)"],
    ["OPENAI_API_KEY", "the key (required for OpenAI; any string for local servers)"],
  ],
  package: "@langchain/openai",
  tested: "1.5.8",
  client: "openai",
  traced: "openai",
  env: { apiKey: ["OPENAI_API_KEY"], baseUrl: "OPENAI_BASE_URL" },
  defaultBaseUrl: "https://api.openai.com/v1",
  missing: (settings) =>
    settings.apiKey || settings.baseUrl
      ? undefined
      : "No model provider is configured: set OPENAI_API_KEY (for OpenAI), or OPENAI_BASE_URL (any OpenAI-compatible server, " +
        "e.g. http://localhost:11434/v1) in the process environment (`npm start` and the command line also read them from ./.env; embedded code does not), " +
        "or name another provider's model (provider/model) with its key.",
  build(_module, request) {
    const fields: ChatOpenAIFields = {
      model: request.model,
      temperature: request.temperature,
      // Local OpenAI-compatible servers ignore the key, but the client requires one.
      apiKey: request.settings.apiKey ?? "not-needed",
      // The client's own timeout stops at the response headers; the fetch below bounds the whole answer.
      configuration: { ...(request.settings.baseUrl ? { baseURL: request.settings.baseUrl } : {}), fetch: fetchWithDeadline(request.timeoutMs) },
      timeout: request.timeoutMs,
      maxRetries: request.maxRetries,
      // Token usage comes from the provider (`stream_options.include_usage` when streaming). `streaming`
      // stays unset: `true` makes invoke() estimate tokens with tiktoken, whose data file it downloads from
      // tiktoken.pages.dev on first use (a minute's stall offline); `false` turns streaming off altogether
      // (`disableStreaming`). Unset, LangGraph's stream modes call the model's stream path, which counts nothing locally.
      streamUsage: true,
    };
    return new ChatOpenAI({ ...fields, completions: new RefusalAwareCompletions(fields) });
  },
  // Chat Completions' `finish_reason` (OpenAI, and the OpenAI-compatible servers: vLLM, llama.cpp, local /v1 endpoints); the
  // Responses API's `status`. `function_call` is the legacy name of a tool call's finish.
  stops: [
    { field: "finish_reason", finished: ["stop", "tool_calls", "function_call"], cut: ["length"], withheld: ["content_filter"] },
    { field: "status", finished: ["completed"], cut: [], withheld: [] },
  ],
  auto: "json_schema",
  autoSays: "json_schema",
  modes: {
    json_object: () => ({ options: { response_format: { type: "json_object" } } }),
    json_schema: jsonSchemaRequest,
  },
  strictDialect: STRICT_DIALECT,
  strictLimits: {
    properties: { value: 5_000, source: `"A schema may have up to 5000 object properties total", ${STRICT_DOCS}` },
    nesting: { value: 10, source: `"… with up to 10 levels of nesting", ${STRICT_DOCS}` },
    enumValues: { value: 1_000, source: `"A schema may have up to 1000 enum values across all enum properties", ${STRICT_DOCS}` },
    chars: {
      value: 120_000,
      source: `"The total string length of all property names, definition names, enum values, and const values cannot exceed 120,000 characters", ${STRICT_DOCS}`,
    },
    largeEnumValues: {
      value: 250,
      source: `"For a single enum property with string values, the total string length of all enum values cannot exceed 15,000 characters when there are more than 250 enum values", ${STRICT_DOCS}`,
    },
    largeEnumChars: { value: 15_000, source: `the same sentence, ${STRICT_DOCS}` },
  },
};

const LIMITS = limitsOf(openai)!;

/** Which strict limit each strict form passes (undefined: none), computed once per form. */
const overLimits = new WeakMap<JsonSchema, string | undefined>();

/**
 * The json_schema request for a spec: the strict form of its schema with `strict: true` when there is one within
 * the documented limits (./strict-form.ts), else the schema as it is with `strict: false` and why.
 * `strictRefused`: what the provider said when it refused the strict form (the request is then not strict).
 */
export function jsonSchemaRequest(request: SchemaRequest, strictRefused?: string): ModeRequest {
  const form: StrictForm =
    strictRefused === undefined
      ? withinLimits(strictForm(request.schema, STRICT_DIALECT))
      : { strict: false, reason: `the provider refused the strict form (${strictRefused})` };
  const named = { name: request.name, description: request.description };
  const json_schema = form.strict ? { ...named, schema: form.schema, strict: true } : { ...named, schema: sendable(request.schema), strict: false };
  const options = { response_format: { type: "json_schema", json_schema }, strict: json_schema.strict };
  return form.strict ? { options, dropped: form.dropped, strict: true, reshaped: form.reshapes } : { options, notStrict: form.reason };
}

function withinLimits(form: StrictForm): StrictForm {
  if (!form.strict) return form;
  if (!overLimits.has(form.schema)) overLimits.set(form.schema, strictLimitProblem(form.schema, LIMITS));
  const over = overLimits.get(form.schema);
  return over === undefined ? form : { strict: false, reason: over };
}

/**
 * Chat Completions with the provider's refusal kept. @langchain/openai 1.5.8 drops OpenAI's
 * `message.refusal` (and the streamed `delta.refusal` pieces): a refused answer would arrive as empty
 * content, indistinguishable from a fault. Here it becomes `additional_kwargs.refusal` (streamed pieces
 * are joined when the chunks merge), where LangChain's Responses API converter puts it too.
 */
class RefusalAwareCompletions extends ChatOpenAICompletions {
  protected override _convertCompletionsMessageToBaseMessage(
    message: Parameters<ChatOpenAICompletions["_convertCompletionsMessageToBaseMessage"]>[0],
    rawResponse: Parameters<ChatOpenAICompletions["_convertCompletionsMessageToBaseMessage"]>[1],
  ): BaseMessage {
    return withRefusal(super._convertCompletionsMessageToBaseMessage(message, rawResponse), (message as { refusal?: unknown }).refusal);
  }

  protected override _convertCompletionsDeltaToBaseMessageChunk(
    delta: Record<string, any>,
    rawResponse: Parameters<ChatOpenAICompletions["_convertCompletionsDeltaToBaseMessageChunk"]>[1],
    defaultRole?: Parameters<ChatOpenAICompletions["_convertCompletionsDeltaToBaseMessageChunk"]>[2],
  ): BaseMessageChunk {
    return withRefusal(super._convertCompletionsDeltaToBaseMessageChunk(delta, rawResponse, defaultRole), delta.refusal);
  }
}

function withRefusal<M extends BaseMessage>(message: M, refusal: unknown): M {
  if (typeof refusal === "string" && refusal.length > 0) message.additional_kwargs = { ...message.additional_kwargs, refusal };
  return message;
}
