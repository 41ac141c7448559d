/**
 * Every zod 4 check family, walked: each check is defined as a spec (as a
 * field `v` of an object), a value it accepts passes, a value it refuses
 * fails with a message naming the field; a type with no JSON form is refused
 * with what to use instead. The support table in docs/specs.md is generated
 * from this walk and asserted equal (UPDATE_DOCS=1 rewrites it).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkValueSync } from "../../src/specs/check.js";
import { defineSpec, type JsonSchema } from "../../src/specs/spec.js";
import { keywordsOf } from "../support/schema-keywords.js";

interface Case {
  family: string;
  check: string;
  schema: z.ZodType;
  good: unknown;
  bad: unknown;
}

const Tree: z.ZodType<{ name: string; children: unknown[] }> = z.object({ name: z.string(), children: z.array(z.lazy(() => Tree)) });
enum Color {
  Red = "red",
  Blue = "blue",
}

const c = (family: string, check: string, schema: z.ZodType, good: unknown, bad: unknown): Case => ({ family, check, schema, good, bad });

const CASES: Case[] = [
  c("strings", "z.string()", z.string(), "a", 1),
  c("strings", ".min(2) / .max(3)", z.string().min(2).max(3), "ab", "a"),
  c("strings", ".length(2)", z.string().length(2), "ab", "abc"),
  c("strings", ".regex(/^a+$/)", z.string().regex(/^a+$/), "aa", "ab"),
  c("strings", ".regex(/^a+$/i) (flags)", z.string().regex(/^a+$/i), "AA", "ab"),
  c("strings", '.startsWith("a.")', z.string().startsWith("a."), "a.b", "ab"),
  c("strings", '.endsWith("$x")', z.string().endsWith("$x"), "a$x", "ax"),
  c("strings", '.includes("(m)")', z.string().includes("(m)"), "a(m)b", "amb"),
  c("strings", ".lowercase()", z.string().lowercase(), "ab", "aB"),
  c("strings", ".uppercase()", z.string().uppercase(), "AB", "aB"),
  c("strings", ".trim() / .toLowerCase() (transforms)", z.string().trim().toLowerCase(), " Ab ", 1),
  c("strings", "z.email()", z.email(), "ada@example.com", "ada@"),
  c("strings", "z.url()", z.url(), "https://example.com/x", "not a url"),
  c("strings", "z.url({ protocol, hostname })", z.url({ protocol: /^https$/, hostname: /\.example\.com$/ }), "https://api.example.com", "https://example.org"),
  c("strings", "z.httpUrl()", z.httpUrl(), "https://example.com", "ftp://example.com"),
  c("strings", "z.uuid()", z.uuid(), "3b241101-e2bb-4255-8caf-4136c566a962", "3b241101-e2bb-4255-8caf"),
  c("strings", "z.uuidv4()", z.uuidv4(), "3b241101-e2bb-4255-8caf-4136c566a962", "3b241101"),
  c("strings", "z.guid()", z.guid(), "3b241101-e2bb-4255-8caf-4136c566a962", "x"),
  c("strings", "z.cuid()", z.cuid(), "cjld2cjxh0000qzrmn831i7rn", "x"),
  c("strings", "z.cuid2()", z.cuid2(), "tz4a98xxat96iws9zmbrgj3a", "A!"),
  c("strings", "z.nanoid()", z.nanoid(), "V1StGXR8_Z5jdHi6B-myT", "short"),
  c("strings", "z.ulid()", z.ulid(), "01ARZ3NDEKTSV4RRFFQ69G5FAV", "x"),
  c("strings", "z.xid()", z.xid(), "9m4e2mr0ui3e8a215n4g", "x"),
  c("strings", "z.ksuid()", z.ksuid(), "0ujtsYcgvSTl8PAuAdqWYSMnLOv", "x"),
  c("strings", "z.emoji()", z.emoji(), "😀", "a"),
  c("strings", "z.base64()", z.base64(), "aGk=", "a"),
  c("strings", "z.base64url()", z.base64url(), "aGk", "a+"),
  c("strings", "z.hex()", z.hex(), "ff", "fg"),
  c("strings", 'z.hash("sha256")', z.hash("sha256"), "a".repeat(64), "a"),
  c("strings", "z.e164()", z.e164(), "+14155552671", "4155552671"),
  c("strings", "z.jwt()", z.jwt(), "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.c2ln", "abc"),
  c("strings", "z.ipv4()", z.ipv4(), "10.0.0.1", "10.0.0.256"),
  c("strings", "z.ipv6()", z.ipv6(), "::1", "::g"),
  c("strings", "z.cidrv4()", z.cidrv4(), "10.0.0.0/8", "10.0.0.0"),
  c("strings", "z.cidrv6()", z.cidrv6(), "2001:db8::/32", "2001:db8::"),
  c("strings", "z.mac()", z.mac(), "00:1a:2b:3c:4d:5e", "00:1a"),
  c("strings", "z.hostname()", z.hostname(), "example.com", "-x"),
  c("strings", "z.creditCard()", z.creditCard(), "4242424242424242", "4242424242424241"),
  c("strings", "z.iban()", z.iban(), "GB82WEST12345698765432", "GB82WEST12345698765433"),
  c("strings", "z.iso.date()", z.iso.date(), "2024-02-29", "2023-02-29"),
  c("strings", "z.iso.time()", z.iso.time(), "12:30:00", "25:00"),
  c("strings", "z.iso.datetime()", z.iso.datetime(), "2024-01-02T03:04:05Z", "2024-01-02"),
  c("strings", "z.iso.datetime({ offset: true })", z.iso.datetime({ offset: true }), "2024-01-02T03:04:05+02:00", "2024-01-02"),
  c("strings", "z.iso.duration()", z.iso.duration(), "P1DT2H", "P1X"),
  c("strings", "z.templateLiteral()", z.templateLiteral(["v", z.number()]), "v2", "w2"),
  c("strings", "z.stringbool()", z.stringbool(), "yes", "maybe"),
  c("numbers", "z.number()", z.number(), 1.5, "1"),
  c("numbers", ".int() / z.int()", z.int(), 2, 2.5),
  c("numbers", "z.int32()", z.int32(), 7, 2 ** 31),
  c("numbers", "z.uint32()", z.uint32(), 7, -1),
  c("numbers", "z.float32()", z.float32(), 1.5, 1e39),
  c("numbers", ".gt(0) / .lt(10)", z.number().gt(0).lt(10), 5, 10),
  c("numbers", ".gte(0) / .lte(10)", z.number().gte(0).lte(10), 10, 11),
  c("numbers", ".positive() / .nonnegative()", z.number().positive(), 1, 0),
  c("numbers", ".negative() / .nonpositive()", z.number().negative(), -1, 0),
  c("numbers", ".multipleOf(5)", z.number().multipleOf(5), 10, 11),
  c("booleans and null", "z.boolean()", z.boolean(), true, "true"),
  c("booleans and null", "z.null()", z.null(), null, 0),
  c("arrays", "z.array()", z.array(z.number()), [1], ["1"]),
  c("arrays", ".nonempty() / .max(2)", z.array(z.number()).nonempty().max(2), [1], []),
  c("arrays", ".min(2) / .length(2)", z.array(z.number()).min(2), [1, 2], [1]),
  c("objects", "z.object()", z.object({ a: z.number() }), { a: 1 }, {}),
  c("objects", "z.strictObject() / .strict()", z.strictObject({ a: z.number() }), { a: 1 }, { a: 1, b: 2 }),
  c("objects", "z.looseObject() / .passthrough()", z.looseObject({ a: z.number() }), { a: 1, b: 2 }, { b: 2 }),
  c("objects", ".catchall(z.number())", z.object({ a: z.string() }).catchall(z.number()), { a: "x", b: 2 }, { a: "x", b: "y" }),
  c(
    "objects",
    ".partial() / .required() / .extend() / .pick() / .omit()",
    z.object({ a: z.number(), b: z.string() }).partial().required({ a: true }).extend({ c: z.boolean() }).omit({ b: true }),
    { a: 1, c: true },
    { a: 1 },
  ),
  c("records", "z.record(z.string(), …)", z.record(z.string(), z.number()), { x: 1 }, { x: "1" }),
  c("records", "z.record(z.enum([…]), …)", z.record(z.enum(["a", "b"]), z.number()), { a: 1, b: 2 }, { a: 1 }),
  c("records", "z.partialRecord(z.enum([…]), …)", z.partialRecord(z.enum(["a", "b"]), z.number()), { a: 1 }, { c: 1 }),
  c("records", "z.record(z.string().regex(…), …)", z.record(z.string().regex(/^k_/), z.number()), { k_a: 1 }, { a: 1 }),
  c("tuples", "z.tuple([…])", z.tuple([z.string(), z.number()]), ["a", 1], ["a", "b"]),
  c("tuples", "z.tuple([…], rest)", z.tuple([z.string()], z.number()), ["a", 1, 2], ["a", "b"]),
  c("unions", "z.union([…])", z.union([z.string(), z.number()]), 1, true),
  c(
    "unions",
    "z.discriminatedUnion()",
    z.discriminatedUnion("kind", [z.object({ kind: z.literal("a"), a: z.number() }), z.object({ kind: z.literal("b"), b: z.string() })]),
    { kind: "b", b: "x" },
    { kind: "b", b: 1 },
  ),
  c("unions", "z.intersection() / .and()", z.object({ a: z.number() }).and(z.object({ b: z.number() })), { a: 1, b: 2 }, { a: 1 }),
  c("optional, nullable, default", ".optional()", z.number().optional(), 1, "1"),
  c("optional, nullable, default", ".nullable() / .nullish()", z.number().nullish(), null, "1"),
  c("optional, nullable, default", ".default(…)", z.number().default(3), 1, "1"),
  c("optional, nullable, default", ".prefault(…)", z.number().prefault(3), 1, "1"),
  c("optional, nullable, default", ".catch(…)", z.number().catch(0), 1, "1"),
  c("optional, nullable, default", ".readonly()", z.array(z.number()).readonly(), [1], ["1"]),
  c("enums and literals", "z.enum([…])", z.enum(["a", "b"]), "a", "c"),
  c("enums and literals", "z.enum(TypeScriptEnum)", z.enum(Color), "red", "green"),
  c("enums and literals", "z.literal(…)", z.literal("on"), "on", "off"),
  c("enums and literals", "z.literal([…])", z.literal([1, 2]), 2, 3),
  c(
    "transforms and pipes",
    ".transform(…)",
    z.string().transform((s) => s.length),
    "abc",
    3,
  ),
  c("transforms and pipes", ".pipe(…)", z.string().pipe(z.string().min(2)), "ab", "a"),
  c(
    "transforms and pipes",
    "z.preprocess(…)",
    z.preprocess((v) => (typeof v === "string" ? v.trim() : v), z.string().min(2)),
    " ab ",
    " a ",
  ),
  c("transforms and pipes", "z.coerce.number()", z.coerce.number(), 3, "x"),
  c(
    "refinements",
    ".refine(…)",
    z.number().refine((n) => n % 2 === 0, "must be even"),
    2,
    3,
  ),
  c(
    "refinements",
    ".superRefine(…)",
    z.string().superRefine((s, ctx) => (s.includes(" ") ? ctx.addIssue({ code: "custom", message: "no spaces" }) : undefined)),
    "ab",
    "a b",
  ),
  c(
    "refinements",
    ".check(…)",
    z.number().check((ctx) => {
      if (ctx.value > 9) ctx.issues.push({ code: "custom", message: "one digit", input: ctx.value });
    }),
    9,
    10,
  ),
  c("refinements", ".brand()", z.string().min(1).brand("Name"), "a", ""),
  c("recursion", "z.lazy(…)", Tree, { name: "a", children: [{ name: "b", children: [] }] }, { name: "a", children: [{ name: 1, children: [] }] }),
];

interface Unrepresentable {
  check: string;
  schema: z.ZodType;
  instead: RegExp;
}

const NO_JSON_FORM: Unrepresentable[] = [
  { check: "z.date()", schema: z.date(), instead: /use z\.iso\.datetime\(\)/ },
  { check: "z.bigint()", schema: z.bigint(), instead: /use z\.int\(\)/ },
  { check: "z.map()", schema: z.map(z.string(), z.number()), instead: /use z\.record\(/ },
  { check: "z.set()", schema: z.set(z.string()), instead: /use z\.array\(/ },
  { check: "z.nan()", schema: z.nan(), instead: /use z\.number\(\)/ },
  { check: "z.symbol()", schema: z.symbol(), instead: /use a JSON type/ },
  { check: "z.undefined()", schema: z.undefined(), instead: /use \.optional\(\)/ },
  { check: "z.custom() / z.instanceof()", schema: z.instanceof(URL), instead: /use a JSON type/ },
];

/** Values at the edges, where a standard format or zod's emitted pattern could be stricter than zod's own check: the spec agrees with zod. */
const EDGES: Array<[string, z.ZodType, unknown[]]> = [
  ["z.hostname()", z.hostname(), ["example.com.", "localhost", "-x", "a..b"]],
  ["z.iso.duration()", z.iso.duration(), ["PT1.5S", "PT1,5S", "P1W", "P1Y2D", "P"]],
  ["z.url()", z.url(), ["https://example.com/a b", "https://exämple.com", "http://localhost:3000", "not a url"]],
  ["z.ipv6()", z.ipv6(), ["::ffff:192.168.0.1", "::1", "fe80::1%eth0", "::g"]],
  ["z.cidrv6()", z.cidrv6(), ["::ffff:192.168.0.1/96", "2001:db8::/32", "2001:db8::/129"]],
  ["z.email()", z.email(), ["a.b+c@example.co.uk", "o'neil@example.com", "a@b", "a@@b.com"]],
  ["z.uuid()", z.uuid(), ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "3b241101-e2bb-4255-8caf-4136c566a96"]],
  ["z.iso.datetime()", z.iso.datetime(), ["2024-01-02T03:04:05.123456789Z", "2024-01-02T03:04Z", "2024-01-02T03:04:05+01:00"]],
  ["z.base64()", z.base64(), ["", "aGk=", "aGk", "aG k="]],
];

interface Row {
  family: string;
  check: string;
  keywords: string[];
  zodOnly: boolean;
  /** Who refused the bad value: the JSON Schema (ajv), or zod alone (the JSON Schema let it through). */
  refusedBy: "JSON Schema" | "zod";
}

const rows: Row[] = [];

describe("every zod check family", () => {
  it.each(CASES.map((entry) => [`${entry.family}: ${entry.check}`, entry] as const))("%s", (_label, { family, check, schema, good, bad }) => {
    const spec = defineSpec({ schema: z.object({ v: schema }) });
    const accepted = checkValueSync(spec, { v: good });
    expect(accepted.errors).toEqual([]);
    const refused = checkValueSync(spec, { v: bad });
    expect(refused.valid).toBe(false);
    // Every message names the field (v) and what was found there.
    for (const error of refused.errors) expect(error).toMatch(/^v\b.* (is|has|must)\b/);
    const zodOnly = (spec.zodOnly?.size ?? 0) > 0;
    if (zodOnly) expect(refused.errors.join("\n")).toMatch(/\(zod check [a-z_0-9]+\)/);
    const refusedBy = spec.checkSchema({ v: bad }) === true ? "zod" : "JSON Schema";
    rows.push({ family, check, keywords: keywordsOf((spec.schema.properties as Record<string, JsonSchema>).v), zodOnly, refusedBy });
  });

  it.each(NO_JSON_FORM.map((entry) => [entry.check, entry] as const))(
    "%s has no JSON form: refused with what to use instead",
    (_label, { schema, instead }) => {
      expect(() => defineSpec({ schema: z.object({ v: schema }) })).toThrow(/no JSON Schema form at properties\.v: /);
      expect(() => defineSpec({ schema: z.object({ v: schema }) })).toThrow(instead);
    },
  );

  it.each(EDGES)("%s: the spec accepts exactly what zod accepts at the edges", (_label, schema, values) => {
    const spec = defineSpec({ schema: z.object({ v: schema }) });
    for (const v of values) expect([v, checkValueSync(spec, { v }).valid]).toEqual([v, schema.safeParse(v).success]);
  });

  it("docs/specs.md holds the support table this walk gives", () => {
    expect(rows).toHaveLength(CASES.length);
    const bySchema = rows.filter((row) => row.refusedBy === "JSON Schema").length;
    const zodOnly = rows.filter((row) => row.zodOnly).length;
    const families = new Set(rows.map((row) => row.family)).size;
    const lines = [
      `${rows.length} zod checks in ${families} families, walked by the test: every one works in a spec. For ${bySchema} the JSON Schema refuses the test's bad value (the validator's exact message); ` +
        `for ${rows.length - bySchema} zod does (refinements, transforms and pipes, and ${zodOnly} checks the JSON Schema cannot carry, whose message names the zod check). ` +
        `zod runs last on every value either way. ${NO_JSON_FORM.length} types have no JSON form and are refused when the spec is defined, with what to use instead.`,
      "",
      "| Family | zod | JSON Schema keywords | Bad value refused by |",
      "| --- | --- | --- | --- |",
      ...rows.map(
        (row) =>
          `| ${row.family} | \`${row.check.replace(/\|/g, "\\|")}\` | ${row.keywords.map((k) => `\`${k}\``).join(", ") || "(none)"} | ${row.zodOnly ? "zod (the JSON Schema cannot say all of it)" : row.refusedBy} |`,
      ),
      ...NO_JSON_FORM.map((entry) => `| no JSON form | \`${entry.check}\` | refused when the spec is defined | |`),
    ];
    const table = `<!-- zod-support:start (generated by tests/specs/zod-support.test.ts; UPDATE_DOCS=1 rewrites it) -->\n${lines.join("\n")}\n<!-- zod-support:end -->`;
    const path = new URL("../../docs/specs.md", import.meta.url);
    const docs = readFileSync(path, "utf8");
    const block = /<!-- zod-support:start[^>]*-->[\s\S]*?<!-- zod-support:end -->/;
    if (process.env.UPDATE_DOCS === "1") writeFileSync(path, docs.replace(block, table));
    expect(docs.match(block)?.[0]).toBe(table);
  });
});
