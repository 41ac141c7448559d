import { describe, expect, it } from "vitest";
import { MODEL_PROVIDERS } from "../../src/providers/index.js";
import { schemaSubset } from "../../src/providers/schema-subset.js";

const SCHEMA_PROFILES = { anthropic: MODEL_PROVIDERS.anthropic.profile!, google: MODEL_PROVIDERS["google-genai"].profile! };

describe("the schema subset a provider's structured output takes", () => {
  // As JSON text, so that "__proto__" is a property's name (in an object literal it would set the prototype).
  const schema = JSON.parse(`{
    "type": "object",
    "required": ["name", "tags"],
    "additionalProperties": { "type": "string" },
    "properties": {
      "name": { "type": "string", "pattern": "^[a-z]+$", "minLength": 2, "format": "email" },
      "tags": { "type": "array", "items": { "type": "string", "format": "hostname" }, "minItems": 2, "uniqueItems": true },
      "kind": { "oneOf": [{ "const": "a" }, { "enum": ["b", "c"] }] },
      "__proto__": { "type": "integer", "minimum": 1 }
    }
  }`);

  it("Anthropic: bounds, patterns and open objects are left out and listed; oneOf is sent as anyOf; objects are closed", () => {
    const { schema: sent, dropped } = schemaSubset(schema, SCHEMA_PROFILES.anthropic);
    expect(sent).toEqual({
      type: "object",
      required: ["name", "tags"],
      additionalProperties: false,
      properties: JSON.parse(
        '{"name": {"type": "string", "format": "email"}, "tags": {"type": "array", "items": {"type": "string", "format": "hostname"}}, "kind": {"anyOf": [{"const": "a"}, {"enum": ["b", "c"]}]}, "__proto__": {"type": "integer"}}',
      ),
    });
    expect(Object.keys((sent as { properties: object }).properties)).toContain("__proto__");
    expect(dropped).toEqual([
      "/: additionalProperties",
      "/properties/name: pattern",
      "/properties/name: minLength",
      "/properties/tags: minItems",
      "/properties/tags: uniqueItems",
      "/properties/__proto__: minimum",
    ]);
  });

  it("Gemini: no additionalProperties, const or oneOf; bounds and patterns stay", () => {
    const { schema: sent, dropped } = schemaSubset(schema, SCHEMA_PROFILES.google);
    expect((sent as { properties: Record<string, unknown> }).properties.name).toEqual({ type: "string", pattern: "^[a-z]+$", minLength: 2, format: "email" });
    expect(dropped).toEqual(["/: additionalProperties", "/properties/tags: uniqueItems", "/properties/kind: oneOf"]);
  });

  it("lists at most 20 keywords, then counts the rest", () => {
    const wide = { type: "object", properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, { type: "string", pattern: "x" }])) };
    const { dropped } = schemaSubset(wide, SCHEMA_PROFILES.anthropic);
    expect(dropped).toHaveLength(21);
    expect(dropped.at(-1)).toBe("… and 10 more");
  });
});
