/**
 * Anthropic's Messages API through @langchain/anthropic: one row of the providers' table (./index.ts).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { fetchWithDeadline } from "./deadline.js";
import { sendable, type ProviderRow } from "./provider.js";
import { schemaSubset, type SchemaProfile } from "./schema-subset.js";

/** As @anthropic-ai/sdk's transformJSONSchema keeps them (its structured outputs), with enum and const, which Anthropic documents. */
const PROFILE: SchemaProfile = {
  keep: new Set([
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "description",
    "title",
    "enum",
    "const",
    "format",
    "minItems",
  ]),
  values: {
    additionalProperties: (value) => value === false,
    format: (value) =>
      typeof value === "string" && ["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"].includes(value),
    minItems: (value) => value === 0 || value === 1,
  },
  rename: { oneOf: "anyOf" },
  closeObjects: true,
};

type Module = typeof import("@langchain/anthropic");

export const anthropic: ProviderRow<Module> = {
  title: "Anthropic",
  example: "claude-sonnet-4-5",
  help: [["ANTHROPIC_API_KEY", "for anthropic/… models (ANTHROPIC_BASE_URL: another server speaking its API)"]],
  package: "@langchain/anthropic",
  tested: "1.5.11",
  client: "anthropic",
  env: { apiKey: ["ANTHROPIC_API_KEY"], baseUrl: "ANTHROPIC_BASE_URL" },
  defaultBaseUrl: "https://api.anthropic.com",
  missing: (settings, name) =>
    settings.apiKey || settings.baseUrl
      ? undefined
      : `"${name}" is an Anthropic model: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a server other than Anthropic's) in the process environment.`,
  load: () => import("@langchain/anthropic"),
  build({ ChatAnthropic }, request): BaseChatModel {
    return new ChatAnthropic({
      model: request.model,
      temperature: request.temperature,
      apiKey: request.settings.apiKey ?? "not-needed",
      ...(request.settings.baseUrl ? { anthropicApiUrl: request.settings.baseUrl } : {}),
      maxRetries: request.maxRetries,
      streamUsage: true,
      clientOptions: { fetch: fetchWithDeadline(request.timeoutMs), timeout: request.timeoutMs },
    });
  },
  stops: [
    {
      field: "stop_reason",
      finished: ["end_turn", "tool_use", "stop_sequence"],
      cut: ["max_tokens", "model_context_window_exceeded"],
      withheld: ["refusal"],
    },
  ],
  // A forced tool call: the tool's input is the answer.
  auto: "tool",
  autoSays: "tool use",
  modes: {
    // No JSON mode; its structured output takes (a subset of) the schema as `output_config.format`.
    json_schema: (request) => {
      const taken = schemaSubset(sendable(request.schema), PROFILE);
      return { options: { outputFormat: { type: "json_schema", schema: taken.schema } }, dropped: taken.dropped };
    },
  },
  profile: PROFILE,
};
