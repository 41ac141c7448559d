/**
 * The one place that reads the environment and run configuration. Whatever a
 * run was given (`context`, or `configurable` for older callers and the
 * server's assistants) becomes one complete, typed configuration with
 * defaults, or a ConfigurationError that says what to change, before any
 * model call. Nodes never read raw config or `process.env`.
 */
import { z } from "zod";
import { ConfigurationError } from "./errors.js";
import { DEFAULT_SPEC_NAME, builtinSpecs } from "./specs/registry.js";

export const DEFAULT_MODEL = "gpt-4o-mini";
/**
 * The model name of the built-in simulated model (src/simulated/model.ts): seeded rules, not a language
 * model, no provider needed. Chosen only by this exact name, never as a fallback for a missing provider.
 */
export const SIMULATED_MODEL = "simulated";
export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_MAX_LOOPS = 3;
export const DEFAULT_MEMORY_CAPACITY = 100;
/** Longest request or task accepted, in characters. */
export const MAX_REQUEST_CHARS = 20_000;
/** Most tasks in one Reflexion run. */
export const MAX_TASKS = 100;

// ---------------------------------------------------------------------------
// Environment

export interface Environment {
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  /** Default model name for every role (LLM_MODEL); `simulated` is the built-in simulated model (SIMULATED_MODEL). */
  model: string;
  /** Per-request timeout for model calls (LLM_TIMEOUT_MS). */
  timeoutMs: number;
  /** Client-side retries of failed model calls: 429, 5xx, network (LLM_MAX_RETRIES). */
  maxRetries: number;
  /** postgres://… enables durable checkpoints and store (DATABASE_URL). */
  databaseUrl?: string;
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigurationError(`${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(raw)}.`);
  }
  return n;
}

export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  return {
    openaiApiKey: nonEmpty(env.OPENAI_API_KEY),
    openaiBaseUrl: nonEmpty(env.OPENAI_BASE_URL),
    model: nonEmpty(env.LLM_MODEL) ?? DEFAULT_MODEL,
    timeoutMs: intFromEnv(env, "LLM_TIMEOUT_MS", 60_000, 100, 600_000),
    maxRetries: intFromEnv(env, "LLM_MAX_RETRIES", 2, 0, 10),
    databaseUrl: nonEmpty(env.DATABASE_URL),
  };
}

// ---------------------------------------------------------------------------
// Run configuration schemas (also what Studio shows as the configuration form)

const modelName = (what: string) =>
  z
    .string({ error: `${what} must be a model name (a string)` })
    .trim()
    .min(1, { error: `${what} must not be empty` })
    .max(200, { error: `${what} must be at most 200 characters` });

const temperature = z
  .number({ error: "temperature must be a number from 0 to 2" })
  .min(0, { error: "temperature must be a number from 0 to 2" })
  .max(2, { error: "temperature must be a number from 0 to 2" });

// Integer-ness as a refinement, not `.int()`: zod's int check stops the whole object's parse, and the
// front door's readable refusal (a refinement on the object) must still run after it.
const boundedInt = (name: string, min: number, max: number) =>
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
function withDefault<T extends z.ZodType>(field: T, value: NoInfer<z.core.util.NoUndefined<z.output<T>>>) {
  type Out = z.core.util.NoUndefined<z.output<T>>;
  const optional = field.default(value).optional();
  // The default has been applied on the left, so the right side never sees undefined.
  return optional.pipe(field as unknown as z.ZodType<Out, Out | undefined>);
}

const BUILTIN_SPEC_NAMES = [...builtinSpecs.keys()] as [string, ...string[]];

/** A spec reference: a built-in name (offered as a list), or an inline JSON spec as text or as an object. */
const specRef = () =>
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
    { error: "spec must be a built-in spec name or an inline JSON spec ({name, description, schema})" },
  );

/** Most models in one run's escalation list. */
export const MAX_ESCALATION_MODELS = 5;
/** Largest token budget a run may set. */
export const MAX_TOKEN_BUDGET = 100_000_000;

/** One step of an escalation list: a model, and how many attempts it makes before the next one takes over. */
const escalationStep = z
  .strictObject(
    {
      model: modelName("each models entry's model").meta({ title: "Model", description: "Chat model name, asked of the model factory." }),
      attempts: boundedInt("each models entry's attempts", 1, 10)
        .optional()
        .meta({ title: "Attempts", description: "Attempts this model makes before the next model takes over (1-10, default 1). The last model makes every attempt left." }),
    },
    { error: 'each models entry must be {"model": "<name>", "attempts"?: <1-10>}' },
  )
  .meta({ title: "Model step" });

export const ValidationConfigSchema = z.object({
  spec: withDefault(specRef(), DEFAULT_SPEC_NAME).meta({
    title: "Spec",
    description:
      `Which spec defines "valid": a built-in name (${BUILTIN_SPEC_NAMES.join(", ")}) or an inline JSON spec, ` +
      `{"name": …, "description": …, "schema": {JSON Schema}}, whose cross-field rules use $data and if/then.`,
  }),
  maxAttempts: withDefault(boundedInt("maxAttempts", 1, 10), DEFAULT_MAX_ATTEMPTS).meta({
    title: "Max attempts",
    description: "Most generate→validate attempts before the run ends with success: false (1-10).",
  }),
  model: modelName("model").optional().meta({
    title: "Model",
    description: `Chat model name; defaults to LLM_MODEL or gpt-4o-mini. "${SIMULATED_MODEL}" is the built-in simulated model (seeded rules, not a language model).`,
  }),
  temperature: withDefault(temperature, 0).meta({ title: "Temperature", description: "Sampling temperature for generation (0-2)." }),
  stopOnNoProgress: withDefault(z.boolean({ error: "stopOnNoProgress must be true or false" }), false).meta({
    title: "Stop on no progress",
    description: "End early when an attempt has exactly the same errors as the one before it.",
  }),
  outputMode: withDefault(z.enum(["text", "json_object", "json_schema", "tool"], { error: 'outputMode must be one of "text", "json_object", "json_schema", "tool"' }), "text").meta({
    title: "Output mode",
    description:
      'How the model is asked for JSON: "text" (the prompt asks for it), "json_object" (the provider\'s JSON mode), "json_schema" (its structured-output mode with the spec\'s schema, strict where the schema allows) or "tool" (a forced tool call). ' +
      "The validator judges the answer in every mode; a mode the provider refuses falls back to one that works, and the run records it.",
  }),
  stopEarly: withDefault(z.enum(["never", "useless", "first-error"], { error: 'stopEarly must be one of "never", "useless", "first-error"' }), "useless").meta({
    title: "Stop early",
    description:
      "While an answer streams, its fields are checked as they close. When to stop the model's request (no more tokens are generated; the attempt counts as invalid and its retry carries the errors found): " +
      '"useless" when the rest cannot help (the JSON is broken, the root is the wrong type, the answer is past the size limit, or its errors already fill a retry\'s list), "first-error" at its first certain error, "never" not at all. ' +
      "Applies when the run streams model tokens (streamValidated, the LangGraph server, or LangGraph's messages mode).",
  }),
  ruleContext: z
    .record(z.string(), z.unknown(), { error: "ruleContext must be a JSON object" })
    .optional()
    .meta({
      title: "Rule context",
      description:
        "Facts the spec's code rules may read (their third argument), e.g. the services that exist. It is the caller's word: a rule that needs a trusted fact must look it up itself. Specs supplied as JSON have no code rules and ignore it.",
    }),
  models: z
    .array(escalationStep, { error: "models must be a list of {model, attempts?} entries" })
    .min(1, { error: "models must name at least one model" })
    .max(MAX_ESCALATION_MODELS, { error: `models may name at most ${MAX_ESCALATION_MODELS} models` })
    .optional()
    .meta({
      title: "Models (escalation)",
      description:
        'Models to try in order, e.g. a cheap one first and a stronger one after it failed: [{"model": "small", "attempts": 2}, {"model": "large"}]. ' +
        "Each makes its attempts (default 1), then the next takes over with the same exact errors; the last makes every attempt left of maxAttempts. " +
        "Replaces model; each attempt's record names its model, and usageByModel keeps the tokens per model.",
    }),
  maxTokens: boundedInt("maxTokens", 1, MAX_TOKEN_BUDGET)
    .optional()
    .meta({
      title: "Token budget",
      description:
        "Most tokens (input + output, over every attempt) the run may spend. Before each model call, when the tokens spent plus the call's input (estimated as the prompt's characters ÷ 4) " +
        'would pass it, the call is not made and the run ends with stopReason "budget", keeping the last answer, its errors and the usage. Unset: no budget.',
    }),
  onFailure: withDefault(z.enum(["end", "interrupt"], { error: 'onFailure must be "end" or "interrupt"' }), "end").meta({
    title: "On failure",
    description:
      'What happens when the run does not end valid (out of attempts, no progress, refused by the provider, or stopped by its token budget): "end" ends with success: false; "interrupt" pauses the run for a person, ' +
      "who may supply a corrected value (held to the same spec), a new request, or a rejection. Needs a checkpointer.",
  }),
});

export const ReflexionConfigSchema = z.object({
  maxLoops: withDefault(boundedInt("maxLoops", 1, 10), DEFAULT_MAX_LOOPS).meta({
    title: "Max loops",
    description: "Most reflexion iterations per task (1-10).",
  }),
  memoryCapacity: withDefault(boundedInt("memoryCapacity", 1, 1_000_000), DEFAULT_MEMORY_CAPACITY).meta({
    title: "Memory capacity",
    description: "Most long-term memory entries kept; the oldest are dropped first.",
  }),
  useMemory: withDefault(z.boolean({ error: "useMemory must be true or false" }), true).meta({
    title: "Use memory",
    description: "Give the actor reflections from earlier tasks and runs. false reproduces the reference, whose memory never reaches the actor.",
  }),
  systemPrompt: z
    .string({ error: "systemPrompt must be a string" })
    .max(MAX_REQUEST_CHARS)
    .optional()
    .meta({ title: "System prompt", description: "System prompt for the actor." }),
  agentName: withDefault(
    z.string({ error: "agentName must be a string" }).regex(/^[A-Za-z0-9_-]{1,64}$/, { error: "agentName must be 1-64 letters, digits, '_' or '-'" }),
    "reflexion-agent",
  ).meta({ title: "Agent name", description: "Name of the agent; memories are kept per agent name (and per user when authenticated)." }),
  model: modelName("model").optional().meta({
    title: "Model",
    description: `Model for every role unless a role names its own; defaults to LLM_MODEL or gpt-4o-mini. "${SIMULATED_MODEL}" is the built-in simulated model (seeded rules, not a language model).`,
  }),
  actorModel: modelName("actorModel").optional().meta({ title: "Actor model", description: "Model for the actor and refine steps." }),
  evaluatorModel: modelName("evaluatorModel").optional().meta({ title: "Evaluator model", description: "Model for the evaluator." }),
  reflectorModel: modelName("reflectorModel").optional().meta({ title: "Reflector model", description: "Model for the reflector." }),
  temperature: withDefault(temperature, 0.7).meta({ title: "Temperature", description: "Sampling temperature for the actor (the evaluator runs at 0)." }),
  spec: specRef()
    .optional()
    .meta({
      title: "Gate spec",
      description: "Optional deterministic gate: a spec every response must also pass (a built-in name or an inline JSON spec).",
    }),
});

/** One step of a run's escalation, with its attempts filled in. */
export interface ModelStep {
  model: string;
  attempts: number;
}

export type ValidationConfig = Omit<z.output<typeof ValidationConfigSchema>, "models"> & {
  model: string;
  /** The escalation list with every step's attempts filled in; absent when the run names one model. */
  models?: ModelStep[];
};
export type ReflexionConfig = z.output<typeof ReflexionConfigSchema> & {
  actorModel: string;
  evaluatorModel: string;
  reflectorModel: string;
};

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

function parseOrThrow<T extends z.ZodObject>(schema: T, config: RunConfigLike | undefined, defaults?: object): z.output<T> {
  const input = gather(schema.shape, config, defaults);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const got = issue.path.length > 0 ? describeGot(input, issue.path as (string | number)[]) : "";
    return `${issue.message}${got}`;
  });
  throw new ConfigurationError([...new Set(problems)]);
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
  env?: Environment;
  /** Defaults set by whoever built the graph; run config overrides them. */
  defaults?: Partial<T>;
}

export type ValidationConfigInput = z.input<typeof ValidationConfigSchema>;
export type ReflexionConfigInput = z.input<typeof ReflexionConfigSchema>;

export function ensureValidationConfig(config?: RunConfigLike, options: EnsureOptions<ValidationConfigInput> = {}): ValidationConfig {
  const parsed = parseOrThrow(ValidationConfigSchema, config, options.defaults);
  const { models: steps, ...rest } = parsed;
  if (steps === undefined) return { ...rest, model: parsed.model ?? (options.env ?? readEnvironment()).model };
  // Within one run's settings, two answers to "which model" are a mistake; a run's models do override a builder's default model.
  if (givenByRun(config, "model") && givenByRun(config, "models")) {
    throw new ConfigurationError('Give either model or models (the escalation list, whose first entry is the first model), not both.');
  }
  const models = steps.map((step) => ({ model: step.model, attempts: step.attempts ?? 1 }));
  const before = models.slice(0, -1).reduce((sum, step) => sum + step.attempts, 0);
  if (models.length > 1 && before >= parsed.maxAttempts) {
    throw new ConfigurationError(
      `models: the models before ${JSON.stringify(models.at(-1)!.model)} use ${before} attempt(s) and maxAttempts is ${parsed.maxAttempts}, so it would never be asked; raise maxAttempts or lower their attempts.`,
    );
  }
  return { ...rest, model: models[0].model, models };
}

/** Whether the run itself (its context, or configurable) set `key`, as opposed to a builder's defaults. */
function givenByRun(config: RunConfigLike | undefined, key: string): boolean {
  return [config?.context, config?.configurable].some((source) => source !== null && typeof source === "object" && (source as Record<string, unknown>)[key] !== undefined);
}

export function ensureReflexionConfig(config?: RunConfigLike, options: EnsureOptions<ReflexionConfigInput> = {}): ReflexionConfig {
  const env = options.env ?? readEnvironment();
  const parsed = parseOrThrow(ReflexionConfigSchema, config, options.defaults);
  const base = parsed.model ?? env.model;
  return {
    ...parsed,
    actorModel: parsed.actorModel ?? base,
    evaluatorModel: parsed.evaluatorModel ?? base,
    reflectorModel: parsed.reflectorModel ?? base,
  };
}

// ---------------------------------------------------------------------------
// Inputs

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

/** Check Reflexion's `tasks`: a non-empty list of task strings (a single string is refused, as in the reference). */
export function checkTasks(tasks: unknown): string[] {
  if (typeof tasks === "string") {
    throw new ConfigurationError('tasks must be a list of strings, not a single string: wrap one task in a list, e.g. ["' + tasks.slice(0, 40).replace(/"/g, '\\"') + '"].');
  }
  if (!Array.isArray(tasks)) throw new ConfigurationError(`tasks must be a list of strings; got ${tasks === null ? "null" : typeof tasks}.`);
  if (tasks.length === 0) throw new ConfigurationError("tasks is empty; give at least one task.");
  if (tasks.length > MAX_TASKS) throw new ConfigurationError(`tasks has ${tasks.length} items; the limit is ${MAX_TASKS} per run.`);
  return tasks.map((t, i) => checkRequestText(t, `tasks[${i}]`));
}
