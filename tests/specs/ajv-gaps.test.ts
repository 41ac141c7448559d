/**
 * The schemas ajv 8 misjudges, and what src/specs/ajv-gaps.ts does about each: a rewrite, a corrected keyword,
 * or a refusal. Each case is tested twice: ajv alone still gets it wrong (when that test fails, an ajv upgrade
 * fixed it: remove the workaround, or lift the refusal), and a spec gets it right or is refused with a message
 * naming the keyword, where it is and what to use instead. Cases taken from the official suite are read from
 * the vendored copy.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type Options, type ValidateFunction } from "ajv";
import Ajv2019Module from "ajv/dist/2019.js";
import Ajv2020Module from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { SpecError } from "../../src/errors.js";
import { checkValueSync } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type JsonSchema } from "../../src/specs/spec.js";
import { SUITE_DIR } from "./official-suite.support.js";

type AjvClass = new (options: Options) => Ajv;
const cjs = <T>(module: unknown): T => ((module as { default?: unknown }).default ?? module) as T;
const CLASSES: Record<string, AjvClass> = {
  "draft-07": Ajv as unknown as AjvClass,
  "2019-09": cjs<AjvClass>(Ajv2019Module),
  "2020-12": cjs<AjvClass>(Ajv2020Module),
};

const UPGRADE = "ajv alone no longer misjudges this: remove its workaround in src/specs/ajv-gaps.ts (and this guard)";
const S2019 = "https://json-schema.org/draft/2019-09/schema";
const S2020 = "https://json-schema.org/draft/2020-12/schema";

/** ajv alone, with the options that matter here as specs use them (own properties only). */
function rawAjv(dialect: "draft-07" | "2019-09" | "2020-12", schema: unknown): ValidateFunction {
  return new CLASSES[dialect]({ strict: false, ownProperties: true, allowUnionTypes: true, logger: false }).compile(schema as JsonSchema);
}

/** A group of the vendored suite, by file and description. */
function suiteGroup(path: string, description: string): { schema: JsonSchema; tests: Array<{ description: string; data: unknown; valid: boolean }> } {
  const groups = JSON.parse(readFileSync(join(SUITE_DIR, path), "utf8")) as Array<{ description: string; schema: JsonSchema; tests: [] }>;
  const group = groups.find((g) => g.description === description);
  if (!group) throw new Error(`no group "${description}" in ${path}`);
  return group;
}

const code = (schema: unknown) => defineSpec({ name: "gap", description: "", schema: schema as JsonSchema });
const verdict = (schema: unknown, value: unknown) => checkValueSync(code(schema), value).valid;
/** The compiled schema's own verdict (the check step refuses a field named "__proto__" before any schema sees it: src/json/kept.ts). */
const schemaVerdict = (schema: unknown, value: unknown) => code(schema).checkSchema(value) === true;

/** The reason a code spec is refused; a run-time spec is refused too (by this check, or earlier by the run-time limits). */
function refusal(schema: unknown): string {
  expect(() => resolveSpec({ name: "gap", schema: schema as JsonSchema })).toThrow(SpecError);
  try {
    code(schema);
  } catch (error) {
    expect(error).toBeInstanceOf(SpecError);
    return (error as Error).message.replace(/^Spec "gap" is refused: /, "");
  }
  throw new Error("expected the spec to be refused");
}

describe("rewritten: a field named __proto__", () => {
  const properties = JSON.parse('{"properties": {"__proto__": {"type": "number"}}}');
  const closed = JSON.parse('{"properties": {"__proto__": {"type": "number"}}, "additionalProperties": false}');
  const dependencies = JSON.parse('{"dependencies": {"__proto__": ["bar"]}}');
  const proto = (value: unknown) => JSON.parse(`{"__proto__": ${JSON.stringify(value)}}`);

  it("ajv alone skips it in properties and dependencies", () => {
    expect(rawAjv("draft-07", properties)(proto("foo")), UPGRADE).toBe(true);
    expect(rawAjv("draft-07", closed)(proto(1)), UPGRADE).toBe(false); // and calls it an additional field
    expect(rawAjv("draft-07", dependencies)(proto(1)), UPGRADE).toBe(true);
  });

  it("a spec's schema checks it like any other field, and keeps its schema as written; the check step refuses such a value", () => {
    expect(schemaVerdict(properties, proto("foo"))).toBe(false);
    expect(schemaVerdict(properties, proto(1))).toBe(true);
    expect(schemaVerdict(closed, proto(1))).toBe(true);
    expect(schemaVerdict(closed, { other: 1 })).toBe(false);
    expect(schemaVerdict(dependencies, proto(1))).toBe(false);
    expect(schemaVerdict(dependencies, { ...proto(1), bar: 2 })).toBe(true);
    expect(schemaVerdict(JSON.parse('{"dependencies": {"__proto__": {"required": ["bar"]}}}'), proto(1))).toBe(false);
    const spec = code(properties);
    expect(Object.keys(spec.schema.properties as object)).toEqual(["__proto__"]);
    expect(checkValueSync(spec, proto(1)).errors).toEqual([
      'the value has a field named "__proto__", which a checkpoint would not give back as written; rename the field',
    ]);
  });
});

describe('rewritten: "$ref" beside "$id" below the root', () => {
  const draft07 = suiteGroup("draft7/ref.json", "$ref prevents a sibling $id from changing the base uri");
  const nested2020 = suiteGroup("draft2020-12/ref.json", "refs with relative uris and defs");

  it("ajv alone resolves a draft-07 $ref against the $id beside it, and recurses without end on a 2019-09/2020-12 one", () => {
    expect(rawAjv("draft-07", draft07.schema)("a"), UPGRADE).toBe(true);
    expect(() => rawAjv("2020-12", nested2020.schema), UPGRADE).toThrow(RangeError);
    expect(() => rawAjv("2019-09", { ...nested2020.schema, $schema: S2019 }), UPGRADE).toThrow(RangeError);
  });

  it("a spec resolves it as the standard says", () => {
    for (const group of [draft07, nested2020]) {
      for (const test of group.tests) expect(verdict(group.schema, test.data), test.description).toBe(test.valid);
    }
  });
});

describe('rewritten: "type" beside "$ref" up to draft-07', () => {
  // From JSONSchemaBench (WashingtonPost wp_105): a description trait typed "object" beside a $ref to a dictionary.
  const schema = (draft: string) => ({
    $schema: `http://json-schema.org/${draft}/schema#`,
    properties: { d: { $ref: "#/definitions/dict", type: "object" } },
    definitions: { dict: { patternProperties: { ".*": { type: "string" } } } },
  });

  it("ajv alone applies it although ignoreKeywordsWithRef ignores every other sibling", () => {
    const ajv = new Ajv({ strict: false, logger: false, ignoreKeywordsWithRef: true });
    expect(ajv.compile(schema("draft-07"))({ d: "text" }), UPGRADE).toBe(false);
    expect(ajv.compile({ ...schema("draft-07"), properties: { d: { $ref: "#/definitions/dict", maxLength: 1 } } })({ d: "text" })).toBe(true);
  });

  it("a spec ignores it, as every sibling of $ref, in drafts 04, 06 and 07; in 2019-09 and later it applies", () => {
    for (const draft of ["draft-04", "draft-06", "draft-07"]) {
      expect(verdict(schema(draft), { d: "text" }), draft).toBe(true);
      expect(verdict(schema(draft), { d: { a: 1 } }), draft).toBe(false); // the $ref's own target still applies
    }
    expect(verdict({ ...schema("draft-07"), $schema: S2020 }, { d: "text" })).toBe(false);
  });
});

describe("corrected keyword: if (what it evaluated counts only when it holds)", () => {
  const group = suiteGroup("draft2020-12/unevaluatedProperties.json", "unevaluatedProperties with if/then/else, then not defined");

  it("ajv alone counts the fields `if` evaluated even when `if` fails", () => {
    expect(rawAjv("2020-12", group.schema)({ foo: "else", baz: "baz" }), UPGRADE).toBe(true);
  });

  it("a spec does not, and still says which condition applied", () => {
    for (const test of group.tests) expect(verdict(group.schema, test.data), test.description).toBe(test.valid);
    const schema = {
      $schema: S2020,
      properties: { kind: { enum: ["a", "b"] } },
      if: { properties: { kind: { const: "a" } } },
      then: { properties: { x: { type: "number" } }, required: ["x"] },
      else: { properties: { y: { type: "string" } } },
      unevaluatedProperties: false,
    };
    expect(checkValueSync(code(schema), { kind: "a" }).errors).toEqual([
      'x is missing; it is required (this applies because the "if" condition {"properties":{"kind":{"const":"a"}}} holds)',
    ]);
    expect(verdict(schema, { kind: "b", y: "s" })).toBe(true);
    expect(verdict(schema, { kind: "b", x: 1 })).toBe(false);
  });
});

describe('corrected keyword: "if" without "then" or "else" (valid JSON Schema, never fails a value)', () => {
  const lone = suiteGroup("draft7/if-then-else.json", "ignore if without then or else");
  const annotations = suiteGroup("draft2020-12/unevaluatedProperties.json", "unevaluatedProperties can see annotations from if without then and else");

  it("ajv alone refuses it in strict mode, and outside strict mode ignores what it evaluated", () => {
    expect(() => new Ajv({ strict: true, logger: false }).compile(lone.schema), UPGRADE).toThrow(/"if" without "then" and "else" is ignored/);
    const fooOnly = annotations.tests.find((t) => t.valid)!;
    expect(rawAjv("2020-12", annotations.schema)(fooOnly.data), UPGRADE).toBe(false);
  });

  it("a spec reads it as the standard says, code-defined and at run time, in every dialect that has it", () => {
    for (const { schema, tests } of [lone, annotations, suiteGroup("draft2020-12/if-then-else.json", "ignore if without then or else")]) {
      for (const test of tests) {
        expect(verdict(schema, test.data), test.description).toBe(test.valid);
        expect(checkValueSync(resolveSpec({ name: "gap", schema }), test.data).valid, test.description).toBe(test.valid);
      }
    }
    // Nested, beside other keywords: the other keywords still apply.
    const nested = { type: "object", properties: { n: { type: "integer", if: { minimum: 10 } } } };
    expect(verdict(nested, { n: 3 })).toBe(true);
    expect(verdict(nested, { n: 30 })).toBe(true);
    expect(verdict(nested, { n: "3" })).toBe(false);
  });
});

describe('refused: a "$ref" cycle that never reaches into the value (the standard leaves it undefined)', () => {
  const cycles: Array<[string, JsonSchema]> = [
    ["the root refers to itself", { $ref: "#" }],
    ["through anyOf", { anyOf: [{ $ref: "#" }, { type: "string" }] }],
    ["two definitions refer to each other", { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }],
    ["a definition refers to itself, used under a field", { definitions: { a: { $ref: "#/definitions/a" } }, properties: { x: { $ref: "#/definitions/a" } } }],
    ["through an anchor", { $schema: S2020, $defs: { a: { $anchor: "A", $ref: "#A" } }, $ref: "#A" }],
    ["through $recursiveRef", { $schema: S2019, $recursiveAnchor: true, anyOf: [{ $recursiveRef: "#" }] }],
  ];

  it("ajv alone overflows the stack compiling or running such a schema", () => {
    const overflows = (schema: JsonSchema, dialect: "draft-07" | "2019-09" | "2020-12") => {
      try {
        rawAjv(dialect, schema)({ x: 1 });
        return false;
      } catch (error) {
        return error instanceof RangeError;
      }
    };
    expect(overflows(cycles[0][1], "draft-07"), UPGRADE).toBe(true);
    expect(overflows(cycles[2][1], "2020-12"), UPGRADE).toBe(true);
    expect(overflows(cycles[3][1], "draft-07"), UPGRADE).toBe(true);
  });

  it.each(cycles)("%s: refused when the spec is defined, with where the cycle is and what to change", (_name, schema) => {
    expect(refusal(schema)).toMatch(
      /^the schema has a "\$ref" cycle that never reaches into the value \(through #[^)]*\), .*make the cycle pass through a field or an item/,
    );
  });

  it("recursion through a field or an item is legitimate, and judged", () => {
    const tree = { type: "object", properties: { value: { type: "integer" }, children: { type: "array", items: { $ref: "#" } } }, required: ["value"] };
    expect(verdict(tree, { value: 1, children: [{ value: 2, children: [{ value: 3 }] }] })).toBe(true);
    expect(verdict(tree, { value: 1, children: [{ children: [] }] })).toBe(false);
  });

  it("a chain ajv cannot follow is a SpecError saying so, never a bare stack overflow", () => {
    const absolute = { $id: "http://example.test/root", definitions: { a: { $ref: "http://example.test/root#/definitions/a" } }, $ref: "#/definitions/a" };
    expect(refusal(absolute)).toMatch(/^compiling it recursed past the JavaScript engine's stack/);
  });
});

describe("corrected keyword: unevaluatedItems (a count of evaluated items known only at run time)", () => {
  const group = suiteGroup("draft2020-12/unevaluatedItems.json", "unevaluatedItems with nested items");

  it("ajv alone reads no evaluated item as none to check, and all of them as one", () => {
    expect(rawAjv("2020-12", group.schema)(["yes", false]), UPGRADE).toBe(true);
    expect(rawAjv("2020-12", group.schema)(["yes", "no"]), UPGRADE).toBe(false);
  });

  it("a spec checks exactly the items nothing evaluated", () => {
    for (const test of group.tests) expect(verdict(group.schema, test.data), test.description).toBe(test.valid);
    const schema = { $schema: S2020, prefixItems: [{ type: "string" }], anyOf: [{ prefixItems: [true, true] }, { maxItems: 1 }], unevaluatedItems: false };
    expect(verdict(schema, ["a", 2])).toBe(true);
    expect(checkValueSync(code(schema), ["a", 2, 3]).errors).toEqual(["the value is an array of 3 items; it must NOT have more than 2 items"]);
  });
});

describe("corrected keywords: const and enum (equality reads only the values' own fields)", () => {
  const schema = { properties: { a: { const: { x: 1 } }, b: { enum: [{ x: 1 }, "q"] } } };

  it("ajv alone calls an answer's valueOf/toString field, and throws", () => {
    expect(() => rawAjv("draft-07", schema)({ a: { valueOf: 1 } }), UPGRADE).toThrow(TypeError);
    expect(() => rawAjv("draft-07", schema)({ b: { toString: "x" } }), UPGRADE).toThrow(TypeError);
  });

  it("a spec judges such a field like any other", () => {
    expect(verdict(schema, { a: { valueOf: 1 }, b: { toString: "x" } })).toBe(false);
    expect(checkValueSync(code(schema), { b: { toString: "x" } }).errors).toEqual(['b is an object with keys "toString"; it must be one of {"x":1}, "q"']);
    expect(verdict({ const: { valueOf: [1, { toString: 2 }] } }, { valueOf: [1, { toString: 2 }] })).toBe(true);
    expect(verdict({ enum: [{ valueOf: 1 }, 2] }, { valueOf: 1 })).toBe(true);
    expect(verdict({ properties: { a: { type: "object" }, b: { const: { $data: "1/a" } } } }, { a: { valueOf: 1 }, b: { valueOf: 1 } })).toBe(true);
  });
});

describe("corrected keyword: multipleOf (decided exactly on the numbers' decimal forms)", () => {
  const price = { type: "number", multipleOf: 0.01 };
  /** Every price 0.00–999.99, as JSON.parse reads it from the text a model writes. */
  const prices = Array.from({ length: 100_000 }, (_, cents) => JSON.parse((cents / 100).toFixed(2)) as number);

  it("ajv alone refuses 0.07 and accepts 939.1800000000001 with multipleOf 0.01", () => {
    expect(rawAjv("draft-07", price)(0.07), UPGRADE).toBe(false);
    expect(rawAjv("draft-07", price)(939.1800000000001), UPGRADE).toBe(true);
  });

  it("every price 0.00–999.99 is a multiple of 0.01, and 939.1800000000001 is not, in every dialect and kind of spec", () => {
    for (const $schema of [undefined, S2019, S2020]) {
      const schema = { ...($schema ? { $schema } : {}), type: "array", items: price };
      for (const spec of [code(schema), resolveSpec({ name: "gap", schema: schema as JsonSchema })]) {
        expect(spec.checkSchema(prices), `${$schema ?? "draft-07"} ${spec.untrusted ? "run-time" : "code"}`).toBe(true);
        expect(checkValueSync(spec, [1.5, 939.1800000000001]).errors).toEqual(["[1] is 939.1800000000001; it must be a multiple of 0.01"]);
      }
    }
  });

  it("exact on small, large and negative numbers, and through $data", () => {
    const cases: Array<[number, number, boolean]> = [
      [0.0075, 0.0001, true],
      [0.00751, 0.0001, false],
      [1e308, 0.5, true],
      [1e308, 0.123456789, false],
      [12391239123, 1e-8, true],
      [-0.3, 0.1, true],
      [4.5, 1.5, true],
      [35, 1.5, false],
      [0, 0.01, true],
    ];
    for (const [value, divisor, expected] of cases) expect(verdict({ multipleOf: divisor }, value), `${value} multipleOf ${divisor}`).toBe(expected);
    const step = { properties: { step: { type: "number" }, price: { multipleOf: { $data: "1/step" } } } };
    expect(verdict(step, { step: 0.01, price: 0.57 })).toBe(true);
    expect(verdict(step, { step: 0.01, price: 0.575 })).toBe(false);
    expect(verdict(step, { step: "x", price: 0.57 })).toBe(false);
  });
});

describe('refused: "$dynamicRef"', () => {
  const paths = suiteGroup("draft2020-12/dynamicRef.json", "multiple dynamic paths to the $dynamicRef keyword");
  const scopes = suiteGroup("draft2020-12/dynamicRef.json", "$dynamicRef avoids the root of each schema, but scopes are still registered");

  it("ajv alone approves invalid values and overflows the stack", () => {
    expect(rawAjv("2020-12", paths.schema)({ kindOfList: "numbers", list: ["foo"] }), UPGRADE).toBe(true);
    expect(() => rawAjv("2020-12", scopes.schema)("abc"), UPGRADE).toThrow(RangeError);
  });

  it("a spec with it is refused, and told to use $ref", () => {
    expect(refusal(paths.schema)).toMatch(
      /^"\$dynamicRef" at #\/\$defs\/genericList\/properties\/list\/items is not supported: .*use "\$ref" with a JSON pointer/,
    );
    expect(refusal(scopes.schema)).toMatch(/^"\$dynamicRef" at #\/\$defs\/third\/\$defs\/stuff is not supported/);
  });
});

describe('refused: "unevaluatedItems" that sees a "contains"', () => {
  const adjacent = suiteGroup("draft2020-12/unevaluatedItems.json", "unevaluatedItems depends on adjacent contains");
  const nested = suiteGroup("draft2020-12/unevaluatedItems.json", "unevaluatedItems depends on multiple nested contains");

  it("ajv alone counts every item as evaluated once contains applies", () => {
    expect(rawAjv("2020-12", adjacent.schema)([1, 2, "foo"]), UPGRADE).toBe(true);
    expect(rawAjv("2020-12", nested.schema)([2, 3, 4, 7, 8]), UPGRADE).toBe(true);
  });

  it("a spec with both is refused, naming both and what to use instead", () => {
    expect(refusal(adjacent.schema)).toMatch(
      /^"unevaluatedItems" at # is not supported together with "contains" \(at #\): .*"prefixItems" and "items" instead\.$/,
    );
    expect(refusal(nested.schema)).toMatch(/^"unevaluatedItems" at # is not supported together with "contains" \(at #\/allOf\/1\)/);
    const behindRef = { $schema: S2020, $defs: { some: { contains: { type: "string" } } }, $ref: "#/$defs/some", unevaluatedItems: false };
    expect(refusal(behindRef)).toMatch(/"contains" \(at #\/\$defs\/some\)/);
  });

  it("each alone, or a contains that applies to other arrays, is accepted", () => {
    for (const schema of [
      { $schema: S2020, contains: { type: "string" } },
      { $schema: S2020, prefixItems: [{ type: "string" }], unevaluatedItems: false },
      { $schema: S2020, prefixItems: [{ contains: { type: "string" } }], unevaluatedItems: false },
      { $schema: S2020, not: { contains: { type: "string" } }, unevaluatedItems: { type: "number" } },
    ]) {
      expect(() => code(schema)).not.toThrow();
      expect(() => resolveSpec({ name: "gap", schema })).not.toThrow();
    }
  });
});

describe('refused: a "$recursiveRef" (2019-09) ajv resolves to the wrong schema', () => {
  // From the 2019-09 suite (recursiveRef.json), which is not vendored.
  const innerWithoutAnchor = {
    $schema: S2019,
    $id: "http://localhost:4242/draft2019-09/recursiveRef6/base.json",
    $recursiveAnchor: true,
    anyOf: [
      { type: "boolean" },
      {
        type: "object",
        additionalProperties: {
          $id: "http://localhost:4242/draft2019-09/recursiveRef6/inner.json",
          anyOf: [{ type: "integer" }, { type: "object", additionalProperties: { $recursiveRef: "#" } }],
        },
      },
    ],
  };

  it("ajv alone follows the outer anchor from a resource without one", () => {
    expect(rawAjv("2019-09", innerWithoutAnchor)({ foo: { bar: true } }), UPGRADE).toBe(true);
  });

  it("a spec with it is refused; one in the root resource, anchored there, is accepted", () => {
    expect(code.bind(null, innerWithoutAnchor)).toThrow(
      /"\$recursiveRef" at #\/anyOf\/1\/additionalProperties\/anyOf\/1\/additionalProperties refers to the schema resource at #\/anyOf\/1\/additionalProperties .*use "\$ref" with a JSON pointer/,
    );
    const tree = {
      $schema: S2019,
      $recursiveAnchor: true,
      type: "object",
      properties: { value: { type: "number" }, children: { type: "array", items: { $recursiveRef: "#" } } },
    };
    expect(verdict(tree, { value: 1, children: [{ value: 2, children: [] }] })).toBe(true);
    expect(verdict(tree, { value: 1, children: [{ value: "2" }] })).toBe(false);
  });
});

describe("common schemas are compiled as written", () => {
  it("$ref to $defs, if/then/else with unevaluatedProperties, and contains stay accepted", () => {
    const schema = {
      $schema: S2020,
      $defs: { name: { type: "string", minLength: 1 } },
      type: "object",
      properties: { name: { $ref: "#/$defs/name" }, tags: { type: "array", contains: { const: "x" } } },
      if: { properties: { name: { const: "a" } } },
      then: { required: ["tags"] },
      unevaluatedProperties: false,
    };
    expect(verdict(schema, { name: "a", tags: ["x"] })).toBe(true);
    expect(verdict(schema, { name: "a" })).toBe(false);
    expect(verdict(schema, { name: "b", other: 1 })).toBe(false);
    expect(checkValueSync(resolveSpec({ name: "gap", schema }), { name: "b" }).valid).toBe(true);
  });
});
