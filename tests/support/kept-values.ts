/**
 * Seeded answers for the "judged is kept" property tests: JSON text as a model may write it (numbers at every
 * edge, strings with lone surrogates, U+2028 and NUL, keys shaped like inherited names or checkpoint markers,
 * nesting), each with its oracle: the value every checkpoint must give back, or REFUSED where no value can be
 * judged and kept as written. The oracle is written out here, by hand, not computed by the code under test.
 */
import { seededRandom } from "../../src/simulated/random.js";
import { defineSpec } from "../../src/specs/spec.js";

export const REFUSED = Symbol("refused");

/** Number literals, each with the number it is (as a double, -0 as 0), or REFUSED: its text names a number no double holds, or one out of range. */
export const NUMBER_LITERALS: ReadonlyArray<readonly [string, number | typeof REFUSED]> = [
  ["0", 0],
  ["-0", 0],
  ["-0.0", 0],
  ["0e-400", 0],
  ["-0e5", 0],
  ["1", 1],
  ["-1", -1],
  ["1.0", 1],
  ["1E2", 100],
  ["1e+2", 100],
  ["100.00", 100],
  ["0.1", 0.1],
  ["0.10", 0.1],
  ["123e-2", 1.23],
  ["0.30000000000000004", 0.30000000000000004],
  ["1e21", 1e21],
  ["1e-7", 1e-7],
  ["5e-324", 5e-324],
  ["-5e-324", -5e-324],
  ["1e-323", 1e-323],
  ["2.225073858507201e-308", 2.225073858507201e-308],
  ["2.2250738585072014e-308", 2.2250738585072014e-308],
  ["1e308", 1e308],
  ["-1e308", -1e308],
  ["1.7976931348623157e308", Number.MAX_VALUE],
  ["9007199254740991", Number.MAX_SAFE_INTEGER],
  ["-9007199254740991", Number.MIN_SAFE_INTEGER],
  ["9007199254740992", 2 ** 53],
  ["9007199254740994", 2 ** 53 + 2],
  ["9007199254740993", REFUSED],
  ["-9007199254740993", REFUSED],
  ["1e-400", REFUSED],
  ["-1e-400", REFUSED],
  ["3e-324", REFUSED],
  ["4.9406564584124654e-324", REFUSED],
  ["0.1000000000000000000001", REFUSED],
  ["123456789012345678901234567890", REFUSED],
  ["1.7976931348623159e308", REFUSED],
  ["1e400", REFUSED],
  ["-1e400", REFUSED],
];

const STRINGS = ["", "a", "\ud800", "x\udc00y", "\ud83d\ude00", "\u2028\u2029", "\u0000", "nul\u0000end", '\\"', "é", "Send", "undefined", "x".repeat(200)];

/** Keys, each with whether an object holding it is refused (a checkpoint would not give it back as written). */
const KEYS: ReadonlyArray<readonly [string, boolean]> = [
  ["a", false],
  ["constructor", false],
  ["toString", false],
  ["valueOf", false],
  ["prototype", false],
  ["__proto", false],
  ["__proto__ ", false],
  ["__proto__", true],
  ["", false],
  ["0", false],
  ["01", false],
  ["\u2028", false],
  ["\ud800", false],
  ["lc", false],
  ["type", false],
  ["lg_name", false],
  ["id", false],
];

export interface KeptCase {
  text: string;
  expected: unknown;
}

/** One seeded answer: an object at the root (a model's answer), whose fields are generated values. */
export function keptCases(seed: number, count: number): KeptCase[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const cases: KeptCase[] = [];
  for (let n = 0; n < count; n++) {
    const { text, expected } = object(0);
    cases.push({ text, expected });
  }
  return cases;

  function value(depth: number): KeptCase {
    const r = random();
    if (r < 0.35 || depth > 6) {
      if (r < 0.2) {
        const [text, expected] = pick(NUMBER_LITERALS);
        return { text, expected };
      }
      const leaf = pick<unknown>([...STRINGS, true, false, null]);
      return { text: JSON.stringify(leaf), expected: leaf };
    }
    if (r < 0.4) return chain(depth);
    return r < 0.65 ? array(depth) : object(depth);
  }

  /** A narrow chain of nested arrays and objects (depth well within the readers' 64 levels). */
  function chain(depth: number): KeptCase {
    const levels = 5 + Math.floor(random() * 30);
    let inner = value(depth + levels);
    for (let i = 0; i < levels; i++) {
      inner =
        i % 2 === 0
          ? { text: `[${inner.text}]`, expected: inner.expected === REFUSED ? REFUSED : [inner.expected] }
          : { text: `{"k":${inner.text}}`, expected: inner.expected === REFUSED ? REFUSED : { k: inner.expected } };
    }
    return inner;
  }

  function array(depth: number): KeptCase {
    const items = Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    const refused = items.some((i) => i.expected === REFUSED);
    return { text: `[${items.map((i) => i.text).join(",")}]`, expected: refused ? REFUSED : items.map((i) => i.expected) };
  }

  function object(depth: number): KeptCase {
    const fields: Array<[string, KeptCase]> = [];
    const used = new Set<string>();
    let refused = false;
    for (let i = Math.floor(random() * 5) + (depth === 0 ? 1 : 0); i > 0; i--) {
      const [key, refusedKey] = pick(KEYS);
      if (used.has(key)) continue;
      used.add(key);
      // Marker shapes, as a model may write them: a numeric lc beside a string type, "lg_name": "Send".
      const field =
        key === "lc" && random() < 0.5
          ? { text: "2", expected: 2 }
          : key === "lg_name" && random() < 0.5
            ? { text: '"Send"', expected: "Send" }
            : value(depth + 1);
      refused ||= refusedKey || field.expected === REFUSED;
      fields.push([key, field]);
    }
    const expected: Record<string, unknown> = {};
    for (const [key, field] of fields) Object.defineProperty(expected, key, { value: field.expected, enumerable: true, writable: true, configurable: true });
    if (typeof expected.lc === "number" && typeof expected.type === "string") refused = true;
    if (expected.lg_name === "Send") refused = true;
    return { text: `{${fields.map(([key, field]) => `${JSON.stringify(key)}:${field.text}`).join(",")}}`, expected: refused ? REFUSED : expected };
  }
}

/** JSON equality that tells -0 from 0 (Object.is for numbers and every other leaf) and compares own keys only. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/** A spec that accepts any object and records what its rule was handed: the value judged. */
export function seeingSpec() {
  const seen: unknown[] = [];
  const spec = defineSpec({
    name: "seeing",
    description: "Any object.",
    schema: { type: "object" },
    rules: [{ id: "see", description: "", inputs: {}, check: (_v: unknown, document: unknown) => (seen.push(document), null) }],
  });
  return { spec, seen };
}
