/**
 * What can be kept as judged. A verdict is only worth something if the value
 * a run returns, stores and gives back is the value that was judged. Two
 * kinds of JSON value break that, so the readers and the JSON-data copy
 * refuse them before anything judges them:
 *
 *   - a number JSON has no form for: `JSON.parse` reads `1e400` as Infinity,
 *     which `JSON.stringify` (and so every store and route) writes as null;
 *   - an object a LangGraph checkpoint would not give back as written. Its
 *     serializer revives objects shaped like its own markers when it loads a
 *     checkpoint (`{"lc": 2, "type": "undefined"}` becomes a missing field,
 *     `{"lc": 2, "type": "constructor", "id": ["Set"], …}` a Set,
 *     `{"lc": 1, "type": "constructor", …}` a LangChain object), rewrites an
 *     object with `"lg_name": "Send"` when it stores one, and rebuilds objects
 *     by assignment, so a field named `__proto__` is lost. The shapes are
 *     refused a little more widely than the serializer reads them today (any
 *     numeric `lc` beside a string `type`), so that a new marker in an upgrade
 *     is refused too; tests/json/kept.test.ts fails if an upgrade gives any
 *     of them back as written, or loses a value this module lets through.
 *
 * Numbers are kept as the doubles JavaScript reads: a checkpoint writes a
 * double with `JSON.stringify` and reads the same double back, except `-0`,
 * which it writes as `0`. JSON Schema does not tell `-0` from `0` (it judges
 * the mathematical number), so every `-0` is made `0` before it is judged:
 * the value judged, returned and kept is one. A number whose text names a
 * value the double is not (`1e-400` reads as 0, `9007199254740993` as
 * 9007199254740992, `0.1000000000000000000001` as 0.1) would be judged and
 * kept as another number than the one written: it is refused, with its path
 * (inexactLiteralProblem), never judged as a neighbour.
 */
import { pathOf } from "./paths.js";

/** Why an object (not an array) would not come back from a checkpoint as written, or undefined. */
export function unkeptObjectProblem(object: object): string | undefined {
  if (field(object, "__proto__") !== ABSENT) return 'has a field named "__proto__", which a checkpoint would not give back as written; rename the field';
  if (typeof field(object, "lc") === "number" && typeof field(object, "type") === "string") {
    return 'has the fields "lc" and "type" of a LangGraph checkpoint marker, which a checkpoint would not give back as written; rename or remove one of them';
  }
  if (field(object, "lg_name") === "Send") return 'has "lg_name": "Send", which a checkpoint would not store as written; rename the field';
  return undefined;
}

const ABSENT = Symbol("absent");

/** An own, enumerable data field's value (never a getter's: nothing runs), else ABSENT. */
function field(object: object, name: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(object, name);
  return descriptor !== undefined && descriptor.enumerable && "value" in descriptor ? descriptor.value : ABSENT;
}

/** Why a number would not be kept as judged (it is not finite), or undefined. */
export function unkeptNumberProblem(n: number): string | undefined {
  if (Number.isFinite(n)) return undefined;
  if (Number.isNaN(n)) return "is NaN, which JSON has no form for; use a finite number or null";
  return `is a number out of range (it reads as ${n}), which JSON has no form for; use a number between -1.7976931348623157e308 and 1.7976931348623157e308`;
}

/**
 * A value parsed from JSON text, as a checkpoint keeps it: every `-0` made `0`
 * in place (the value is the reader's own, fresh from `JSON.parse`), or the
 * first place that would not be kept as judged, as a message naming its path.
 * Iterative (the readers have bounded the depth already, but a stack of its
 * own costs nothing), and linear in the value's size.
 */
export function keptFromText(value: unknown, what = "the value"): { ok: true; value: unknown } | { ok: false; error: string } {
  type Item = { v: unknown; key: string | number; parent: Item | undefined };
  if (typeof value === "number") {
    const problem = unkeptNumberProblem(value);
    return problem === undefined ? { ok: true, value: value === 0 ? 0 : value } : { ok: false, error: `${what} ${problem}` };
  }
  const stack: Item[] = [{ v: value, key: "", parent: undefined }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    const { v } = item;
    let problem: string | undefined;
    if (typeof v === "number") problem = unkeptNumberProblem(v);
    else if (v !== null && typeof v === "object") {
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) {
          const child: unknown = v[i];
          if (child === 0) v[i] = 0;
          else if (typeof child === "object" || typeof child === "number") stack.push({ v: child, key: i, parent: item });
        }
      } else {
        problem = unkeptObjectProblem(v);
        if (problem === undefined) {
          const object = v as Record<string, unknown>;
          const keys = Object.keys(object);
          for (let i = keys.length - 1; i >= 0; i--) {
            const child = object[keys[i]];
            // An own data field of JSON.parse's making: assigning it never reaches a setter (a "__proto__" field is refused above).
            if (child === 0) object[keys[i]] = 0;
            else if (typeof child === "object" || typeof child === "number") stack.push({ v: child, key: keys[i], parent: item });
          }
        }
      }
    }
    if (problem !== undefined) return { ok: false, error: `${pathTo(item) || what} ${problem}` };
  }
  return { ok: true, value };

  function pathTo(item: Item): string {
    const steps: Array<string | number> = [];
    for (let i: Item | undefined = item; i?.parent !== undefined; i = i.parent) steps.push(i.key);
    return pathOf(steps.reverse());
  }
}

/** Integers of up to 15 digits: always read exactly (below 2^53), the common case, known without a look at the digits. */
const SHORT_INTEGER = /^-?(?:0|[1-9]\d{0,14})$/;
const NUMBER_LITERAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Why a JSON number literal would not be judged and kept as written, or undefined: the double it
 * reads as names another number (the literal has more digits than a double holds, or is too small
 * for one and reads as 0). A literal out of range (it reads as ±Infinity) is left to
 * unkeptNumberProblem. The literal is valid JSON (it has been parsed).
 */
export function inexactLiteralProblem(literal: string): string | undefined {
  if (SHORT_INTEGER.test(literal)) return undefined;
  const read = Number(literal);
  if (!Number.isFinite(read)) return undefined;
  const kept = String(read);
  if (kept === literal || decimalValue(kept) === decimalValue(literal)) return undefined;
  const shown = literal.length > 40 ? `${literal.slice(0, 40)}…` : literal;
  return `is the number ${shown}, which reads as ${kept}: it would be judged and kept as ${kept}, not as written; write it with at most 15 significant digits (or as a string, if every digit matters)`;
}

/** A number literal's mathematical value in one canonical form (sign, significant digits, exponent), so that `1e2`, `100` and `100.0` compare equal; `-0` is `0`. */
function decimalValue(literal: string): string {
  const match = NUMBER_LITERAL.exec(literal);
  if (match === null) return literal;
  const [, sign, whole, fraction = "", exponent = "0"] = match;
  let digits = (whole + fraction).replace(/^0+/, "");
  if (digits === "") return "0";
  let scale = Number(exponent) - fraction.length;
  const trimmed = digits.replace(/0+$/, "");
  scale += digits.length - trimmed.length;
  digits = trimmed;
  return `${sign}${digits}e${scale}`;
}
