/**
 * Anthropic's Messages API through @langchain/anthropic: one row of the providers' table (./index.ts).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { fetchWithDeadline } from "./deadline.js";
import type { JsonSchema } from "../specs/spec.js";
import { sendable, type ModeRequest, type ProviderRow, type SchemaRequest, type ToolRequest } from "./provider.js";
import type { SchemaProfile } from "./schema-subset.js";
import { strictDialectOf, strictForm, type StrictForm } from "./strict-form.js";

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
    // "Enums (strings, numbers, bools, or nulls only - no complex types)".
    enum: (value) => Array.isArray(value) && value.every((v) => v === null || typeof v !== "object"),
    format: (value) =>
      typeof value === "string" && ["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"].includes(value),
    minItems: (value) => value === 0 || value === 1,
  },
  rename: { oneOf: "anyOf" },
  closeObjects: true,
};

/**
 * Strict tool use and `output_config.format` take the same subset, and optional properties (within a limit): the strict
 * form in this dialect keeps them optional, so it introduces no null; it wraps a root that is not an object, resolves a
 * root `$ref`, and asks for a map as its entries (./strict-form.ts).
 */
const STRICT_DIALECT = strictDialectOf(PROFILE, false);

type Module = typeof import("@langchain/anthropic");

const STRICT_DOCS = "platform.claude.com/docs/en/build-with-claude/structured-outputs, JSON Schema limitations";

export const anthropic: ProviderRow<Module> = {
  title: "Anthropic",
  example: "claude-sonnet-4-5",
  help: [["ANTHROPIC_API_KEY", "for anthropic/… models (ANTHROPIC_BASE_URL: another server speaking its API)"]],
  package: "@langchain/anthropic",
  tested: "1.5.11",
  client: "anthropic",
  traced: "anthropic",
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
    // No JSON mode; its structured output (`output_config.format`) is always held to the schema: the strict form, like the
    // strict tool's. Past a limit, or with no strict form, it is not sent at all (the next mode is asked instead).
    json_schema: (request, strictRefused): ModeRequest => {
      if (strictRefused !== undefined)
        return { options: {}, preflight: `Anthropic's structured output has no form without strict, and it refused the strict one (${strictRefused})` };
      const form = withinLimits(request.schema);
      if (!form.strict) return { options: {}, preflight: form.reason };
      return { options: { outputFormat: { type: "json_schema", schema: form.schema } }, dropped: form.dropped, strict: true, reshaped: form.reshapes };
    },
  },
  tool: strictTool,
  profile: PROFILE,
  strictDialect: STRICT_DIALECT,
  strictLimits: {
    strictTools: { value: 20, source: `"strict tools per request: 20", ${STRICT_DOCS}` },
    optionalParameters: { value: 24, source: `"optional parameters across all strict schemas: 24", ${STRICT_DOCS}` },
    unionParameters: { value: 16, source: `"parameters with union types (anyOf or type arrays) across all strict schemas: 16", ${STRICT_DOCS}` },
  },
};

const LIMITS = {
  strictTools: 20,
  optionalParameters: 24,
  unionParameters: 16,
} as const;

/**
 * The forced tool with `strict: true` (Anthropic's strict tool use): the strict form of the spec's schema in Anthropic's
 * dialect (every object closed, optional properties still optional, a root that is not an object wrapped, a map as its
 * entries), when there is one within the documented limits; else the spec's schema as it is, without strict, saying why.
 * The arguments are mapped back before they are judged whole against the spec (./strict-form.ts).
 */
function strictTool(request: SchemaRequest, strictRefused?: string): ToolRequest {
  const parameters = sendable(request.schema);
  if (strictRefused !== undefined) return { parameters, notStrict: `the provider refused the strict tool (${strictRefused})` };
  const form = withinLimits(request.schema);
  if (!form.strict) return { parameters, notStrict: form.reason };
  return { parameters: form.schema, strict: true, reshaped: form.reshapes, ...(form.dropped.length > 0 ? { dropped: form.dropped } : {}) };
}

/** Which documented limit each strict form passes (undefined: none), computed once per form. */
const overLimits = new WeakMap<JsonSchema, string | undefined>();

/** The strict form of a spec's schema in Anthropic's dialect, when there is one within the documented limits; else why not. */
function withinLimits(schema: JsonSchema): StrictForm {
  const form = strictForm(schema, STRICT_DIALECT);
  if (!form.strict) return form;
  if (!overLimits.has(form.schema)) overLimits.set(form.schema, strictProblem(form.schema));
  const over = overLimits.get(form.schema);
  return over === undefined ? form : { strict: false, reason: over };
}

/**
 * Why Anthropic's strict mode would refuse a strict schema (the strict form sent), checked before the call: recursion
 * (not supported), or a documented limit passed (strict tools per request, optional parameters, union-typed
 * parameters). `tools`: the strict tools in the request.
 */
export function strictProblem(sent: JsonSchema, tools = 1): string | undefined {
  if (tools > LIMITS.strictTools) return `the request has ${tools} strict tools, over Anthropic's strict limit of ${LIMITS.strictTools}`;
  const cycle = recursion(sent);
  if (cycle !== undefined) return `${cycle}: Anthropic's strict mode does not take recursive schemas`;
  let optional = 0;
  let unions = 0;
  const visit = (node: unknown, path: string, isParameter: boolean): void => {
    if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${path}/${i}`, false));
    if (!isPlainObject(node)) return;
    if (isParameter && (Array.isArray(node.anyOf) || (Array.isArray(node.type) && node.type.length > 1))) unions++;
    if (isPlainObject(node.properties)) {
      const required = new Set(Array.isArray(node.required) ? node.required : []);
      for (const [name, sub] of Object.entries(node.properties)) {
        if (!required.has(name)) optional++;
        visit(sub, `${path}/properties/${name}`, true);
      }
    }
    for (const key of ["$defs", "definitions"])
      if (isPlainObject(node[key])) for (const [name, def] of Object.entries(node[key])) visit(def, `${path}/${key}/${name}`, false);
    visit(node.items, `${path}/items`, false);
    visit(node.anyOf, `${path}/anyOf`, false);
  };
  visit(sent, "", false);
  if (optional > LIMITS.optionalParameters)
    return `the schema has ${optional} optional parameters, over Anthropic's strict limit of ${LIMITS.optionalParameters}`;
  if (unions > LIMITS.unionParameters) return `the schema has ${unions} union-typed parameters, over Anthropic's strict limit of ${LIMITS.unionParameters}`;
  return undefined;
}

/** The first `$ref` that leads back to a schema it is inside of (`/properties/next refers to "#"`), or undefined. */
function recursion(root: JsonSchema): string | undefined {
  const resolve = (ref: string): unknown => {
    if (ref === "#") return root;
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
    return match && isPlainObject(root[match[1]]) ? (root[match[1]] as Record<string, unknown>)[match[2].replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
  };
  const inside = new Set<unknown>();
  const done = new Set<unknown>();
  const walk = (node: unknown, path: string): string | undefined => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) {
        const found = walk(item, `${path}/${i}`);
        if (found) return found;
      }
      return undefined;
    }
    if (!isPlainObject(node) || done.has(node)) return undefined;
    if (inside.has(node)) return path;
    inside.add(node);
    try {
      if (typeof node.$ref === "string") {
        const target = resolve(node.$ref);
        if (target !== undefined && inside.has(target)) return `${path || "/"} refers to ${JSON.stringify(node.$ref)}`;
        const found = walk(target, path);
        if (found) return found;
      }
      for (const [key, value] of Object.entries(node)) {
        if (
          key === "$defs" ||
          key === "definitions" ||
          key === "$ref" ||
          key === "enum" ||
          key === "const" ||
          key === "required" ||
          key === "default" ||
          key === "examples"
        )
          continue;
        const found = walk(value, `${path}/${key}`);
        if (found) return found;
      }
      return undefined;
    } finally {
      inside.delete(node);
      done.add(node);
    }
  };
  return walk(root, "");
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
