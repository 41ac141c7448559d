/** Values drawn from a JSON Schema (the simulated model's answers for a spec it does not know) pass the schema, and a seed always draws the same value. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { seededRandom } from "../../src/simulated/random.js";
import { leavesOf, sampleValue } from "../../src/simulated/sample.js";
import { checkValue } from "../../src/specs/check.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { defineSpec, type JsonSchema } from "../../src/specs/spec.js";

const schemas: Record<string, JsonSchema> = {
  ...Object.fromEntries([...builtinSpecs.values()].map((s) => [s.name, s.schema])),
  formats: {
    type: "object",
    required: ["email", "uri", "when", "day", "id", "host", "ip"],
    properties: {
      email: { type: "string", format: "email" },
      uri: { type: "string", format: "uri" },
      when: { type: "string", format: "date-time" },
      day: { type: "string", format: "date" },
      id: { type: "string", format: "uuid" },
      host: { type: "string", format: "hostname" },
      ip: { type: "string", format: "ipv4" },
    },
  },
  shapes: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    required: ["pair", "choice", "ref", "count", "ratio", "flags", "words", "nullable"],
    additionalProperties: false,
    $defs: { slug: { type: "string", pattern: "^[a-z][a-z0-9-]{2,10}$" } },
    properties: {
      pair: { type: "array", prefixItems: [{ type: "integer" }, { type: "string" }], minItems: 2, maxItems: 2 },
      choice: { anyOf: [{ type: "null" }, { const: "fixed" }] },
      ref: { $ref: "#/$defs/slug" },
      count: { type: "integer", exclusiveMinimum: 0, maximum: 3 },
      ratio: { type: "number", minimum: 0.25, maximum: 0.75, multipleOf: 0.25 },
      flags: { type: "object", additionalProperties: { type: "boolean" } },
      words: { type: "array", items: { type: "string", minLength: 3, maxLength: 5 }, minItems: 3, uniqueItems: true },
      nullable: { type: ["string", "null"], maxLength: 4 },
    },
  },
  zod: z.toJSONSchema(
    z.object({ name: z.string().min(2).max(30), age: z.number().int().min(18).optional(), role: z.enum(["admin", "user"]), tags: z.array(z.string()).max(3) }),
  ) as JsonSchema,
};

describe("sampleValue", () => {
  for (const [name, schema] of Object.entries(schemas)) {
    it(`draws values that pass the ${name} schema, the same for the same seed`, async () => {
      const spec = defineSpec({ name, description: `the ${name} schema`, schema });
      for (const seed of [1, 2, 3, 4, 5]) {
        const value = sampleValue(schema, seededRandom(seed));
        const verdict = await checkValue(spec, value);
        expect(verdict.valid, `${name}, seed ${seed}: ${JSON.stringify(value)} ${verdict.valid ? "" : verdict.errors.join("; ")}`).toBe(true);
        expect(sampleValue(schema, seededRandom(seed))).toEqual(value);
      }
    });
  }

  it("draws a bounded value for a recursive schema whose full draw would grow as its fields to the 12th power", async () => {
    // A tree of nodes where every field refers back to the root (as a meta-schema does): unbounded, a draw nests
    // 12 levels of ~20 fields. Bounded, it stays small and still passes the schema (no field is required).
    const fields = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, { anyOf: [{ $ref: "#" }, { type: "array", items: { $ref: "#" } }] }]));
    const schema: JsonSchema = { type: "object", properties: fields };
    const spec = defineSpec({ name: "tree", description: "a recursive tree", schema });
    for (const seed of [1, 2, 3]) {
      const value = sampleValue(schema, seededRandom(seed));
      const size = JSON.stringify(value).length;
      expect(size).toBeLessThan(200_000);
      expect((await checkValue(spec, value)).valid).toBe(true);
    }
  });

  it("names a value's leaves as messages name them, with whether their object requires them", () => {
    const schema = schemas["deployment-config"];
    const leaves = leavesOf(sampleValue(schema, seededRandom(1)), schema);
    expect(leaves.map((l) => l.label)).toContain("resources.cpu_limit");
    expect(leaves.find((l) => l.label === "health_check.path")?.required).toBe(true);
  });
});
