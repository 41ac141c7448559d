/**
 * What a zod spec may be. A zod schema is code, but its size still decides
 * how long defining the spec and judging every answer take, and a schema too
 * deep for the converters fails with a bare "Maximum call stack" deep inside
 * them. So a zod schema is measured first, by a walk over its definition with
 * a stack of its own, and refused beyond the limits with a message that says
 * what to change. The walk also notes asynchronous refinements and
 * transforms: they can only be judged by the asynchronous check step.
 *
 * Then its JSON Schema is derived (zodToJsonSchema), keeping only what says
 * exactly what zod's checks say; the rest is judged by zod, which runs last.
 */
import { z } from "zod";
import * as core from "zod/v4/core";
import { SpecError } from "../errors.js";
import { ASSERTED_FORMATS } from "./formats.js";

export const ZOD_SPEC_LIMITS = Object.freeze({
  /** Most zod schemas in one spec (every nested one counted once). */
  maxSchemas: 5_000,
  /** Deepest nesting of zod schemas. */
  maxDepth: 64,
  /** Most options of one union (each is tried against a failing value). */
  maxBranches: 128,
});

interface ZodShape {
  /** Whether a refinement, transform or custom check is an async function: the spec then needs the asynchronous check step. */
  async: boolean;
}

type Definition = Record<string, unknown>;

const isSchema = (value: unknown): value is { _zod: { def: Definition } } =>
  value !== null && typeof value === "object" && typeof (value as { _zod?: { def?: unknown } })._zod?.def === "object";

const isAsyncFunction = (value: unknown): boolean =>
  typeof value === "function" && (value.constructor?.name === "AsyncFunction" || value.constructor?.name === "AsyncGeneratorFunction");

/** Measure a zod schema; throws SpecError (naming the limit and what to change) beyond ZOD_SPEC_LIMITS. */
export function measureZodSchema(root: unknown, name: string, limits = ZOD_SPEC_LIMITS): ZodShape {
  const seen = new Set<object>();
  const stack: Array<{ schema: { _zod: { def: Definition } }; depth: number }> = [];
  let async = false;
  const refuse = (problem: string) => {
    throw new SpecError(`Spec ${JSON.stringify(name)} is refused: its zod schema ${problem}`);
  };
  const visit = (value: unknown, depth: number) => {
    if (!isSchema(value) || seen.has(value)) return;
    seen.add(value);
    if (seen.size > limits.maxSchemas) refuse(`has more than ${limits.maxSchemas} nested schemas; split it into smaller specs or move checks into .refine()`);
    if (depth > limits.maxDepth) refuse(`nests deeper than ${limits.maxDepth} levels; flatten it (a recursive structure can use z.lazy)`);
    stack.push({ schema: value, depth });
  };
  visit(root, 0);
  while (stack.length > 0) {
    const { schema, depth } = stack.pop()!;
    const def = schema._zod.def;
    if (def.type === "union" && Array.isArray(def.options) && def.options.length > limits.maxBranches) {
      refuse(`has a union of ${def.options.length} options; the limit is ${limits.maxBranches} (use z.enum or a discriminated field with fewer shapes)`);
    }
    for (const key of Object.keys(def)) {
      const value = def[key];
      if (isAsyncFunction(value)) async = true;
      if (key === "getter" && typeof value === "function") {
        // z.lazy: the schema it stands for (zod itself calls the getter the same way).
        visit(value(), depth + 1);
      } else if (key === "checks" && Array.isArray(value)) {
        for (const check of value) if (isSchema(check) && Object.values(check._zod.def).some(isAsyncFunction)) async = true;
      } else if (isSchema(value)) visit(value, depth + 1);
      else if (Array.isArray(value)) for (const item of value) visit(item, depth + 1);
      else if (value !== null && typeof value === "object" && key === "shape") for (const field of Object.values(value)) visit(field, depth + 1);
    }
  }
  return { async };
}

/** zod's verdict on a value: its output, its issues, or why it could not give one. */
export type ZodOutcome =
  | { success: true; data: unknown }
  | { success: false; error: { issues: ReadonlyArray<{ code?: string; path: PropertyKey[]; message: string }> } }
  | { failed: string };

interface ZodRunnable {
  _zod: { run(payload: { value: unknown; issues: unknown[] }, ctx: { async: boolean }): { value: unknown; issues: unknown[] } | Promise<unknown> };
}

/**
 * zod's parse, synchronously, for the synchronous check step. zod's own `safeParse` throws when a
 * refinement or transform returns a Promise and drops that Promise, so a rejection nobody observes
 * ends the process. Instead the schema runs as `safeParseAsync` runs it (zod core's `run` with
 * `async: true`), which hands such a Promise back: it is observed here and the value is not
 * judged (only the asynchronous check step can wait for it). Otherwise the outcome is exactly
 * `safeParse`'s (issues finalized by zod's own `finalizeIssue`). tests/specs/zod-sync.test.ts
 * fails if an upgrade changes this.
 */
export function runZodSync(schema: unknown, value: unknown): ZodOutcome {
  const result = (schema as ZodRunnable)._zod.run({ value, issues: [] }, { async: true });
  if (result instanceof Promise) {
    result.catch(() => undefined);
    return {
      failed: "a refinement or transform returned a Promise, which only the asynchronous check step (checkValue, checkText, and every graph) can wait for",
    };
  }
  if (result.issues.length === 0) return { success: true, data: result.value };
  const ctx = { async: true };
  const config = core.config();
  return { success: false, error: { issues: result.issues.map((issue) => core.util.finalizeIssue(issue as core.$ZodRawIssue, ctx, config)) } };
}

/** A zod schema's JSON Schema, and the zod checks it could not carry (zod alone judges those). */
interface ZodJsonSchema {
  schema: Record<string, unknown>;
  /** Keys of the zod checks with no JSON Schema form here (see zodCheckKey); their issues are reported even when the schema fails too. */
  zodOnly: ReadonlySet<string>;
}

/** zod's format names whose JSON Schema name differs (zod's toJSONSchema maps them the same way). */
const JSON_FORMAT_NAMES: Record<string, string> = { guid: "uuid", url: "uri", datetime: "date-time" };

/** Regex flags that do not change what `test` accepts on a whole string (ajv reads every pattern with "u"). */
const HARMLESS_FLAGS = /^[gyud]*$/;

/** How a zod format issue and the check that raised it are matched: the format, and for a regex its pattern. */
export function zodCheckKey(issue: { format?: unknown; pattern?: unknown }): string {
  return issue.format === "regex" ? `regex ${String(issue.pattern)}` : String(issue.format);
}

/** What to use instead of a zod type that has no JSON form. */
const INSTEAD: Record<string, string> = {
  date: "z.iso.datetime() or z.iso.date() (an ISO 8601 string)",
  bigint: "z.int() (a safe integer) or z.string().regex(/^-?\\d+$/) for larger integers",
  map: "z.record(keySchema, valueSchema)",
  set: "z.array(itemSchema)",
  nan: "z.number() (JSON has no NaN)",
  undefined: ".optional() on the field, or z.null()",
  void: ".optional() on the field, or z.null()",
};

/**
 * The JSON Schema of a zod schema, fit for this package's validator. zod's
 * `toJSONSchema` writes some checks as formats no JSON Schema validator knows
 * ("starts_with", "cuid", "e164", "jwt" …), mostly beside a `pattern` that
 * says the same; and it writes a regex's source without its flags. So here:
 * a format the standard defines stays (this package asserts it) unless it is
 * stricter than zod's check; any other format, and a content encoding other
 * than base64, is dropped; a pattern whose flags change its meaning (i, m, s,
 * v), that does not compile the way ajv reads patterns, or that is stricter
 * than zod's check, is dropped. What is dropped with no pattern left is
 * judged by zod alone, which the check step runs last on every zod spec.
 */
export function zodToJsonSchema(schema: z.ZodType, name: string): ZodJsonSchema {
  const zodOnly = new Set<string>();
  const converted = z.toJSONSchema(schema, {
    // draft-07: what ajv's default dialect and most providers' structured-output modes read.
    target: "draft-7",
    io: "input",
    unrepresentable: ({ zodSchema, path }) => {
      const type = String(zodSchema._zod.def.type);
      const where = path.length > 0 ? ` at ${path.join(".")}` : "";
      const instead = INSTEAD[type] ?? "a JSON type (string, number, boolean, null, array or object), with other checks in .refine()";
      throw new SpecError(`Spec ${JSON.stringify(name)}: its zod schema has no JSON Schema form${where}: z.${type}() is not JSON data; use ${instead}`);
    },
    override: ({ zodSchema, jsonSchema }) => fitStringSchema(zodSchema, jsonSchema as Record<string, unknown>, zodOnly),
  });
  return { schema: converted as Record<string, unknown>, zodOnly };
}

interface FormatCheckDef {
  check?: string;
  format?: string;
  pattern?: RegExp;
  /** z.url()'s options: JSON Schema's "uri" cannot say them. */
  protocol?: RegExp;
  hostname?: RegExp;
}

/**
 * Standard formats this package judges more strictly than zod's checks that emit them (measured: a
 * host name with a trailing dot, a duration with a fraction, a URL the WHATWG parser takes but RFC 3986
 * does not). zod's verdict is the spec's, so in a zod spec they are left to zod's own check.
 */
const STRICTER_THAN_ZOD = new Set(["hostname", "duration", "uri"]);
/** zod checks whose runtime check is not their pattern: the pattern is stricter (dropped), or only the shape (kept; zod checks the rest). */
const PATTERN_STRICTER = new Set(["ipv6", "cidrv6"]);
const PATTERN_SHAPE_ONLY = new Set(["credit_card", "iban"]);

function fitStringSchema(schema: core.$ZodType, json: Record<string, unknown>, zodOnly: Set<string>): void {
  const def = schema._zod.def as { type: string; checks?: Array<{ _zod: { def: FormatCheckDef } }> };
  if (def.type !== "string") return;
  const list = schema._zod.traits.has("$ZodCheck") ? [schema as unknown as { _zod: { def: FormatCheckDef } }, ...(def.checks ?? [])] : (def.checks ?? []);
  const formatKept = typeof json.format === "string" && ASSERTED_FORMATS.includes(json.format) && !STRICTER_THAN_ZOD.has(json.format);
  for (const check of list) {
    const { check: kind, format, pattern, protocol, hostname } = check._zod.def;
    if (kind !== "string_format" || format === undefined) continue;
    const usable = pattern instanceof RegExp && keepsMeaning(pattern) && !PATTERN_STRICTER.has(format);
    if (pattern instanceof RegExp && !usable) removePattern(json, pattern.source);
    const exact = usable && !PATTERN_SHAPE_ONLY.has(format);
    const asFormat = formatKept && json.format === (JSON_FORMAT_NAMES[format] ?? format) && protocol === undefined && hostname === undefined;
    if (!exact && !asFormat) {
      zodOnly.add(zodCheckKey({ format, pattern }));
      // The model reads the JSON Schema: say in words what it can no longer say as a keyword.
      const words = pattern instanceof RegExp && format === "regex" ? `must match ${String(pattern)}` : `must pass zod's ${format} check`;
      json.description = typeof json.description === "string" ? `${json.description} (${words})` : words;
    }
  }
  if (!formatKept) delete json.format;
  if (json.contentEncoding !== undefined && json.contentEncoding !== "base64") delete json.contentEncoding;
}

/** Whether ajv (which reads a pattern with the "u" flag) gives this regex's source the meaning the regex has. */
function keepsMeaning(pattern: RegExp): boolean {
  if (!HARMLESS_FLAGS.test(pattern.flags)) return false;
  if (pattern.flags.includes("u")) return true;
  try {
    new RegExp(pattern.source, "u");
  } catch {
    return false;
  }
  // Without "u" a few escapes read differently (\u{…}, surrogate pairs); only ASCII sources are taken as the same.
  return /^[\x00-\x7f]*$/.test(pattern.source) && !/\\u\{/.test(pattern.source);
}

function removePattern(json: Record<string, unknown>, source: string): void {
  if (json.pattern === source) delete json.pattern;
  if (Array.isArray(json.allOf)) {
    const rest = json.allOf.filter((part: Record<string, unknown>) => part?.pattern !== source);
    if (rest.length === 0) delete json.allOf;
    else json.allOf = rest;
  }
}
