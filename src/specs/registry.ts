/**
 * Where specs come from: the built-in registry by name, or a JSON spec supplied
 * at run time (Studio, the server, a file). Run-time specs are compiled once per
 * distinct text and kept in a small LRU cache.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { SpecError } from "../errors.js";
import { apiRequestSpec } from "./builtin/api-request.js";
import { dbQuerySpec } from "./builtin/db-query.js";
import { deploymentConfigSpec } from "./builtin/deployment-config.js";
import { signupFormSpec } from "./builtin/signup-form.js";
import { checkedSpecLimits, RUNTIME_SPEC_LIMITS, type RuntimeSpecLimits } from "./limits.js";
import { refuseUnrecognisedSchema } from "./recognize.js";
import { defineSpec, specOf, type JsonSchema, type SchemaInCode, type Spec, type SpecOutput } from "./spec.js";
import { isStandardSchema, type StandardSchemaV1 } from "./standard.js";

/** The built-in specs, by name (deployment-config, api-request, db-query, signup-form). */
export const builtinSpecs: ReadonlyMap<string, Spec> = new Map([deploymentConfigSpec, apiRequestSpec, dbQuerySpec, signupFormSpec].map((s) => [s.name, s]));

export const DEFAULT_SPEC_NAME = deploymentConfigSpec.name;

/** A reference to a spec: a built-in name, JSON text of an inline spec, an inline spec object, a Spec, a zod schema or another Standard Schema library's. */
export type SpecRef = string | Spec | InlineSpec | JsonSchema | SchemaInCode;

/** What a function that takes a spec accepts, typed: a Spec, a schema in code (`T` is its output), or any other SpecRef. */
export type SpecLike<T = unknown, C = any> = Spec<T, C> | z.ZodType<T> | StandardSchemaV1<unknown, T> | SpecRef;

/** An inline spec as JSON: a JSON Schema with optional name and description. Cross-field rules use `$data` and `if`/`then`. */
export interface InlineSpec {
  name?: string;
  description?: string;
  schema: JsonSchema;
}

/** The fields of an inline spec; any other beside "schema" is refused (it would not be read). */
const INLINE_SPEC_FIELDS = ["name", "description", "schema"];

/** Largest inline spec accepted by default, as JSON text (the limit maxChars). */
export const MAX_INLINE_SPEC_CHARS = RUNTIME_SPEC_LIMITS.maxChars;

/**
 * How a spec reference is resolved: `specLimits`, limits for a spec supplied at run time other than the defaults
 * (RUNTIME_SPEC_LIMITS). The registry reads no environment: the graph builders pass the operator's
 * RUNTIME_SPEC_LIMITS setting under their own `specLimits`. Built-in and code-defined specs are unaffected.
 */
type ResolveSpecOptions = { specLimits?: Partial<RuntimeSpecLimits> };

/** The limits a run-time spec is resolved under: the defaults, then the caller's. */
export function runtimeSpecLimits(given?: Partial<RuntimeSpecLimits>): RuntimeSpecLimits {
  return { ...RUNTIME_SPEC_LIMITS, ...checkedSpecLimits(given) };
}
/** How many distinct inline specs stay compiled; the least recently used beyond it are dropped. */
export const INLINE_SPEC_CACHE_SIZE = 64;
const inlineCache = new Map<string, Spec>();

/** Whether a value is a schema in code: a zod 4 schema, or another Standard Schema library's schema. */
export function isSchemaInCode(value: unknown): value is SchemaInCode {
  return value instanceof z.ZodType || isStandardSchema(value);
}

/** The spec of each schema in code given where a spec is taken, made once (name and description from its metadata). */
const codeSchemaSpecs = new WeakMap<object, Spec>();

function codeSchemaSpec(schema: SchemaInCode): Spec {
  let spec = codeSchemaSpecs.get(schema);
  if (spec === undefined) {
    spec = defineSpec({ schema });
    codeSchemaSpecs.set(schema, spec);
  }
  return spec;
}

/**
 * Resolve any SpecRef into a compiled Spec, or throw a SpecError that says what to change. A schema in
 * code (zod, Valibot, ArkType, Effect …) becomes a spec as `defineSpec({ schema })` makes it, once per schema.
 *
 * @example
 * ```ts
 * import { resolveSpec } from "langgraph-trustworthy-output";
 *
 * const builtin = resolveSpec("deployment-config");
 * const inline = resolveSpec({ name: "page", schema: { type: "object", properties: { page: { type: "integer", minimum: 1 } } } });
 * console.log(builtin.name, inline.name);
 * ```
 */
export function resolveSpec<R extends SpecRef>(ref: R, options?: { specLimits?: Partial<RuntimeSpecLimits> }): Spec<SpecOutput<R>>;
export function resolveSpec(ref: SpecRef, options: ResolveSpecOptions = {}): Spec {
  const spec = specOf(ref);
  if (spec !== undefined) return spec;
  if (isSchemaInCode(ref)) return codeSchemaSpec(ref);
  if (typeof ref === "string") {
    const trimmed = ref.trim();
    const builtin = builtinSpecs.get(trimmed);
    if (builtin) return builtin;
    if (trimmed.startsWith("{")) {
      const limits = runtimeSpecLimits(options.specLimits);
      refuseTooLong(trimmed.length, limits);
      let parsed: unknown;
      try {
        parsed = JSON.parse(trimmed);
      } catch (error) {
        throw new SpecError(`The inline spec is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
      }
      return compileInline(parsed, trimmed, limits);
    }
    throw new SpecError(
      `Unknown spec ${JSON.stringify(trimmed.slice(0, 80))}: use one of ${[...builtinSpecs.keys()].join(", ")}, ` +
        `an inline JSON spec such as {"name": "my-spec", "schema": {"type": "object", ...}}, a Spec from defineSpec, or a schema in code (zod, or a Standard Schema library's).`,
    );
  }
  if (ref !== null && typeof ref === "object" && !Array.isArray(ref)) return compileInline(ref, undefined, runtimeSpecLimits(options.specLimits));
  if (typeof ref === "function") refuseUnrecognisedSchema(ref, "The spec");
  throw new SpecError(
    `A spec must be a built-in name, an inline JSON spec (text or object), a Spec from defineSpec, or a schema in code (zod, or a Standard Schema library's); got ${ref === null ? "null" : Array.isArray(ref) ? "an array" : typeof ref}.`,
  );
}

function refuseTooLong(chars: number, limits: RuntimeSpecLimits): void {
  if (chars > limits.maxChars) {
    throw new SpecError(
      `The inline spec is ${chars} characters of JSON, over the limit maxChars (${limits.maxChars}); raise it with the "maxChars" of RUNTIME_SPEC_LIMITS (server configuration) or of the specLimits option, or send a smaller spec.`,
    );
  }
}

function compileInline(value: unknown, text: string | undefined, limits: RuntimeSpecLimits): Spec {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new SpecError("An inline spec must be a JSON object: a JSON Schema, or {name, description, schema}.");
  }
  // {name, description, schema: a schema in code}: a definition in code, as defineSpec takes it.
  if (isSchemaInCode((value as { schema?: unknown }).schema)) return defineSpec(value as { name?: string; description?: string; schema: SchemaInCode });
  if (["validateSchema", "checkSchema"].some((key) => typeof (value as Record<string, unknown>)[key] === "function")) {
    throw new SpecError(
      "The spec has the shape of a Spec but is not one defineSpec made (a copy, or an object built by hand, whose validator need not be its schema's); pass the Spec defineSpec returned.",
    );
  }
  const obj = value as Record<string, unknown>;
  // Any "schema" field makes it a wrapped spec: read as a bare schema, its unknown keywords would be ignored and accept anything.
  const wrapped = Object.hasOwn(obj, "schema");
  const extra = wrapped ? Object.keys(obj).filter((key) => !INLINE_SPEC_FIELDS.includes(key)) : [];
  if (extra.length > 0) {
    const named = extra
      .slice(0, 5)
      .map((k) => JSON.stringify(k.slice(0, 40)))
      .join(", ");
    const why = extra.includes("rules") ? " (a spec with code rules is made with defineSpec)" : "";
    throw new SpecError(
      `An inline spec has only the fields "name", "description", "schema"; ${named} would not be read${why}. Remove ${extra.length === 1 ? "it" : "them"}, or put the schema's own keywords under "schema".`,
    );
  }
  // Only what is recognised as a spec is read as one: never another library's schema, nor anything that is not JSON data.
  if (text === undefined) refuseUnrecognisedSchema(value, "The spec", wrapped);
  const json = text ?? safeStringify(value);
  refuseTooLong(json.length, limits);
  // The same text under other limits is another spec (it may be refused under one and not the other).
  const key = `${JSON.stringify(limits)}\n${json}`;
  const cached = inlineCache.get(key);
  if (cached) {
    inlineCache.delete(key); // refresh its place in the LRU order
    inlineCache.set(key, cached);
    return cached;
  }
  const spec = defineSpec(
    {
      name: wrapped && typeof obj.name === "string" ? obj.name : "inline",
      description: wrapped && typeof obj.description === "string" ? obj.description : "A spec supplied at run time.",
      schema: (wrapped ? obj.schema : obj) as JsonSchema,
    },
    { untrusted: true, limits },
  );
  // A bare schema is recognised as one only when each of its own fields is a keyword of its dialect (or an x-… or _…
  // note): a field no dialect defines tells an object that is something else (another library's schema, a wrapped spec
  // with its "schema" field misspelt), whose constraints would be ignored. Wrapped, unknown keywords are annotations.
  const unknownAtRoot = wrapped
    ? []
    : spec.ignoredKeywords.filter((k) => k.at === "#" && k.format === undefined && !/^(x-|_)/.test(k.keyword)).map((k) => k.keyword);
  if (unknownAtRoot.length > 0) {
    throw new SpecError(
      `The inline spec has no "schema" field, and read as a bare JSON Schema its fields ${unknownAtRoot
        .slice(0, 5)
        .map((k) => JSON.stringify(k.slice(0, 40)))
        .join(", ")} are not JSON Schema keywords, so it is not recognised as one (they would be ignored, and check nothing). ` +
        `Give {name, description, schema} with the JSON Schema under "schema" (its unknown keywords are then annotations, listed in spec.ignoredKeywords).`,
    );
  }
  inlineCache.set(key, spec);
  // Each spec owns its ajv instance: dropping the oldest frees its compiled code.
  if (inlineCache.size > INLINE_SPEC_CACHE_SIZE) inlineCache.delete(inlineCache.keys().next().value as string);
  return spec;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    throw new SpecError("The inline spec cannot be serialised as JSON (does it contain a cycle?).");
  }
}

/**
 * What a run records about its spec, so that resuming the run (in this or
 * another process) validates against exactly the spec it started with: a
 * built-in by name, a run-time spec by its JSON, a code-defined spec by name
 * and fingerprint (its rules are code, so the resuming graph must carry the
 * same spec).
 */
export type SpecRecord =
  { kind: "builtin"; name: string } | { kind: "inline"; name: string; definition: InlineSpec } | { kind: "code"; name: string; fingerprint: string };

export function recordSpec(spec: Spec): SpecRecord {
  if (builtinSpecs.get(spec.name) === spec) return { kind: "builtin", name: spec.name };
  if (spec.untrusted) return { kind: "inline", name: spec.name, definition: { name: spec.name, description: spec.description, schema: spec.schema } };
  return { kind: "code", name: spec.name, fingerprint: fingerprintSpec(spec) };
}

/** The spec a record names; `codeSpecs` are the code-defined specs the resuming graph knows (its own, and those its runs were given). */
export function specFromRecord(record: SpecRecord, codeSpecs: readonly Spec[] = [], options: ResolveSpecOptions = {}): Spec {
  switch (record.kind) {
    case "builtin": {
      const spec = builtinSpecs.get(record.name);
      if (spec) return spec;
      break;
    }
    case "inline":
      return resolveSpec(record.definition, options);
    case "code": {
      const match = codeSpecs.find((spec) => spec.name === record.name && fingerprintSpec(spec) === record.fingerprint);
      if (match) return match;
      const names = [...new Set(codeSpecs.map((spec) => JSON.stringify(spec.name)))];
      throw new SpecError(
        `This run was started with the code-defined spec ${JSON.stringify(record.name)}; resume it with a graph built with that same spec ` +
          `(this graph knows ${names.length > 0 ? `${names.join(", ")}${names.includes(JSON.stringify(record.name)) ? " with different schema or rules" : ""}` : "none"}).`,
      );
    }
  }
  throw new SpecError(`This run was started with the spec ${JSON.stringify(record.name)}, which this version does not have.`);
}

const fingerprints = new WeakMap<Spec, string>();

/** A stable digest of a spec's schema and its rules (ids, descriptions, inputs and code). */
export function fingerprintSpec(spec: Spec): string {
  let digest = fingerprints.get(spec);
  if (digest === undefined) {
    const rules = spec.rules.map((rule) => [rule.id, rule.description, rule.inputs, String(rule.check)]);
    digest = createHash("sha256")
      .update(JSON.stringify([spec.name, spec.schema, rules]))
      .digest("hex")
      .slice(0, 32);
    fingerprints.set(spec, digest);
  }
  return digest;
}
