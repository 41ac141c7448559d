/**
 * A spec says what "valid" means: a JSON Schema (compiled once, with ajv) plus
 * cross-field business rules that JSON Schema cannot express. The validator
 * and the prompt are both generated from it, so they cannot drift apart.
 */
import type { ValidateFunction } from "ajv";
import { z } from "zod";
import { SpecError } from "../errors.js";
import { checkSchema, CompiledTooLarge, compileSchema, ignoredKeywordsOf } from "./ajv.js";
import type { IgnoredKeyword } from "./keywords.js";
import {
  checkCompiledEstimate,
  checkedSpecLimits,
  checkRuntimeSpecLimits,
  checkSpecSafety,
  CODE_SPEC_LIMITS,
  refuseRefCycles,
  RUNTIME_SPEC_LIMITS,
  type RuntimeSpecLimits,
} from "./limits.js";
import { refuseUnrecognisedSchema } from "./recognize.js";
import { isStandardSchema, standardToJsonSchema, type StandardSchemaV1 } from "./standard.js";
import { measureZodSchema, zodToJsonSchema } from "./zod.js";

/** JSON types a rule's inputs can require before the rule runs. */
export type FieldType = BusinessRule["inputs"][string];

/** A JSON Schema, as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** What a rule returns: null when satisfied, else the exact problem(s). */
export type RuleOutcome = string | string[] | null;

/**
 * A cross-field rule. It runs only when every input field is present and of
 * its declared type, so it still reports on an object that fails the schema
 * elsewhere. `check` returns null when satisfied, else the exact problem(s).
 * It may read the run's context (facts given with the run, typed `C`), and
 * may be asynchronous for a lookup: the check step waits for it under a
 * deadline, and a rule that throws, rejects or does not finish in time makes
 * the value invalid, never valid. (The synchronous `checkValueSync`
 * cannot wait: a value under an asynchronous rule is invalid there.)
 */
export interface BusinessRule<C = any> {
  /** Stable identifier, e.g. "replicas-need-cpu". */
  id: string;
  /** The rule in words, for the prompt. */
  description: string;
  /** Dotted paths of the fields the rule reads, with the JSON type each must have before the rule runs. */
  inputs: Record<string, "string" | "number" | "integer" | "boolean" | "object" | "array">;
  check(values: Record<string, any>, document: unknown, context: C): RuleOutcome | Promise<RuleOutcome>;
}

/** A schema in code: a zod 4 schema, or a schema of any Standard Schema library that can give a JSON Schema. */
export type SchemaInCode = z.ZodType | StandardSchemaV1;

/** What defineSpec takes: a JSON Schema or a schema in code, business rules, and optional name, description and example. */
export interface SpecDefinition<S extends JsonSchema | SchemaInCode = JsonSchema | SchemaInCode, C = any> {
  /** 1-64 letters, digits, ".", "_" or "-"; defaults to the schema's title (from zod's `.meta({ title })`) made into a name, else "output". */
  name?: string;
  /** What the value is, for the prompt; defaults to the schema's description (zod's `.describe()` or `.meta({ description })`). */
  description?: string;
  /**
   * A JSON Schema, or a zod 4 schema. A zod schema's JSON Schema (for the
   * validator's exact messages, the prompt and Studio) is derived from it
   * once; its refinements (`refine`, `superRefine`, `check`) run as business
   * rules, and a valid result is zod's output (transforms and defaults applied).
   * Or a schema of another Standard Schema library (Valibot, ArkType, Effect
   * Schema …): its JSON Schema comes from Standard JSON Schema or the
   * library's converter, its own validate judges every value last, and a valid
   * result is its output.
   */
  schema: S;
  rules?: BusinessRule<C>[];
  /** One valid example, shown to the model and used in tests. */
  example?: unknown;
}

/** The type of a valid value: a Spec's type, a schema in code's output (zod, or StandardSchemaV1.InferOutput), or unknown (a JSON Schema, a built-in name, inline JSON). */
export type SpecOutput<S> =
  S extends Spec<infer T, any> ? T : S extends z.ZodType ? z.output<S> : S extends StandardSchemaV1 ? NonNullable<S["~standard"]["types"]>["output"] : unknown;

/** A compiled spec; `T` is the type of a value that passes it. */
export interface Spec<T = unknown, C = any> {
  readonly name: string;
  readonly description: string;
  readonly schema: JsonSchema;
  readonly rules: readonly BusinessRule<C>[];
  readonly example?: unknown;
  /** The schema's verdict (ajv, stops at the first error): true only for a value that passes. */
  readonly checkSchema: ValidateFunction;
  /** The schema's explanation (ajv, all errors with the offending values), compiled on first use. */
  readonly validateSchema: ValidateFunction;
  /** Keywords of the schema its dialect does not define: annotations, which validation ignores (as the standard says). */
  readonly ignoredKeywords: readonly IgnoredKeyword[];
  /** Whether the spec came from run-time JSON (its patterns run on RE2, and its cost is bounded). */
  readonly untrusted: boolean;
  /** For a run-time spec: the most subschemas that can apply to one value of an answer. */
  readonly applicationsPerValue?: number;
  /** For a run-time spec: the limits it was defined under (the answer's cost is bounded by them too). */
  readonly limits?: Readonly<RuntimeSpecLimits>;
  /** Characters of code its compiled verdict takes (what the cost bound maxCompiledChars counts). */
  readonly compiledChars: number;
  /** For a zod spec: the zod schema, whose refinements run as rules and whose output is the typed result. */
  readonly zod?: z.ZodType<T>;
  /** For a zod spec: whether it has asynchronous refinements or transforms (only the asynchronous check step can judge it). */
  readonly zodAsync?: boolean;
  /** For a zod spec: keys of its checks that have no JSON Schema form here, judged by zod alone (see zod.ts). */
  readonly zodOnly?: ReadonlySet<string>;
  /** For a spec from another Standard Schema library: its schema, whose validate judges every value last and whose output is the typed result. */
  readonly standard?: StandardSchemaV1<unknown, T>;
}

/** How a spec is defined: as code (trusted), or as supplied at run time (bounded), and under which limits. */
export interface DefineSpecOptions {
  /** A spec from run-time JSON: its patterns run on RE2 and its cost is bounded by every run-time limit. */
  untrusted?: boolean;
  /** Limits other than the defaults (RUNTIME_SPEC_LIMITS; CODE_SPEC_LIMITS for a code-defined spec, which has only the cost bound maxCompiledChars). */
  limits?: Partial<RuntimeSpecLimits>;
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/i;

/** A spec's name when neither it nor its schema's title gives one. */
const UNNAMED_SPEC = "output";
/** A spec's description when neither it nor its schema gives one (the prompt shows the schema after it). */
const DEFAULT_DESCRIPTION = "the value described by the JSON Schema below";

/** Name and description as given, else from the schema's title and description, else the defaults. */
function namesOf(definition: SpecDefinition, schema: unknown): { name: unknown; description: unknown } {
  const root = schema !== null && typeof schema === "object" ? (schema as JsonSchema) : {};
  const title =
    typeof root.title === "string"
      ? root.title
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9._-]+/g, "-")
          .replace(/^[^a-z0-9]+|-+$/g, "")
          .slice(0, 64)
      : "";
  return {
    name: definition.name ?? (title !== "" ? title : UNNAMED_SPEC),
    description: definition.description ?? (typeof root.description === "string" ? root.description : DEFAULT_DESCRIPTION),
  };
}

/**
 * Make a spec; the schema is compiled here, once. Throws SpecError when it does not compile.
 *
 * @example
 * ```ts
 * import { defineSpec, checkValueSync } from "langgraph-trustworthy-output";
 *
 * const window = defineSpec({
 *   name: "time-window",
 *   description: "A time window in whole seconds.",
 *   schema: { type: "object", required: ["start", "end"], properties: { start: { type: "integer" }, end: { type: "integer" } } },
 *   rules: [{ id: "end-after-start", description: "end > start", inputs: { start: "integer", end: "integer" }, check: (v) => (v.end > v.start ? null : `end is ${v.end}; it must be greater than start (${v.start})`) }],
 * });
 * console.log(checkValueSync(window, { start: 5, end: 1 }).errors); // ["end is 1; it must be greater than start (5)"]
 * ```
 */
export function defineSpec<S extends JsonSchema | SchemaInCode, C = any>(
  definition: SpecDefinition<S, C>,
  options: DefineSpecOptions = {},
): Spec<SpecOutput<S>, C> {
  const problems: string[] = [];
  const zod = definition.schema instanceof z.ZodType ? (definition.schema as z.ZodType) : undefined;
  const given: unknown = definition.schema;
  const standard = zod === undefined && isStandardSchema(given) ? given : undefined;
  let jsonSchema = definition.schema as JsonSchema;
  // Another library's schema gives its JSON Schema through Standard JSON Schema or its converter, or is refused.
  if (standard) jsonSchema = standardToJsonSchema(standard, String(definition.name ?? UNNAMED_SPEC));
  // Anything else must be a JSON Schema (a converter's output too): JSON data, with no other schema library's marker.
  if (zod === undefined && jsonSchema !== null && (typeof jsonSchema === "object" || typeof jsonSchema === "function")) {
    refuseUnrecognisedSchema(jsonSchema, `The schema of spec ${JSON.stringify(String(definition.name ?? UNNAMED_SPEC).slice(0, 64))}`);
  }
  // Measured before anything walks it recursively: a schema too large or deep is refused with what to change.
  const zodShape = zod ? measureZodSchema(zod, String(definition.name ?? UNNAMED_SPEC)) : undefined;
  let zodOnly: ReadonlySet<string> | undefined;
  if (zod) {
    try {
      ({ schema: jsonSchema, zodOnly } = zodToJsonSchema(zod, String(definition.name ?? UNNAMED_SPEC)));
    } catch (error) {
      if (error instanceof SpecError) throw error;
      problems.push(
        `its zod schema has no JSON Schema form (${(error as Error).message.slice(0, 200)}); use JSON-representable types and put other checks in .refine()`,
      );
    }
  }
  const { name, description } = namesOf(definition, jsonSchema);
  if (typeof name !== "string" || !NAME.test(name)) {
    problems.push(`spec name must be 1-64 letters, digits, ".", "_" or "-"; got ${JSON.stringify(name)}`);
  }
  if (typeof description !== "string") problems.push("spec description must be a string");
  if (jsonSchema === null || typeof jsonSchema !== "object" || Array.isArray(jsonSchema)) {
    problems.push("spec schema must be a JSON Schema object, a zod schema or another Standard Schema library's schema");
  }
  const ids = new Set<string>();
  for (const rule of definition.rules ?? []) {
    if (ids.has(rule.id)) problems.push(`two rules share the id "${rule.id}"`);
    ids.add(rule.id);
  }
  if (problems.length > 0) throw new SpecError(problems.map((p) => `Spec ${JSON.stringify(name)}: ${p}`));

  const untrusted = options.untrusted ?? false;
  const limits: RuntimeSpecLimits = Object.freeze({ ...RUNTIME_SPEC_LIMITS, ...(untrusted ? {} : CODE_SPEC_LIMITS), ...checkedSpecLimits(options.limits) });
  const schema = jsonSchema;
  let verdict: ValidateFunction;
  let applicationsPerValue: number | undefined;
  let compiledChars = 0;
  const raise = untrusted
    ? 'raise it with the "maxCompiledChars" of RUNTIME_SPEC_LIMITS (server configuration) or of the specLimits option, or simplify the spec'
    : "raise it with defineSpec's limits option ({ limits: { maxCompiledChars } }), or simplify the spec";
  try {
    checkSpecSafety(schema);
    refuseRefCycles(schema);
    checkCompiledEstimate(schema, limits, raise);
    if (untrusted) applicationsPerValue = checkRuntimeSpecLimits(schema, limits);
    checkSchema(schema);
    verdict = compileSchema(schema, { untrusted, allErrors: false, maxCompiledChars: limits.maxCompiledChars, onCompiled: (chars) => (compiledChars = chars) });
    refuseUnrunnable(verdict);
  } catch (error) {
    const reason = (error as Error).message;
    if (error instanceof CompiledTooLarge) {
      throw new SpecError(`Spec ${JSON.stringify(name)} is refused: ${reason}, over the limit maxCompiledChars (${limits.maxCompiledChars}); ${raise}.`);
    }
    if (error instanceof SpecError) throw new SpecError(`Spec ${JSON.stringify(name)} is refused: ${reason}`);
    // The engine's stack, not the schema, gave out: never a bare "Maximum call stack size exceeded".
    if (error instanceof RangeError) {
      throw new SpecError(
        `Spec ${JSON.stringify(name)} is refused: compiling it recursed past the JavaScript engine's stack (a "$ref" chain the validator cannot follow, or subschemas nested too deeply); shorten its chains of "$ref" and its nesting.`,
      );
    }
    const hint = /regexp|Perl syntax/i.test(reason)
      ? " (patterns in specs supplied at run time run on RE2, a linear-time engine: lookaround and backreferences are not supported)"
      : "";
    throw new SpecError(`Spec ${JSON.stringify(name)} is not a valid JSON Schema: ${reason}${hint}`);
  }
  const spec = Object.freeze({
    name,
    description,
    schema,
    rules: Object.freeze([...(definition.rules ?? [])]),
    example: definition.example,
    checkSchema: verdict,
    validateSchema: lazyExplanation(schema, untrusted),
    ignoredKeywords: ignoredKeywordsOf(schema),
    untrusted,
    applicationsPerValue,
    ...(untrusted ? { limits } : {}),
    compiledChars,
    zod,
    zodAsync: zodShape?.async,
    zodOnly,
    standard,
  }) as Spec<SpecOutput<S>, C>;
  byVerdict.set(verdict, spec);
  return spec;
}

/** The specs defineSpec made, by their compiled verdict: only these are Specs. */
const byVerdict = new WeakMap<ValidateFunction, Spec>();

/**
 * The Spec defineSpec made that a value is: that Spec itself, or a copy of it field for field (a settings
 * parse copies the objects it is given). An object of the same shape whose fields differ (a Spec spread with
 * another schema, whose validator is not that schema's) or built by hand is not a Spec.
 */
export function specOf(value: unknown): Spec | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const verdict = ownValue(value, "checkSchema");
  const spec = typeof verdict === "function" ? byVerdict.get(verdict as ValidateFunction) : undefined;
  if (spec === undefined || spec === value) return spec;
  const original = spec as unknown as Record<string, unknown>;
  const same =
    Object.keys(value).every((key) => Object.hasOwn(original, key) && ownValue(value, key) === original[key]) &&
    Object.keys(original).every((key) => original[key] === undefined || ownValue(value, key) === original[key]);
  return same ? spec : undefined;
}

/**
 * A Spec defineSpec made, told apart under a new name, with an explanation and rules of its own: the verdict is
 * the original's (the evaluation's first-error strategy reports fewer errors of the same verdict this way).
 */
export function variantOf<T, C>(spec: Spec<T, C>, changes: Pick<Spec<T, C>, "name" | "validateSchema" | "rules">): Spec<T, C> {
  if (specOf(spec) === undefined) throw new SpecError("A variant can only be made of a Spec defineSpec made.");
  const original = spec.checkSchema;
  const checkSchema = ((value: unknown) => {
    const ok = original(value);
    checkSchema.errors = original.errors;
    return ok;
  }) as ValidateFunction;
  const variant = Object.freeze({ ...spec, ...changes, checkSchema }) as Spec<T, C>;
  byVerdict.set(checkSchema, variant as Spec);
  return variant;
}

/** Whether a value is a Spec made by defineSpec (its validator compiled from its own schema), or a faithful copy of one. */
export function isSpec(value: unknown): value is Spec {
  return specOf(value) !== undefined;
}

/** An own data field's value (a getter is never run), else undefined. */
function ownValue(value: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(value, key);
  return descriptor !== undefined && "value" in descriptor ? descriptor.value : undefined;
}

/**
 * The JavaScript engine compiles a validator's code in full on its first call, and refuses code nested
 * too deeply for it (a RangeError: ajv nests the checks of an object's fields): called once here, so
 * such a spec is refused when it is defined, not when it meets its first answer.
 */
function refuseUnrunnable(verdict: ValidateFunction): void {
  try {
    verdict(null);
  } catch (error) {
    if (error instanceof RangeError)
      throw new SpecError("its compiled validator is nested too deeply for the JavaScript engine to run; split its largest objects into parts (allOf).");
    throw error;
  }
}

/** The all-errors validator, compiled the first time a value fails (most specs meet far more valid answers than invalid ones). */
function lazyExplanation(schema: JsonSchema, untrusted: boolean): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const explain = ((value: unknown) => {
    compiled ??= compileSchema(schema, { untrusted, allErrors: true });
    const ok = compiled(value);
    explain.errors = compiled.errors;
    return ok;
  }) as ValidateFunction;
  return explain;
}
