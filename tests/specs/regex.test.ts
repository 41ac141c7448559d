/**
 * Patterns of specs supplied at run time run on RE2 after src/specs/regex.ts translates them; a pattern must
 * mean there what ECMA-262 (JSON Schema's dialect, with the `u` flag) says it means, which is what the same
 * pattern means in a code-defined spec.
 */
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { SpecError } from "../../src/errors.js";
import { checkValueSync } from "../../src/specs/check.js";
import { ecmaPatternToRe2, linearOnBacktracking } from "../../src/specs/regex.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type JsonSchema } from "../../src/specs/spec.js";

const runtime = (schema: JsonSchema) => resolveSpec({ name: "regex", schema });
const code = (schema: JsonSchema) => defineSpec({ name: "regex", description: "", schema });

/** ECMA-262's white space and line terminators: what `\s` matches. */
const WHITESPACE = [
  0x09,
  0x0a,
  0x0b,
  0x0c,
  0x0d,
  0x20,
  0xa0,
  0x1680,
  ...Array.from({ length: 11 }, (_, i) => 0x2000 + i),
  0x2028,
  0x2029,
  0x202f,
  0x205f,
  0x3000,
  0xfeff,
].map((cp) => String.fromCodePoint(cp));

describe("run-time specs' patterns mean what ECMA-262 says", () => {
  it("\\S does not match a no-break space: ^\\S+$ refuses 'bob\\u00a0admin'", () => {
    const schema = { type: "string", pattern: "^\\S+$" } as const;
    expect(checkValueSync(code(schema), "bob\u00a0admin").valid).toBe(false);
    expect(checkValueSync(runtime(schema), "bob\u00a0admin").valid).toBe(false);
    expect(checkValueSync(runtime(schema), "bob-admin").valid).toBe(true);
  });

  it.each(WHITESPACE.map((ws) => [`U+${ws.codePointAt(0)!.toString(16).padStart(4, "0")}`, ws]))("not: {pattern: \\s} refuses %s", (_label, ws) => {
    const schema = { type: "string", not: { pattern: "\\s" } } as const;
    expect(checkValueSync(runtime(schema), `a${ws}b`).valid).toBe(false);
    expect(checkValueSync(code(schema), `a${ws}b`).valid).toBe(false);
  });

  it.each([["\r"], ["\n"], ["\u2028"], ["\u2029"]])("^.*$ refuses a line terminator (%j)", (terminator) => {
    const schema = { type: "string", pattern: "^.*$" } as const;
    expect(checkValueSync(runtime(schema), `a${terminator}b`).valid).toBe(false);
    expect(checkValueSync(runtime(schema), "a\u0085b").valid).toBe(true);
  });

  it("reads Unicode property escapes, which RE2 spells otherwise or not at all", () => {
    const letters = runtime({ type: "string", pattern: "^\\p{Letter}+$" });
    expect(checkValueSync(letters, "Ωmega").valid).toBe(true);
    expect(checkValueSync(letters, "a1").valid).toBe(false);
    const greek = runtime({ type: "string", pattern: "^[\\p{Script=Greek}\\s]+$" });
    expect(checkValueSync(greek, "αβγ δ").valid).toBe(true);
    expect(checkValueSync(greek, "abc").valid).toBe(false);
  });

  it("reads classes as ECMA-262 does: [[:alpha:] holds no POSIX class, [] matches nothing, [^] anything", () => {
    const posixLike = runtime({ type: "string", pattern: "^[[:alpha:]+$" });
    expect(checkValueSync(posixLike, "b").valid).toBe(false);
    expect(checkValueSync(posixLike, "pal:[").valid).toBe(true);
    expect(checkValueSync(runtime({ type: "string", pattern: "[]" }), "a").valid).toBe(false);
    expect(checkValueSync(runtime({ type: "string", pattern: "^[^]$" }), "\n").valid).toBe(true);
  });

  it("refuses RE2's own syntax that ECMA-262 does not have, as a code-defined spec does", () => {
    for (const pattern of ["(?i)drop", "\\Qa.b\\E", "\\pL", "(?P<name>a)", "a\\z"]) {
      expect(() => runtime({ type: "string", pattern }), pattern).toThrow(/not a valid ECMA-262 regular expression/);
      expect(() => code({ type: "string", pattern }), pattern).toThrow(SpecError);
    }
  });

  it.each([
    ["a lookahead", "^(?=x)x+$", "lookahead"],
    ["a negative lookbehind", "(?<!a)b", "lookbehind"],
    ["a backreference", "^(a)\\1$", "backreference"],
    ["a named backreference", "^(?<x>a)\\k<x>$", "named backreference"],
  ])("refuses %s, naming it", (_label, pattern, named) => {
    expect(() => runtime({ type: "string", pattern })).toThrow(new RegExp(`${named}.*is not supported in specs supplied at run time`));
  });

  it("refuses a pattern whose spelt-out classes would be too long to compile", () => {
    expect(() => ecmaPatternToRe2("\\p{L}".repeat(400))).toThrow(/longer than/);
  });
});

/** A small deterministic generator (mulberry32), so a failure names a reproducible case. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ATOMS = [
  "a",
  "b",
  "Z",
  "0",
  "_",
  " ",
  "-",
  ".",
  "\\s",
  "\\S",
  "\\d",
  "\\D",
  "\\w",
  "\\W",
  "\\b",
  "\\B",
  "\\p{L}",
  "\\P{L}",
  "\\p{Lu}",
  "\\p{Nd}",
  "\\p{Script=Greek}",
  "\\p{White_Space}",
  "\\t",
  "\\n",
  "\\v",
  "\\f",
  "\\r",
  "\\0",
  "\\cJ",
  "\\x41",
  "\\u00a0",
  "\\u{1F600}",
  "\\uD83D\\uDE00",
  "\\.",
  "\\/",
  "\\\\",
  "\\[",
  "\\]",
  "\\{",
  "\\}",
  "\\(",
  "\\)",
  "\\|",
  "\\^",
  "\\$",
  "\\*",
  "\\+",
  "\\?",
  "é",
  "😀",
  "\u2028",
  "[a-c]",
  "[^a-c]",
  "[\\s]",
  "[^\\s]",
  "[\\S]",
  "[^\\S]",
  "[\\s\\d]",
  "[^\\sx]",
  "[.]",
  "[\\b]",
  "[-a]",
  "[a-]",
  "[a-c-e]",
  "[\\-]",
  "[\\p{L}\\d]",
  "[^\\P{L}]",
  "[\\u00a0-\\u2000]",
  "[\\w\\W]",
  "[]",
  "[^]",
  "[[]",
  "[$^]",
  "[😀-😂]",
  "[\\u{10000}-\\u{10FFFF}]",
  "[\\cA-\\cZ]",
  "[\\x00-\\x1f]",
  "[:alpha:]",
  "[[:alpha:]]",
];

function generatePattern(next: () => number, depth = 0): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  let out = next() < 0.3 ? "^" : "";
  const pieces = 1 + Math.floor(next() * 4);
  for (let i = 0; i < pieces; i++) {
    let atom =
      depth < 2 && next() < 0.15 ? `(${next() < 0.5 ? "?:" : ""}${generatePattern(next, depth + 1)}|${generatePattern(next, depth + 1)})` : pick(ATOMS);
    if (depth < 2 && next() < 0.05) atom = `(?<g${depth}${i}>${generatePattern(next, depth + 1)})`;
    if (!/^\\[bB]$/.test(atom) && next() < 0.4) atom += pick(["*", "+", "?", "{2}", "{0,3}", "{1,}", "*?", "+?"]);
    out += atom;
  }
  return out + (next() < 0.3 ? "$" : "");
}

const CHARS = [
  ...WHITESPACE,
  "a",
  "b",
  "c",
  "Z",
  "0",
  "9",
  "_",
  "-",
  ".",
  "/",
  "\\",
  "[",
  "]",
  ":",
  "^",
  "$",
  "\u0000",
  "\u0008",
  "\u001f",
  "\u0085",
  "é",
  "Ω",
  "α",
  "\u0663",
  "\u0301",
  "😀",
  "😁",
  "\ud800",
  "\udc00",
  "\ud83d",
  "\u{10FFFF}",
  "\u200b",
  "\u180e",
  "A",
];

function generateString(next: () => number): string {
  let s = "";
  const length = Math.floor(next() * 7);
  for (let i = 0; i < length; i++) s += CHARS[Math.floor(next() * CHARS.length)];
  return s;
}

describe("translated patterns agree with JavaScript's RegExp (the u flag) on generated patterns and strings", () => {
  it("1,500 patterns × 40 strings, whitespace, line terminators, astral characters and lone surrogates included", () => {
    const next = random(20261201);
    const disagreements: string[] = [];
    let compared = 0;
    for (let p = 0; p < 1_500 && disagreements.length < 10; p++) {
      const pattern = generatePattern(next);
      let ecma: RegExp;
      try {
        ecma = new RegExp(pattern, "u");
      } catch {
        expect(() => ecmaPatternToRe2(pattern), pattern).toThrow(/not a valid ECMA-262 regular expression/);
        continue;
      }
      const re2 = RE2JS.compile(ecmaPatternToRe2(pattern));
      for (let s = 0; s < 40; s++) {
        const input = generateString(next);
        compared++;
        if (ecma.test(input) !== re2.matcher(input).find())
          disagreements.push(`${JSON.stringify(pattern)} on ${JSON.stringify(input)}: ECMA-262 ${ecma.test(input)}`);
      }
    }
    expect(disagreements).toEqual([]);
    expect(compared).toBeGreaterThan(40_000);
  });
});

describe("code-defined specs' patterns", () => {
  // A classic catastrophic-backtracking pattern, found in real schemas (JSONSchemaBench's Github_medium).
  const nested = "^(?:[A-Za-z0-9]+[-]?)+[A-Za-z0-9]$";
  const spec = defineSpec({ name: "org", schema: { type: "object", properties: { org: { type: "string", pattern: nested } } } });

  it("run on RE2 where RE2 can give them their meaning: an answer made to backtrack is judged at once", () => {
    // On a backtracking engine this string takes 2^60 steps to fail; RE2 reads it once.
    const hostile = `${"a".repeat(60)}!`;
    expect(checkValueSync(spec, { org: hostile }).valid).toBe(false);
    expect(checkValueSync(spec, { org: "acme-labs" }).valid).toBe(true);
    expect(checkValueSync(spec, { org: "acme-" }).valid).toBe(false);
  });

  it("that need backtracking (lookaround, backreferences) still run as written on JavaScript's RegExp", () => {
    const backtracking = defineSpec({
      name: "pair",
      schema: { type: "object", properties: { twice: { type: "string", pattern: "^(\\w+)-\\1$" }, notTest: { type: "string", pattern: "^(?!test)\\w+$" } } },
    });
    expect(checkValueSync(backtracking, { twice: "ab-ab", notTest: "prod" }).valid).toBe(true);
    expect(checkValueSync(backtracking, { twice: "ab-ba" }).valid).toBe(false);
    expect(checkValueSync(backtracking, { notTest: "testing" }).valid).toBe(false);
  });
});

describe("patterns whose shape makes a backtracking engine linear", () => {
  it("claims only shapes where RegExp's time is certainly linear: no varying count, or one under ^, and no alternation or quantified group", () => {
    for (const pattern of ["^[a-z][a-z0-9-]*$", "^[A-Z]{2}$", "^/", "^[a-z_][a-z0-9_]*$", "^[A-Za-z0-9-]+$", "abc", "\\d{4}-\\d{2}", "^\\p{L}+\\.x$"])
      expect(linearOnBacktracking(pattern), pattern).toBe(true);
    for (const pattern of [
      "^(?:[A-Za-z0-9]+[-]?)+[A-Za-z0-9]$", // nested quantifiers: exponential
      "^(a|a)*$", // alternation under a quantifier: exponential
      "^a*a*$", // two varying counts: quadratic
      "[a-z]*!", // unanchored: a start position per character, quadratic
      "^(ab){3}$", // a quantified group
      "^a|b*c", // alternation: the anchor no longer covers the whole
      "^a+?b", // a lazy quantifier counts twice
      "^(?=a)\\w*$", // lookaround: no claim
      "^(\\w)\\1*$", // a backreference: no claim
      "^https://[^\\s/]+(/\\S*)?$",
      "(",
    ])
      expect(linearOnBacktracking(pattern), pattern).toBe(false);
    expect(linearOnBacktracking("^[a-z]*$", "mu"), "with the m flag, ^ matches after every line end").toBe(false);
  });

  it("claimed patterns give RE2's verdicts on long texts made to make a backtracking engine retry", () => {
    // Were a claim wrong (a quadratic shape), 100,000 characters would cost about 10^10 steps here.
    for (const pattern of ["^[a-z][a-z0-9-]*$", "^[A-Za-z0-9-]+!$", "a-z", "^\\w*\\d{3}$"]) {
      expect(linearOnBacktracking(pattern), pattern).toBe(true);
      const re2 = RE2JS.compile(ecmaPatternToRe2(pattern));
      for (const text of ["a".repeat(100_000) + "-", "a".repeat(100_000) + "!", "1".repeat(100_000) + "x", "a".repeat(100_000) + "a-z"])
        expect(new RegExp(pattern, "u").test(text), `${pattern} on ${text.slice(-4)}`).toBe(re2.matcher(text).find());
    }
  });

  it("a code-defined spec judges a claimed pattern as written and an unclaimed one on RE2, to the same verdicts", () => {
    const spec = defineSpec({
      name: "names",
      schema: {
        type: "object",
        properties: { name: { type: "string", pattern: "^[a-z][a-z0-9-]*$" }, org: { type: "string", pattern: "^(?:[a-z0-9]+-?)+[a-z0-9]$" } },
      },
    });
    expect(checkValueSync(spec, { name: "payments-api", org: "acme-labs" }).valid).toBe(true);
    expect(checkValueSync(spec, { name: "Payments" }).valid).toBe(false);
    expect(checkValueSync(spec, { name: `${"a".repeat(50_000)}!` }).valid).toBe(false);
    expect(checkValueSync(spec, { org: `${"a".repeat(60)}!` }).valid).toBe(false);
  });
});
