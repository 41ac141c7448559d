/**
 * Where specs come from: the built-in registry by name, or a JSON spec supplied
 * at run time (Studio, the server, a file). Run-time specs are compiled once per
 * distinct text and kept in a small LRU cache.
 */
import { SpecError } from "../errors.js";
import { ajvFor } from "./ajv.js";
import { apiRequestSpec } from "./builtin/api-request.js";
import { dbQuerySpec } from "./builtin/db-query.js";
import { deploymentConfigSpec } from "./builtin/deployment-config.js";
import { signupFormSpec } from "./builtin/signup-form.js";
import { defineSpec, type JsonSchema, type Spec } from "./spec.js";

export const builtinSpecs: ReadonlyMap<string, Spec> = new Map(
  [deploymentConfigSpec, apiRequestSpec, dbQuerySpec, signupFormSpec].map((s) => [s.name, s]),
);

export const DEFAULT_SPEC_NAME = deploymentConfigSpec.name;

/** A reference to a spec: a built-in name, JSON text of an inline spec, an inline spec object, or a Spec. */
export type SpecRef = string | Spec | InlineSpec | JsonSchema;

/** An inline spec as JSON: a JSON Schema with optional name and description. Cross-field rules use `$data` and `if`/`then`. */
export interface InlineSpec {
  name?: string;
  description?: string;
  schema: JsonSchema;
}

/** Largest inline spec accepted, as JSON text. */
export const MAX_INLINE_SPEC_CHARS = 100_000;
const CACHE_SIZE = 64;
const inlineCache = new Map<string, Spec>();

export function isSpec(value: unknown): value is Spec {
  return typeof value === "object" && value !== null && typeof (value as Spec).validateSchema === "function";
}

/** Resolve any SpecRef into a compiled Spec, or throw a SpecError that says what to change. */
export function resolveSpec(ref: SpecRef): Spec {
  if (isSpec(ref)) return ref;
  if (typeof ref === "string") {
    const trimmed = ref.trim();
    const builtin = builtinSpecs.get(trimmed);
    if (builtin) return builtin;
    if (trimmed.startsWith("{")) {
      if (trimmed.length > MAX_INLINE_SPEC_CHARS) {
        throw new SpecError(`The inline spec is ${trimmed.length} characters of JSON, over the limit of ${MAX_INLINE_SPEC_CHARS}.`);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(trimmed);
      } catch (error) {
        throw new SpecError(`The inline spec is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
      }
      return compileInline(parsed, trimmed);
    }
    throw new SpecError(
      `Unknown spec ${JSON.stringify(trimmed.slice(0, 80))}: use one of ${[...builtinSpecs.keys()].join(", ")}, ` +
        `or an inline JSON spec such as {"name": "my-spec", "schema": {"type": "object", ...}}.`,
    );
  }
  if (ref !== null && typeof ref === "object" && !Array.isArray(ref)) return compileInline(ref, undefined);
  throw new SpecError(`A spec must be a built-in name or a JSON object; got ${ref === null ? "null" : Array.isArray(ref) ? "an array" : typeof ref}.`);
}

function compileInline(value: unknown, text: string | undefined): Spec {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new SpecError("An inline spec must be a JSON object: a JSON Schema, or {name, description, schema}.");
  }
  const key = text ?? safeStringify(value);
  if (key.length > MAX_INLINE_SPEC_CHARS) {
    throw new SpecError(`The inline spec is ${key.length} characters of JSON, over the limit of ${MAX_INLINE_SPEC_CHARS}.`);
  }
  const cached = inlineCache.get(key);
  if (cached) {
    inlineCache.delete(key); // refresh its place in the LRU order
    inlineCache.set(key, cached);
    return cached;
  }
  const obj = value as Record<string, unknown>;
  const wrapped = "schema" in obj && typeof obj.schema === "object";
  const spec = defineSpec(
    {
      name: wrapped && typeof obj.name === "string" ? obj.name : "inline",
      description: wrapped && typeof obj.description === "string" ? obj.description : "A spec supplied at run time.",
      schema: (wrapped ? obj.schema : obj) as JsonSchema,
    },
    { untrusted: true },
  );
  inlineCache.set(key, spec);
  if (inlineCache.size > CACHE_SIZE) {
    const [oldestKey, oldest] = inlineCache.entries().next().value as [string, Spec];
    inlineCache.delete(oldestKey);
    ajvFor("untrusted").removeSchema(oldest.schema);
  }
  return spec;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    throw new SpecError("The inline spec cannot be serialised as JSON (does it contain a cycle?).");
  }
}
