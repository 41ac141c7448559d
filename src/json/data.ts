/**
 * Whether a value is plain JSON data, and a fresh copy of it when it is. A
 * value that did not come from JSON text (a person's answer given as an
 * object, a tool's arguments, a zod spec's output) is read once, here: only
 * null, booleans, finite numbers, strings, arrays and plain objects pass,
 * within the same size and depth limits as JSON text. Anything else (a cycle,
 * a BigInt, a function, a Date, a getter, a sparse array, NaN) gets a clear,
 * bounded reason, never a throw and never a stack overflow (the walk keeps its
 * own stack). The copy is what gets validated and handed on, so nothing the
 * caller still holds can change it afterwards.
 */
import { DEFAULT_JSON_LIMITS, type JsonLimits } from "./parse.js";
import { unkeptNumberProblem, unkeptObjectProblem } from "./kept.js";
import { pathOf } from "./paths.js";
import { describeThrown } from "../shared/text.js";

export type JsonDataResult = { ok: true; value: unknown } | { ok: false; error: string };

interface Frame {
  /** The container being filled. */
  target: Record<string, unknown> | unknown[];
  key: string | number;
  value: unknown;
  depth: number;
  /** The frame of the container this value is in (its path is built from these links, only for a message). */
  parent: Frame | undefined;
}

/** A frame's path from the root, for a message. */
function pathTo(frame: Frame | undefined): Array<string | number> {
  const path: Array<string | number> = [];
  for (let f = frame; f !== undefined && f.parent !== undefined; f = f.parent) path.push(f.key);
  return path.reverse();
}

/**
 * A fresh, deep-frozen copy of `value` made only of JSON data, as a checkpoint
 * keeps it (each -0 made 0), or why it is not JSON data. Rules can read the copy
 * as it is (readOnlyCopy hands it back at no cost).
 * `what` names the value in messages ("the value", "the arguments").
 * Size counts characters as JSON text would (strings, keys, one per other value).
 */
export function toJsonData(value: unknown, limits: Partial<JsonLimits> = {}, what = "the value"): JsonDataResult {
  try {
    return copyJsonData(value, limits, what);
  } catch (error) {
    // Reading it ran code that threw (a Proxy's trap): not JSON data, said as the other refusals are.
    return fail(`${what} could not be read as JSON data (reading it threw: ${describeThrown(error, 200)})`);
  }
}

function copyJsonData(value: unknown, limits: Partial<JsonLimits>, what: string): JsonDataResult {
  const { maxChars, maxDepth } = { ...DEFAULT_JSON_LIMITS, ...limits };
  const holder: unknown[] = [];
  const stack: Frame[] = [{ target: holder, key: 0, value, depth: 0, parent: undefined }];
  const open = new Set<object>();
  const closeAt: Array<{ object: object; remaining: number }> = [];
  let size = 0;
  /** The containers of the copy, frozen once it is whole. */
  const made: object[] = [];
  /** What a message calls a frame's value: "the value" at the root, else its path. */
  const subject = (frame: Frame) => (frame.parent === undefined ? what : pathOf(pathTo(frame)));
  /** A child's path, for a message about a field or item not yet queued. */
  const child = (frame: Frame, key: string | number) => pathOf([...pathTo(frame), key]);
  const verb = /s$/.test(what) ? "are" : "is";
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { target, key, value: v, depth } = frame;
    const isRoot = frame.parent === undefined;
    let copy: unknown;
    let opened = false;
    if (v === null || typeof v === "boolean" || typeof v === "string") {
      copy = v;
      size += typeof v === "string" ? v.length + 2 : v === false ? 5 : 4;
    } else if (typeof v === "number") {
      const problem = unkeptNumberProblem(v);
      if (problem !== undefined) return fail(`${subject(frame)} ${isRoot ? problem.replace(/^is/, verb) : problem}`);
      // -0 as a checkpoint keeps it (./kept.ts).
      copy = v === 0 ? 0 : v;
      size += String(v).length;
    } else if (typeof v === "bigint") {
      return fail(`${subject(frame)} ${isRoot ? verb : "is"} a BigInt, which JSON has no form for; use a number or a string`);
    } else if (typeof v === "object") {
      if (depth >= maxDepth) return fail(`${what} nest${verb === "are" ? "" : "s"} deeper than ${maxDepth} levels; the expected value is shallower`);
      if (open.has(v)) return fail(`${subject(frame)} refers to itself (a cycle), which JSON cannot hold`);
      const proto = Object.getPrototypeOf(v);
      if (Array.isArray(v)) {
        if (proto !== Array.prototype) return fail(`${subject(frame)} ${isRoot ? verb : "is"} an array of another kind, not plain JSON data`);
        const out: unknown[] = new Array(v.length);
        const children: Frame[] = [];
        for (let i = 0; i < v.length; i++) {
          const descriptor = Object.getOwnPropertyDescriptor(v, i);
          if (descriptor === undefined) return fail(`${child(frame, i)} is missing (a sparse array), which JSON cannot hold`);
          if (!("value" in descriptor)) return fail(`${child(frame, i)} is computed by a getter, not plain JSON data`);
          children.push({ target: out, key: i, value: descriptor.value, depth: depth + 1, parent: frame });
        }
        size += 2 + v.length;
        made.push(out);
        copy = out;
        opened = push(v, children);
      } else if (proto === Object.prototype || proto === null) {
        const unkept = unkeptObjectProblem(v);
        if (unkept !== undefined) return fail(`${subject(frame)} ${isRoot && verb === "are" ? unkept.replace(/^has/, "have") : unkept}`);
        const out: Record<string, unknown> = {};
        const children: Frame[] = [];
        for (const name of Reflect.ownKeys(v)) {
          if (typeof name === "symbol") return fail(`${subject(frame)} has a symbol-keyed field, not plain JSON data`);
          const descriptor = Object.getOwnPropertyDescriptor(v, name)!;
          if (!descriptor.enumerable) continue;
          if (!("value" in descriptor)) return fail(`${child(frame, name)} is computed by a getter, not plain JSON data`);
          // An undefined field is absent, as JSON.stringify and JSON Schema see it.
          if (descriptor.value === undefined) continue;
          size += name.length + 4;
          children.push({ target: out, key: name, value: descriptor.value, depth: depth + 1, parent: frame });
        }
        size += 2;
        made.push(out);
        copy = out;
        opened = push(v, children);
      } else if (isPlainContainer(proto) && !Object.hasOwn(proto, "constructor")) {
        // A plain object as the prototype: a field named "__proto__" that a layer rebuilt by assignment (LangGraph's
        // serializer does, when a resume or a run's input is stored), which sets the prototype instead of a field.
        return fail(
          `${subject(frame)} ${isRoot && verb === "are" ? "have" : "has"} a field named "__proto__" (it arrived as the object's prototype), which a checkpoint would not give back as written; rename the field`,
        );
      } else {
        const kind = (proto as { constructor?: { name?: unknown } } | undefined)?.constructor?.name;
        return fail(
          `${subject(frame)} ${isRoot ? verb : "is"} ${typeof kind === "string" && kind !== "" ? `a ${kind.slice(0, 40)}` : "an object with a prototype"}, not plain JSON data (objects, arrays, strings, finite numbers, booleans and null)`,
        );
      }
    } else {
      return fail(`${subject(frame)} ${isRoot ? verb : "is"} ${v === undefined ? "undefined" : `a ${typeof v}`}, which JSON has no form for`);
    }
    if (size > maxChars) return fail(`${what} ${verb} over the limit of ${maxChars} characters of JSON`);
    define(target, key, copy);
    // A container with fields is finished when its last field is.
    if (!opened) settle();
  }
  for (const container of made) Object.freeze(container);
  if (made.length > 0) readOnly.add(made[0]);
  return { ok: true, value: holder[0] };

  /** Queue a container's fields; false when it has none (it is finished at once). */
  function push(object: object, children: Frame[]): boolean {
    if (children.length === 0) return false;
    open.add(object);
    closeAt.push({ object, remaining: children.length });
    // Reversed so that fields are read (and errors found) in order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    return true;
  }

  /** A value is finished: containers whose last field it was are finished too and no longer open (the same object twice among siblings is not a cycle). */
  function settle() {
    while (closeAt.length > 0) {
      const top = closeAt[closeAt.length - 1];
      if (--top.remaining > 0) return;
      open.delete(top.object);
      closeAt.pop();
    }
  }
}

/** Set a field as JSON.parse does: "__proto__" becomes an ordinary own field, never the prototype. */
function define(target: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string | number, unknown>)[key] = value;
}

function fail(error: string): JsonDataResult {
  return { ok: false, error };
}

/** Deep-frozen values (copies made here, values frozen by freezeOwned): handing one to readOnlyCopy costs nothing. */
const readOnly = new WeakSet<object>();

/**
 * Freeze, in place, a value made only of plain objects and arrays that the caller owns (JSON.parse's
 * fresh output): the value itself then serves as the read-only copy rules read, and no copy is made.
 */
export function freezeOwned<T>(value: T): T {
  if (value === null || typeof value !== "object" || readOnly.has(value)) return value;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const container = stack.pop()!;
    const items = Array.isArray(container) ? container : Object.values(container);
    for (const item of items) if (item !== null && typeof item === "object") stack.push(item);
    Object.freeze(container);
  }
  readOnly.add(value);
  return value;
}

/**
 * A deep, frozen copy of the plain parts of a value (plain objects and arrays), for code that must
 * read what is judged and never change it: a spec's rules and refinements get the document and the
 * run's context this way. Anything else (a class instance, a function, a client a context carries)
 * is handed on as it is. Iterative; a cycle of plain objects is copied as the same cycle.
 */
export function readOnlyCopy<T>(value: T): T {
  if (!isPlainContainer(value) || readOnly.has(value)) return value;
  const copies = new Map<object, object>();
  const stack: Array<{ from: Record<string, unknown>; to: Record<string, unknown> }> = [];
  const root = start(value);
  while (stack.length > 0) {
    const { from, to } = stack.pop()!;
    for (const key of Object.keys(from)) {
      const v = from[key];
      define(to, key, isPlainContainer(v) && !readOnly.has(v) ? (copies.get(v) ?? start(v)) : v);
    }
  }
  for (const copy of copies.values()) {
    Object.freeze(copy);
    readOnly.add(copy);
  }
  return root as T;

  function start(from: object): Record<string, unknown> {
    const to = (Array.isArray(from) ? new Array(from.length) : Object.getPrototypeOf(from) === null ? Object.create(null) : {}) as Record<string, unknown>;
    copies.set(from, to);
    stack.push({ from: from as Record<string, unknown>, to });
    return to;
  }
}

function isPlainContainer(value: unknown): value is object {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return Array.isArray(value) ? proto === Array.prototype : proto === Object.prototype || proto === null;
}

/** JSON equality that reads only the values' own fields, iteratively (an answer may nest deeply); the same object is equal without a look inside. */
export function jsonEqual(x: unknown, y: unknown): boolean {
  const stack: Array<[unknown, unknown]> = [[x, y]];
  while (stack.length > 0) {
    const [a, b] = stack.pop()!;
    if (a === b) continue;
    if (typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b)) continue;
    if (a === null || b === null || typeof a !== "object" || typeof b !== "object" || Array.isArray(a) !== Array.isArray(b)) return false;
    if (Array.isArray(a)) {
      const other = b as unknown[];
      if (a.length !== other.length) return false;
      for (let i = 0; i < a.length; i++) stack.push([a[i], other[i]]);
      continue;
    }
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(b, key)) return false;
      stack.push([(a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]]);
    }
  }
  return true;
}
