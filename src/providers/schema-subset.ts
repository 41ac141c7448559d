/**
 * The part of a spec's JSON Schema a provider's structured output takes. Some providers accept only a subset
 * of JSON Schema and refuse a request that uses more (their rows in ./index.ts name it, as a SchemaProfile),
 * so those get the subset, with what was left out listed; the validator still judges every answer against the
 * whole spec, and the prompt still states every constraint in words. Pure: no provider package is imported.
 */
import type { JsonSchema } from "../specs/spec.js";

/** The subset of JSON Schema a provider's structured output takes. */
export interface SchemaProfile {
  /** Keywords the provider takes. */
  keep: ReadonlySet<string>;
  /** Values it takes for a keyword, where it takes only some. */
  values?: Readonly<Record<string, (value: unknown) => boolean>>;
  /** Keywords it takes under another name. */
  rename?: Readonly<Record<string, string>>;
  /** Every object schema must say `additionalProperties: false`. */
  closeObjects?: boolean;
}

/** Keywords whose value is one subschema, a list of them, or a map of them. */
const ONE = ["items", "additionalProperties", "not", "if", "then", "else", "contains"];
const LIST = ["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP = ["properties", "$defs", "definitions", "patternProperties"];

/** Most dropped keywords listed in a record; the rest are counted. */
const MAX_LISTED = 20;

/** The schema as the profile takes it, and the keywords left out (`/properties/name: pattern`). */
export function schemaSubset(schema: JsonSchema, profile: SchemaProfile): { schema: JsonSchema; dropped: string[] } {
  const dropped: string[] = [];
  const out = walk(schema, profile, "", dropped) as JsonSchema;
  const listed = dropped.length > MAX_LISTED ? [...dropped.slice(0, MAX_LISTED), `… and ${dropped.length - MAX_LISTED} more`] : dropped;
  return { schema: out, dropped: listed };
}

function walk(node: unknown, profile: SchemaProfile, path: string, dropped: string[]): unknown {
  if (node === null || typeof node !== "object" || Array.isArray(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    const name = profile.rename?.[key] ?? key;
    const allowed = profile.keep.has(name) && (profile.values?.[name]?.(value) ?? true) && !(name in out);
    if (!allowed) {
      dropped.push(`${path || "/"}: ${key}`);
      continue;
    }
    const at = `${path}/${key}`;
    if (ONE.includes(key)) out[name] = walk(value, profile, at, dropped);
    else if (LIST.includes(key) && Array.isArray(value)) out[name] = value.map((item, i) => walk(item, profile, `${at}/${i}`, dropped));
    // Own entries only: a property may be named anything, "__proto__" included.
    else if (MAP.includes(key) && value !== null && typeof value === "object")
      out[name] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, profile, `${at}/${k}`, dropped)]));
    else out[name] = value;
  }
  if (profile.closeObjects && (out.type === "object" || out.properties !== undefined)) out.additionalProperties = false;
  return out;
}
