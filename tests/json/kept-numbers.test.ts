/**
 * Judged is kept, for numbers: the check step judges each number as every checkpoint gives it back, and
 * returns that very value. `-0` is judged, returned and kept as `0` (JSON Schema does not tell them apart;
 * a checkpoint writes `0`); a literal the double it reads as does not hold (`1e-400` reads as 0,
 * `9007199254740993` as 9007199254740992) is refused with its path, never judged as a neighbour. Then a
 * seeded property: every generated answer is refused exactly where its oracle says, and otherwise the value
 * returned, the value kept by MemorySaver and the value the rules judged are one (Object.is on every leaf).
 */
import { readFileSync } from "node:fs";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { extractJson, parseExactJson } from "../../src/json/parse.js";
import { readOnlyCopy, toJsonData } from "../../src/json/data.js";
import { checkText, checkValue, checkValueSync } from "../../src/specs/check.js";
import { defineSpec } from "../../src/specs/spec.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";
import { keptCases, NUMBER_LITERALS, REFUSED, sameJson, seeingSpec } from "../support/kept-values.js";

const serde = new JsonPlusSerializer();
async function roundTrip(value: unknown): Promise<unknown> {
  const [type, bytes] = await serde.dumpsTyped({ value });
  return ((await serde.loadsTyped(type, bytes)) as { value?: unknown }).value;
}

describe("-0 is judged, returned and kept as 0", () => {
  it('{"z": -0}: a rule that tells -0 from 0 judges the 0 that is returned and kept', async () => {
    const negativeZero = defineSpec({
      name: "negative-zero",
      description: "z must be -0",
      schema: { type: "object" },
      rules: [{ id: "neg", description: "", inputs: { z: "number" }, check: (v: { z: number }) => (Object.is(v.z, -0) ? null : "z is 0, not -0") }],
    });
    for (const verdict of [
      await checkText(negativeZero, '{"z": -0}', "model"),
      await checkText(negativeZero, '{"z": -0.0}', "exact"),
      await checkValue(negativeZero, { z: -0 }),
      checkValueSync(negativeZero, { z: -0 }),
    ]) {
      expect(verdict.valid).toBe(false);
      expect(verdict.errors).toEqual(["z is 0, not -0"]);
      expect(Object.is((verdict.parsed as { z: number }).z, 0)).toBe(true);
    }
    // The value returned is the 0 a checkpoint keeps, and the one the rule read.
    const { spec, seen } = seeingSpec();
    const verdict = await checkText(spec, '{"z": -0, "list": [-0, {"w": -0}]}', "model");
    expect(verdict.valid).toBe(true);
    for (const value of [verdict.value, seen[0], await roundTrip(verdict.value)]) expect(sameJson(value, { z: 0, list: [0, { w: 0 }] })).toBe(true);
    expect(Object.is(extractJson("-0").ok && (extractJson("-0") as { value: unknown }).value, 0)).toBe(true);
    expect(Object.is((toJsonData(-0) as { value: unknown }).value, 0)).toBe(true);
  });

  it("through the validation graph and MemorySaver: the result returned is the result every checkpoint holds", async () => {
    const { spec } = seeingSpec();
    const graph = buildValidationGraph({ model: scriptedModel(['{"z": -0}']), spec, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "negative-zero" } };
    const out = await graph.invoke({ request: "z" }, config);
    expect(out.success).toBe(true);
    expect(Object.is((out.value as { z: number }).z, 0)).toBe(true);
    expect(Object.is(((await graph.getState(config)).values.value as { z: number }).z, 0)).toBe(true);
  });
});

describe("a number its double does not hold is refused, with its path", () => {
  it.each(NUMBER_LITERALS.filter(([, kept]) => kept === REFUSED))("%s is refused by both readers, wherever it is", (literal) => {
    for (const read of [extractJson(`{"a": {"b": [1, ${literal}]}}`), parseExactJson(`{"a": {"b": [1, ${literal}]}}`)]) {
      expect(read.ok).toBe(false);
      expect((read as { error: string }).error).toMatch(/^The JSON cannot be kept as written: a\.b\[1\] is (the number|a number out of range)/);
    }
    expect((parseExactJson(literal) as { error: string }).error).toMatch(/^The JSON cannot be kept as written: the value is /);
  });

  it.each(NUMBER_LITERALS.filter(([, kept]) => kept !== REFUSED))("%s is read as the number it names", (literal, kept) => {
    expect(sameJson((parseExactJson(`{"n": ${literal}}`) as { value: unknown }).value, { n: kept })).toBe(true);
  });

  it("the message says what it reads as and what to write instead", () => {
    expect(extractJson('{"id": 9007199254740993, "tiny": 1}')).toEqual({
      ok: false,
      error:
        "The JSON cannot be kept as written: id is the number 9007199254740993, which reads as 9007199254740992: it would be judged and kept as 9007199254740992, not as written; write it with at most 15 significant digits (or as a string, if every digit matters).",
    });
    expect((extractJson('Here: {"x": {"y": 1e-400}}') as { error: string }).error).toMatch(/x\.y is the number 1e-400, which reads as 0: /);
    // A syntax slip repaired does not hide one.
    expect((extractJson("{'x': 0.1000000000000000000001,}") as { error: string }).error).toMatch(
      /x is the number 0\.1000000000000000000001, which reads as 0\.1/,
    );
    // Inside strings, digits are text.
    expect(extractJson('{"s": "9007199254740993 1e-400"}')).toMatchObject({ ok: true });
  });

  it("a number that judged as its neighbour would pass: refused before any keyword reads it", async () => {
    const cases: Array<[object, string]> = [
      [{ properties: { x: { const: 0 } } }, '{"x": 1e-400}'],
      [{ properties: { x: { maximum: 0 } } }, '{"x": 1e-400}'],
      [{ properties: { x: { maximum: 9007199254740992 } } }, '{"x": 9007199254740993}'],
      [{ properties: { x: { const: 0.1 } } }, '{"x": 0.1000000000000000000001}'],
      [{ properties: { x: { exclusiveMinimum: -0.1 } } }, '{"x": -0.1000000000000000000001}'],
    ];
    for (const [schema, text] of cases) {
      const spec = defineSpec({ name: "n", description: "", schema: { type: "object", ...schema } });
      const verdict = await checkText(spec, text, "model");
      expect(verdict.valid, text).toBe(false);
      expect(verdict.errors[0]).toMatch(/^The JSON cannot be kept as written: x is the number/);
    }
  });

  it("the official optional bignum tests, read as text: no invalid value approved; the valid ones are refused (not judged exactly)", async () => {
    const file = readFileSync(new URL("../fixtures/json-schema-test-suite/draft2020-12/optional/bignum.json", import.meta.url), "utf8");
    // The suite's numbers as written in its file (JSON.parse has already rounded them).
    const literals = new Map<string, string>();
    for (const match of file.matchAll(/"data":\s*(-?\d[\d.eE+-]*)/g)) literals.set(String(Number(match[1])), match[1]);
    const groups = JSON.parse(file) as Array<{
      description: string;
      schema: Record<string, unknown>;
      tests: Array<{ description: string; data: unknown; valid: boolean }>;
    }>;
    let refusedValid = 0;
    let checked = 0;
    for (const group of groups) {
      const spec = defineSpec({ name: "bignum", description: "", schema: group.schema });
      for (const test of group.tests) {
        const text = typeof test.data === "number" ? literals.get(String(test.data))! : JSON.stringify(test.data);
        const verdict = await checkText(spec, text, "exact");
        checked++;
        if (!test.valid) expect(verdict.valid, `${group.description} › ${test.description}`).toBe(false);
        else if (!verdict.valid) {
          expect(verdict.errors[0]).toMatch(/^The JSON cannot be kept as written: the value is the number/);
          refusedValid++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(9);
    // Every valid case: the bignums (integers and numbers, positive and negative) and the 20-digit comparisons.
    expect(refusedValid).toBe(6);
  });
});

describe("the check step's one value", () => {
  it("is frozen and handed to the rules as it is: the value returned is the value the rules read", async () => {
    const { spec, seen } = seeingSpec();
    for (const check of [() => checkText(spec, '{"a": [1, {"b": 2}]}', "model"), () => checkValue(spec, { a: [1, { b: 2 }] })]) {
      const verdict = await check();
      expect(verdict.valid).toBe(true);
      expect(seen.pop()).toBe(verdict.value);
      expect(Object.isFrozen(verdict.value)).toBe(true);
      expect(Object.isFrozen((verdict.value as { a: [number, object] }).a[1])).toBe(true);
      expect(readOnlyCopy(verdict.value)).toBe(verdict.value);
    }
  });
});

describe("judged is kept, over seeded answers (property)", () => {
  it("600 answers through the validation graph and MemorySaver: refused where the oracle says, else returned = kept = judged = as written", async () => {
    const cases = keptCases(40, 600);
    const { spec, seen } = seeingSpec();
    const saver = new MemorySaver();
    const graph = buildValidationGraph({ model: scriptedModel(cases.map((c) => c.text)), spec, checkpointer: saver, maxAttempts: 1 });
    let refused = 0;
    for (const [i, { text, expected }] of cases.entries()) {
      seen.length = 0;
      const config = { configurable: { thread_id: `kept-${i}` } };
      const out = await graph.invoke({ request: "any object" }, config);
      if (expected === REFUSED) {
        expect(out.success, text).toBe(false);
        refused++;
        continue;
      }
      expect(out.success, `${text}: ${out.errors}`).toBe(true);
      const kept = (await graph.getState(config)).values.value;
      expect(sameJson(out.value, expected), `returned: ${text}`).toBe(true);
      expect(sameJson(kept, expected), `kept: ${text}`).toBe(true);
      expect(sameJson(seen[0], expected), `judged: ${text}`).toBe(true);
    }
    // Both kinds are well represented.
    expect(refused).toBeGreaterThan(100);
    expect(cases.length - refused).toBeGreaterThan(100);
  });

  it("3,000 answers given as values (JSON.parse's, -0 included): the check step returns and judges what a checkpoint keeps", async () => {
    const { spec, seen } = seeingSpec();
    let accepted = 0;
    for (const { text, expected } of keptCases(41, 3_000)) {
      if (expected === REFUSED) continue;
      seen.length = 0;
      const verdict = await checkValue(spec, JSON.parse(text));
      expect(verdict.valid, text).toBe(true);
      expect(sameJson(verdict.value, expected), text).toBe(true);
      expect(sameJson(seen[0], expected), text).toBe(true);
      expect(sameJson(await roundTrip(verdict.value), expected), text).toBe(true);
      accepted++;
    }
    expect(accepted).toBeGreaterThan(500);
  });
});
