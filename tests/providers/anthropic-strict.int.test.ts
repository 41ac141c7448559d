/**
 * Anthropic's strict tool use through the real ChatAnthropic against a scripted Messages API server: the forced tool
 * goes with `strict: true` and the spec's schema in Anthropic's subset (objects closed); the preflight checks the
 * documented limits before the call (optional parameters, union-typed parameters, recursion, strict tools per request)
 * and sends the tool without strict, saying why, instead of learning it from a 400. Past a limit, output_config.format
 * (json_schema) is not sent at all: the next mode is asked instead.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readEnvironment, type Environment } from "../../src/environment.js";
import { loadChatModel, type ModelRequest } from "../../src/models.js";
import { strictProblem } from "../../src/providers/anthropic.js";
import { MODEL_PROVIDERS } from "../../src/providers/index.js";
import { schemaSubset } from "../../src/providers/schema-subset.js";
import { defineSpec } from "../../src/specs/spec.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { startScriptedAnthropicServer, type ProviderReply, type ScriptedProviderServer } from "../../testkit/provider-servers.js";

const MODEL = "anthropic/claude-sonnet-4-5";
const SPEC = builtinSpecs.get("deployment-config")!;
const VALID = JSON.stringify(SPEC.example);
const REQUEST = { request: "A deployment config for payments-api with 8 replicas" };

let server: ScriptedProviderServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function script(replies: ProviderReply[]): Promise<Environment> {
  server = await startScriptedAnthropicServer(replies);
  return { ...readEnvironment({}), providers: { anthropic: { apiKey: "sk-ant-test", baseUrl: server.baseURL } }, maxRetries: 0 };
}

const graphWith = (env: Environment, spec?: unknown) =>
  buildValidationGraph({ model: (request: ModelRequest) => loadChatModel(request, env), ...(spec ? { spec: spec as never } : {}) });

/** An object of `n` optional string properties (and one required one). */
const optionals = (n: number) => ({
  type: "object",
  properties: { id: { type: "string" }, ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, { type: "string" }])) },
  required: ["id"],
});
/** An object of `n` required properties, each of a union type. */
const unions = (n: number) => ({
  type: "object",
  properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`u${i}`, { type: ["string", "integer"] }])),
  required: Array.from({ length: n }, (_, i) => `u${i}`),
});
const recursive = {
  type: "object",
  properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
  required: ["name", "children"],
};

describe("the strict tool, through ChatAnthropic", () => {
  it("auto sends the forced tool with strict: true and the schema in Anthropic's subset; the answer is judged against the whole spec", async () => {
    const env = await script([{ toolUse: { input: VALID } }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: MODEL } });
    expect(out).toMatchObject({ success: true, attempts: 1 });
    const [tool] = server!.requests[0].body.tools;
    expect(tool.strict).toBe(true);
    expect(tool.input_schema).toEqual(schemaSubset(SPEC.schema, MODEL_PROVIDERS.anthropic.profile!).schema);
    expect(tool.input_schema.additionalProperties).toBe(false);
    expect(tool.input_schema.properties.replicas).toEqual({ type: "integer" });
    expect(out.history[0]).toMatchObject({ mode: "tool", strict: true });
    expect(out.history[0].schemaDropped).toEqual(expect.arrayContaining(["/properties/replicas: minimum"]));
    expect(out.history[0].notStrict).toBeUndefined();
  });

  it("an answer the strict tool let through but the spec refuses is still invalid: the whole spec judges it", async () => {
    const env = await script([{ toolUse: { input: JSON.stringify({ ...(SPEC.example as object), replicas: 900 }) } }, { toolUse: { input: VALID } }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: MODEL } });
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history[0].valid).toBe(false);
    expect(out.history[0].strict).toBe(true);
  });

  it("a strict tool the provider refuses (400) is asked again without strict in the same attempt, and the record says so", async () => {
    const error = { type: "error", error: { type: "invalid_request_error", message: "tools.0.strict: the compiled grammar is too large" } };
    const env = await script([{ status: 400, body: error }, { toolUse: { input: VALID } }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: MODEL } });
    expect(out).toMatchObject({ success: true, attempts: 1 });
    expect(server!.requests[0].body.tools[0].strict).toBe(true);
    expect(server!.requests[1].body.tools[0].strict).toBeUndefined();
    expect(server!.requests[1].body.tools[0].input_schema).toEqual(expect.objectContaining({ properties: SPEC.schema.properties }));
    expect(out.history[0].fallbacks).toEqual([
      expect.stringMatching(/^tool with strict: true refused \(.*grammar is too large[^]*\); asked again without strict$/),
    ]);
    expect(out.history[0].notStrict).toMatch(/^the provider refused the strict tool/);
  });
});

describe("the preflight: each documented limit checked before the call", () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, RegExp]> = [
    ["optional parameters (24)", optionals(24), optionals(25), /^the schema has 25 optional parameters, over Anthropic's strict limit of 24$/],
    ["union-typed parameters (16)", unions(16), unions(17), /^the schema has 17 union-typed parameters, over Anthropic's strict limit of 16$/],
    [
      "recursion (none)",
      { ...recursive, properties: { name: { type: "string" } }, required: ["name"] },
      recursive,
      /^\/properties\/children\/items refers to "#": Anthropic's strict mode does not take recursive schemas$/,
    ],
  ];

  it.each(cases)("%s: within it strict, past it the tool is sent without strict, saying why, and no 400 is spent", async (_what, within, past, why) => {
    const answer = (schema: Record<string, unknown>) =>
      JSON.stringify(Object.fromEntries((schema.required as string[]).map((k) => [k, k === "children" ? [] : k.startsWith("u") ? 1 : "x"])));
    const env = await script([{ toolUse: { input: answer(within) } }, { toolUse: { input: answer(past) } }]);
    const ok = await graphWith(env, defineSpec({ name: "within", description: "within the limit", schema: within })).invoke(REQUEST, {
      context: { model: MODEL },
    });
    expect(server!.requests[0].body.tools[0].strict).toBe(true);
    expect(ok.history[0].strict).toBe(true);
    const over = await graphWith(env, defineSpec({ name: "past", description: "past the limit", schema: past })).invoke(REQUEST, { context: { model: MODEL } });
    expect(server!.requests).toHaveLength(2);
    expect(server!.requests[1].body.tools[0].strict).toBeUndefined();
    expect(server!.requests[1].body.tools[0].input_schema).toEqual(past);
    expect(over.history[0].strict).toBeUndefined();
    expect(over.history[0].notStrict).toMatch(why);
    expect(over.history[0].fallbacks).toBeUndefined();
    expect(over).toMatchObject({ success: true, attempts: 1 });
  });

  it("strict tools per request (20): the count is checked with the schema", () => {
    const schema = optionals(1);
    const sent = schemaSubset(schema, MODEL_PROVIDERS.anthropic.profile!).schema;
    expect(strictProblem(schema, sent, 20)).toBeUndefined();
    expect(strictProblem(schema, sent, 21)).toBe("the request has 21 strict tools, over Anthropic's strict limit of 20");
  });

  it("an object with no properties of its own (a map) is not sent strict: closed, it would admit only {}", () => {
    const schema = { type: "object", properties: { labels: { type: "object", additionalProperties: { type: "string" } } }, required: ["labels"] };
    const sent = schemaSubset(schema, MODEL_PROVIDERS.anthropic.profile!).schema;
    expect(strictProblem(schema, sent)).toBe(
      "/properties/labels is an object with no properties of its own, which a strict tool's closed objects would leave empty",
    );
  });

  it("each limit is in the providers' table with its source", () => {
    const limits = MODEL_PROVIDERS.anthropic.strictLimits as Record<string, { value: number; source: string }>;
    expect(Object.fromEntries(Object.entries(limits).map(([k, v]) => [k, v.value]))).toEqual({ strictTools: 20, optionalParameters: 24, unionParameters: 16 });
    for (const limit of Object.values(limits)) expect(limit.source).toMatch(/structured-outputs/);
  });

  it("json_schema (output_config.format) past a limit is not sent at all: the next mode is asked, and the record says why", async () => {
    const env = await script([{ text: JSON.stringify({ id: "x" }) }]);
    const out = await graphWith(env, defineSpec({ name: "past", description: "past the limit", schema: optionals(25) })).invoke(REQUEST, {
      context: { model: MODEL, outputMode: "json_schema" },
    });
    expect(server!.requests).toHaveLength(1);
    expect(server!.requests[0].body.output_config).toBeUndefined();
    expect(out.history[0].mode).toBe("text");
    expect(out.history[0].fallbacks).toEqual([
      "json_schema not sent: the schema has 25 optional parameters, over Anthropic's strict limit of 24; fell back to json_object",
      "json_object: anthropic has no such mode; fell back to text",
    ]);
  });
});
