/** The check step's contract: valid only when every check ran to completion and passed; anything else is invalid, with the reason. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SpecError } from "../../src/errors.js";
import { parseExactJson } from "../../src/json/parse.js";
import { toJsonData } from "../../src/json/data.js";
import { PATTERN_CHARS_PER_VALIDATION } from "../../src/specs/ajv.js";
import { checkText, checkValue, checkValueSync } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec } from "../../src/specs/spec.js";
import { ZOD_SPEC_LIMITS } from "../../src/specs/zod.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

const PAD = "x".repeat(PATTERN_CHARS_PER_VALIDATION + 1);
/** A field whose pattern reads the padding first, spending the budget (under `not`, so "no match" would pass it). */
const PADDED = { type: "string", not: { pattern: "^y" } };

describe("a spent pattern budget never reads as a pass", () => {
  // Each spec forbids something with a pattern under a keyword that turns "no match" into a pass.
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      "not",
      { type: "object", properties: { pad: PADDED, q: { type: "string", not: { pattern: "[Dd][Rr][Oo][Pp]\\s+[Tt][Aa][Bb][Ll][Ee]" } } } },
      { pad: PAD, q: "DROP TABLE users" },
    ],
    [
      "if/then",
      {
        type: "object",
        properties: { pad: PADDED, q: { type: "string" } },
        if: { properties: { q: { pattern: "^admin" } } },
        then: { required: ["approval"] },
      },
      { pad: PAD, q: "admin-delete" },
    ],
    [
      "patternProperties",
      { type: "object", properties: { pad: PADDED }, patternProperties: { "^secret": { type: "integer" } } },
      { pad: PAD, secret_key: "leaked" },
    ],
    ["propertyNames", { type: "object", properties: { pad: PADDED }, propertyNames: { not: { pattern: "^__" } } }, { pad: PAD, __proto_like: 1 }],
    [
      "the same field",
      { type: "object", properties: { q: { type: "string", not: { pattern: "[Dd][Rr][Oo][Pp]\\s+[Tt][Aa][Bb][Ll][Ee]" } } } },
      { q: `${PAD}DROP TABLE users` },
    ],
  ];
  it.each(cases)("under %s, in the same answer as 250,001 characters elsewhere", async (_label, schema, value) => {
    const spec = resolveSpec({ name: "guarded", schema });
    // The same value without the padding is refused on its merits; with it, still refused, saying why.
    const { pad: _pad, ...unpadded } = value;
    if (_pad !== undefined) expect(checkValueSync(spec, unpadded).valid).toBe(false);
    const report = checkValueSync(spec, value);
    expect(report.valid).toBe(false);
    expect(report.errors.join("\n")).toMatch(/could not all run and the value is not accepted/);
    // Through the graph: success false.
    const out = await buildValidationGraph({ model: scriptedModel([JSON.stringify(value)]) }).invoke(
      { request: "x" },
      { context: { spec: { name: "guarded", schema }, maxAttempts: 1 } },
    );
    expect(out.success).toBe(false);
  });

  it("a value that fits the budget is judged on its merits", () => {
    const spec = resolveSpec({ type: "object", properties: { q: { type: "string", not: { pattern: "[Dd][Rr][Oo][Pp]\\s+[Tt][Aa][Bb][Ll][Ee]" } } } });
    expect(checkValueSync(spec, { q: "select 1", pad: "x".repeat(1000) }).valid).toBe(true);
  });
});

describe("anything that did not run to completion is invalid", () => {
  const rule = (check: () => unknown) =>
    defineSpec({ name: "r", description: "", schema: { type: "object" }, rules: [{ id: "odd", description: "odd", inputs: {}, check: check as never }] });
  it.each([
    ["undefined", () => undefined, /returned undefined/],
    ["true", () => true, /returned boolean/],
    ["a number", () => 0, /returned number/],
    ["a list with a non-string", () => [1], /returned object/],
    [
      "a throw",
      () => {
        throw new Error("boom");
      },
      /could not be checked: boom/,
    ],
  ])("a rule that returns %s", async (_label, check, message) => {
    const report = checkValueSync(rule(check), {});
    expect(report.valid).toBe(false);
    expect(report.errors[0]).toMatch(message);
    expect((await checkValue(rule(check), {})).valid).toBe(false);
  });

  it("a stack overflow inside the validator is a verdict of invalid, not a throw", () => {
    const spec = defineSpec({
      name: "deep",
      description: "",
      schema: { $ref: "#/definitions/n", definitions: { n: { type: "object", properties: { a: { $ref: "#/definitions/n" } } } } },
    });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 60; i++) deep = { a: deep };
    // Within the depth bound, judged; past it, refused as too deep.
    expect(checkValueSync(spec, deep).valid).toBe(true);
    let deeper: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deeper = { a: deeper };
    const report = checkValueSync(spec, deeper);
    expect(report.valid).toBe(false);
    expect(report.errors[0]).toMatch(/nests deeper than 64 levels/);
  });
});

describe("rules that consult the run: context, and asynchronous lookups under a deadline", () => {
  type Services = { services: string[] };
  const deployTo = (check: (values: Record<string, any>, document: unknown, context: Services) => unknown) =>
    defineSpec<Record<string, unknown>, Services>({
      name: "deploy",
      description: "",
      schema: { type: "object", required: ["target"], properties: { target: { type: "string" } } },
      rules: [{ id: "known-target", description: "target must be a service that exists", inputs: { target: "string" }, check: check as never }],
    });
  const known = (v: Record<string, any>, _d: unknown, context: Services) =>
    context.services.includes(v.target) ? null : `target is ${JSON.stringify(v.target)}; it must be one of ${context.services.join(", ")}`;

  it("a rule reads the context given with the check", async () => {
    const spec = deployTo(known);
    const context = { services: ["billing", "payments"] };
    expect((await checkValue(spec, { target: "payments" }, { context })).valid).toBe(true);
    expect((await checkValue(spec, { target: "orders" }, { context })).errors).toEqual(['target is "orders"; it must be one of billing, payments']);
    expect(checkValueSync(spec, { target: "orders" }, { context }).valid).toBe(false);
  });

  it("an asynchronous rule is awaited; one that rejects, throws later, times out or resolves to a non-answer is invalid", async () => {
    const lookup = deployTo(async (v, d, context) => known(v, d, context));
    const context = { services: ["payments"] };
    expect((await checkValue(lookup, { target: "payments" }, { context })).valid).toBe(true);
    expect((await checkValue(lookup, { target: "orders" }, { context })).valid).toBe(false);
    const rejects = await checkValue(
      deployTo(async () => {
        throw new Error("registry down");
      }),
      { target: "payments" },
      { context },
    );
    expect(rejects.errors).toEqual(['rule "known-target" could not be checked: it failed: registry down']);
    const never = await checkValue(
      deployTo(() => new Promise(() => undefined)),
      { target: "payments" },
      { context, timeoutMs: 50 },
    );
    expect(never.errors).toEqual(['rule "known-target" could not be checked: it did not finish within 50 ms']);
    const odd = await checkValue(
      deployTo(async () => true),
      { target: "payments" },
      { context },
    );
    expect(odd.errors).toEqual(['rule "known-target" could not be checked: it returned boolean, not null (satisfied) or the problem(s)']);
    // The synchronous form cannot wait: invalid, saying so, and nothing is left unobserved.
    const sync = checkValueSync(
      deployTo(async () => {
        throw new Error("late");
      }),
      { target: "payments" },
      { context },
    );
    expect(sync.errors[0]).toMatch(/it is asynchronous, and only the asynchronous check step/);
  });

  it("through the graph: the run's ruleContext reaches the rules, and is kept for the whole run", async () => {
    const spec = deployTo(async (v, d, context) => known(v, d, context));
    const model = scriptedModel(['{"target": "orders"}', '{"target": "payments"}']);
    const out = await buildValidationGraph({ model, spec }).invoke(
      { request: "deploy" },
      { context: { maxAttempts: 2, ruleContext: { services: ["payments"] } } },
    );
    expect(out).toMatchObject({ success: true, attempts: 2, value: { target: "payments" } });
    expect(out.history[0].errors).toEqual(['target is "orders"; it must be one of payments']);
  });
});

describe("values are read as JSON data", () => {
  const open = defineSpec({ name: "open", description: "", schema: {} });
  it.each([
    [
      "a cycle",
      () => {
        const a: Record<string, unknown> = {};
        a.me = a;
        return a;
      },
      "me refers to itself (a cycle), which JSON cannot hold",
    ],
    ["a BigInt", () => ({ n: 1n }), "n is a BigInt, which JSON has no form for; use a number or a string"],
    ["NaN", () => [NaN], "[0] is NaN, which JSON has no form for; use a finite number or null"],
    ["a function", () => ({ f: () => 1 }), "f is a function, which JSON has no form for"],
    ["a Date", () => ({ d: new Date(0) }), /^d is a Date, not plain JSON data/],
    ["a Map", () => new Map(), /^the value is a Map, not plain JSON data/],
    [
      "a getter",
      () => ({
        get g() {
          return 1;
        },
      }),
      "g is computed by a getter, not plain JSON data",
    ],
    ["a sparse array", () => [1, , 3], "[1] is missing (a sparse array), which JSON cannot hold"], // eslint-disable-line no-sparse-arrays
    ["a symbol key", () => ({ [Symbol("s")]: 1 }), "the value has a symbol-keyed field, not plain JSON data"],
  ])("%s is refused with the reason", async (_label, make, message) => {
    const report = await checkValue(open, make());
    expect(report.valid).toBe(false);
    if (typeof message === "string") expect(report.errors).toEqual([message]);
    else expect(report.errors[0]).toMatch(message);
  });

  it("the same object twice is not a cycle; a field named __proto__ is refused (a checkpoint would not give it back)", () => {
    const shared = { a: 1 };
    expect(toJsonData({ left: shared, right: shared })).toEqual({ ok: true, value: { left: { a: 1 }, right: { a: 1 } } });
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}');
    expect(toJsonData({ p: parsed })).toEqual({
      ok: false,
      error: 'p has a field named "__proto__", which a checkpoint would not give back as written; rename the field',
    });
  });

  it("the value returned is a copy: changing the caller's object afterwards changes nothing", async () => {
    const value = { service: "a" };
    const report = await checkValue(open, value);
    value.service = "b";
    expect(report.value).toEqual({ service: "a" });
  });
});

describe("two readers: a model's answer is extracted, a person's answer is read exactly", () => {
  const spec = defineSpec({ name: "n", description: "", schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } } });
  it("prose around the JSON is read for a model, refused for a person", async () => {
    expect((await checkText(spec, 'Here it is: {"n": 1} hope that helps', "model")).valid).toBe(true);
    const person = await checkText(spec, '{"n": 1} and then anything', "exact");
    expect(person.valid).toBe(false);
    expect(person.errors[0]).toMatch(
      /^The value is not valid JSON \(exactly one JSON value is expected, nothing before or after it\): Unexpected non-whitespace character after JSON at line 1, column 10/,
    );
    expect((await checkText(spec, '  {"n": 1}\n', "exact")).valid).toBe(true);
  });
  it("both readers are bounded the same way", () => {
    expect(parseExactJson("[".repeat(100) + "]".repeat(100))).toEqual({
      ok: false,
      error: "The JSON nests deeper than 64 levels; the expected object is shallow.",
    });
    expect(parseExactJson("1".repeat(20), { maxChars: 10 })).toEqual({ ok: false, error: "The value is 20 characters long, over the limit of 10." });
    expect(parseExactJson('{"a":1,"a":2}')).toMatchObject({ ok: false, error: expect.stringMatching(/names the field "a" twice/) });
  });
});

describe("an answer mapped back (a provider's strict form): the mapped value is the one judged, returned and kept", () => {
  const spec = defineSpec({
    name: "m",
    description: "",
    schema: { type: "object", required: ["n"], properties: { n: { type: "integer" }, note: { type: "string" } }, additionalProperties: false },
  });
  const dropNullNote = (value: unknown) => {
    const record = value as Record<string, unknown>;
    if (record.note !== null) return { value, changes: [] };
    delete record.note;
    return { value, changes: ["/note: null removed"] };
  };
  it("the model's reader maps before judging; the verdict's value is the mapped value, frozen, and says what changed", async () => {
    const verdict = await checkText(spec, '{"n": 1, "note": null}', "model", { mapBack: dropNullNote });
    expect(verdict).toMatchObject({ valid: true, value: { n: 1 }, mappedBack: ["/note: null removed"] });
    expect(verdict.parsed).toBe(verdict.value);
    expect(Object.isFrozen(verdict.value)).toBe(true);
    // Nothing changed: no record of it.
    expect((await checkText(spec, '{"n": 1}', "model", { mapBack: dropNullNote })).mappedBack).toBeUndefined();
  });
  it("what the mapping leaves invalid is refused; the exact reader never maps", async () => {
    const invalid = await checkText(spec, '{"n": null, "note": null}', "model", { mapBack: dropNullNote });
    expect(invalid).toMatchObject({ valid: false, parsed: { n: null } });
    const exact = await checkText(spec, '{"n": 1, "note": null}', "exact", { mapBack: dropNullNote });
    expect(exact.valid).toBe(false);
    expect(exact.mappedBack).toBeUndefined();
  });
});

describe("zod specs", () => {
  it("an async refinement that rejects makes the value invalid; nothing is left unobserved", async () => {
    const spec = defineSpec({
      name: "lookup",
      description: "",
      schema: z.object({
        id: z.string().refine(async () => {
          throw new Error("lookup down");
        }),
      }),
    });
    expect(spec.zodAsync).toBe(true);
    const report = await checkValue(spec, { id: "a" });
    expect(report.valid).toBe(false);
    expect(report.errors[0]).toMatch(/could not check the value with its zod schema: it failed: lookup down/);
    // The synchronous form does not run it at all (running it would leave a rejected Promise behind).
    const sync = checkValueSync(spec, { id: "a" });
    expect(sync.valid).toBe(false);
    expect(sync.errors[0]).toMatch(/asynchronous refinements, which only the asynchronous check step/);
    // Through the graph: a clean failure, and the process is still here (vitest fails the file on an unhandled rejection).
    const out = await buildValidationGraph({ model: scriptedModel(['{"id": "a"}']), spec }).invoke({ request: "x" }, { context: { maxAttempts: 1 } });
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts" });
  });

  it("an async refinement that resolves is awaited; one that never settles times out as invalid", async () => {
    const spec = defineSpec({ name: "lookup", description: "", schema: z.object({ id: z.string().refine(async (v) => v === "known", "unknown id") }) });
    expect((await checkValue(spec, { id: "known" })).valid).toBe(true);
    expect((await checkValue(spec, { id: "other" })).errors).toEqual(['id is "other"; unknown id']);
    const stuck = defineSpec({ name: "stuck", description: "", schema: z.object({ id: z.string().refine(() => new Promise<boolean>(() => undefined)) }) });
    const report = await checkValue(stuck, { id: "a" }, { timeoutMs: 50 });
    expect(report.valid).toBe(false);
    expect(report.errors[0]).toMatch(/did not finish within 50 ms/);
  });

  it.each([
    ["a function", () => () => 1],
    ["a BigInt", () => 1n],
    ["a Symbol", () => Symbol("s")],
    [
      "a cycle",
      () => {
        const a: Record<string, unknown> = {};
        a.a = a;
        return a;
      },
    ],
    ["a Date", () => new Date(0)],
  ] as Array<[string, () => unknown]>)("a transform whose output is %s is refused, never reported valid", async (_label, make) => {
    const spec = defineSpec({ name: "t", description: "", schema: z.object({ n: z.number() }).transform(make) });
    for (const report of [checkValueSync(spec, { n: 1 }), await checkValue(spec, { n: 1 })]) {
      expect(report.valid).toBe(false);
      expect(report.errors[0]).toMatch(/turned the value into something that is not JSON data .*change the transform/);
    }
  });

  it("a transform with JSON output is the result", async () => {
    const spec = defineSpec({ name: "t", description: "", schema: z.object({ n: z.number() }).transform((v) => ({ doubled: v.n * 2 })) });
    expect(await checkValue(spec, { n: 2 })).toMatchObject({ valid: true, value: { doubled: 4 } });
  });

  it("a union past the limit is refused by the measure (before anything converts or compiles it), saying what to change", () => {
    const union = z.union(Array.from({ length: 2_000 }, (_, i) => z.object({ k: z.literal(i) })) as unknown as [z.ZodType, z.ZodType]);
    expect(() => defineSpec({ name: "wide", description: "", schema: union })).toThrow(SpecError);
    expect(() => defineSpec({ name: "wide", description: "", schema: union })).toThrow(
      `has a union of 2000 options; the limit is ${ZOD_SPEC_LIMITS.maxBranches}`,
    );
  });

  it("a schema too deep is refused with the limit, not a stack overflow", () => {
    let deep: z.ZodType = z.string();
    for (let i = 0; i < 3_000; i++) deep = z.object({ x: deep });
    expect(() => defineSpec({ name: "deep", description: "", schema: deep })).toThrow(/nests deeper than 64 levels; flatten it/);
    let fine: z.ZodType = z.string();
    for (let i = 0; i < 20; i++) fine = z.object({ x: fine });
    expect(() => defineSpec({ name: "fine", description: "", schema: fine })).not.toThrow();
  });
});
