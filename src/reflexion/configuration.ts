/**
 * The Reflexion graph's run configuration: every setting (also what Studio
 * shows as the configuration form), `ensureReflexionConfig`, which turns what
 * a run was given into one complete, typed configuration with defaults, and
 * the check of its `tasks`.
 */
import { z } from "zod";
import { readEnvironment, SIMULATED_MODEL } from "../environment.js";
import { ConfigurationError } from "../errors.js";
import { PROVIDER_HELP } from "../providers/index.js";
import {
  boundedInt,
  checkRequestText,
  MAX_REQUEST_CHARS,
  modelName,
  parseOrThrow,
  specRef,
  temperature,
  withDefault,
  type EnsureOptions,
  type RunConfigLike,
} from "../settings.js";

const DEFAULT_MAX_LOOPS = 3;
const DEFAULT_MEMORY_CAPACITY = 100;
/** Most tasks in one Reflexion run. */
export const MAX_TASKS = 100;

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
  model: modelName("model")
    .optional()
    .meta({
      title: "Model",
      description: `Model for every role unless a role names its own: provider/model (${PROVIDER_HELP.prefixes}) or a bare name on the OpenAI-compatible server; defaults to LLM_MODEL or gpt-4o-mini. "${SIMULATED_MODEL}" is the built-in simulated model (seeded rules, not a language model).`,
    }),
  actorModel: modelName("actorModel").optional().meta({ title: "Actor model", description: "Model for the actor and refine steps." }),
  evaluatorModel: modelName("evaluatorModel").optional().meta({ title: "Evaluator model", description: "Model for the evaluator." }),
  reflectorModel: modelName("reflectorModel").optional().meta({ title: "Reflector model", description: "Model for the reflector." }),
  temperature: withDefault(temperature, 0.7).meta({ title: "Temperature", description: "Sampling temperature for the actor (the evaluator runs at 0)." }),
  spec: specRef().optional().meta({
    title: "Gate spec",
    description: "Optional deterministic gate: a spec every response must also pass (a built-in name or an inline JSON spec).",
  }),
});

export type ReflexionConfig = z.output<typeof ReflexionConfigSchema> & {
  actorModel: string;
  evaluatorModel: string;
  reflectorModel: string;
};

export type ReflexionConfigInput = z.input<typeof ReflexionConfigSchema>;

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

/** Check Reflexion's `tasks`: a non-empty list of task strings (a single string is refused, as in the reference). */
export function checkTasks(tasks: unknown): string[] {
  if (typeof tasks === "string") {
    throw new ConfigurationError(
      'tasks must be a list of strings, not a single string: wrap one task in a list, e.g. ["' + tasks.slice(0, 40).replace(/"/g, '\\"') + '"].',
    );
  }
  if (!Array.isArray(tasks)) throw new ConfigurationError(`tasks must be a list of strings; got ${tasks === null ? "null" : typeof tasks}.`);
  if (tasks.length === 0) throw new ConfigurationError("tasks is empty; give at least one task.");
  if (tasks.length > MAX_TASKS) throw new ConfigurationError(`tasks has ${tasks.length} items; the limit is ${MAX_TASKS} per run.`);
  return tasks.map((t, i) => checkRequestText(t, `tasks[${i}]`));
}
