/**
 * JSON Schema's `pattern` is an ECMA-262 regular expression (ajv reads it with
 * the `u` flag). Specs supplied at run time run their patterns on RE2, which
 * takes linear time but gives some escapes another meaning: its `\s` lacks
 * U+000B, U+00A0, U+2028 and the other Unicode spaces, its `.` matches "\r",
 * U+2028 and U+2029, it has no `\p{Letter}` or `\p{Script=Greek}`, and it
 * reads `[[:alpha:]]` and `[]a]` its own way. So a pattern is translated
 * before RE2 compiles it: every class escape, `.` and character class becomes
 * an explicit RE2 class with the code points this JavaScript engine gives it,
 * every literal becomes `\x{…}`, and what RE2 cannot run (lookaround,
 * backreferences) is refused with a message naming it.
 *
 * What passes through unchanged has the same meaning in both: `\d`, `\w`,
 * `\b` and `\B` are ASCII-only in ECMA-262 without the `i` flag, as in RE2;
 * `^` and `$` match only at the ends of the input (no `m` flag); quantifiers,
 * groups and alternation.
 */
import { SpecError } from "../errors.js";
import { DEFAULT_JSON_LIMITS } from "../json/parse.js";
import { classEscapeRanges, type Ranges, union, unicodePropertyRanges } from "./unicode-properties.js";

const MAX_CODE_POINT = 0x10ffff;
/** A translation longer than this (a pattern of hundreds of `\p{…}`) is refused rather than compiled. */
const MAX_TRANSLATED_CHARS = 2_500_000;
/**
 * RE2's largest repetition count, nested counts multiplied (`(?:a{100}){20}` is 2,000): it caps them so its
 * program, whose size is the number of copies, stays small. ECMA-262 has no cap; a pattern past it cannot
 * run on RE2, and is refused with this package's message rather than RE2's.
 */
export const MAX_REPEAT = 1_000;
/**
 * The most steps a pattern may take on JavaScript's RegExp over the longest text an answer can hold
 * (src/json/parse.ts), about a third of a second: the bound linearOnBacktracking computes is held to it.
 */
export const REGEXP_STEPS = 2 ** 25;

const hex = (cp: number) => `\\x{${cp.toString(16)}}`;
const rangesSource = (ranges: Ranges) => ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("");

/** Thrown for a construct only a backtracking engine can run (lookaround, backreferences); the caller names the pattern. */
export class NeedsBacktracking extends SpecError {}

function refuse(what: string): never {
  throw new NeedsBacktracking(
    `${what} is not supported in specs supplied at run time: their patterns run on RE2, a linear-time engine (lookaround and backreferences are not supported)`,
  );
}

/**
 * The RE2 pattern with the meaning ECMA-262 (with the `u` flag) gives `pattern`.
 * Throws an Error when `pattern` is not a valid ECMA-262 pattern, NeedsBacktracking
 * when it uses what RE2 cannot run, and a SpecError when it is past what RE2 can
 * hold (a count over MAX_REPEAT, a translation over MAX_TRANSLATED_CHARS).
 */
export function ecmaPatternToRe2(pattern: string): string {
  return re2Pattern(pattern).source;
}

/**
 * The RE2 pattern for `pattern` (see ecmaPatternToRe2) and its weight: how many positions RE2's program
 * for it has, counted from the pattern (each atom once, times the counts around it). RE2 may follow every
 * one of them at each character it reads, so a test costs at most `weight` steps per character
 * (`\s{1000}x` on a run of spaces follows about 1,000). Throws as ecmaPatternToRe2 does.
 */
export function re2Pattern(pattern: string): { source: string; weight: number } {
  const translation = translated(pattern);
  if (translation.count > MAX_REPEAT) {
    throw new SpecError(
      `the pattern ${JSON.stringify(pattern.slice(0, 200))} repeats an atom ${translation.count} times (its counts, nested ones multiplied), over ${MAX_REPEAT}, which is not supported: patterns run on RE2, which caps a count at ${MAX_REPEAT} to keep its program small (a code-defined spec's pattern runs on JavaScript's RegExp instead only where its cost there is bounded, as "^a{5000}$" is); use counts of at most ${MAX_REPEAT}, or check a length with minLength and maxLength`,
    );
  }
  return { source: translation.out, weight: translation.weight };
}

function translated(pattern: string): Translation {
  try {
    new RegExp(pattern, "u"); // only compiled, never run: checks the syntax
  } catch (error) {
    // A plain Error: the schema is invalid, as it is for a code-defined spec whose RegExp refuses the pattern.
    throw new Error(
      `the pattern ${JSON.stringify(pattern.slice(0, 200))} is not a valid ECMA-262 regular expression, JSON Schema's dialect (${(error as Error).message})`,
    );
  }
  const translation = new Translation(pattern);
  try {
    translation.run();
  } catch (error) {
    if (error instanceof NeedsBacktracking) throw new NeedsBacktracking(`the pattern ${JSON.stringify(pattern.slice(0, 200))}: ${error.message}`);
    if (error instanceof SpecError) throw new SpecError(`the pattern ${JSON.stringify(pattern.slice(0, 200))}: ${error.message}`);
    throw error;
  }
  return translation;
}

/**
 * Whether a backtracking engine (JavaScript's RegExp) runs `pattern` within REGEXP_STEPS on any text up
 * to the longest an answer can hold (n = 1,000,000 characters): true only where that is certain, false
 * for anything else (which may still be quick). The bound is computed from the pattern's shape and its
 * weight W (its positions, fixed counts included: `\s{5000}x` weighs 5,001). The shape: no alternation
 * and no quantified group (how a backtracking engine comes to try exponentially or polynomially many
 * ways), and at most one quantifier whose count can vary (`*`, `+`, `?`, `{n,}`, `{n,m}`). Then each
 * start position tries each count that quantifier allows, each try at most W + 1 steps:
 * starts × counts × (W + 1), where starts is 1 when anchored at the start (`^` first, no `m` flag) and n
 * otherwise, and counts is 1 without such a quantifier, m - n + 1 for `{n,m}`, 2 for `?`, and n + 1 for
 * the unbounded ones. A pattern that is not ECMA-262, or has lookaround or a backreference, gets false:
 * no claim is made for it.
 */
export function linearOnBacktracking(pattern: string, flags = "u"): boolean {
  let shape: Translation;
  try {
    shape = translated(pattern);
  } catch {
    return false; // not ECMA-262, or lookaround or a backreference: no claim is made
  }
  if (shape.alternation || shape.quantifiedGroup || shape.variableQuantifiers > 1) return false;
  const longest = DEFAULT_JSON_LIMITS.maxChars;
  const starts = pattern.startsWith("^") && !flags.includes("m") ? 1 : longest;
  const counts = Math.min(shape.counts, longest + 1);
  return starts * counts * (shape.weight + 1) <= REGEXP_STEPS;
}

/** What a group (or the whole pattern) holds so far, for its weight. */
interface Frame {
  /** Positions of the program so far. */
  weight: number;
  /** The last atom's or group's weight and largest nested count, which a quantifier after it multiplies; undefined after `|`. */
  last?: { weight: number; count: number };
  /** The largest product of nested counts inside. */
  count: number;
}

/** One pass over a pattern already known to be valid ECMA-262 (so its syntax is not checked again here). */
class Translation {
  private readonly chars: string[];
  private i = 0;
  out = "";
  /** The pattern's shape, read on the way (see linearOnBacktracking). */
  variableQuantifiers = 0;
  /** How many counts the last quantifier whose count can vary allows (1 when there is none). */
  counts = 1;
  quantifiedGroup = false;
  alternation = false;
  private afterGroup = false;
  /** The groups open at this point, the whole pattern first (see re2Pattern). */
  private readonly frames: Frame[] = [{ weight: 0, count: 1 }];

  constructor(pattern: string) {
    this.chars = [...pattern]; // code points: a surrogate pair is one character with the `u` flag
  }

  /** Positions of RE2's program for the pattern (see re2Pattern). */
  get weight(): number {
    return this.frames[0].weight;
  }

  /** The largest product of nested counts, which RE2 caps at MAX_REPEAT. */
  get count(): number {
    return this.frames[0].count;
  }

  run(): string {
    while (this.i < this.chars.length) {
      const groupEnded = this.chars[this.i] === ")";
      this.atom();
      this.afterGroup = groupEnded;
      this.refuseLength(0);
    }
    return this.out;
  }

  /** Refuse the pattern once its translation, with `more` characters about to be added, is past MAX_TRANSLATED_CHARS. */
  private refuseLength(more: number): void {
    if (this.out.length + more > MAX_TRANSLATED_CHARS)
      throw new SpecError(
        `it is longer than ${MAX_TRANSLATED_CHARS} characters once its classes are spelt out for RE2 (specs' patterns run on RE2, which compiles the whole), so it is not supported; name fewer Unicode properties or classes`,
      );
  }

  /** An atom (a character, a class, an assertion) just read: one position of the program. */
  private counted(): void {
    const frame = this.frames[this.frames.length - 1];
    frame.weight += 1;
    frame.last = { weight: 1, count: 1 };
  }

  /**
   * A quantifier just read: `fixed` when its count cannot vary ({n}), `copies` the most copies of its atom
   * RE2's program holds (`{3,5}`: 5; `*`: 1, one copy in a loop), `written` its count as RE2's cap reads it,
   * `counts` how many counts it allows (`{3,5}`: 3; `*`: unbounded).
   */
  private quantifier(fixed: boolean, copies: number, written = 1, counts = 1): void {
    if (!fixed) {
      this.variableQuantifiers++;
      this.counts = counts;
    }
    if (this.afterGroup) this.quantifiedGroup = true;
    const frame = this.frames[this.frames.length - 1];
    const last = frame.last;
    if (last === undefined) return; // a lazy "?" after a quantifier: nothing more to copy
    const count = written > 1 ? last.count * written : last.count;
    frame.weight += last.weight * (copies - 1);
    frame.count = Math.max(frame.count, count);
    frame.last = undefined;
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.i + offset];
  }

  private atom(): void {
    const c = this.chars[this.i++];
    switch (c) {
      case "\\":
        this.counted();
        this.out += this.escapeOutsideClass();
        return;
      case ".":
        this.counted();
        this.out += `[${rangesSource(classEscapeRanges("."))}]`;
        return;
      case "[": {
        this.counted();
        const source = this.characterClass();
        this.refuseLength(source.length);
        this.out += source;
        return;
      }
      case "(":
        this.frames.push({ weight: 0, count: 1 });
        this.out += this.groupOpening();
        return;
      case "{": {
        // A quantifier ({n}, {n,}, {n,m}), copied as it is.
        const close = this.chars.indexOf("}", this.i);
        const body = this.chars.slice(this.i, close).join("");
        const [min, max] = body.split(",").map((n) => (n === "" ? undefined : Number(n)));
        // {n}: n copies; {n,}: n and a loop; {n,m}: m. RE2's cap reads the larger bound written.
        const counts = max !== undefined ? max - min! + 1 : body.includes(",") ? Number.POSITIVE_INFINITY : 1;
        this.quantifier(!body.includes(","), max ?? (body.includes(",") ? min! + 1 : min!), Math.max(min!, max ?? 0), counts);
        this.out += `{${body}}`;
        this.i = close + 1;
        return;
      }
      case "*":
      case "+":
      case "?":
        // A "?" after a quantifier (a lazy one) counts again: the shape is only ever underrated.
        this.quantifier(false, 1, 1, c === "?" ? 2 : Number.POSITIVE_INFINITY);
        this.out += c;
        return;
      case "|":
        this.alternation = true;
        this.frames[this.frames.length - 1].last = undefined;
        this.out += c;
        return;
      case ")": {
        const group = this.frames.pop()!;
        const frame = this.frames[this.frames.length - 1];
        frame.weight += group.weight;
        frame.count = Math.max(frame.count, group.count);
        frame.last = { weight: group.weight, count: group.count };
        this.out += c;
        return;
      }
      case "^":
      case "$":
        this.counted();
        this.out += c;
        return;
      default:
        this.counted();
        this.out += literal(c.codePointAt(0)!);
    }
  }

  private groupOpening(): string {
    if (this.peek() !== "?") return "(";
    const next = this.peek(1);
    if (next === ":") {
      this.i += 2;
      return "(?:";
    }
    if (next === "=" || next === "!") refuse(`lookahead ("(?${next}")`);
    // "(?<=", "(?<!" or a named group "(?<name>"
    if (this.peek(2) === "=" || this.peek(2) === "!") refuse(`lookbehind ("(?<${this.peek(2)}")`);
    while (this.chars[this.i] !== ">") this.i++;
    this.i++;
    return "("; // the name is only for backreferences, which are refused
  }

  /** An escape outside a class, the `\` already read. */
  private escapeOutsideClass(): string {
    const c = this.peek()!;
    if (c === "b" || c === "B") {
      this.i++;
      return `\\${c}`;
    }
    if (/[1-9]/.test(c)) refuse(`a backreference ("\\${c}")`);
    if (c === "k") refuse('a named backreference ("\\k<…>")');
    const set = this.classEscape();
    if (set !== undefined) {
      const source = `[${rangesSource(set)}]`;
      this.refuseLength(source.length);
      return source;
    }
    return literal(this.characterEscape());
  }

  /** The code points of `\d \D \w \W \s \S \p{…} \P{…}`, or undefined for another escape (nothing read then). */
  private classEscape(): Ranges | undefined {
    const c = this.peek()!;
    if ("dDwWsS".includes(c)) {
      this.i++;
      return classEscapeRanges(`\\${c}`);
    }
    if (c === "p" || c === "P") {
      const close = this.chars.indexOf("}", this.i);
      const body = this.chars.slice(this.i + 2, close).join("");
      this.i = close + 1;
      return unicodePropertyRanges(body, c === "P");
    }
    return undefined;
  }

  /** The code point a character escape stands for, the `\` already read. */
  private characterEscape(): number {
    const c = this.chars[this.i++];
    switch (c) {
      case "t":
        return 0x09;
      case "n":
        return 0x0a;
      case "v":
        return 0x0b;
      case "f":
        return 0x0c;
      case "r":
        return 0x0d;
      case "0":
        return 0;
      case "c":
        return this.chars[this.i++].codePointAt(0)! % 32;
      case "x": {
        const cp = parseInt(this.chars.slice(this.i, this.i + 2).join(""), 16);
        this.i += 2;
        return cp;
      }
      case "u":
        return this.unicodeEscape();
      default:
        return c.codePointAt(0)!; // an identity escape of a syntax character: "\.", "\/", "\-"…
    }
  }

  /** `\uHHHH`, `\uHHHH\uHHHH` (a surrogate pair: one code point) or `\u{H…}`, the `\u` already read. */
  private unicodeEscape(): number {
    if (this.peek() === "{") {
      const close = this.chars.indexOf("}", this.i);
      const cp = parseInt(this.chars.slice(this.i + 1, close).join(""), 16);
      this.i = close + 1;
      return cp;
    }
    const four = (at: number) => parseInt(this.chars.slice(at, at + 4).join(""), 16);
    const cp = four(this.i);
    this.i += 4;
    if (
      cp >= 0xd800 &&
      cp <= 0xdbff &&
      this.peek() === "\\" &&
      this.peek(1) === "u" &&
      /^[0-9a-fA-F]{4}$/.test(this.chars.slice(this.i + 2, this.i + 6).join(""))
    ) {
      const low = four(this.i + 2);
      if (low >= 0xdc00 && low <= 0xdfff) {
        this.i += 6;
        return 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
      }
    }
    return cp;
  }

  /**
   * A character class, the `[` already read: always an explicit RE2 class, its members united into the
   * fewest ranges (`[\\P{L}\\P{L}]` is spelt as `[\\P{L}]` is), so its size is bounded by what it matches.
   */
  private characterClass(): string {
    const negated = this.peek() === "^";
    if (negated) this.i++;
    const members: Array<readonly [number, number]> = [];
    const escapes = new Set<Ranges>(); // a class escape named twice adds its ranges once
    let last: number | undefined; // a single character just read, which a "-" extends to a range
    while (this.peek() !== "]") {
      if (this.peek() === "-" && last !== undefined && this.peek(1) !== "]") {
        this.i++;
        members.push([last, this.classAtom() as number]); // the syntax check guarantees a single character here
        last = undefined;
        continue;
      }
      const atom = this.classAtom();
      if (typeof atom === "number") members.push([atom, atom]);
      else if (!escapes.has(atom)) {
        escapes.add(atom);
        members.push(...atom);
      }
      last = typeof atom === "number" ? atom : undefined;
    }
    this.i++;
    const inside = rangesSource(union(members));
    // [] matches nothing and [^] any one character: RE2 has no empty class.
    const everything = `${hex(0)}-${hex(MAX_CODE_POINT)}`;
    if (inside === "") return negated ? `[${everything}]` : `[^${everything}]`;
    return `[${negated ? "^" : ""}${inside}]`;
  }

  /** One class member: a code point, or a class escape's code points. */
  private classAtom(): number | Ranges {
    const c = this.chars[this.i++];
    if (c !== "\\") return c.codePointAt(0)!;
    if (this.peek() === "b") {
      this.i++;
      return 0x08; // inside a class, \b is backspace
    }
    return this.classEscape() ?? this.characterEscape();
  }
}

/** A literal code point, spelt so RE2 cannot read it as syntax. */
function literal(cp: number): string {
  return /[A-Za-z0-9_ ]/.test(String.fromCodePoint(cp)) ? String.fromCodePoint(cp) : hex(cp);
}
