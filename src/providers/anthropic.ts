/**
 * Anthropic's Messages API through @langchain/anthropic: one row of the providers' table (./index.ts).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { fetchWithDeadline } from "./deadline.js";
import type { JsonSchema } from "../specs/spec.js";
import { sendable, type ProviderRow, type SchemaRequest, type ToolRequest } from "./provider.js";
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
    // No JSON mode; its structured output takes (a subset of) the schema as `output_config.format`.
    json_schema: (request) => {
      const taken = schemaSubset(sendable(request.schema), PROFILE);
      // Held to the schema like a strict tool, so checked by the same preflight: past a limit it is not sent at all.
      const problem = strictProblem(sendable(request.schema), taken.schema);
      if (problem !== undefined) return { options: {}, preflight: problem };
      return { options: { outputFormat: { type: "json_schema", schema: taken.schema } }, dropped: taken.dropped };
    },
  },
  tool: strictTool,
  profile: PROFILE,
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
 * The forced tool with `strict: true` (Anthropic's strict tool use): the spec's schema in Anthropic's subset, every
 * object closed, when the preflight finds it within the documented limits; else the spec's schema as it is, without
 * strict, saying why. Closing an object only narrows what the model may write, and the answer is judged whole
 * against the spec as it came (no mapping back): optional properties stay optional, so no null is introduced.
 */
function strictTool(request: SchemaRequest, strictRefused?: string): ToolRequest {
  const parameters = sendable(request.schema);
  if (strictRefused !== undefined) return { parameters, notStrict: `the provider refused the strict tool (${strictRefused})` };
  const taken = schemaSubset(parameters, PROFILE);
  const problem = strictProblem(parameters, taken.schema);
  if (problem !== undefined) return { parameters, notStrict: problem };
  return { parameters: taken.schema, strict: true, ...(taken.dropped.length > 0 ? { dropped: taken.dropped } : {}) };
}

/**
 * Why Anthropic's strict mode would refuse (or could not hold) a schema, checked before the call: a root that is not an
 * object (a tool's input is one), recursion (not supported), an object with no properties of its own (closed, it would
 * admit only `{}`), or a documented limit passed (optional parameters, union-typed parameters, strict tools per request).
 * `sent` is the schema in Anthropic's subset; `tools` the strict tools in the request.
 */
export function strictProblem(spec: JsonSchema, sent: JsonSchema, tools = 1): string | undefined {
  if (tools > LIMITS.strictTools) return `the request has ${tools} strict tools, over Anthropic's strict limit of ${LIMITS.strictTools}`;
  if (!isObjectSchema(sent) || sent.anyOf !== undefined) return "the schema's root is not an object, which a strict tool's input must be";
  const cycle = recursion(spec);
  if (cycle !== undefined) return `${cycle}: Anthropic's strict mode does not take recursive schemas`;
  let optional = 0;
  let unions = 0;
  let open: string | undefined;
  const visit = (node: unknown, path: string, isParameter: boolean): void => {
    if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${path}/${i}`, false));
    if (!isPlainObject(node)) return;
    if (isParameter && (Array.isArray(node.anyOf) || (Array.isArray(node.type) && node.type.length > 1))) unions++;
    const properties = isPlainObject(node.properties) ? node.properties : undefined;
    if (isObjectSchema(node) && (properties === undefined || Object.keys(properties).length === 0)) open ??= path || "/";
    if (properties !== undefined) {
      const required = new Set(Array.isArray(node.required) ? node.required : []);
      for (const [name, sub] of Object.entries(properties)) {
        if (!required.has(name)) optional++;
        visit(sub, `${path}/properties/${name}`, true);
      }
    }
    for (const key of ["$defs", "definitions"])
      if (isPlainObject(node[key])) for (const [name, def] of Object.entries(node[key])) visit(def, `${path}/${key}/${name}`, false);
    visit(node.items, `${path}/items`, false);
    visit(node.anyOf, `${path}/anyOf`, false);
    visit(node.allOf, `${path}/allOf`, false);
  };
  visit(sent, "", false);
  if (open !== undefined) return `${open} is an object with no properties of its own, which a strict tool's closed objects would leave empty`;
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

function isObjectSchema(s: unknown): boolean {
  return isPlainObject(s) && (s.type === "object" || isPlainObject(s.properties));
}
