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

const MAX_CODE_POINT = 0x10ffff;
/** A translation longer than this (a pattern of hundreds of `\p{…}`) is refused rather than compiled. */
const MAX_TRANSLATED_CHARS = 2_500_000;

type Ranges = Array<[number, number]>;

const hex = (cp: number) => `\\x{${cp.toString(16)}}`;
const rangesSource = (ranges: Ranges) => ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("");

function complement(ranges: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [a, b] of ranges) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const classCache = new Map<string, Ranges>();

/**
 * The code points a class escape or `.` matches, asked of this engine's own
 * RegExp (about 30 ms the first time for each escape, then cached): exactly
 * what a code-defined spec's pattern means, Unicode version included.
 */
function codePointsOf(escape: string): Ranges {
  let ranges = classCache.get(escape);
  if (ranges === undefined) {
    const re = new RegExp(`^${escape}$`, "u");
    ranges = [];
    let start = -1;
    for (let cp = 0; cp <= MAX_CODE_POINT; cp++) {
      const hit = re.test(String.fromCodePoint(cp));
      if (hit && start < 0) start = cp;
      else if (!hit && start >= 0) {
        ranges.push([start, cp - 1]);
        start = -1;
      }
    }
    if (start >= 0) ranges.push([start, MAX_CODE_POINT]);
    classCache.set(escape, ranges);
  }
  return ranges;
}

/** Thrown for a construct the translation refuses; the caller names the pattern. */
function refuse(what: string): never {
  throw new SpecError(
    `${what} is not supported in specs supplied at run time: their patterns run on RE2, a linear-time engine (lookaround and backreferences are not supported)`,
  );
}

/**
 * The RE2 pattern with the meaning ECMA-262 (with the `u` flag) gives `pattern`.
 * Throws an Error when `pattern` is not a valid ECMA-262 pattern, and a
 * SpecError when it uses what RE2 cannot run.
 */
export function ecmaPatternToRe2(pattern: string): string {
  try {
    new RegExp(pattern, "u"); // only compiled, never run: checks the syntax
  } catch (error) {
    // A plain Error: the schema is invalid, as it is for a code-defined spec whose RegExp refuses the pattern.
    throw new Error(
      `the pattern ${JSON.stringify(pattern.slice(0, 200))} is not a valid ECMA-262 regular expression, JSON Schema's dialect (${(error as Error).message})`,
    );
  }
  try {
    return new Translation(pattern).run();
  } catch (error) {
    if (error instanceof SpecError) throw new SpecError(`the pattern ${JSON.stringify(pattern.slice(0, 200))}: ${error.message}`);
    throw error;
  }
}

/**
 * Whether a backtracking engine (JavaScript's RegExp) runs `pattern` in time
 * linear in the text, whatever the text: true only for shapes where that is
 * certain, false for anything else (which may still be linear). Two shapes:
 * - no quantifier whose count can vary (`*`, `+`, `?`, `{n,}`, `{n,m}`):
 *   at most one match attempt per start position, each bounded by the pattern;
 * - anchored at the start (`^` first, no `m` flag) with exactly one such
 *   quantifier: one start position, and the only choice is that count.
 * In both, no alternation and no quantified group: those are how a
 * backtracking engine comes to try exponentially or polynomially many ways.
 * A pattern that is not ECMA-262, or has lookaround or a backreference, gets
 * false: no claim is made for it.
 */
export function linearOnBacktracking(pattern: string, flags = "u"): boolean {
  const shape = new Translation(pattern);
  try {
    new RegExp(pattern, "u");
    shape.run();
  } catch {
    return false; // not ECMA-262, or lookaround or a backreference: no claim is made
  }
  if (shape.alternation || shape.quantifiedGroup) return false;
  if (shape.variableQuantifiers === 0) return true;
  return shape.variableQuantifiers === 1 && pattern.startsWith("^") && !flags.includes("m");
}

/** One pass over a pattern already known to be valid ECMA-262 (so its syntax is not checked again here). */
class Translation {
  private readonly chars: string[];
  private i = 0;
  private out = "";
  /** The pattern's shape, read on the way (see linearOnBacktracking). */
  variableQuantifiers = 0;
  quantifiedGroup = false;
  alternation = false;
  private afterGroup = false;

  constructor(pattern: string) {
    this.chars = [...pattern]; // code points: a surrogate pair is one character with the `u` flag
  }

  run(): string {
    while (this.i < this.chars.length) {
      const groupEnded = this.chars[this.i] === ")";
      this.atom();
      this.afterGroup = groupEnded;
      if (this.out.length > MAX_TRANSLATED_CHARS) refuse(`a pattern longer than ${MAX_TRANSLATED_CHARS} characters once its classes are spelt out`);
    }
    return this.out;
  }

  /** A quantifier just read: `fixed` when its count cannot vary ({n}). */
  private quantifier(fixed: boolean): void {
    if (!fixed) this.variableQuantifiers++;
    if (this.afterGroup) this.quantifiedGroup = true;
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.i + offset];
  }

  private atom(): void {
    const c = this.chars[this.i++];
    switch (c) {
      case "\\":
        this.out += this.escapeOutsideClass();
        return;
      case ".":
        this.out += `[${rangesSource(codePointsOf("."))}]`;
        return;
      case "[":
        this.out += this.characterClass();
        return;
      case "(":
        this.out += this.groupOpening();
        return;
      case "{": {
        // A quantifier ({n}, {n,}, {n,m}), copied as it is.
        const close = this.chars.indexOf("}", this.i);
        const body = this.chars.slice(this.i, close).join("");
        this.quantifier(/^\d+$/.test(body));
        this.out += `{${body}}`;
        this.i = close + 1;
        return;
      }
      case "*":
      case "+":
      case "?":
        this.quantifier(false); // a "?" after a quantifier (a lazy one) counts again: the shape is only ever underrated
        this.out += c;
        return;
      case "|":
        this.alternation = true;
        this.out += c;
        return;
      case ")":
      case "^":
      case "$":
        this.out += c;
        return;
      default:
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
    if (set !== undefined) return `[${set}]`;
    return literal(this.characterEscape());
  }

  /** `\d \D \w \W \s \S \p{…} \P{…}` as the inside of an RE2 class, or undefined for another escape (nothing read then). */
  private classEscape(): string | undefined {
    const c = this.peek()!;
    if ("dDwWsS".includes(c)) {
      this.i++;
      return rangesSource(codePointsOf(`\\${c}`));
    }
    if (c === "p" || c === "P") {
      const close = this.chars.indexOf("}", this.i);
      const body = this.chars.slice(this.i + 2, close).join("");
      this.i = close + 1;
      const ranges = codePointsOf(`\\p{${body}}`);
      return rangesSource(c === "p" ? ranges : complement(ranges));
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

  /** A character class, the `[` already read: always an explicit RE2 class. */
  private characterClass(): string {
    const negated = this.peek() === "^";
    if (negated) this.i++;
    let inside = "";
    let last: number | undefined; // a single character just read, which a "-" extends to a range
    while (this.peek() !== "]") {
      if (this.peek() === "-" && last !== undefined && this.peek(1) !== "]") {
        this.i++;
        inside += `-${hex(this.classAtom() as number)}`; // the syntax check guarantees a single character here
        last = undefined;
        continue;
      }
      const atom = this.classAtom();
      inside += typeof atom === "number" ? hex(atom) : atom.set;
      last = typeof atom === "number" ? atom : undefined;
    }
    this.i++;
    // [] matches nothing and [^] any one character: RE2 has no empty class.
    const everything = `${hex(0)}-${hex(MAX_CODE_POINT)}`;
    if (inside === "") return negated ? `[${everything}]` : `[^${everything}]`;
    return `[${negated ? "^" : ""}${inside}]`;
  }

  /** One class member: a code point, or a class escape's code points as the inside of an RE2 class. */
  private classAtom(): number | { set: string } {
    const c = this.chars[this.i++];
    if (c !== "\\") return c.codePointAt(0)!;
    if (this.peek() === "b") {
      this.i++;
      return 0x08; // inside a class, \b is backspace
    }
    const set = this.classEscape();
    return set !== undefined ? { set } : this.characterEscape();
  }
}

/** A literal code point, spelt so RE2 cannot read it as syntax. */
function literal(cp: number): string {
  return /[A-Za-z0-9_ ]/.test(String.fromCodePoint(cp)) ? String.fromCodePoint(cp) : hex(cp);
}
