/**
 * Public API: what a user builds with. Specs and the validator, the two
 * graphs (builders and a one-call `generateValidated`), the Reflexion agent,
 * guarded tools for your own agents, persistence, the model factory, and the
 * typed errors (one family: `TrustworthyOutputError.isInstance`). Every type
 * a function here returns or takes can be named from here. Everything else is
 * internal.
 */
export { ConfigurationError, ModelTimeoutError, ProviderError, SpecError, ThreadBusyError, ThreadLockLostError, TrustworthyOutputError } from "./errors.js";

// Specs and validation (pure: no model, no graph)
export {
  defineSpec,
  type BusinessRule,
  type DefineSpecOptions,
  type JsonSchema,
  type RuleOutcome,
  type SchemaInCode,
  type Spec,
  type SpecDefinition,
  type SpecOutput,
} from "./specs/spec.js";
export type { StandardSchemaV1 } from "./specs/standard.js";
export type { RuntimeSpecLimits } from "./specs/limits.js";
export { builtinSpecs, resolveSpec, type InlineSpec, type SpecLike, type SpecRecord, type SpecRef } from "./specs/registry.js";
export { checkText, checkTextSync, checkValue, checkValueSync, type CheckLimits, type CheckOptions, type Verdict } from "./specs/check.js";
export type { IgnoredKeyword } from "./specs/keywords.js";

// The validation graph
export { buildValidationGraph, createValidationGraphBuilder, type ValidationGraphOptions } from "./validation/graph.js";
export {
  generateValidated,
  type GenerateValidatedOptions,
  type ValidationOutcome,
  type ValidationOutcomeBase,
  type ValidationSettings,
} from "./validation/generate.js";
export {
  streamValidated,
  type ValidationStream,
  type ValidationStreamEvent,
  type PartialEvent,
  type AttemptEndEvent,
  type OutcomeEvent,
  type StoppedAnswer,
  type DeepPartial,
} from "./validation/stream.js";
export type { AttemptRecord, StopReason, ValidationGraphOutput } from "./validation/state.js";
export type { OutcomeFailure, OutcomeSuccess } from "./shared/outcome.js";
export type { ReviewAnswer, ReviewRequest } from "./protocol/review.js";

// The Reflexion graph and agent
export { buildReflexionGraph, createReflexionGraphBuilder, type ReflexionGraphOptions } from "./reflexion/graph.js";
export { ReflexionAgent, type AgentMemory, type ReflexionAgentOptions, type RunReport } from "./reflexion/agent.js";
export type { ModelCall, TaskOutcome } from "./reflexion/state.js";
export type { MemoryEntry, ShortTermMemory, StepRecord } from "./reflexion/memory.js";

// Guarding your own agent's tool calls
export { guardedTool, type GuardedToolOptions } from "./tools/guarded-tool.js";

// Traces, metrics and LangSmith scores of every verdict (docs/tracing.md)
export { configureTelemetry } from "./telemetry/open-telemetry.js";
export { VerdictFeedbackHandler } from "./telemetry/langsmith-feedback.js";

// Durable state
export { openPersistence, DatabaseUnavailableError, type Persistence, type PersistenceOptions } from "./persistence/open.js";
export type { MultitaskOptions, ThreadLease, ThreadLocks } from "./persistence/threads.js";

// Models and environment
export { createChatModel, loadChatModel, type ModelRequest, type ModelSource } from "./models.js";
export { readEnvironment, type Environment } from "./environment.js";
export type { TokenUsage } from "./shared/usage.js";
