/** State of the Reflexion graph: tasks in; per-task results, step records, outcomes and usage out. */
import type { UpdateType } from "@langchain/langgraph/zod";
import { z } from "zod";
import { appendChannel, stateObject, TokenUsageSchema, usageChannel } from "../shared/state.js";

export const StepRecordSchema = z
  .object({
    task: z.string(),
    response: z.string(),
    evaluation: z.string(),
    reflection: z.string(),
    score: z.number().describe("Evaluator score, 0-1"),
    iteration: z.number().describe("0-based iteration within the task"),
  })
  .describe("One iteration of the Reflexion process");

export const TaskStopReasonSchema = z
  .enum(["early_stop", "max_loops", "error"])
  .describe("early_stop: a (valid) score above 0.9; max_loops: iterations used up; error: the model provider failed");

export const TaskOutcomeSchema = z.object({
  task: z.string(),
  stopReason: TaskStopReasonSchema,
  iterations: z.number(),
  bestIteration: z.number().nullable(),
  bestScore: z.number().nullable(),
  /** With a spec: whether the best response passes it; null without a spec. */
  valid: z.boolean().nullable(),
  usage: TokenUsageSchema,
  error: z.string().nullable(),
});
export type TaskOutcome = z.infer<typeof TaskOutcomeSchema>;

export const ModelCallSchema = z.object({
  task: z.number().describe("0-based index of the task"),
  iteration: z.number(),
  node: z.enum(["actor", "refine", "evaluator", "reflector"]),
  usage: TokenUsageSchema,
});
export type ModelCall = z.infer<typeof ModelCallSchema>;

export const ConversationTurnSchema = z.object({ role: z.enum(["user", "assistant"]), content: z.string() });

const tasks = z.array(z.string()).describe("Tasks to run one at a time, in order (a single task is a list of one)");

export const ReflexionInputSchema = stateObject({ tasks });

const outputs = {
  results: z.array(z.string().nullable()).default([]).describe("The best response per task, in order (null if a task failed before any response)"),
  steps: z.array(z.array(StepRecordSchema)).default([]).describe("Per task, the record of every iteration"),
  outcomes: z.array(TaskOutcomeSchema).default([]).describe("Per task: why it stopped, its best score and its token usage"),
  conversation: z.array(ConversationTurnSchema).default([]).describe("Each task and its best response"),
  calls: appendChannel(ModelCallSchema, "Every model call: task, iteration, node and token usage"),
  usage: usageChannel(),
};

export const ReflexionOutputSchema = stateObject(outputs);

export const ReflexionState = stateObject({
  tasks,
  ...outputs,
  /** Index of the task in progress; -1 before the first. */
  taskIndex: z.number().default(-1),
  iteration: z.number().default(0),
  /** The iteration in progress. */
  response: z.string().default(""),
  evaluation: z.string().default(""),
  reflection: z.string().default(""),
  score: z.number().default(0),
  /** Deterministic gate errors of the current response; null without a spec. */
  validationErrors: z.array(z.string()).nullable().default(null),
  /** Per iteration of the current task: whether its response passed the gate (true without a spec). */
  passed: z.array(z.boolean()).default([]),
  /** Set when a step is complete and waiting for the memory node. */
  pending: z.boolean().default(false),
  /** Provider failure that ended the current task. */
  failure: z.string().nullable().default(null),
  /** Relevant memories retrieved for the current task. */
  memories: z.array(StepRecordSchema).default([]),
  /** Short-term memory: the 10 most recent step records of this run. */
  shortTerm: z.array(StepRecordSchema).default([]),
  /** Usage of the current task so far. */
  taskUsage: TokenUsageSchema.default({ inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 }),
  /** Where the memory node sends the run next. */
  next: z.enum(["actor", "refine", "__end__"]).default("actor"),
});

export type ReflexionStateType = z.output<typeof ReflexionState>;
export type ReflexionUpdate = UpdateType<typeof ReflexionState>;
