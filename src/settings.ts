/**
 * What both graphs' run configurations are made of: the field builders (with
 * the package's own messages and Studio's titles), how a run's settings are
 * gathered (builder defaults, then `configurable`, then `context`) and parsed
 * into one complete, typed configuration or a ConfigurationError that says
 * what to change, and the check of a request's text. Each graph's own
 * settings live in its configuration.ts.
 */
import { z } from "zod";
import { readEnvironment, readSpecLimits, type Environment } from "./environment.js";
import { ConfigurationError } from "./errors.js";
import { modelNameProblem } from "./providers/index.js";
import { describeThrown } from "./shared/text.js";
import type { RuntimeSpecLimits } from "./specs/limits.js";
import { builtinSpecs } from "./specs/registry.js";

/** Longest request or task accepted, in characters. */
export const MAX_REQUEST_CHARS = 20_000;

/** Most attempts the createAgent middleware and a guarded tool allow (their graphs' steps are LangGraph's to bound). */
export const MAX_ATTEMPTS = 10;

/**
 * Most attempts of one validation run (`maxAttempts`, and each escalation step's `attempts`). Each is a model
 * call; the run's recursion limit is derived from it (validationStepLimit), so the run ends on this bound.
 */
export const MAX_RUN_ATTEMPTS = 20;

/** `maxAttempts` as given, or the default; an integer from 1 to MAX_ATTEMPTS (the agent middleware, guarded tools). */
export function attemptsOption(value: unknown, fallback: number): number {
  return countOption("maxAttempts", value, fallback, 1, MAX_ATTEMPTS);
}

/** A count option as given, or the default; an integer from `min` to `max`. */
export function countOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const count = value ?? fallback;
  if (typeof count !== "number" || !Number.isInteger(count) || count < min || count > max) {
    throw new ConfigurationError(`${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(count)}.`);
  }
  return count;
}

/** What happens when an answer does not end valid (the `onFailure` setting): end with the failure, or pause for a person. */
export const ON_FAILURE = ["end", "interrupt"] as const;
/** The `onFailure` setting's refusal, in the words of every place that reads it. */
export const ON_FAILURE_ERROR = `onFailure must be ${ON_FAILURE.map((m) => JSON.stringify(m)).join(" or ")}`;

/**
 * How a retry asks the model to fix a rejected answer (the `retryWith` setting): "answer", the whole answer
 * again; "corrections", only the corrections, as a JSON Patch (RFC 6902) applied to the last answer, which is
 * then judged whole; "auto", corrections when the last answer's errors are few for its size. The default stays
 * the whole answer until a real model has shown the gain (docs/configuration.md).
 */
export const RETRY_WITH = ["answer", "corrections", "auto"] as const;
export type RetryWith = (typeof RETRY_WITH)[number];
const DEFAULT_RETRY_WITH: RetryWith = "answer";

/** The `retryWith` run setting, with its default and what Studio shows. */
export const retryWithSetting = () =>
  withDefault(z.enum(RETRY_WITH, { error: `retryWith must be one of ${RETRY_WITH.map((m) => JSON.stringify(m)).join(", ")}` }), DEFAULT_RETRY_WITH).meta({
    title: "Retry with",
    description:
      'How a retry asks the model to fix a rejected answer: "answer" (the whole answer again), "corrections" (only the corrections, as a JSON Patch, RFC 6902, applied to the last answer; ' +
      "the corrected answer is judged whole, and a correction that does not apply or makes the answer worse is followed by a whole-answer retry, within the same attempts), " +
      'or "auto" (corrections when the last answer\'s errors are few for its size). Corrections are asked only of an answer that was read whole as a JSON object or array, ' +
      'in the "text" and "json_object" output modes; otherwise the retry asks for the whole answer.',
  });

export const modelName = (what: string) =>
  z
    .string({ error: `${what} must be a model name (a string)` })
    .trim()
    .min(1, { error: `${what} must not be empty` })
    .max(200, { error: `${what} must be at most 200 characters` })
    .superRefine((name, ctx) => {
      const problem = modelNameProblem(name);
      if (problem !== undefined) ctx.addIssue({ code: "custom", message: `${what}: ${problem}` });
    });

export const temperature = z
  .number({ error: "temperature must be a number from 0 to 2" })
  .min(0, { error: "temperature must be a number from 0 to 2" })
  .max(2, { error: "temperature must be a number from 0 to 2" });

// Integer-ness as a refinement, not `.int()`: zod's int check stops the whole object's parse, and the
// front door's readable refusal (a refinement on the object) must still run after it.
export const boundedInt = (name: string, min: number, max: number) =>
  z
    .number({ error: `${name} must be an integer from ${min} to ${max}` })
    .refine(Number.isInteger, { error: `${name} must be an integer from ${min} to ${max}` })
    .min(min, { error: `${name} must be an integer from ${min} to ${max}` })
    .max(max, { error: `${name} must be an integer from ${min} to ${max}` })
    .meta({ type: "integer" });

/**
 * A field with a default. Callers may leave it out, and the forms Studio builds
 * must not mark it required; after parsing it is always there. The LangGraph
 * server derives a graph's context schema from the input side of a pipe, where
 * the field is optional (with its default shown); the output side keeps the
 * parsed type exact (never undefined).
 */
export function withDefault<T extends z.ZodType>(field: T, value: NoInfer<z.core.util.NoUndefined<z.output<T>>>) {
  type Out = z.core.util.NoUndefined<z.output<T>>;
  const optional = field.default(value).optional();
  // The default has been applied on the left, so the right side never sees undefined.
  const defaulted = optional.pipe(field as unknown as z.ZodType<Out, Out | undefined>);
  // Keyed by its definition, which the copies `.meta()` makes share.
  DEFAULTED.set(defaulted.def, { field, value });
  return defaulted;
}

/** The field and default of each withDefault field, by its definition. */
const DEFAULTED = new WeakMap<object, { field: z.ZodType; value: unknown }>();

/**
 * The schema with each withDefault field optional and its default only shown
 * (`default` in its JSON Schema, as before), not applied: what it accepts and
 * what it publishes are the same, and its parse gives exactly what the run
 * set, so a run's own settings can be told from the defaults (a builder's
 * defaults come between a run's settings and the schema's).
 */
export function withDefaultsShown<T extends z.ZodObject>(schema: T): T {
  const shown: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const defaulted = DEFAULTED.get(field.def);
    if (defaulted !== undefined) shown[key] = defaulted.field.optional().meta({ ...field.meta(), default: defaulted.value });
  }
  return schema.extend(shown) as unknown as T;
}

export const BUILTIN_SPEC_NAMES = [...builtinSpecs.keys()] as [string, ...string[]];

/** A spec reference: a built-in name (offered as a list), or an inline JSON spec as text or as an object. */
export const specRef = () =>
  z.union(
    [
      z.enum(BUILTIN_SPEC_NAMES).meta({ title: "Built-in spec", description: "One of the specs that ship with the package." }),
      z.string().meta({
        title: "Inline spec (JSON text)",
        description: 'An inline spec as JSON text: {"name": …, "description": …, "schema": {JSON Schema}}, or a bare JSON Schema.',
      }),
      z.record(z.string(), z.unknown()).meta({
        title: "Inline spec (JSON object)",
        description: "An inline spec: {name, description, schema}, or a bare JSON Schema; cross-field rules use $data and if/then.",
      }),
    ],
    {
      error:
        "spec must be a built-in spec name, an inline JSON spec ({name, description, schema}) or a Spec (resolveSpec(schema) makes one of a zod, Valibot, ArkType or Effect schema; generateValidated and the builders take the schema as it is)",
    },
  );

/** Anything a caller passes as run config: LangGraph's RunnableConfig or a plain object. */
export interface RunConfigLike {
  context?: unknown;
  configurable?: Record<string, unknown>;
}

/** The keys a schema knows, taken from defaults, then `configurable`, then `context` (context wins). */
function gather(shape: Record<string, unknown>, config: RunConfigLike | undefined, defaults?: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const sources = [defaults, config?.configurable, config?.context];
  for (const source of sources) {
    if (source === null || typeof source !== "object") continue;
    for (const key of Object.keys(shape)) {
      const value = (source as Record<string, unknown>)[key];
      if (value !== undefined) out[key] = value;
    }
  }
  return out;
}

export function parseOrThrow<T extends z.ZodObject>(schema: T, config: RunConfigLike | undefined, defaults?: object): z.output<T> {
  let input: Record<string, unknown>;
  try {
    input = gather(schema.shape, config, defaults);
  } catch (error) {
    throw new ConfigurationError(`the run's settings (configurable, context) could not be read: ${describeThrown(error, 200)}; give them as plain data.`);
  }
  let result: z.ZodSafeParseResult<z.output<T>>;
  try {
    result = schema.safeParse(input) as z.ZodSafeParseResult<z.output<T>>;
  } catch (error) {
    // A setting that throws when read (a Proxy's trap, a getter): named, as a setting of the wrong shape is.
    throw new ConfigurationError(`${unreadableSetting(schema, input) ?? "a setting"} could not be read: ${describeThrown(error, 200)}; give it as plain data.`);
  }
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const got = issue.path.length > 0 ? describeGot(input, issue.path as (string | number)[]) : "";
    return `${issue.message}${got}`;
  });
  throw new ConfigurationError([...new Set(problems)]);
}

/** The first setting whose own check throws (the one a parse could not read), by name. */
function unreadableSetting(schema: z.ZodObject, input: Record<string, unknown>): string | undefined {
  for (const key of Object.keys(input)) {
    try {
      (schema.shape as Record<string, z.ZodType>)[key].safeParse(input[key]);
    } catch {
      return key;
    }
  }
  return undefined;
}

function describeGot(input: Record<string, unknown>, path: (string | number)[]): string {
  let value: unknown = input;
  for (const key of path) value = (value as Record<string | number, unknown> | undefined)?.[key];
  if (value === undefined) return "";
  let shown: string;
  if (typeof value === "number" && !Number.isFinite(value)) shown = String(value);
  else {
    try {
      shown = JSON.stringify(value) ?? String(value);
    } catch {
      shown = typeof value;
    }
  }
  return `; got ${shown.length > 60 ? `${shown.slice(0, 60)}…` : shown}${typeof value === "string" ? " (a string)" : ""}`;
}

export interface EnsureOptions<T> {
  /**
   * The environment a builder's runs read instead of the process's (readEnvironment): the default model
   * (LLM_MODEL), the client of a model named rather than given (provider keys and URLs, LLM_TIMEOUT_MS,
   * LLM_MAX_RETRIES) and the operator's limits on the specs runs supply (RUNTIME_SPEC_LIMITS).
   */
  env?: Environment;
  /** Defaults set by whoever built the graph; run config overrides them. */
  defaults?: Partial<T>;
}

/**
 * A builder's options with the limits its runs' specs are resolved under: the operator's
 * (RUNTIME_SPEC_LIMITS of the builder's `env`, else of the process environment, read once, here),
 * then the builder's own `specLimits`, which override them.
 */
export function withSpecLimitsInEffect<O extends { env?: Environment; specLimits?: Partial<RuntimeSpecLimits> }>(options: O): O {
  return { ...options, specLimits: { ...(options.env?.specLimits ?? readSpecLimits()), ...options.specLimits } };
}

/**
 * The model a run uses when it names none: the builder's default model, else the environment's
 * (LLM_MODEL, else gpt-4o-mini). Undefined when LLM_MODEL is not a model name: a run then says why.
 */
export function modelInEffect(options: EnsureOptions<{ model?: string }>): string | undefined {
  if (typeof options.defaults?.model === "string") return options.defaults.model;
  try {
    return (options.env ?? readEnvironment()).model;
  } catch (error) {
    if (error instanceof ConfigurationError) return undefined;
    throw error;
  }
}

/**
 * A run configuration schema whose `model` field shows `model` as its default: Studio fills a field's form
 * with its default (and shows null without one), so the form says which model a run will use. Only what
 * the schema says changes, not what it accepts or gives: a run that names no model still gets the model in
 * effect when it runs.
 */
export function showingModelInEffect<T extends z.ZodObject>(schema: T, model: string | undefined): T {
  const field = schema.shape.model as z.ZodType | undefined;
  if (field === undefined || model === undefined) return schema;
  return schema.extend({ model: field.meta({ ...field.meta(), default: model }) }) as unknown as T;
}

/** Check one request or task: a non-empty string within the size limit. */
export function checkRequestText(value: unknown, what: string): string {
  if (typeof value !== "string") {
    throw new ConfigurationError(`${what} must be a string; got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}.`);
  }
  if (value.trim().length === 0) throw new ConfigurationError(`${what} is empty; say what to generate.`);
  if (value.length > MAX_REQUEST_CHARS) {
    throw new ConfigurationError(`${what} is ${value.length} characters long; the limit is ${MAX_REQUEST_CHARS}.`);
  }
  return value;
}
