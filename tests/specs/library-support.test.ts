/**
 * Which checks of Valibot, ArkType and Effect Schema work in a spec, walked check by check: each is a field
 * `v` of an object spec; its good value passes, its bad value is refused with a message naming the field; the
 * table in docs/specs.md says which JSON Schema keywords it comes out as and who refused the bad value (the
 * JSON Schema, or the library's own validate, which the check step runs last on every value). Types with no
 * JSON form are refused when the spec is defined. A Valibot schema is wrapped for Standard JSON Schema
 * (`toStandardJsonSchema`), as a user gives it. UPDATE_DOCS=1 rewrites the tables.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { type } from "arktype";
import { Schema } from "effect";
import * as v from "valibot";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { describe, expect, it } from "vitest";
import { checkValueSync } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import type { JsonSchema } from "../../src/specs/spec.js";
import type { StandardSchemaV1 } from "../../src/specs/standard.js";
import { keywordsOf } from "../support/schema-keywords.js";

interface Case {
  family: string;
  check: string;
  /** The object schema whose field `v` is the check. */
  schema: StandardSchemaV1;
  good: unknown;
  bad: unknown;
}

interface Library {
  /** The marker's name in docs/specs.md, and the library's name in the table. */
  key: string;
  name: string;
  cases: Case[];
  noJsonForm: Array<{ check: string; schema: unknown }>;
}

const vField = (family: string, check: string, field: v.GenericSchema, good: unknown, bad: unknown): Case => ({
  family,
  check,
  schema: toStandardJsonSchema(v.object({ v: field })),
  good,
  bad,
});
const arkField = (family: string, check: string, field: unknown, good: unknown, bad: unknown): Case => ({
  family,
  check,
  schema: type({ v: field as never }) as unknown as StandardSchemaV1,
  good,
  bad,
});
const effectField = (family: string, check: string, field: Schema.Top, good: unknown, bad: unknown): Case => ({
  family,
  check,
  schema: Schema.toStandardJSONSchemaV1(Schema.toStandardSchemaV1(Schema.Struct({ v: field }) as never)) as unknown as StandardSchemaV1,
  good,
  bad,
});

const Node: v.GenericSchema<{ name: string; children: unknown[] }> = v.object({ name: v.string(), children: v.array(v.lazy(() => Node)) });

const LIBRARIES: Library[] = [
  {
    key: "valibot",
    name: "Valibot",
    cases: [
      vField("strings", "v.string()", v.string(), "a", 1),
      vField("strings", "v.minLength(2) / v.maxLength(3)", v.pipe(v.string(), v.minLength(2), v.maxLength(3)), "ab", "a"),
      vField("strings", "v.regex(/^a+$/)", v.pipe(v.string(), v.regex(/^a+$/)), "aa", "ab"),
      vField("strings", "v.email()", v.pipe(v.string(), v.email()), "ada@example.com", "ada@"),
      vField("strings", "v.uuid()", v.pipe(v.string(), v.uuid()), "3b241101-e2bb-4255-8caf-4136c566a962", "3b241101"),
      vField("strings", "v.isoDate()", v.pipe(v.string(), v.isoDate()), "2024-02-29", "2024-2-29"),
      vField("strings", 'v.startsWith("a.")', v.pipe(v.string(), v.startsWith("a.")), "a.b", "ab"),
      vField("numbers", "v.number()", v.number(), 1.5, "1"),
      vField("numbers", "v.integer()", v.pipe(v.number(), v.integer()), 2, 2.5),
      vField("numbers", "v.minValue(0) / v.maxValue(10)", v.pipe(v.number(), v.minValue(0), v.maxValue(10)), 10, 11),
      vField("numbers", "v.multipleOf(5)", v.pipe(v.number(), v.multipleOf(5)), 10, 11),
      vField("booleans and null", "v.boolean()", v.boolean(), true, "true"),
      vField("booleans and null", "v.null()", v.null(), null, 0),
      vField("arrays", "v.array()", v.array(v.number()), [1], ["1"]),
      vField("arrays", "v.array() + v.minLength(1)", v.pipe(v.array(v.number()), v.minLength(1)), [1], []),
      vField("objects", "v.object()", v.object({ a: v.number() }), { a: 1 }, {}),
      vField("objects", "v.strictObject()", v.strictObject({ a: v.number() }), { a: 1 }, { a: 1, b: 2 }),
      vField("records", "v.record(v.string(), …)", v.record(v.string(), v.number()), { x: 1 }, { x: "1" }),
      vField("tuples", "v.tuple([…])", v.tuple([v.string(), v.number()]), ["a", 1], ["a", "b"]),
      vField("unions", "v.union([…])", v.union([v.string(), v.number()]), 1, true),
      vField(
        "unions",
        "v.variant(…)",
        v.variant("kind", [v.object({ kind: v.literal("a"), a: v.number() }), v.object({ kind: v.literal("b"), b: v.string() })]),
        { kind: "b", b: "x" },
        { kind: "b", b: 1 },
      ),
      vField("optional and nullable", "v.optional() / v.nullable()", v.optional(v.nullable(v.number())), null, "1"),
      vField("enums and literals", "v.picklist([…])", v.picklist(["a", "b"]), "a", "c"),
      vField("enums and literals", "v.literal(…)", v.literal("on"), "on", "off"),
      vField(
        "refinements and transforms",
        "v.check(…)",
        v.pipe(
          v.number(),
          v.check((n) => n % 2 === 0, "must be even"),
        ),
        2,
        3,
      ),
      vField(
        "refinements and transforms",
        "v.transform(…)",
        v.pipe(
          v.string(),
          v.transform((s) => s.length),
        ),
        "abc",
        3,
      ),
      vField("recursion", "v.lazy(…)", Node, { name: "a", children: [{ name: "b", children: [] }] }, { name: "a", children: [{ name: 1, children: [] }] }),
    ],
    noJsonForm: [
      { check: "v.date()", schema: toStandardJsonSchema(v.object({ v: v.date() })) },
      { check: "v.bigint()", schema: toStandardJsonSchema(v.object({ v: v.bigint() })) },
      { check: "v.map()", schema: toStandardJsonSchema(v.object({ v: v.map(v.string(), v.number()) })) },
      { check: "v.set()", schema: toStandardJsonSchema(v.object({ v: v.set(v.string()) })) },
      { check: "v.undefined()", schema: toStandardJsonSchema(v.object({ v: v.undefined() })) },
    ],
  },
  {
    key: "arktype",
    name: "ArkType",
    cases: [
      arkField("strings", '"string"', "string", "a", 1),
      arkField("strings", '"2 <= string <= 3"', "2 <= string <= 3", "ab", "a"),
      arkField("strings", '"/^a+$/"', "/^a+$/", "aa", "ab"),
      arkField("strings", '"string.email"', "string.email", "ada@example.com", "ada@"),
      arkField("strings", '"string.uuid"', "string.uuid", "3b241101-e2bb-4255-8caf-4136c566a962", "3b241101"),
      arkField("strings", '"string.date.iso"', "string.date.iso", "2024-02-29T00:00:00Z", "yesterday"),
      arkField("numbers", '"number"', "number", 1.5, "1"),
      arkField("numbers", '"number.integer"', "number.integer", 2, 2.5),
      arkField("numbers", '"0 <= number <= 10"', "0 <= number <= 10", 10, 11),
      arkField("numbers", '"number % 5"', "number % 5", 10, 11),
      arkField("booleans and null", '"boolean"', "boolean", true, "true"),
      arkField("booleans and null", '"null"', "null", null, 0),
      arkField("arrays", '"number[]"', "number[]", [1], ["1"]),
      arkField("arrays", '"number[] > 0"', "number[] > 0", [1], []),
      arkField("objects", '{ a: "number" }', { a: "number" }, { a: 1 }, {}),
      arkField("objects", '{ "+": "reject", … }', { "+": "reject", a: "number" }, { a: 1 }, { a: 1, b: 2 }),
      arkField("records", '"Record<string, number>"', "Record<string, number>", { x: 1 }, { x: "1" }),
      arkField("tuples", '["string", "number"]', ["string", "number"], ["a", 1], ["a", "b"]),
      arkField("unions", '"string | number"', "string | number", 1, true),
      arkField("optional and nullable", '"number | null"', "number | null", null, "1"),
      arkField("enums and literals", "\"'a' | 'b'\"", "'a' | 'b'", "a", "c"),
      arkField(
        "refinements and morphs",
        ".narrow(…)",
        type("number").narrow((n, ctx) => n % 2 === 0 || ctx.mustBe("even")),
        2,
        3,
      ),
      arkField(
        "refinements and morphs",
        ".pipe(…)",
        type("string").pipe((s) => s.length),
        "abc",
        3,
      ),
    ],
    noJsonForm: [
      { check: '"Date"', schema: type({ v: "Date" }) },
      { check: '"bigint"', schema: type({ v: "bigint" }) },
      { check: '"symbol"', schema: type({ v: "symbol" }) },
      { check: '"undefined"', schema: type({ v: "undefined" }) },
    ],
  },
  {
    key: "effect",
    name: "Effect Schema",
    cases: [
      effectField("strings", "Schema.String", Schema.String, "a", 1),
      effectField("strings", "isMinLength(2) / isMaxLength(3)", Schema.String.check(Schema.isMinLength(2), Schema.isMaxLength(3)), "ab", "abcd"),
      effectField("strings", "isPattern(/^a+$/)", Schema.String.check(Schema.isPattern(/^a+$/)), "aa", "ab"),
      effectField("strings", "isUUID()", Schema.String.check(Schema.isUUID()), "3b241101-e2bb-4255-8caf-4136c566a962", "3b241101"),
      effectField("strings", 'isStartingWith("a.")', Schema.String.check(Schema.isStartingWith("a.")), "a.b", "ab"),
      effectField("numbers", "Schema.Number", Schema.Number, 1.5, "1"),
      effectField("numbers", "isInt()", Schema.Number.check(Schema.isInt()), 2, 2.5),
      effectField("numbers", "isBetween({ minimum: 0, maximum: 10 })", Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 10 })), 10, 11),
      effectField("numbers", "isMultipleOf(5)", Schema.Number.check(Schema.isMultipleOf(5)), 10, 11),
      effectField("booleans and null", "Schema.Boolean", Schema.Boolean, true, "true"),
      effectField("booleans and null", "Schema.Null", Schema.Null, null, 0),
      effectField("arrays", "Schema.Array(…)", Schema.Array(Schema.Number), [1], ["1"]),
      effectField("objects", "Schema.Struct(…)", Schema.Struct({ a: Schema.Number }), { a: 1 }, {}),
      effectField("records", "Schema.Record(Schema.String, …)", Schema.Record(Schema.String, Schema.Number), { x: 1 }, { x: "1" }),
      effectField("tuples", "Schema.Tuple([…])", Schema.Tuple([Schema.String, Schema.Number]), ["a", 1], ["a", "b"]),
      effectField("unions", "Schema.Union([…])", Schema.Union([Schema.String, Schema.Number]), 1, true),
      effectField("optional and nullable", "Schema.NullOr(…)", Schema.NullOr(Schema.Number), null, "1"),
      effectField("enums and literals", "Schema.Literals([…])", Schema.Literals(["a", "b"]), "a", "c"),
      effectField(
        "refinements and transformations",
        "makeFilter(…)",
        Schema.Number.check(Schema.makeFilter((n: number) => n % 2 === 0 || "must be even")),
        2,
        3,
      ),
      effectField("refinements and transformations", "Schema.FiniteFromString", Schema.FiniteFromString, "12", "x"),
    ],
    noJsonForm: [],
  },
];

const DOCS = new URL("../../docs/specs.md", import.meta.url);

describe.each(LIBRARIES)("$name checks in a spec", (library) => {
  const rows: Array<{ family: string; check: string; keywords: string[]; refusedBy: string }> = [];

  it.each(library.cases.map((entry) => [`${entry.family}: ${entry.check}`, entry] as const))("%s", (_label, { family, check, schema, good, bad }) => {
    const spec = resolveSpec(schema);
    expect(checkValueSync(spec, { v: good }).errors).toEqual([]);
    const refused = checkValueSync(spec, { v: bad });
    expect(refused.valid).toBe(false);
    // Every message names the field (v) and what was found there.
    for (const error of refused.errors) expect(error).toMatch(/^v\b.* (is|has|must)\b/);
    const properties = (spec.schema.properties ?? {}) as Record<string, JsonSchema>;
    rows.push({ family, check, keywords: keywordsOf(properties.v), refusedBy: spec.checkSchema({ v: bad }) === true ? library.name : "JSON Schema" });
  });

  it.each(library.noJsonForm.map((entry) => [entry.check, entry] as const))("%s has no JSON form: refused when the spec is defined", (_label, { schema }) => {
    expect(() => resolveSpec(schema as never)).toThrow(new RegExp(`^Spec "output": its ${library.name} schema has no JSON Schema form here: `));
  });

  it(`docs/specs.md holds the ${library.name} table this walk gives`, () => {
    expect(rows).toHaveLength(library.cases.length);
    const bySchema = rows.filter((row) => row.refusedBy === "JSON Schema").length;
    const lines = [
      `${rows.length} ${library.name} checks, walked by the test: every one works in a spec. For ${bySchema} the JSON Schema refuses the test's bad value (the validator's exact message); ` +
        `for ${rows.length - bySchema} ${library.name} does (what its JSON Schema does not say). ${library.name} runs last on every value either way.` +
        (library.noJsonForm.length > 0 ? ` ${library.noJsonForm.length} types have no JSON form and are refused when the spec is defined.` : ""),
      "",
      `| Family | ${library.name} | JSON Schema keywords | Bad value refused by |`,
      "| --- | --- | --- | --- |",
      ...rows.map(
        (row) =>
          `| ${row.family} | \`${row.check.replace(/\|/g, "\\|")}\` | ${row.keywords.map((k) => `\`${k}\``).join(", ") || "(none)"} | ${row.refusedBy} |`,
      ),
      ...library.noJsonForm.map((entry) => `| no JSON form | \`${entry.check.replace(/\|/g, "\\|")}\` | refused when the spec is defined | |`),
    ];
    const start = `<!-- ${library.key}-support:start (generated by tests/specs/library-support.test.ts; UPDATE_DOCS=1 rewrites it) -->`;
    const table = `${start}\n${lines.join("\n")}\n<!-- ${library.key}-support:end -->`;
    const docs = readFileSync(DOCS, "utf8");
    const block = new RegExp(`<!-- ${library.key}-support:start[^>]*-->[\\s\\S]*?<!-- ${library.key}-support:end -->`);
    if (process.env.UPDATE_DOCS === "1") writeFileSync(DOCS, docs.replace(block, table));
    expect(docs.match(block)?.[0]).toBe(table);
  });
});
