/**
 * What a pattern may cost, wherever it comes from: a pattern is written in the spec (never taken from the
 * answer), its translation for RE2 is bounded by what it matches, its cost on RE2 (characters read × the
 * positions of its program) is counted against each validation's budget, JavaScript's RegExp runs only a
 * pattern whose cost on the longest answer is bounded by a computed figure, counts RE2 cannot hold are
 * refused in this package's words, and Unicode property tables are made once per property and shared by
 * every spelling of it. Every test asserts a bound or a refusal, never a duration.
 */
import { describe, expect, it } from "vitest";
import { SpecError } from "../../src/errors.js";
import { PATTERN_CHARS_PER_VALIDATION, PATTERN_STEPS_PER_VALIDATION } from "../../src/specs/ajv.js";
import { checkValueSync } from "../../src/specs/check.js";
import { ecmaPatternToRe2, linearOnBacktracking, MAX_REPEAT, re2Pattern, REGEXP_STEPS } from "../../src/specs/regex.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type JsonSchema } from "../../src/specs/spec.js";
import { MAX_PROPERTY_TABLES, unicodePropertyRanges } from "../../src/specs/unicode-properties.js";

/** A spec nobody else resolves (the inline cache never answers for it). */
const runtime = (schema: JsonSchema) => resolveSpec({ name: "cost", schema: { ...schema, $comment: `cost ${Math.random()}` } as JsonSchema });
const code = (schema: JsonSchema) => defineSpec({ name: "cost", description: "", schema });

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof SpecError) return error.message;
    throw error;
  }
  throw new Error("accepted; it must be refused");
}

describe("a pattern is written in the spec, never taken from the answer", () => {
  const fromAnswer = {
    type: "object",
    properties: { p: { type: "string" }, v: { type: "string", pattern: { $data: "1/p" } } },
  } as unknown as JsonSchema;
  const underNot = {
    type: "object",
    properties: { p: { type: "string" }, v: { type: "string", not: { pattern: { $data: "1/p" } } } },
  } as unknown as JsonSchema;

  it.each([
    ["a run-time spec", runtime],
    ["a code-defined spec", code],
  ])("%s with pattern: {$data} is refused when defined, naming where and what to write instead", (_label, define) => {
    for (const schema of [fromAnswer, underNot]) {
      const message = refusal(() => define(schema));
      expect(message).toMatch(/"pattern" at #\/properties\/v(\/not)? takes its pattern from the answer/);
      expect(message).toMatch(/Write the pattern itself/);
    }
  });
});

describe("a class is spelt out for RE2 as the fewest ranges of what it matches", () => {
  it("the same escape named 398 times in a class (a run-time spec's longest pattern is 2,000 characters) is spelt as it is once", () => {
    const many = `[${"\\P{L}".repeat(398)}]`;
    expect(`^${many}+$`.length).toBeLessThanOrEqual(2_000);
    expect(ecmaPatternToRe2(many)).toBe(ecmaPatternToRe2("[\\P{L}]"));
    expect(ecmaPatternToRe2("[\\p{L}\\p{Lu}a-z\\p{Letter}]")).toBe(ecmaPatternToRe2("[\\p{L}]"));
    const spec = runtime({ type: "string", pattern: `^${many}+$` });
    expect(checkValueSync(spec, "123 !").valid).toBe(true);
    expect(checkValueSync(spec, "12a").valid).toBe(false);
  });

  it("the translated size counts every class as spelt out, and past its bound the pattern is refused before RE2 compiles it", () => {
    expect(() => ecmaPatternToRe2("[\\P{L}]".repeat(300))).toThrow(/longer than 2500000 characters once its classes are spelt out/);
  });
});

describe("the cost of a pattern on RE2 is counted against each validation's budget", () => {
  it("a pattern's weight counts its atoms times the counts around them", () => {
    expect(re2Pattern("^[a-z]+$").weight).toBe(3);
    expect(re2Pattern("\\s{1000}x").weight).toBe(1_001);
    expect(re2Pattern("(?:ab{10}){20}c").weight).toBe(20 * 11 + 1);
    expect(re2Pattern("a{2,5}").weight).toBe(5);
    expect(re2Pattern("a{3,}").weight).toBe(4);
  });

  it.each([
    ["a run-time spec", runtime],
    ["a code-defined spec", code],
  ])("%s: a heavy pattern reads up to the budget in steps, and past it the value is refused, saying why", (_label, define) => {
    // On RE2 every position of `[ \t]{1000}[^ ]` is live on a run of spaces: 1,001 steps a character.
    const pattern = "[ \\t]{1000}[^ ]";
    const weight = re2Pattern(pattern).weight;
    const spec = define({ type: "object", properties: { s: { type: "string", not: { pattern } } } });
    const fits = Math.floor(PATTERN_STEPS_PER_VALIDATION / weight);
    expect(fits).toBeLessThan(PATTERN_CHARS_PER_VALIDATION);
    expect(checkValueSync(spec, { s: " ".repeat(fits) }).valid).toBe(true);
    const over = checkValueSync(spec, { s: " ".repeat(fits + 1) });
    expect(over.valid).toBe(false);
    expect(over.errors?.join("\n")).toMatch(new RegExp(`more than ${PATTERN_STEPS_PER_VALIDATION} steps .* so its pattern checks could not all run`));
  });
});

describe("JavaScript's RegExp runs a pattern only where its cost on the longest answer is bounded", () => {
  it("fixed counts are counted: the bound is (positions + 1) × 1,000,000 characters, held to REGEXP_STEPS", () => {
    const widest = Math.floor(REGEXP_STEPS / 1_000_000) - 1; // 32 positions at most, unanchored
    expect(linearOnBacktracking(`a{${widest}}`)).toBe(true);
    expect(linearOnBacktracking(`a{${widest + 1}}`)).toBe(false);
    // ^, \w and $ are three more positions.
    expect(linearOnBacktracking(`^\\w*a{${widest - 3}}$`)).toBe(true);
    expect(linearOnBacktracking(`^\\w*a{${widest - 2}}$`)).toBe(false);
    for (const pattern of ["\\s{5000}x", "^.*.{9000}X$", "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"])
      expect(linearOnBacktracking(pattern), pattern).toBe(false);
    // A count that varies within bounds multiplies the bound by how many counts it allows, not by the text's length.
    expect(linearOnBacktracking("[a-z]{1,3}x")).toBe(true);
    expect(linearOnBacktracking("^[a-z]{1,2000}$")).toBe(true);
    expect(linearOnBacktracking("[a-z]{1,10}x{20}")).toBe(false); // 1,000,000 × 10 × 31
    // Anchored with no count that varies: one start position, at most as many steps as the pattern has positions.
    for (const pattern of ["^a{5000}$", "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", "^[A-Z]{2}$"])
      expect(linearOnBacktracking(pattern), pattern).toBe(true);
  });

  it("a code-defined pattern with a large fixed count runs on RE2 under the budget, or is refused when RE2 cannot hold it", () => {
    const heavy = code({ type: "object", properties: { s: { type: "string", pattern: "\\s{1000}x" } } });
    const spent = checkValueSync(heavy, { s: " ".repeat(10_000) });
    expect(spent.valid).toBe(false);
    expect(spent.errors?.join("\n")).toMatch(/steps/);
    expect(checkValueSync(heavy, { s: `${" ".repeat(1_000)}x` }).valid).toBe(true);
    for (const pattern of ["\\s{5000}x", "^.*.{9000}X$"])
      expect(
        refusal(() => code({ type: "string", pattern })),
        pattern,
      ).toMatch(/repeats an atom \d+ times .* over 1000, which is not supported: patterns run on RE2/);
    const anchored = code({ type: "string", pattern: "^a{5000}$" });
    expect(checkValueSync(anchored, "a".repeat(5_000)).valid).toBe(true);
    expect(checkValueSync(anchored, "a".repeat(4_999)).valid).toBe(false);
    const bounded = code({ type: "string", pattern: "^[a-z]{1,2000}$" }); // RE2 could not hold it; RegExp's cost is bounded
    expect(checkValueSync(bounded, "a".repeat(2_000)).valid).toBe(true);
    expect(checkValueSync(bounded, "a".repeat(2_001)).valid).toBe(false);
  });
});

describe("counts past what RE2 holds", () => {
  it.each([
    ["a{1001}", 1_001],
    ["a{1001,}", 1_001],
    ["a{2,1001}", 1_001],
    ["(?:a{100}){20}", 2_000],
    ["(?:(?:ab){10}c){101}", 1_010],
  ])("%s (valid ECMA-262) is refused in a run-time spec with the limit and why, not in RE2's words", (pattern, count) => {
    expect(() => new RegExp(pattern, "u")).not.toThrow();
    const message = refusal(() => runtime({ type: "string", pattern }));
    expect(message).toContain(`repeats an atom ${count} times (its counts, nested ones multiplied), over ${MAX_REPEAT}`);
    expect(message).toMatch(/RE2, which caps a count at 1000 to keep its program small/);
    expect(message).not.toMatch(/invalid repeat count/);
  });

  it("counts up to the cap run on RE2 as ECMA-262 says", () => {
    const spec = runtime({ type: "string", pattern: "^(?:a{10}){100}$" });
    expect(checkValueSync(spec, "a".repeat(1_000)).valid).toBe(true);
    expect(checkValueSync(spec, "a".repeat(999)).valid).toBe(false);
  });
});

describe("Unicode property tables", () => {
  it("every spelling of a property shares one table: General_Category's aliases, binary properties' short names, gc=, sc=", () => {
    const letter = unicodePropertyRanges("L", false);
    for (const body of ["Letter", "gc=L", "gc=Letter", "General_Category=L", "General_Category=Letter"])
      expect(unicodePropertyRanges(body, false)).toBe(letter);
    expect(unicodePropertyRanges("Nd", false)).toBe(unicodePropertyRanges("digit", false));
    expect(unicodePropertyRanges("Alpha", false)).toBe(unicodePropertyRanges("Alphabetic", false));
    expect(unicodePropertyRanges("White_Space", true)).toBe(unicodePropertyRanges("space", true));
    expect(unicodePropertyRanges("sc=Greek", false)).toBe(unicodePropertyRanges("Script=Greek", false));
    expect(unicodePropertyRanges("scx=Greek", false)).toBe(unicodePropertyRanges("Script_Extensions=Greek", false));
    expect(unicodePropertyRanges("L", true)).toBe(unicodePropertyRanges("Letter", true));
  });

  it("the tables hold what this engine's RegExp gives every spelling (a Unicode or engine upgrade that changes it fails here)", () => {
    const bodies = [
      ...["L", "LC", "Lu", "Ll", "M", "Mn", "N", "Nd", "No", "P", "Pd", "S", "Sm", "So", "Z", "Zs", "C", "Cc", "Cf", "Cn", "Co", "Cs"],
      ...["Combining_Mark", "punct", "cntrl", "Alphabetic", "Alpha", "White_Space", "space", "Any", "ASCII", "Assigned", "Emoji", "ID_Start", "XIDC"],
      ...["Script=Greek", "sc=Latn", "scx=Han", "Script_Extensions=Hiragana"],
    ];
    // Every range's ends and the code points beside them, and every 1,009th code point.
    for (const body of bodies) {
      const re = new RegExp(`^\\p{${body}}$`, "u");
      const ranges = unicodePropertyRanges(body, false);
      const inTable = (cp: number) => {
        let [lo, hi] = [0, ranges.length - 1];
        while (lo <= hi) {
          const mid = (lo + hi) >> 1;
          if (cp < ranges[mid][0]) hi = mid - 1;
          else if (cp > ranges[mid][1]) lo = mid + 1;
          else return true;
        }
        return false;
      };
      const probes = new Set<number>();
      for (const [a, b] of ranges) for (const cp of [a - 1, a, b, b + 1]) if (cp >= 0 && cp <= 0x10ffff) probes.add(cp);
      for (let cp = 0; cp <= 0x10ffff; cp += 1_009) probes.add(cp);
      const wrong = [...probes].filter((cp) => re.test(String.fromCodePoint(cp)) !== inTable(cp));
      expect(wrong.slice(0, 5), body).toEqual([]);
    }
  });

  it(`a run-time spec names at most ${MAX_PROPERTY_TABLES} properties other than General_Category, whose values one pass makes all of`, () => {
    const scripts = ["Greek", "Latin", "Cyrillic", "Han", "Arabic"];
    const within = runtime({
      type: "string",
      pattern: `^[${scripts
        .slice(0, MAX_PROPERTY_TABLES)
        .map((s) => `\\p{sc=${s}}`)
        .join("")}\\p{Lu}\\p{Ll}\\p{Nd}\\p{P}]+$`,
    });
    expect(checkValueSync(within, "Αβγ Abc").valid).toBe(false); // a space is none of them
    expect(checkValueSync(within, "Αβγ-Abc").valid).toBe(true);
    // Spread over several patterns, and aliases of one property counted once.
    const message = refusal(() =>
      runtime({
        type: "object",
        properties: Object.fromEntries(scripts.map((s, i) => [`f${i}`, { type: "string", pattern: `\\p{Script=${s}}|\\p{sc=${s}}` }])),
      }),
    );
    expect(message).toMatch(new RegExp(`the patterns name more than ${MAX_PROPERTY_TABLES} Unicode properties other than General_Category`));
    expect(() =>
      runtime({
        type: "object",
        properties: Object.fromEntries(
          scripts.slice(0, MAX_PROPERTY_TABLES).map((s, i) => [`f${i}`, { type: "string", pattern: `\\p{Script=${s}}|\\p{sc=${s}}` }]),
        ),
      }),
    ).not.toThrow();
  });
});
