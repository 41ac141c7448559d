/**
 * What the google row sends as `responseJsonSchema`: the JSON Schema subset Gemini documents, `oneOf` as
 * `anyOf`, and draft-07's `definitions` moved under `$defs` with every `#/definitions/…` reference pointing
 * there (left out, they would be references to nothing). Data (`enum`, `const`, `default`) is never rewritten,
 * and a property may be named like a keyword.
 */
import { describe, expect, it } from "vitest";
import { MODEL_PROVIDERS } from "../../src/providers/index.js";

const sent = (schema: object) => MODEL_PROVIDERS.google.modes.json_schema!({ name: "output", description: "", schema: schema as never });

describe("google/…: the schema sent as responseJsonSchema", () => {
  it("moves definitions under $defs and points their references there, leaving data and names alone", () => {
    const asked = sent({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      definitions: { sku: { type: "string", pattern: "^[A-Z]+$" }, line: { type: "object", properties: { sku: { $ref: "#/definitions/sku" } } } },
      properties: {
        lines: { type: "array", items: { $ref: "#/definitions/line" } },
        enum: { $ref: "#/definitions/sku" },
        raw: { enum: [{ $ref: "#/definitions/sku" }], default: { $ref: "#/definitions/sku" } },
      },
    });
    expect(asked.options.responseSchema).toEqual({
      type: "object",
      $defs: { sku: { type: "string" }, line: { type: "object", properties: { sku: { $ref: "#/$defs/sku" } } } },
      properties: {
        lines: { type: "array", items: { $ref: "#/$defs/line" } },
        enum: { $ref: "#/$defs/sku" },
        raw: { enum: [{ $ref: "#/definitions/sku" }] },
      },
    });
    expect(asked.dropped).toEqual(["/properties/raw: default", "/$defs/sku: pattern"]);
  });

  it("a root with $defs already keeps them; its definitions are left out and listed", () => {
    const asked = sent({ type: "object", $defs: { a: { type: "string" } }, definitions: { b: { type: "integer" } }, properties: { a: { $ref: "#/$defs/a" } } });
    expect(asked.options.responseSchema).toEqual({ type: "object", $defs: { a: { type: "string" } }, properties: { a: { $ref: "#/$defs/a" } } });
    expect(asked.dropped).toEqual(["/: definitions"]);
  });

  it("oneOf goes as anyOf, and keywords Gemini does not document are listed", () => {
    const asked = sent({ oneOf: [{ type: "string", minLength: 2 }, { type: "null" }], not: { const: "x" } });
    expect(asked.options.responseSchema).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] });
    expect(asked.dropped).toEqual(["/oneOf/0: minLength", "/: not"]);
  });
});
