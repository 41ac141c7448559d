/**
 * The validation graph's run configuration: every setting (also what Studio
 * shows as the configuration form), `ensureValidationConfig`, which turns
 * what a run was given into one complete, typed configuration with defaults,
 * and `CheckedSettings`, which has a run's settings parsed once.
 */
import { z } from "zod";
import { readEnvironment, SIMULATED_MODEL } from "../environment.js";
import { ConfigurationError } from "../errors.js";
import type { JsonLimits } from "../json/parse.js";
import { jsonEqual, toJsonData } from "../json/data.js";
import { describeThrown } from "../shared/text.js";
import {
  BUILTIN_SPEC_NAMES,
  boundedInt,
  MAX_RUN_ATTEMPTS,
  modelInEffect,
  modelName,
  ON_FAILURE,
  ON_FAILURE_ERROR,
  parseOrThrow,
  retryWithSetting,
  specRef,
  temperature,
  withDefault,
  type EnsureOptions,
  type RunConfigLike,
} from "../settings.js";
import { DEFAULT_SPEC_NAME } from "../specs/registry.js";
import { parseModelName, PROVIDER_HELP } from "../providers/index.js";
import { DEFAULT_STOP_EARLY, STOP_POLICIES } from "../streaming/partial-check.js";
import { OUTPUT_MODES } from "./output-mode.js";

export const DEFAULT_MAX_ATTEMPTS = 3;

/** Graph steps one attempt takes: generate, then validate. */
const STEPS_PER_ATTEMPT = 2;
/**
 * Steps of one invocation besides its attempts: the input's step, and a review (the one that pauses a run
 * that did not end valid, or the one a resumed run starts with, which may hand a new request to generate).
 */
const STEPS_BESIDE_ATTEMPTS = 2;

/**
 * The recursion limit (LangGraph's most steps in one invocation) under which a run of `maxAttempts` attempts
 * ends on its own bound, with its own stopReason, never with GraphRecursionError: every attempt and the review
 * fit. An escalation list adds none: its models share the run's `maxAttempts` (the last makes the rest).
 * LangGraph's default of 25 would stop a run of 13 attempts before its last.
 */
export function validationStepLimit(maxAttempts: number): number {
  return STEPS_PER_ATTEMPT * maxAttempts + STEPS_BESIDE_ATTEMPTS;
}

/** Most models in one run's escalation list. */
const MAX_ESCALATION_MODELS = 5;
/** Largest token budget a run may set. */
const MAX_TOKEN_BUDGET = 100_000_000;

/**
 * Bounds of a run's ruleContext. It is kept with the run's settings (a resumed
 * run reads the same facts), so it is stored in the run's checkpoints; and any
 * caller of the server may set it. Facts for rules (the services that exist, a
 * few thousand names) fit well within 100,000 characters and a few levels.
 */
export const RULE_CONTEXT_LIMITS: Readonly<JsonLimits> = Object.freeze({ maxChars: 100_000, maxDepth: 32 });

/**
 * A ruleContext as plain JSON data within RULE_CONTEXT_LIMITS: a fresh copy
 * (nothing the caller holds can change it during the run), or a
 * ConfigurationError naming the limit. `what` names it in the message.
 */
function checkRuleContext(value: unknown, what = "ruleContext"): Record<string, unknown> {
  const data = toJsonData(value, RULE_CONTEXT_LIMITS, what);
  // Reading it threw (a Proxy's trap): not a question of its size.
  if (!data.ok && data.error.startsWith(`${what} could not be read`)) throw new ConfigurationError(`${data.error}; give ${what} as plain JSON data.`);
  if (!data.ok) {
    throw new ConfigurationError(
      `${data.error} (${what} is limited to ${RULE_CONTEXT_LIMITS.maxDepth} levels and ${RULE_CONTEXT_LIMITS.maxChars} characters of JSON); give the rules a smaller set of facts, or let a rule look up what it needs itself.`,
    );
  }
  return data.value as Record<string, unknown>;
}

/**
 * ruleContext: a JSON object. Read only by its own check, which names it: zod's record would read a Proxy's traps
 * (or a getter) itself and throw their error, in LangGraph's own parse of a run's context too. No transform, so
 * Studio's form still has its JSON Schema (that of a record).
 */
function ruleContextSetting() {
  return z
    .unknown()
    .superRefine((value, ctx) => {
      try {
        if (value === null || typeof value !== "object" || Array.isArray(value)) {
          ctx.addIssue({ code: "custom", message: "ruleContext must be a JSON object" });
          return;
        }
        Object.getPrototypeOf(value);
        for (const key of Reflect.ownKeys(value)) void Object.getOwnPropertyDescriptor(value, key);
      } catch (error) {
        ctx.addIssue({
          code: "custom",
          message: `ruleContext could not be read (reading it threw: ${describeThrown(error, 200)}); give ruleContext as plain JSON data`,
        });
      }
    })
    .meta({ type: "object", propertyNames: { type: "string" }, additionalProperties: {} }) as unknown as z.ZodRecord<z.ZodString, z.ZodUnknown>;
}

/** One step of an escalation list: a model, and how many attempts it makes before the next one takes over. */
const escalationStep = z
  .strictObject(
    {
      model: modelName("each models entry's model").meta({
        title: "Model",
        description: `Chat model: provider/model (e.g. ${PROVIDER_HELP.examples.join(", ")}) or a bare name on the OpenAI-compatible server.`,
      }),
      attempts: boundedInt("each models entry's attempts", 1, MAX_RUN_ATTEMPTS)
        .optional()
        .meta({
          title: "Attempts",
          description: `Attempts this model makes before the next model takes over (1-${MAX_RUN_ATTEMPTS}, default 1). The last model makes every attempt left.`,
        }),
    },
    { error: `each models entry must be {"model": "<name>", "attempts"?: <1-${MAX_RUN_ATTEMPTS}>}` },
  )
  .meta({ title: "Model step" });

export const ValidationConfigSchema = z.object({
  spec: withDefault(specRef(), DEFAULT_SPEC_NAME).meta({
    title: "Spec",
    description:
      `Which spec defines "valid": a built-in name (${BUILTIN_SPEC_NAMES.join(", ")}) or an inline JSON spec, ` +
      `{"name": …, "description": …, "schema": {JSON Schema}}, whose cross-field rules use $data and if/then.`,
  }),
  maxAttempts: withDefault(boundedInt("maxAttempts", 1, MAX_RUN_ATTEMPTS), DEFAULT_MAX_ATTEMPTS).meta({
    title: "Max attempts",
    description: `Most generate→validate attempts before the run ends with success: false (1-${MAX_RUN_ATTEMPTS}).`,
  }),
  model: modelName("model")
    .optional()
    .meta({
      title: "Model",
      description: `Chat model: provider/model (${PROVIDER_HELP.prefixes}) or a bare name on the OpenAI-compatible server; defaults to LLM_MODEL or gpt-4o-mini. "${SIMULATED_MODEL}" is the built-in simulated model (seeded rules, not a language model).`,
    }),
  temperature: withDefault(temperature, 0).meta({ title: "Temperature", description: "Sampling temperature for generation (0-2)." }),
  stopOnNoProgress: withDefault(z.boolean({ error: "stopOnNoProgress must be true or false" }), false).meta({
    title: "Stop on no progress",
    description: "End early when an attempt has exactly the same errors as the one before it.",
  }),
  outputMode: z
    .enum(OUTPUT_MODES, { error: `outputMode must be one of ${OUTPUT_MODES.map((m) => JSON.stringify(m)).join(", ")}` })
    .optional()
    .meta({
      title: "Output mode",
      description:
        'How the model is asked for JSON: "text" (the prompt asks for it), "json_object" (the provider\'s JSON mode), "json_schema" (its structured-output mode with the spec\'s schema, strict where the schema allows), "tool" (a forced tool call) ' +
        `or "auto" (each provider's own structured output: ${PROVIDER_HELP.auto}). Default: "auto" when a model is named provider/model, else "text". ` +
        "The validator judges the answer in every mode; a mode the provider refuses falls back to one that works, and the run records it.",
    }),
  stopEarly: withDefault(
    z.enum(STOP_POLICIES, { error: `stopEarly must be one of ${STOP_POLICIES.map((p) => JSON.stringify(p)).join(", ")}` }),
    DEFAULT_STOP_EARLY,
  ).meta({
    title: "Stop early",
    description:
      "While an answer streams, its fields are checked as they close. When to stop the model's request (no more tokens are generated; the attempt counts as invalid and its retry carries the errors found): " +
      '"useless" when the rest cannot help (the JSON is broken, the root is the wrong type, the answer is past the size limit, or its errors already fill a retry\'s list), "first-error" at its first certain error, "never" not at all. ' +
      "Applies when the run streams model tokens (streamValidated, the LangGraph server, or LangGraph's messages mode).",
  }),
  repairSyntax: withDefault(z.boolean({ error: "repairSyntax must be true or false" }), true).meta({
    title: "Repair syntax slips",
    description:
      "Repair a model's syntax slips without another call: trailing commas, comments, single-quoted strings and keys, unquoted keys, Python's True/False/None. Each repair is listed in the attempt's record (repairs), and the repaired value is judged whole. Nothing is guessed: a truncated answer is never completed. A person's answer is always read exactly.",
  }),
  retryWith: retryWithSetting(),
  ruleContext: ruleContextSetting()
    .optional()
    .meta({
      title: "Rule context",
      description:
        "Facts the spec's code rules may read (their third argument), e.g. the services that exist. It is the caller's word: a rule that needs a trusted fact must look it up itself. Specs supplied as JSON have no code rules and ignore it. " +
        `At most ${RULE_CONTEXT_LIMITS.maxDepth} levels deep and ${RULE_CONTEXT_LIMITS.maxChars} characters of JSON.`,
    }),
  models: z
    .array(escalationStep, { error: "models must be a list of {model, attempts?} entries" })
    .min(1, { error: "models must name at least one model" })
    .max(MAX_ESCALATION_MODELS, { error: `models may name at most ${MAX_ESCALATION_MODELS} models` })
    .optional()
    .meta({
      title: "Models (escalation)",
      description:
        `Models to try in order, e.g. a local one first and a hosted one after it failed: [{"model": "${PROVIDER_HELP.examples[0]}", "attempts": 2}, {"model": "${PROVIDER_HELP.examples[1]}"}]. ` +
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
  onFailure: withDefault(z.enum(ON_FAILURE, { error: ON_FAILURE_ERROR }), "end").meta({
    title: "On failure",
    description:
      'What happens when the run does not end valid (out of attempts, no progress, refused by the provider, or stopped by its token budget): "end" ends with success: false; "interrupt" pauses the run for a person, ' +
      "who may supply a corrected value (held to the same spec), a new request, or a rejection. Needs a checkpointer.",
  }),
});

/**
 * The configuration ensureValidationConfig gives: every setting above, complete (the model in effect, the
 * output mode asked for, each escalation step's attempts). A run records it (state.ts derives its settings
 * from it), so each setting is declared once, here.
 */
export const EnsuredConfigSchema = ValidationConfigSchema.required({ model: true, outputMode: true }).extend({
  /** The escalation list with every step's attempts filled in; absent when the run names one model. */
  models: z.array(escalationStep.required()).optional(),
});

type ValidationConfig = z.output<typeof EnsuredConfigSchema>;

export type ValidationConfigInput = z.input<typeof ValidationConfigSchema>;

export function ensureValidationConfig(config?: RunConfigLike, options: EnsureOptions<ValidationConfigInput> = {}): ValidationConfig {
  const parsed = parseOrThrow(ValidationConfigSchema, config, options.defaults);
  if (parsed.ruleContext !== undefined) parsed.ruleContext = checkRuleContext(parsed.ruleContext);
  const { models: steps, outputMode, ...given } = parsed;
  const names = steps?.map((step) => step.model) ?? [parsed.model ?? (options.env ?? readEnvironment()).model];
  // A provider's own name asks for its own structured output; a bare name keeps the prompt-only default.
  const rest = { ...given, outputMode: outputMode ?? (names.some((name) => parseModelName(name).provider !== undefined) ? "auto" : "text") } as const;
  if (steps === undefined) return { ...rest, model: names[0] };
  // Within one run's settings, two answers to "which model" are a mistake; a run's models do override a builder's default model,
  // and the model in effect, which a form such as Studio's fills in as the field's default (showingModelInEffect).
  if (givenByRun(config, "model") && givenByRun(config, "models") && parsed.model !== modelInEffect(options)) {
    throw new ConfigurationError("Give either model or models (the escalation list, whose first entry is the first model), not both.");
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
  return [config?.context, config?.configurable].some(
    (source) => source !== null && typeof source === "object" && (source as Record<string, unknown>)[key] !== undefined,
  );
}

/**
 * The settings of each run the front door checked, kept a little while so
 * that the run's start reads them instead of parsing them again: a run's
 * settings are parsed once. The front door sees LangGraph's parsed copy of
 * what the run was given (its context, or else configurable), the run's
 * start the run's own: they are matched by value. A run not found (many at
 * once, with other settings) has its settings parsed again, with the same
 * outcome. One per graph builder, with the builder's defaults.
 */
export class CheckedSettings {
  private readonly checked: Array<{ given: Record<string, unknown>; settings: ValidationConfig }> = [];

  constructor(private readonly defaults: EnsureOptions<ValidationConfigInput>) {}

  /** The front door's check of what a run was given: its settings (or a ConfigurationError), kept for the run's start. */
  check(given: Record<string, unknown>): ValidationConfig {
    const settings = ensureValidationConfig({ context: given }, this.defaults);
    this.checked.push({ given: settingsGiven(given)!, settings });
    if (this.checked.length > CHECKED_KEPT) this.checked.shift();
    return settings;
  }

  /** A new run's settings: those the front door checked for it, else parsed from its configuration. */
  forRun(config: RunConfigLike): ValidationConfig {
    // LangGraph checks `context` when a run has one, else `configurable`; the run's start reads both (context wins).
    const fromContext = config.context !== undefined;
    const given = settingsGiven(fromContext ? config.context : config.configurable);
    const alsoConfigurable = fromContext && Object.keys(settingsGiven(config.configurable) ?? {}).length > 0;
    if (given !== undefined && !alsoConfigurable) {
      // Taken, not shared: each check serves one run (its settings hold the run's own copy of its ruleContext).
      for (let i = this.checked.length - 1; i >= 0; i--) if (jsonEqual(this.checked[i].given, given)) return this.checked.splice(i, 1)[0].settings;
    }
    return ensureValidationConfig(config, this.defaults);
  }
}

/** How many checked settings a builder keeps for runs about to start. */
const CHECKED_KEPT = 32;
const SETTING_KEYS = Object.keys(ValidationConfigSchema.shape);

/** The settings among what a run was given (its context or configurable), as given. */
function settingsGiven(source: unknown): Record<string, unknown> | undefined {
  if (source === null || typeof source !== "object") return undefined;
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) if ((source as Record<string, unknown>)[key] !== undefined) out[key] = (source as Record<string, unknown>)[key];
  return out;
}
