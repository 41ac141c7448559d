/**
 * A value for any JSON Schema, drawn with a seeded random generator: how the
 * simulated model answers a spec it has no example for, or a tool's
 * parameters. It aims at a valid value (types, bounds, enums, patterns, the
 * standard formats, required fields, unique items); what a schema cannot say
 * (a business rule) the validator names, and a retry draws that field again.
 */
import RandExpModule from "randexp";
import { childPath } from "../json/paths.js";

type Schema = Record<string, unknown>;
type Random = () => number;

// randexp is CommonJS (module.exports = class); its declarations call the class a default export.
const RandExp = ((RandExpModule as unknown as { default?: unknown }).default ?? RandExpModule) as typeof import("randexp").default;

const MAX_DEPTH = 12;
const WORDS = ["alpha", "bravo", "cedar", "delta", "ember", "frost", "grove", "harbor", "indigo", "juniper", "koala", "lumen"];

/** Values for the standard formats (ajv-formats' names). */
const FORMATS: Record<string, string> = {
  email: "user@example.com",
  uri: "https://example.com/item",
  "uri-reference": "https://example.com/item",
  iri: "https://example.com/item",
  hostname: "example.com",
  "idn-hostname": "example.com",
  ipv4: "192.0.2.10",
  ipv6: "2001:db8::10",
  uuid: "3f1c2a9e-5b7d-4e2f-9a61-2c8d4b7e1f05",
  date: "2026-01-15",
  time: "12:30:00Z",
  "date-time": "2026-01-15T12:30:00Z",
  duration: "P1D",
  regex: "^[a-z]+$",
  "json-pointer": "/a/b",
};

function integerIn(random: Random, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

/** Resolves a local `$ref` ("#/$defs/x"); anything else is left as is. */
function resolve(schema: Schema, root: Schema): Schema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === "string" && hops < MAX_DEPTH; hops++) {
    const ref = current.$ref as string;
    if (!ref.startsWith("#")) return {};
    let target: unknown = root;
    for (const raw of ref.slice(1).split("/").filter(Boolean)) {
      const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      target = target !== null && typeof target === "object" ? (target as Schema)[key] : undefined;
    }
    const { $ref: _ref, ...rest } = current;
    current = { ...(target !== null && typeof target === "object" ? (target as Schema) : {}), ...rest };
  }
  // allOf: the parts' keywords together (enough for the schemas zod and people write).
  if (Array.isArray(current.allOf)) {
    const { allOf, ...rest } = current;
    current = Object.assign({}, ...(allOf as unknown[]).filter((s) => s !== null && typeof s === "object").map((s) => resolve(s as Schema, root)), rest);
  }
  return current;
}

function typeOf(s: Schema): string {
  const declared = Array.isArray(s.type) ? ((s.type as string[]).find((t) => t !== "null") ?? "null") : (s.type as string | undefined);
  if (declared) return declared;
  if (s.properties || s.additionalProperties || s.required) return "object";
  if (s.items || s.prefixItems) return "array";
  if (s.minimum !== undefined || s.maximum !== undefined || s.exclusiveMinimum !== undefined || s.exclusiveMaximum !== undefined) return "number";
  return "string";
}

function sampleNumber(s: Schema, random: Random, integer: boolean): number {
  let low = typeof s.minimum === "number" ? s.minimum : -Infinity;
  let high = typeof s.maximum === "number" ? s.maximum : Infinity;
  const step = typeof s.multipleOf === "number" && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : 0.01;
  if (typeof s.exclusiveMinimum === "number") low = Math.max(low, s.exclusiveMinimum + step);
  if (typeof s.exclusiveMaximum === "number") high = Math.min(high, s.exclusiveMaximum - step);
  if (low === -Infinity && high === Infinity) [low, high] = [0, 10];
  else if (low === -Infinity) low = high - 10;
  else if (high === Infinity) high = low + 10;
  const first = Math.ceil(low / step);
  const last = Math.floor(high / step);
  if (last < first) return low;
  // Rounded, so a step of 0.01 gives 2.35, not 2.3500000000000001.
  return Number((integerIn(random, first, last) * step).toPrecision(12));
}

function sampleString(s: Schema, random: Random): string {
  const min = typeof s.minLength === "number" ? s.minLength : 0;
  const max = typeof s.maxLength === "number" ? s.maxLength : Infinity;
  const fits = (v: string) => [...v].length >= min && [...v].length <= max;
  if (typeof s.pattern === "string") {
    let generator: InstanceType<typeof RandExp>;
    try {
      generator = new RandExp(s.pattern);
    } catch {
      return "sample";
    }
    generator.max = 8;
    generator.randInt = (a, b) => integerIn(random, a, b);
    let value = generator.gen();
    for (let tries = 0; tries < 20 && !fits(value); tries++) value = generator.gen();
    return value;
  }
  if (typeof s.format === "string" && FORMATS[s.format] !== undefined) return FORMATS[s.format];
  let value = `${WORDS[integerIn(random, 0, WORDS.length - 1)]}-${integerIn(random, 1, 99)}`;
  while (value.length < min) value += WORDS[integerIn(random, 0, WORDS.length - 1)];
  return max < Infinity ? value.slice(0, max) : value;
}

/**
 * Values drawn for one answer at most: a recursive schema (a meta-schema, a tree of nodes) could otherwise
 * ask for a value whose size grows as its fields to the power of MAX_DEPTH. Past half of it, or half of
 * MAX_DEPTH, only required fields and the fewest items are drawn; once spent, what is left is null (the
 * validator names it).
 */
const MAX_NODES = 2_000;

interface Draw {
  random: Random;
  root: unknown;
  left: number;
}

/** A value for `schema` (a JSON Schema; `root` is where its `$ref`s point), of at most MAX_NODES values. */
export function sampleValue(schema: unknown, random: Random, root: unknown = schema): unknown {
  return draw(schema, { random, root, left: MAX_NODES }, 0);
}

function draw(schema: unknown, ctx: Draw, depth: number): unknown {
  const { random, root } = ctx;
  if (ctx.left <= 0) return null;
  ctx.left--;
  if (schema === true || schema === undefined) return WORDS[integerIn(random, 0, WORDS.length - 1)];
  if (schema === null || typeof schema !== "object" || depth > MAX_DEPTH) return null;
  const s = resolve(schema as Schema, root as Schema);
  const frugal = ctx.left < MAX_NODES / 2 || depth > MAX_DEPTH / 2;
  if (s.const !== undefined) return structuredClone(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) return structuredClone(s.enum[integerIn(random, 0, s.enum.length - 1)]);
  const options = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(options) && options.length > 0) {
    const usable = options.filter((o) => !(o !== null && typeof o === "object" && (o as Schema).type === "null"));
    const { anyOf: _a, oneOf: _o, ...rest } = s;
    const chosen = usable[integerIn(random, 0, Math.max(0, usable.length - 1))] ?? options[0];
    return draw(chosen !== null && typeof chosen === "object" ? { ...rest, ...(chosen as Schema) } : chosen, ctx, depth + 1);
  }
  switch (typeOf(s)) {
    case "null":
      return null;
    case "boolean":
      return random() < 0.5;
    case "integer":
      return sampleNumber(s, random, true);
    case "number":
      return sampleNumber(s, random, false);
    case "array": {
      const tuple = (Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : []) as unknown[];
      const min = Math.max(typeof s.minItems === "number" ? s.minItems : frugal ? 0 : 1, tuple.length);
      const max = typeof s.maxItems === "number" ? s.maxItems : min + 2;
      const count = frugal ? min : Math.min(integerIn(random, min, Math.max(min, Math.min(max, min + 2))), 50);
      const items: unknown[] = tuple.map((t) => draw(t, ctx, depth + 1));
      const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
      const seen = new Set(items.map((v) => JSON.stringify(v)));
      for (let tries = 0; items.length < count && tries < count * 5 && ctx.left > 0; tries++) {
        const item = draw(rest, ctx, depth + 1);
        if (s.uniqueItems === true && seen.has(JSON.stringify(item))) continue;
        seen.add(JSON.stringify(item));
        items.push(item);
      }
      return items;
    }
    case "object": {
      const out: Record<string, unknown> = {};
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      for (const [key, child] of Object.entries(properties)) if (!frugal || required.has(key)) out[key] = draw(child, ctx, depth + 1);
      // A record (no named fields): one entry.
      if (!frugal && Object.keys(properties).length === 0 && s.additionalProperties !== undefined && s.additionalProperties !== false) {
        out.key = draw(s.additionalProperties, ctx, depth + 1);
      }
      for (const key of required) if (!(key in out)) out[key] = WORDS[0];
      return out;
    }
    default:
      return sampleString(s, random);
  }
}

/** The schema of the value at `path` (object keys and array indices) inside `schema`, when it can be told. */
export function schemaAt(schema: unknown, path: readonly string[], root: unknown = schema): unknown {
  let current: unknown = schema;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    let s = resolve(current as Schema, root as Schema);
    const options = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
    if (Array.isArray(options))
      s = resolve(
        (options.find((o) => o !== null && typeof o === "object" && ((o as Schema).properties || (o as Schema).items)) ?? {}) as Schema,
        root as Schema,
      );
    if (/^\d+$/.test(key) && (s.items !== undefined || s.prefixItems !== undefined)) {
      const tuple = (Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined) as unknown[] | undefined;
      current = tuple?.[Number(key)] ?? (Array.isArray(s.items) ? s.additionalItems : s.items);
    } else {
      const properties = s.properties as Record<string, unknown> | undefined;
      current = properties && Object.hasOwn(properties, key) ? properties[key] : s.additionalProperties;
    }
  }
  return current;
}

/** A leaf of a value (not an object or an array): its path as keys, as a message names it, and whether its parent requires it. */
interface Leaf {
  path: string[];
  label: string;
  value: unknown;
  required: boolean;
}

/** The value's leaves, in order (bounded). */
export function leavesOf(value: unknown, schema: unknown, root: unknown = schema, path: string[] = [], label = "", out: Leaf[] = []): Leaf[] {
  if (out.length >= 200 || path.length > MAX_DEPTH) return out;
  if (value !== null && typeof value === "object") {
    const s = schema !== null && typeof schema === "object" ? resolve(schema as Schema, root as Schema) : {};
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    for (const [key, child] of Object.entries(value)) {
      const step = Array.isArray(value) ? Number(key) : key;
      const childSchema = schemaAt(schema, [key], root);
      if (child !== null && typeof child === "object") leavesOf(child, childSchema, root, [...path, key], childPath(label, step), out);
      else out.push({ path: [...path, key], label: childPath(label, step), value: child, required: !Array.isArray(value) && required.has(key) });
    }
  }
  return out;
}
