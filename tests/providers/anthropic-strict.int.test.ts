/**
 * Anthropic's strict tool use through the real ChatAnthropic against a scripted Messages API server: the forced tool
 * goes with `strict: true` and the strict form of the spec's schema in Anthropic's dialect (objects closed, optional
 * properties still optional, a root that is not an object wrapped in {"value": …}, a root $ref resolved, a map as its
 * entries), and the answer is mapped back before it is judged whole against the spec; the preflight checks the
 * documented limits before the call (optional parameters, union-typed parameters, recursion, strict tools per request)
 * and sends the tool without strict, saying why, instead of learning it from a 400. output_config.format (json_schema)
 * sends the same strict form, marked strict; past a limit it is not sent at all: the next mode is asked instead.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readEnvironment, type Environment } from "../../src/environment.js";
import { loadChatModel, type ModelRequest } from "../../src/models.js";
import { strictProblem } from "../../src/providers/anthropic.js";
import { MODEL_PROVIDERS } from "../../src/providers/index.js";
import { strictForm } from "../../src/providers/strict-form.js";
import { defineSpec } from "../../src/specs/spec.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated } from "../../src/validation/stream.js";
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

/** The strict form Anthropic's requests send for a schema (the preflight's subject). */
function anthropicForm(schema: Record<string, unknown>): Record<string, unknown> {
  const form = strictForm(schema, MODEL_PROVIDERS.anthropic.strictDialect!);
  if (!form.strict) throw new Error(`no strict form: ${form.reason}`);
  return form.schema;
}

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
  it("auto sends the forced tool with strict: true and the strict form in Anthropic's dialect; the answer is judged against the whole spec", async () => {
    const env = await script([{ toolUse: { input: VALID } }]);
    const out = await graphWith(env).invoke(REQUEST, { context: { model: MODEL } });
    expect(out).toMatchObject({ success: true, attempts: 1, value: SPEC.example });
    const [tool] = server!.requests[0].body.tools;
    expect(tool.strict).toBe(true);
    expect(tool.input_schema).toEqual(anthropicForm(SPEC.schema));
    expect(tool.input_schema.additionalProperties).toBe(false);
    expect(tool.input_schema.required).toEqual(SPEC.schema.required);
    expect(tool.input_schema.properties.replicas).toEqual({ type: "integer" });
    expect(out.history[0]).toMatchObject({ mode: "tool", strict: true });
    expect(out.history[0].schemaDropped).toEqual(expect.arrayContaining(["/properties/replicas: minimum"]));
    expect(out.history[0].notStrict).toBeUndefined();
    // The spec's own shape: nothing to map back.
    expect(out.history[0].mappedBack).toBeUndefined();
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
    const sent = anthropicForm(optionals(1));
    expect(strictProblem(sent, 20)).toBeUndefined();
    expect(strictProblem(sent, 21)).toBe("the request has 21 strict tools, over Anthropic's strict limit of 20");
  });

  it("the limits are counted on the strict form sent: a map's entries add no optional parameter, recursion only where a $ref is sent", () => {
    // 24 optional parameters and a map: its entries' key and value are required.
    const mapped = { ...optionals(24), properties: { ...optionals(24).properties, labels: { type: "object", additionalProperties: { type: "string" } } } };
    expect(strictProblem(anthropicForm({ ...mapped, required: ["id", "labels"] }))).toBeUndefined();
    // A $ref back to the root inside `not` is left out of the strict form, so nothing recursive is sent.
    const unsent = { type: "object", properties: { name: { type: "string" } }, required: ["name"], not: { properties: { name: { $ref: "#" } } } };
    expect(strictProblem(anthropicForm(unsent))).toBeUndefined();
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

describe("what strict mode cannot take as written, through ChatAnthropic: a root that is not an object, a root $ref, a map", () => {
  /** A list of names: the root is an array, which a tool's input cannot be. */
  const NAMES = { type: "array", items: { type: "string", minLength: 1 }, minItems: 1 };
  const namesSpec = () => defineSpec({ name: "names", description: "Names", schema: NAMES });
  const WRAPPED_NAMES = {
    type: "object",
    properties: { value: { type: "array", items: { type: "string" }, minItems: 1 } },
    required: ["value"],
    additionalProperties: false,
  };

  it("a root that is not an object is asked for as {value: …}; the input is unwrapped, and that value is judged, kept and returned", async () => {
    const env = await script([{ toolUse: { input: '{"value": ["Ada", "Grace"]}' } }]);
    const out = await graphWith(env, namesSpec()).invoke(REQUEST, { context: { model: MODEL } });
    const [tool] = server!.requests[0].body.tools;
    expect(tool).toMatchObject({ strict: true, input_schema: WRAPPED_NAMES });
    expect(out).toMatchObject({ success: true, attempts: 1, value: ["Ada", "Grace"] });
    expect(out.history[0]).toMatchObject({ mode: "tool", strict: true, valid: true, mappedBack: ['the answer unwrapped from {"value": …}'] });
    expect(out.history[0].schemaDropped).toEqual(["/items: minLength"]);
    // What the model wrote is recorded as it came; what was judged is the unwrapped value.
    expect(JSON.parse(out.history[0].output)).toEqual({ value: ["Ada", "Grace"] });
  });

  it("the unwrapped value is judged against the real spec: what the strict form left out still refuses it", async () => {
    const env = await script([{ toolUse: { input: '{"value": [""]}' } }, { toolUse: { input: '{"value": ["Ada"]}' } }]);
    const out = await graphWith(env, namesSpec()).invoke(REQUEST, { context: { model: MODEL } });
    expect(out.history[0]).toMatchObject({ valid: false, strict: true, mappedBack: ['the answer unwrapped from {"value": …}'] });
    expect(out.history[0].errors).toEqual([expect.stringMatching(/^\[0\] /)]);
    expect(out).toMatchObject({ success: true, attempts: 2, value: ["Ada"] });
  });

  it("a wrapper with other fields, or without its field, is refused, never judged as it came", async () => {
    const env = await script([
      { toolUse: { input: '{"value": ["Ada"], "extra": 1}' } },
      { toolUse: { input: '{"names": ["Ada"]}' } },
      { toolUse: { input: '{"value": ["Ada"]}' } },
    ]);
    const out = await graphWith(env, namesSpec()).invoke(REQUEST, { context: { model: MODEL, maxAttempts: 3 } });
    expect(out.history[0]).toMatchObject({ valid: false, strict: true });
    expect(out.history[0].errors).toEqual([
      'The answer was asked for as {"value": …}, one object whose only field "value" holds the value, and it has other fields beside it ("extra").',
    ]);
    expect(out.history[1].errors).toEqual([
      'The answer was asked for as {"value": …}, one object whose only field "value" holds the value, and it has no field "value".',
    ]);
    expect(out).toMatchObject({ success: true, attempts: 3, value: ["Ada"] });
  });

  it("a root that only refers to a definition is that definition, with its $defs kept; the input is the spec's own shape", async () => {
    const schema = {
      $ref: "#/$defs/Person",
      $defs: {
        Person: {
          type: "object",
          properties: { name: { type: "string" }, email: { type: "string", format: "email" }, tags: { $ref: "#/$defs/Tags" } },
          required: ["name"],
        },
        Tags: { type: "array", items: { type: "string" }, uniqueItems: true },
      },
    };
    const answer = { name: "Ada", tags: ["math"] };
    const env = await script([{ toolUse: { input: JSON.stringify(answer) } }]);
    const out = await graphWith(env, defineSpec({ name: "person", description: "A person", schema })).invoke(REQUEST, { context: { model: MODEL } });
    const [tool] = server!.requests[0].body.tools;
    expect(tool.strict).toBe(true);
    expect(tool.input_schema).toEqual({
      type: "object",
      properties: { name: { type: "string" }, email: { type: "string", format: "email" }, tags: { $ref: "#/$defs/Tags" } },
      required: ["name"],
      additionalProperties: false,
      $defs: {
        Person: {
          type: "object",
          properties: { name: { type: "string" }, email: { type: "string", format: "email" }, tags: { $ref: "#/$defs/Tags" } },
          required: ["name"],
          additionalProperties: false,
        },
        Tags: { type: "array", items: { type: "string" } },
      },
    });
    expect(out).toMatchObject({ success: true, attempts: 1, value: answer });
    expect(out.history[0]).toMatchObject({ strict: true, schemaDropped: ["/$defs/Tags: uniqueItems"] });
    expect(out.history[0].mappedBack).toBeUndefined();
  });

  /** A map of labels (string to string), at least one, and an optional map of counters. */
  const LABELLED = {
    type: "object",
    properties: {
      name: { type: "string" },
      labels: { type: "object", additionalProperties: { type: "string" }, minProperties: 1 },
      counters: { type: "object", additionalProperties: { type: "integer" } },
    },
    required: ["name", "labels"],
  };
  const labelledSpec = () => defineSpec({ name: "labelled", description: "Labelled", schema: LABELLED });
  const entriesOf = (value: unknown, bounds: Record<string, unknown> = {}) => ({
    type: "array",
    items: { type: "object", properties: { key: { type: "string" }, value }, required: ["key", "value"], additionalProperties: false },
    ...bounds,
  });

  it("a map is asked for as an array of entries and read back as the object: that object is judged, kept and returned", async () => {
    const input = {
      name: "api",
      labels: [
        { key: "team", value: "core" },
        { key: "tier", value: "1" },
      ],
    };
    const env = await script([{ toolUse: { input: JSON.stringify(input) } }]);
    const out = await graphWith(env, labelledSpec()).invoke(REQUEST, { context: { model: MODEL } });
    const [tool] = server!.requests[0].body.tools;
    expect(tool.strict).toBe(true);
    // minProperties 1 becomes minItems 1, which Anthropic takes; the optional map stays optional.
    expect(tool.input_schema).toEqual({
      type: "object",
      properties: { name: { type: "string" }, labels: entriesOf({ type: "string" }, { minItems: 1 }), counters: entriesOf({ type: "integer" }) },
      required: ["name", "labels"],
      additionalProperties: false,
    });
    expect(out).toMatchObject({ success: true, attempts: 1, value: { name: "api", labels: { team: "core", tier: "1" } } });
    expect(out.history[0]).toMatchObject({ strict: true, valid: true, mappedBack: ["/labels: entries [ … ] read as an object"] });
  });

  it("a map's bound Anthropic does not take is left out and listed; a key written twice is refused, never merged", async () => {
    const schema = {
      type: "object",
      properties: { labels: { type: "object", additionalProperties: { type: "string" }, minProperties: 2 } },
      required: ["labels"],
    };
    const env = await script([
      { toolUse: { input: '{"labels": [{"key": "team", "value": "core"}, {"key": "team", "value": "edge"}]}' } },
      { toolUse: { input: '{"labels": [{"key": "team", "value": "core"}]}' } },
      { toolUse: { input: '{"labels": [{"key": "team", "value": "core"}, {"key": "tier", "value": "1"}]}' } },
    ]);
    const out = await graphWith(env, defineSpec({ name: "labels", description: "Labels", schema })).invoke(REQUEST, {
      context: { model: MODEL, maxAttempts: 3 },
    });
    expect(server!.requests[0].body.tools[0].input_schema.properties.labels).toEqual(entriesOf({ type: "string" }));
    expect(out.history[0].schemaDropped).toEqual(["/properties/labels: minProperties"]);
    expect(out.history[0].errors).toEqual(['The answer names the key "team" twice among the entries of labels; each key may appear only once.']);
    // Read back as {"team": "core"}, the map the real spec judges: minProperties refuses it.
    expect(out.history[1]).toMatchObject({ valid: false, mappedBack: ["/labels: entries [ … ] read as an object"] });
    expect(out.history[1].errors).toEqual([expect.stringMatching(/^labels /)]);
    expect(out).toMatchObject({ success: true, attempts: 3, value: { labels: { team: "core", tier: "1" } } });
  });

  it("json_schema sends the same strict form as output_config.format, recorded strict, and its answer is mapped back the same way", async () => {
    const env = await script([{ text: '{"value": ["Ada"]}' }]);
    const out = await graphWith(env, namesSpec()).invoke(REQUEST, { context: { model: MODEL, outputMode: "json_schema" } });
    expect(server!.requests[0].body.output_config.format).toEqual({ type: "json_schema", schema: WRAPPED_NAMES });
    expect(server!.requests[0].body.tools).toBeUndefined();
    expect(out).toMatchObject({ success: true, attempts: 1, value: ["Ada"] });
    expect(out.history[0]).toMatchObject({ mode: "json_schema", strict: true, mappedBack: ['the answer unwrapped from {"value": …}'] });
    expect(out.history[0].notStrict).toBeUndefined();
  });

  it("output_config.format refused as a strict schema is not asked again (it has no form without strict): the next mode is", async () => {
    const error = { type: "error", error: { type: "invalid_request_error", message: "output_config.format.schema: invalid schema for strict decoding" } };
    const env = await script([{ status: 400, body: error }, { text: '["Ada"]' }]);
    const out = await graphWith(env, namesSpec()).invoke(REQUEST, { context: { model: MODEL, outputMode: "json_schema" } });
    expect(server!.requests).toHaveLength(2);
    expect(server!.requests[1].body.output_config).toBeUndefined();
    expect(out.history[0].fallbacks).toEqual([
      expect.stringMatching(/^json_schema with strict: true refused \(.*invalid schema for strict decoding[^]*\); asked again without strict$/),
      expect.stringMatching(
        /^json_schema not sent: Anthropic's structured output has no form without strict, and it refused the strict one \(.*\); fell back to json_object$/,
      ),
      "json_object: anthropic has no such mode; fell back to text",
    ]);
    expect(out).toMatchObject({ success: true, attempts: 1, value: ["Ada"] });
    expect(out.history[0]).toMatchObject({ mode: "text" });
    expect(out.history[0].strict).toBeUndefined();
    expect(out.history[0].mappedBack).toBeUndefined();
  });

  it("streamed, a wrapped answer in entries is mapped back, then judged; the tool says it reshapes, so no partial check stops it", async () => {
    // A map of lists at the root: asked for as {"value": [entries]}.
    const schema = { type: "object", additionalProperties: { type: "array", items: { type: "integer" } } };
    const spec = defineSpec({ name: "lists", description: "Lists", schema });
    expect(MODEL_PROVIDERS.anthropic.tool!({ name: "lists_output", description: "", schema: spec.schema })).toMatchObject({ strict: true, reshaped: true });
    expect(MODEL_PROVIDERS.anthropic.tool!({ name: "d", description: "", schema: SPEC.schema }).reshaped).toBe(false);
    const entries = Array.from({ length: 8 }, (_, i) => ({ key: `k${i}`, value: [i, i + 1] }));
    const env = await script([{ toolUse: { input: JSON.stringify({ value: entries }) } }]);
    const stream = streamValidated({
      model: (request) => loadChatModel(request, env),
      modelName: MODEL,
      spec,
      request: "lists",
      outputMode: "auto",
      stopEarly: "first-error",
    });
    let next = await stream.next();
    while (!next.done) next = await stream.next();
    expect(server!.requests.map((r) => r.body.stream)).toEqual([true]);
    expect(next.value).toMatchObject({ success: true, attempts: 1, value: Object.fromEntries(entries.map((e) => [e.key, e.value])) });
    expect(next.value.history[0]).toMatchObject({ strict: true, mappedBack: ['the answer unwrapped from {"value": …}', "/: entries [ … ] read as an object"] });
    expect(next.value.history[0].stopped).toBeUndefined();
  });

  it("a construct the strict form cannot carry goes without strict, saying why: a map that may also be an array", async () => {
    const schema = { type: "object", properties: { m: { type: ["object", "array"] } }, required: ["m"] };
    const env = await script([{ toolUse: { input: '{"m": {"a": 1}}' } }]);
    const out = await graphWith(env, defineSpec({ name: "either", description: "Either", schema })).invoke(REQUEST, { context: { model: MODEL } });
    expect(server!.requests[0].body.tools[0].strict).toBeUndefined();
    expect(server!.requests[0].body.tools[0].input_schema).toEqual(schema);
    expect(out.history[0].notStrict).toBe("/properties/m may be a map or an array, which strict mode's array of entries could not tell apart");
    expect(out).toMatchObject({ success: true, attempts: 1, value: { m: { a: 1 } } });
    expect(out.history[0].mappedBack).toBeUndefined();
  });
});
