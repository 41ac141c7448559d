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
 *     is refused too; tests/shared/kept.test.ts fails if an upgrade gives any
 *     of them back as written, or loses a value this module lets through.
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
 * The first place in a value parsed from JSON text that would not be kept as
 * judged, as a message naming its path; undefined when all of it is kept.
 * Iterative (the readers have bounded the depth already, but a stack of its
 * own costs nothing), and linear in the value's size.
 */
export function findUnkept(value: unknown, what = "the value"): string | undefined {
  type Item = { v: unknown; key: string | number; parent: Item | undefined };
  const stack: Item[] = [{ v: value, key: "", parent: undefined }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    const { v } = item;
    let problem: string | undefined;
    if (typeof v === "number") problem = unkeptNumberProblem(v);
    else if (v !== null && typeof v === "object") {
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) if (typeof v[i] === "object" || typeof v[i] === "number") stack.push({ v: v[i], key: i, parent: item });
      } else {
        problem = unkeptObjectProblem(v);
        if (problem === undefined) {
          const keys = Object.keys(v);
          for (let i = keys.length - 1; i >= 0; i--) {
            const child = (v as Record<string, unknown>)[keys[i]];
            if (typeof child === "object" || typeof child === "number") stack.push({ v: child, key: keys[i], parent: item });
          }
        }
      }
    }
    if (problem !== undefined) return `${pathTo(item) || what} ${problem}`;
  }
  return undefined;

  function pathTo(item: Item): string {
    const steps: Array<string | number> = [];
    for (let i: Item | undefined = item; i?.parent !== undefined; i = i.parent) steps.push(i.key);
    return pathOf(steps.reverse());
  }
}
