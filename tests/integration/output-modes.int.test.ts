/**
 * Provider-native structured output through the real ChatOpenAI: the exact request each output mode
 * sends, each mode's reply read (JSON body, tool-call arguments, SSE), the validator judging every
 * answer, and the fallback when a provider refuses a mode.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel } from "../../src/models.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { defineSpec } from "../../src/specs/spec.js";
import { generateValidated } from "../../src/validation/generate.js";
import { MODEL_PROVIDERS } from "../../src/providers/index.js";
import { strictForm } from "../../src/providers/strict-form.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const SPEC = builtinSpecs.get("deployment-config")!;
const VALID = JSON.stringify(SPEC.example);
const BROKEN = JSON.stringify({ ...(SPEC.example as object), replicas: 8 });
const REQUEST = { request: "A deployment config for payments-api with 8 replicas" };

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedOpenAIServer();
});
afterAll(async () => {
  await server?.close();
});
let seen = 0;
beforeEach(() => {
  seen = server.requests.length;
});
const sent = () => server.requests.slice(seen).map((r) => r.body);

function graph() {
  const env = { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
  return buildValidationGraph({ model: (request) => createChatModel(request, env) });
}

/** The real ChatOpenAI against the scripted server. */
function openaiModel() {
  return createChatModel(
    { model: "gpt-4o-mini", role: "generate" },
    { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0 },
  );
}

describe("output modes through ChatOpenAI", () => {
  it("tool: arguments nested 100,000 deep get the reader's bounded message as feedback, not a crash", async () => {
    const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
    server.setReplies([
      { content: null, toolCalls: [{ name: "deployment-config_output", arguments: deep }] },
      { content: null, toolCalls: [{ name: "deployment-config_output", arguments: VALID }] },
    ]);
    const out = await graph().invoke(REQUEST, { context: { outputMode: "tool" } });
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history[0].errors).toEqual(["The JSON nests deeper than 64 levels; the expected object is shallow."]);
    expect(out.history[0].output.length).toBeLessThan(25_000);
  });

  it("text: no response_format and no tools; the prompt asks for JSON", async () => {
    server.setReplies([VALID]);
    const out = await graph().invoke(REQUEST, { context: { outputMode: "text" } });
    expect(out.success).toBe(true);
    const [body] = sent();
    expect(body.response_format).toBeUndefined();
    expect(body.tools).toBeUndefined();
    expect(out.history[0].mode).toBe("text");
  });

  it("json_object: response_format json_object; the validator still judges (a business rule the mode cannot express)", async () => {
    server.setReplies([BROKEN, VALID]);
    const out = await graph().invoke(REQUEST, { context: { outputMode: "json_object" } });
    expect(sent().map((b) => b.response_format)).toEqual([{ type: "json_object" }, { type: "json_object" }]);
    expect(out.history[0].errors).toEqual([RULES.replicasNeedCpu(0.5, 8)]);
    expect(out).toMatchObject({ success: true, attempts: 2 });
  });

  it("json_schema: the strict form of the spec's schema, with strict: true", async () => {
    server.setReplies([VALID]);
    const out = await graph().invoke(REQUEST, { context: { outputMode: "json_schema" } });
    expect(out.success).toBe(true);
    const [body] = sent();
    expect(body.response_format.type).toBe("json_schema");
    const form = strictForm(SPEC.schema, MODEL_PROVIDERS.openai.strictDialect!);
    expect(form.strict).toBe(true);
    // deployment-config's patterns and bounds are kept (strict mode takes them); every object is closed.
    expect(body.response_format.json_schema).toEqual({
      name: "deployment-config_output",
      description: SPEC.description.slice(0, 500),
      schema: form.strict && form.schema,
      strict: true,
    });
    expect(body.response_format.json_schema.schema.properties.resources.additionalProperties).toBe(false);
  });

  it("json_schema: an answer with the nulls the strict form introduced is judged and kept as the spec's own value", async () => {
    const spec = defineSpec({
      name: "contact",
      description: "A contact",
      schema: {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" }, nickname: { type: "string" }, phone: { type: ["string", "null"] } },
        additionalProperties: true,
      },
    });
    server.setReplies(['{"name": null, "nickname": null, "phone": null}', '{"name": "Ada", "nickname": null, "phone": null}']);
    const model = openaiModel();
    const outcome = await generateValidated({ model, spec, request: "a contact", outputMode: "json_schema", maxAttempts: 2 });
    const [first] = sent();
    expect(first.response_format.json_schema).toMatchObject({
      strict: true,
      schema: {
        type: "object",
        properties: { name: { type: "string" }, nickname: { anyOf: [{ type: "string" }, { type: "null" }] }, phone: { type: ["string", "null"] } },
        required: ["name", "nickname", "phone"],
        additionalProperties: false,
      },
    });
    expect(outcome.history[0]).toMatchObject({ valid: false, schemaDropped: ["/: additionalProperties"] });
    expect(outcome.history[0].errors).toEqual([expect.stringMatching(/^name /)]);
    expect(outcome).toMatchObject({ success: true, attempts: 2, value: { name: "Ada", phone: null } });
    expect(outcome.history[1].mappedBack).toEqual(["/nickname: null removed (the field left out)"]);
  });

  it("json_schema: a map is asked for as an array of entries on the wire, and the answer's entries judged and kept as the object", async () => {
    const spec = defineSpec({
      name: "headers",
      description: "Request headers",
      schema: {
        type: "object",
        required: ["headers"],
        properties: { headers: { type: "object", additionalProperties: { type: "string" }, minProperties: 1 } },
      },
    });
    server.setReplies([
      '{"headers": []}',
      '{"headers": [{"key": "accept", "value": "json"}, {"key": "__proto__", "value": "x"}]}',
      '{"headers": [{"key": "accept", "value": "json"}]}',
    ]);
    const model = openaiModel();
    const outcome = await generateValidated({ model, spec, request: "headers", outputMode: "json_schema", maxAttempts: 3 });
    const [first] = sent();
    expect(first.response_format.json_schema).toMatchObject({
      strict: true,
      schema: {
        type: "object",
        properties: {
          headers: {
            type: "array",
            items: {
              type: "object",
              properties: { key: { type: "string" }, value: { type: "string" } },
              required: ["key", "value"],
              additionalProperties: false,
            },
            minItems: 1,
          },
        },
        required: ["headers"],
        additionalProperties: false,
      },
    });
    // No entry: the empty object is refused by minProperties; a key named "__proto__": refused in the reader's words.
    expect(outcome.history[0].errors).toEqual([expect.stringMatching(/^headers /)]);
    expect(outcome.history[1].errors).toEqual([expect.stringMatching(/^The JSON cannot be kept as written: headers has a field named "__proto__"/)]);
    expect(outcome).toMatchObject({ success: true, attempts: 3, value: { headers: { accept: "json" } } });
    expect(outcome.history[2].mappedBack).toEqual(["/headers: entries [ … ] read as an object"]);
  });

  it("json_schema: a schema past a documented strict limit (11 levels of objects) is sent with strict: false, the attempt saying why", async () => {
    const nested = (levels: number): Record<string, unknown> =>
      levels === 1
        ? { type: "object", properties: { leaf: { type: "string" } }, required: ["leaf"] }
        : { type: "object", properties: { inner: nested(levels - 1) }, required: ["inner"] };
    const spec = defineSpec({ name: "deep", description: "", schema: nested(11) });
    let answer: unknown = "x";
    for (let i = 0; i < 10; i++) answer = i === 0 ? { leaf: answer } : { inner: answer };
    server.setReplies([JSON.stringify(answer)]);
    const model = openaiModel();
    const outcome = await generateValidated({ model, spec, request: "deep", outputMode: "json_schema", maxAttempts: 1 });
    const [body] = sent();
    expect(body.response_format.json_schema).toMatchObject({ strict: false, schema: spec.schema });
    expect(outcome.history[0].notStrict).toBe("the schema nests objects 11 levels deep, over OpenAI's strict limit of 10");
  });

  it("tool: a forced call of one function whose parameters are the spec's schema; the arguments are the answer", async () => {
    server.setReplies([
      { content: null, toolCalls: [{ name: "deployment-config_output", arguments: BROKEN }] },
      { content: null, toolCalls: [{ name: "deployment-config_output", arguments: VALID }] },
    ]);
    const out = await graph().invoke(REQUEST, { context: { outputMode: "tool" } });
    const [body] = sent();
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0].function).toMatchObject({ name: "deployment-config_output", parameters: SPEC.schema });
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "deployment-config_output" } });
    expect(out).toMatchObject({ success: true, attempts: 2, value: JSON.parse(VALID) });
    expect(out.history[0].errors[0]).toContain(RULES.replicasNeedCpu(0.5, 8));
  });

  it("tool arguments that are not JSON are fed back with the parser's exact error", async () => {
    server.setReplies([
      { content: null, toolCalls: [{ name: "deployment-config_output", arguments: '{"service_name": "x", ' }] },
      { content: null, toolCalls: [{ name: "deployment-config_output", arguments: VALID }] },
    ]);
    const out = await graph().invoke(REQUEST, { context: { outputMode: "tool" } });
    expect(out.success).toBe(true);
    expect(out.history[0].errors[0]).toMatch(/truncated|JSON/i);
  });

  it("SSE: json_schema and tool replies streamed as chunks are read the same way", async () => {
    for (const [mode, reply] of [
      ["json_schema", VALID],
      ["tool", { content: null, toolCalls: [{ name: "deployment-config_output", arguments: VALID }] }],
    ] as const) {
      server.setReplies([reply as never]);
      let final: Record<string, any> = {};
      for await (const [kind, chunk] of await graph().stream(REQUEST, { context: { outputMode: mode }, streamMode: ["messages", "values"] })) {
        if (kind === "values") final = chunk as Record<string, any>;
      }
      expect(server.requests.at(-1)!.stream).toBe(true);
      expect(final).toMatchObject({ success: true, value: JSON.parse(VALID) });
    }
  });

  it("a provider that refuses a mode: the attempt falls back (json_schema → json_object), the run records it and keeps the mode that worked", async () => {
    server.setReplies([
      {
        fault: "status",
        status: 400,
        body: {
          error: {
            message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            type: "invalid_request_error",
            code: null,
          },
        },
      },
      BROKEN,
      VALID,
    ]);
    const out = await graph().invoke(REQUEST, { context: { outputMode: "json_schema", maxAttempts: 3 } });
    expect(sent().map((b) => b.response_format?.type)).toEqual(["json_schema", "json_object", "json_object"]);
    expect(out).toMatchObject({ success: true, attempts: 2 });
    expect(out.history[0]).toMatchObject({ mode: "json_object" });
    expect(out.history[0].fallbacks![0]).toMatch(/^json_schema refused .*not supported.*; fell back to json_object$/);
    expect(out.history[1].fallbacks).toBeUndefined();
  });

  it("json_schema: a strict form the provider refuses is asked again without strict (the spec's schema) before any other mode", async () => {
    server.setReplies([
      {
        fault: "status",
        status: 400,
        body: {
          error: {
            message: "Invalid schema for response_format 'deployment-config_output': 'pattern' is not permitted.",
            type: "invalid_request_error",
            code: null,
          },
        },
      },
      VALID,
    ]);
    const out = await graph().invoke(REQUEST, { context: { outputMode: "json_schema" } });
    const [first, second] = sent();
    expect(first.response_format.json_schema.strict).toBe(true);
    expect(second.response_format.json_schema).toMatchObject({ strict: false, schema: SPEC.schema });
    expect(out).toMatchObject({ success: true, attempts: 1 });
    expect(out.history[0]).toMatchObject({
      mode: "json_schema",
      notStrict: expect.stringMatching(/^the provider refused the strict form \(.*'pattern' is not permitted/),
    });
    expect(out.history[0].fallbacks).toEqual([expect.stringMatching(/^json_schema with strict: true refused \(.*\); asked again without strict$/)]);
  });

  it("a mode setting that does not exist is refused before any model call", async () => {
    await expect(graph().invoke(REQUEST, { context: { outputMode: "xml" } })).rejects.toThrow(/outputMode must be one of/);
  });
});
