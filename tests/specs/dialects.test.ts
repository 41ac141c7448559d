/**
 * Each JSON Schema dialect with its own meaning, for code-defined and run-time specs alike, and the
 * partial checks of validated streaming agreeing with the check step on each.
 */
import { describe, expect, it } from "vitest";
import { checkTextSync, checkValueSync } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type JsonSchema, type Spec } from "../../src/specs/spec.js";
import { PartialCheck } from "../../src/streaming/partial-check.js";

const S2019 = "https://json-schema.org/draft/2019-09/schema";
const S2020 = "https://json-schema.org/draft/2020-12/schema";

/** The same schema as a code-defined spec and as a run-time spec. */
const bothKinds = (schema: unknown): Spec[] => [
  defineSpec({ name: "dialect", description: "", schema: schema as JsonSchema }),
  resolveSpec({ name: "dialect", schema: schema as JsonSchema }),
];

/** The errors of the check step, and of the partial checks fed the same answer a character at a time. */
function errorsBothWays(spec: Spec, value: unknown): { full: string[]; partial: string[] } {
  const text = JSON.stringify(value);
  const check = new PartialCheck(spec);
  for (const char of text) check.write(char);
  check.end();
  return { full: checkTextSync(spec, text, "model", { limits: { maxErrors: 100 } }).errors, partial: [...check.errors] };
}

describe('draft-07: "$ref" replaces the keywords beside it', () => {
  // The shape of real schemas (e.g. the Schema Store's): a closed object beside a $ref to where its fields are declared.
  const schema = {
    definitions: { library: { type: "object", properties: { version: { type: "string" } } } },
    type: "object",
    properties: { lib: { $ref: "#/definitions/library", additionalProperties: false, required: ["missing"] } },
  };

  it("a value its $ref target accepts is valid, whatever the siblings say; the target is still applied", () => {
    for (const spec of bothKinds(schema)) {
      expect(checkValueSync(spec, { lib: { version: "1.0", other: 1 } }).valid).toBe(true);
      expect(checkValueSync(spec, { lib: { version: 1 } }).errors).toEqual(["lib.version is 1 (integer); it must be a string"]);
    }
  });

  it("the partial checks agree: no error from a sibling of $ref", () => {
    for (const spec of bothKinds(schema)) {
      expect(errorsBothWays(spec, { lib: { version: "1.0", other: 1 } })).toEqual({ full: [], partial: [] });
      const { full, partial } = errorsBothWays(spec, { lib: { version: 1 } });
      expect(partial).toEqual(full);
    }
  });

  it("2019-09 and 2020-12 apply the siblings, as those dialects say", () => {
    for (const $schema of [S2019, S2020]) {
      const later = { $schema, $defs: { library: schema.definitions.library }, properties: { lib: { $ref: "#/$defs/library", required: ["name"] } } };
      for (const spec of bothKinds(later)) {
        expect(checkValueSync(spec, { lib: { version: "1.0" } }).errors).toEqual(["lib.name is missing; it is required"]);
        expect(errorsBothWays(spec, { lib: { version: "1.0" } }).partial).toEqual(["lib.name is missing; it is required"]);
      }
    }
  });
});

describe("unknown keywords: ignored as the standard says, and listed; likely mistakes refused", () => {
  /** The message of the SpecError defining `schema` throws, for either kind of spec (the same for both). */
  function refusal(schema: unknown): string {
    const messages = [
      () => defineSpec({ name: "dialect", description: "", schema: schema as JsonSchema }),
      () => resolveSpec({ name: "dialect", schema: schema as JsonSchema }),
    ].map((define) => {
      try {
        define();
      } catch (error) {
        expect((error as Error).name).toBe("SpecError");
        return (error as Error).message;
      }
      throw new Error("expected the spec to be refused");
    });
    expect(messages[1]).toBe(messages[0]);
    return messages[0];
  }

  it("annotations real schemas carry are ignored, and listed on the spec with where they are", () => {
    const schema = {
      self: { vendor: "com.acme", name: "order" },
      type: "object",
      links: [{ rel: "self" }],
      properties: {
        id: { type: "string", readonly: true, example: "a1", "x-order": 1 },
        price: { type: "number", nullable: true, "x-ms.unit": "EUR" },
      },
    };
    for (const $schema of [undefined, S2019, S2020]) {
      for (const spec of bothKinds($schema ? { $schema, ...schema } : schema)) {
        expect(checkValueSync(spec, { id: "a1", price: 9.5 }).valid).toBe(true);
        expect(checkValueSync(spec, { id: 1 }).errors).toEqual(["id is 1 (integer); it must be a string"]);
        // OpenAPI's "nullable" is not JSON Schema: ignored, so null stays what "type" says (ajv alone would allow it).
        expect(checkValueSync(spec, { price: null }).errors).toEqual(["price is null; it must be a number"]);
        expect(spec.ignoredKeywords).toEqual([
          { keyword: "self", at: "#" },
          { keyword: "links", at: "#" },
          { keyword: "nullable", at: "#/properties/price" },
          { keyword: "x-ms.unit", at: "#/properties/price" },
          { keyword: "readonly", at: "#/properties/id" },
          { keyword: "example", at: "#/properties/id" },
          { keyword: "x-order", at: "#/properties/id" },
        ]);
      }
    }
    for (const spec of bothKinds({ type: "string" })) expect(spec.ignoredKeywords).toEqual([]);
  });

  it('a draft-04 "id" in a draft-07 schema is ignored, not refused', () => {
    for (const spec of bothKinds({ id: "http://example.com/order", type: "object", properties: { n: { type: "integer" } } })) {
      expect(checkValueSync(spec, { n: 1.5 }).errors).toEqual(["n is 1.5 (number); it must be an integer"]);
      expect(spec.ignoredKeywords).toEqual([{ keyword: "id", at: "#" }]);
    }
  });

  it("a likely misspelling of a validating keyword is refused, naming it, where it is and the keyword meant", () => {
    expect(refusal({ type: "object", properties: { name: { type: "string", minLenght: 3 } } })).toBe(
      'Spec "dialect" is refused: unknown keyword "minLenght" at #/properties/name: did you mean "minLength"? A keyword the standard does not define is ignored, so this constraint would not be checked; correct it, or rename it "x-minLenght" to keep it as a note the validator ignores.',
    );
    expect(refusal({ type: "object", additonalProperties: false })).toContain('did you mean "additionalProperties"?');
    expect(refusal({ oneof: [{ type: "string" }] })).toContain('did you mean "oneOf"?');
    expect(refusal({ ref: "#/definitions/a", definitions: { a: {} } })).toContain('did you mean "$ref"?');
    expect(refusal({ type: "object", requried: ["a"] })).toContain('did you mean "required"?');
  });

  it("a constraint-like custom keyword is refused with what the standard calls it", () => {
    expect(refusal({ type: "number", min: 0 })).toBe(
      'Spec "dialect" is refused: "min" at # is not a JSON Schema keyword, so the constraint it seems to state would not be checked; use "minimum" or "minLength" or "minItems" instead, or rename it "x-min" to keep it as a note the validator ignores.',
    );
    expect(refusal({ type: "string", errorMessage: "must be a name" })).toContain("this package writes every error message itself: remove it");
  });

  it("short words near a keyword are not taken for misspellings, and vendor extensions never are", () => {
    for (const schema of [{ note: "x", them: 1, id: "a", types: ["a"], "x-minLenght": 3, "x-min": 1 }]) {
      for (const spec of bothKinds(schema)) expect(spec.ignoredKeywords.map((i) => i.keyword)).toEqual(Object.keys(schema));
    }
  });

  it('an inline spec with a "schema" field that is not an object is refused, not read as a bare schema of ignored keywords', () => {
    for (const schema of [false, true, "string", 1]) {
      expect(() => resolveSpec({ name: "wrapped", schema } as never)).toThrow(/spec schema must be a JSON Schema object/);
    }
  });

  it('a "$ref" into an ignored keyword is refused: nothing there is read as a schema', () => {
    expect(refusal({ $ref: "#/components/schemas/Order", components: { schemas: { Order: { type: "object" } } } })).toContain(
      '"$ref" "#/components/schemas/Order" at # points into "components", which is not a JSON Schema keyword',
    );
  });
});

describe("draft-04 and draft-06, each with its own meaning", () => {
  const S04 = "http://json-schema.org/draft-04/schema#";
  const S06 = "http://json-schema.org/draft-06/schema#";

  it('draft-04: a boolean "exclusiveMaximum"/"exclusiveMinimum" makes its bound exclusive', () => {
    const schema = {
      $schema: S04,
      type: "object",
      properties: { pct: { type: "number", minimum: 0, exclusiveMinimum: true, maximum: 100, exclusiveMaximum: true } },
    };
    for (const spec of bothKinds(schema)) {
      expect(checkValueSync(spec, { pct: 50 }).valid).toBe(true);
      expect(checkValueSync(spec, { pct: 100 }).errors).toEqual(["pct is 100; it must be < 100"]);
      expect(checkValueSync(spec, { pct: 0 }).errors).toEqual(["pct is 0; it must be > 0"]);
      expect(errorsBothWays(spec, { pct: 100 }).partial).toEqual(["pct is 100; it must be < 100"]);
    }
    // A numeric exclusiveMaximum is draft-06's: in draft-04 the schema does not conform.
    expect(() => defineSpec({ name: "d4", description: "", schema: { $schema: S04, exclusiveMaximum: 5 } })).toThrow(
      /does not conform to JSON Schema draft-04/,
    );
  });

  it('draft-04: "id" names a schema, and a "$ref" to it resolves; "$ref" replaces its siblings', () => {
    const schema = {
      $schema: S04,
      id: "http://example.com/root.json",
      definitions: { positive: { id: "#positive", type: "integer", minimum: 1 } },
      properties: { n: { $ref: "#positive", maximum: 0 } },
    };
    const spec = defineSpec({ name: "dialect", description: "", schema });
    expect(checkValueSync(spec, { n: 5 }).valid).toBe(true);
    expect(checkValueSync(spec, { n: 0 }).errors).toEqual(["n is 0; it must be >= 1"]);
    expect(spec.ignoredKeywords).toEqual([]);
    // Run-time specs follow JSON pointers only (docs/specs.md): the anchor is refused with what to use instead.
    expect(() => resolveSpec({ name: "dialect", schema })).toThrow(/only JSON pointers into the spec itself/);
    const pointer = { ...schema, properties: { n: { $ref: "#/definitions/positive", maximum: 0 } } };
    expect(checkValueSync(resolveSpec({ name: "dialect", schema: pointer }), { n: 0 }).errors).toEqual(["n is 0; it must be >= 1"]);
  });

  it("draft-04: keywords that came later (const, contains, propertyNames, if) are ignored and listed", () => {
    const schema = { $schema: S04, properties: { a: { const: 1 }, b: { contains: { type: "string" } } }, propertyNames: { maxLength: 1 } };
    for (const spec of bothKinds(schema)) {
      expect(checkValueSync(spec, { a: 2, b: [1], long: 1 }).valid).toBe(true);
      expect(spec.ignoredKeywords.map((i) => `${i.at} ${i.keyword}`).sort()).toEqual(["# propertyNames", "#/properties/a const", "#/properties/b contains"]);
    }
  });

  it("draft-06: const, contains, propertyNames and numeric exclusive bounds apply; if/then/else came later and are ignored", () => {
    const schema = {
      $schema: S06,
      properties: { kind: { const: "a" }, tags: { contains: { const: "x" } }, n: { exclusiveMaximum: 10 } },
      if: { required: ["kind"] },
      then: { required: ["n"] },
    };
    for (const spec of bothKinds(schema)) {
      expect(checkValueSync(spec, { kind: "a" }).valid).toBe(true);
      expect(checkValueSync(spec, { kind: "b", n: 10 }).errors).toEqual(['kind is "b"; it must be "a"', "n is 10; it must be < 10"]);
      expect(checkValueSync(spec, { tags: ["y"] }).valid).toBe(false);
      expect(spec.ignoredKeywords.map((i) => i.keyword).sort()).toEqual(["if", "then"]);
    }
  });

  it("the https spellings of the draft URIs are read too; an unknown $schema is refused naming the five dialects", () => {
    for (const $schema of ["https://json-schema.org/draft-04/schema", "https://json-schema.org/draft-06/schema#", "https://json-schema.org/draft-07/schema#"]) {
      for (const spec of bothKinds({ $schema, type: "integer" })) expect(checkValueSync(spec, 1.5).valid).toBe(false);
    }
    expect(() => defineSpec({ name: "d3", description: "", schema: { $schema: "http://json-schema.org/draft-03/schema#" } })).toThrow(
      /draft-04 .*draft-06 .*2019-09 .*2020-12/,
    );
  });
});

describe("an inline spec that would accept anything by mistake", () => {
  it("a wrapped spec with its schema field misspelt is refused, not read as a bare schema that ignores everything", async () => {
    const { resolveSpec } = await import("../../src/specs/registry.js");
    expect(() => resolveSpec({ name: "x", schem: { type: "object", required: ["a"] } } as never)).toThrow(
      /has no "schema" field.*"name", "schem" are not JSON Schema keywords/,
    );
    expect(() => resolveSpec({ name: "x", description: "d" } as never)).toThrow(/has no "schema" field/);
    // A bare schema with a real keyword beside a vendor extension is fine (the extension is listed).
    expect(resolveSpec({ type: "object", "x-owner": "team" } as never).ignoredKeywords).toEqual([{ keyword: "x-owner", at: "#" }]);
  });
});
