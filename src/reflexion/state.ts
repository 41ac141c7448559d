/**
 * State of the Reflexion graphs. The run (ReflexionState): tasks in; per-task
 * results, step records, outcomes and usage out, written once when the run
 * ends. One task (TaskState): the task, the iteration in progress, and that
 * task's steps and model calls, appended as they happen. No field says where
 * the run goes next: the edges decide that from the data.
 */
import type { UpdateType } from "@langchain/langgraph/zod";
import { z } from "zod";
import { checkTasks } from "./configuration.js";
import { appendChannel, stateObject, TokenUsageSchema, usageChannel } from "../graph/state.js";

const StepRecordSchema = z
  .object({
    task: z.string(),
    response: z.string(),
    evaluation: z.string(),
    reflection: z.string(),
    score: z.number().describe("Evaluator score, 0-1"),
    iteration: z.number().describe("0-based iteration within the task"),
  })
  .describe("One iteration of the Reflexion process");

const TaskStopReasonSchema = z
  .enum(["early_stop", "max_loops", "error"])
  .describe("early_stop: a (valid) score above 0.9; max_loops: iterations used up; error: the model provider failed");

const TaskOutcomeSchema = z.object({
  task: z.string(),
  stopReason: TaskStopReasonSchema,
  iterations: z.number(),
  /** Iteration and score of the response in `results` (with a gate and none passing: of the best-scored invalid one). */
  bestIteration: z.number().nullable(),
  bestScore: z.number().nullable(),
  /** With a spec: true when `results` holds a response that passes it, false when none passed (`results` is then null); null without a spec. */
  valid: z.boolean().nullable(),
  usage: TokenUsageSchema,
  error: z.string().nullable(),
});
/** How one Reflexion task ended: why it stopped, its iterations, the best response's iteration and score, whether it passed the spec, and its usage. */
export type TaskOutcome = z.infer<typeof TaskOutcomeSchema>;

const ModelCallSchema = z.object({
  task: z.number().describe("0-based index of the task"),
  iteration: z.number(),
  node: z.enum(["actor", "refine", "evaluator", "reflector"]),
  usage: TokenUsageSchema,
});
/** One model call of a Reflexion run: its task, iteration, node and token usage. */
export type ModelCall = z.infer<typeof ModelCallSchema>;

const ConversationTurnSchema = z.object({ role: z.enum(["user", "assistant"]), content: z.string() });

/**
 * The tasks, checked as they come in with the package's readable refusals (a
 * single string, an empty list, too many tasks, an empty or oversized task),
 * however the graph was compiled. The check runs on the raw value, before any
 * type check of zod's, so a field of unknown type carries it; its JSON Schema
 * (Studio's input form) says what it takes, and its TypeScript type is the
 * list of strings the check guarantees.
 */
const tasks = z
  .unknown()
  .check((ctx) => void checkTasks(ctx.value))
  .meta({
    type: "array",
    items: { type: "string" },
    description: "Tasks to run one at a time, in order (a single task is a list of one)",
  }) as unknown as z.ZodArray<z.ZodString>;

export const ReflexionInputSchema = stateObject({ tasks });

const outputs = {
  results: z
    .array(z.string().nullable())
    .default([])
    .describe(
      "The best response per task, in order; null when there is none to use: the task failed before any response, or a spec is set and no response passed it",
    ),
  steps: z.array(z.array(StepRecordSchema)).default([]).describe("Per task, the record of every iteration"),
  outcomes: z.array(TaskOutcomeSchema).default([]).describe("Per task: why it stopped, whether its result passed the spec, its best score and its token usage"),
  conversation: z.array(ConversationTurnSchema).default([]).describe("Each task and its best response"),
  calls: z.array(ModelCallSchema).default([]).describe("Every model call: task, iteration, node and token usage"),
  usage: TokenUsageSchema.default({ inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 }).describe("Total token usage of the run"),
};

export const ReflexionOutputSchema = stateObject(outputs);

/** The run: every field is written once, by the node that runs the tasks, so a new run on a thread replaces the last one's. */
export const ReflexionState = stateObject({ tasks, ...outputs });

export type ReflexionStateType = z.output<typeof ReflexionState>;
export type ReflexionUpdate = UpdateType<typeof ReflexionState>;

/** One task's loop. */
export const TaskState = stateObject({
  task: z.string(),
  taskIndex: z.number(),
  /** Memories retrieved for the task before its first iteration. */
  memories: z.array(StepRecordSchema).default([]),
  iteration: z.number().default(0),
  /** The iteration in progress. */
  response: z.string().default(""),
  evaluation: z.string().default(""),
  reflection: z.string().default(""),
  score: z.number().default(0),
  /** Gate errors of the current response; null without a spec. */
  validationErrors: z.array(z.string()).nullable().default(null),
  /** Every finished iteration of this task, and whether its response passed the gate (true without a spec). */
  steps: appendChannel(StepRecordSchema, "Every finished iteration of the task"),
  passed: appendChannel(z.boolean(), "Per finished iteration: whether its response passed the gate"),
  calls: appendChannel(ModelCallSchema, "Every model call of the task"),
  usage: usageChannel("Token usage of the task"),
  /** The provider failure that ended the task. */
  failure: z.string().nullable().default(null),
});

export const TaskInputSchema = stateObject({ task: z.string(), taskIndex: z.number(), memories: z.array(StepRecordSchema) });

export type TaskStateType = z.output<typeof TaskState>;
export type TaskUpdate = UpdateType<typeof TaskState>;
