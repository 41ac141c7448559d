/**
 * What LangGraph Studio gets to build its forms from: the schemas the dev
 * server (`langgraphjs dev`) serves through the SDK's
 * `assistants.getSchemas`. Every field has a title; `spec` offers the
 * built-in names and still takes an inline spec; a field with a default is
 * not required. The served context schema is then checked against what runs
 * accept: what it allows runs, what it refuses is refused.
 *
 * Registered by server.int.test.ts against its dev server (auth off), so the
 * suite starts one server for both.
 */
import type { Client } from "@langchain/langgraph-sdk";
import { Ajv2020 } from "ajv/dist/2020.js";
import { beforeAll, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";

const TEST_TIMEOUT = 120_000;

type JsonSchema = {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

const WINDOW = {
  name: "time-window",
  description: "A window.",
  schema: { type: "object", required: ["start", "end"], properties: { start: { type: "integer" }, end: { type: "integer" } } },
};

/** Property paths under `schema` (nested objects and list items included) that have no title. */
function untitled(schema: JsonSchema, path = ""): string[] {
  const out: string[] = [];
  for (const [key, field] of Object.entries(schema.properties ?? {})) {
    const here = path ? `${path}.${key}` : key;
    if (typeof field.title !== "string" || field.title.length === 0) out.push(here);
    out.push(...untitled(field, here));
    if (field.items) out.push(...untitled(field.items, `${here}[]`));
  }
  return out;
}

/** Fields that have a default but are listed as required. */
function requiredWithDefault(schema: JsonSchema): string[] {
  return (schema.required ?? []).filter((key) => schema.properties?.[key]?.default !== undefined);
}

/** The Studio-schema tests, run against the dev server `client()` talks to once it is up. */
export function describeStudioSchemas(client: () => Client): void {
  const schemas = new Map<string, Awaited<ReturnType<Client["assistants"]["getSchemas"]>>>();
  beforeAll(async () => {
    for (const assistant of await client().assistants.search({ limit: 100 })) {
      schemas.set(assistant.graph_id, await client().assistants.getSchemas(assistant.assistant_id));
    }
  }, TEST_TIMEOUT);

  describe.each(["validation", "reflexion"])("the %s graph's run configuration form", (graphId) => {
    const context = () => schemas.get(graphId)!.context_schema as JsonSchema;

    it("is the same schema under config_schema and context_schema", () => {
      expect(schemas.get(graphId)!.config_schema).toEqual(context());
    });

    it("gives every field a title and a description", () => {
      expect(untitled(context())).toEqual([]);
      for (const [key, field] of Object.entries(context().properties!)) expect(field.description, key).toBeTruthy();
    });

    it("requires no field: each has a default (shown) or is optional", () => {
      expect(requiredWithDefault(context())).toEqual([]);
      expect(context().required ?? []).toEqual([]);
    });

    it("offers the built-in specs by name, beside an inline spec as JSON text or as an object", () => {
      const spec = context().properties!.spec;
      expect(spec.title).toBeTruthy();
      const branches = spec.anyOf ?? [];
      const names = branches.find((b) => b.enum);
      expect(names?.enum).toEqual([...builtinSpecs.keys()]);
      expect(branches.find((b) => b.type === "string" && !b.enum)?.title).toMatch(/JSON text/);
      expect(branches.find((b) => b.type === "object")?.title).toMatch(/JSON object/);
      for (const branch of branches) expect(branch.title).toBeTruthy();
    });
  });

  describe("the validation graph's other forms", () => {
    it("titles every input and output field, nested ones included", () => {
      const { input_schema, output_schema } = schemas.get("validation")!;
      expect((input_schema as JsonSchema).properties?.request?.title).toBe("Request");
      expect(untitled(input_schema as JsonSchema)).toEqual([]);
      expect(untitled(output_schema as JsonSchema)).toEqual([]);
      expect((output_schema as JsonSchema).properties?.history?.items?.properties?.usage?.title).toBe("Token usage");
    });

    it("gives the Reflexion graph's input and output fields titles too", () => {
      const { input_schema, output_schema } = schemas.get("reflexion")!;
      for (const schema of [input_schema, output_schema] as JsonSchema[]) {
        for (const [key, field] of Object.entries(schema.properties ?? {})) expect(field.title, key).toBeTruthy();
      }
    });
  });

  describe("the served context schema agrees with what runs accept", () => {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    const accepts = (context: Record<string, unknown>) => ajv.validate(schemas.get("validation")!.context_schema as object, context);

    it.each([
      ["nothing (every default)", {}, "deployment-config"],
      ["a built-in name", { spec: "api-request", maxAttempts: 2 }, "api-request"],
      ["an inline spec as JSON text", { spec: JSON.stringify(WINDOW) }, "time-window"],
      ["an inline spec as an object", { spec: WINDOW }, "time-window"],
    ])(
      "allows %s, and a run with it is validated against that spec",
      async (_what, context, specName) => {
        expect(accepts(context)).toBe(true);
        const out = (await client().runs.wait(null, "validation", { input: { request: "something valid" }, context })) as Record<string, unknown>;
        expect(out.spec, JSON.stringify(out).slice(0, 500)).toBe(specName);
        expect(out.stopReason).not.toBeNull();
      },
      TEST_TIMEOUT,
    );

    it(
      "refuses maxAttempts: 0, and so does a run",
      async () => {
        const context = { maxAttempts: 0 };
        expect(accepts(context)).toBe(false);
        await expect(client().runs.wait(null, "validation", { input: { request: "x" }, context })).rejects.toThrow(
          /maxAttempts must be an integer from 1 to 20/,
        );
      },
      TEST_TIMEOUT,
    );
  });
}
