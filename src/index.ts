/**
 * Public API: what a user builds with. Specs and the validator, the two
 * graphs (builders and a one-call `generateValidated`), the Reflexion agent,
 * guarded tools for your own agents, persistence, the model factory, and the
 * typed errors (one family: `TrustworthyOutputError.isInstance`). Every type
 * a function here returns or takes can be named from here. Everything else is
 * internal.
 */
export {
  ConfigurationError,
  ModelTimeoutError,
  ProviderError,
  SpecError,
  ThreadBusyError,
  ThreadLockLostError,
  TrustworthyOutputError,
  type ThreadBusyReason,
} from "./errors.js";

// Specs and validation (pure: no model, no graph)
export {
  defineSpec,
  type BusinessRule,
  type DefineSpecOptions,
  type FieldType,
  type JsonSchema,
  type RuleOutcome,
  type SchemaInCode,
  type Spec,
  type SpecDefinition,
  type SpecOutput,
} from "./specs/spec.js";
export type { StandardSchemaV1 } from "./specs/standard.js";
export { CODE_SPEC_LIMITS, RUNTIME_SPEC_LIMITS, type RuntimeSpecLimits, type SpecCostLimits } from "./specs/limits.js";
export { builtinSpecs, resolveSpec, type InlineSpec, type ResolveSpecOptions, type SpecLike, type SpecRecord, type SpecRef } from "./specs/registry.js";
export {
  checkText,
  checkTextSync,
  checkValue,
  checkValueSync,
  validateAgainstSpec,
  type CheckLimits,
  type CheckOptions,
  type Reader,
  type Verdict,
} from "./specs/check.js";
export type { ValidationLimits, ValidationReport } from "./specs/validate.js";
export type { IgnoredKeyword } from "./specs/keywords.js";
export { extractJson, parseExactJson, type ExtractOptions, type ExtractResult, type JsonLimits, type JsonSource } from "./shared/json.js";

// The validation graph
export { buildValidationGraph, createValidationGraphBuilder, type ValidationGraphOptions } from "./validation/graph.js";
export type { ValidationNodeOptions } from "./validation/node-context.js";
export {
  generateValidated,
  type GenerateValidatedOptions,
  type ValidationOutcome,
  type ValidationOutcomeBase,
  type ValidationSettings,
} from "./validation/generate.js";
export {
  streamValidated,
  type StreamValidatedOptions,
  type ValidationStream,
  type ValidationStreamEvent,
  type PartialEvent,
  type AttemptEndEvent,
  type OutcomeEvent,
  type StoppedAnswer,
  type DeepPartial,
  type StopPolicy,
  type EarlyStopReason,
} from "./validation/stream.js";
export type { AttemptRecord, StopReason, ValidationGraphOutput } from "./validation/state.js";
export type { OutcomeBase, OutcomeFailure, OutcomeSuccess } from "./shared/outcome.js";
export type { ReviewAnswer, ReviewRequest } from "./review.js";

// The Reflexion graph and agent
export { buildReflexionGraph, createReflexionGraphBuilder, type ReflexionGraphOptions } from "./reflexion/graph.js";
export type { ReflexionNodeOptions } from "./reflexion/nodes.js";
export { ReflexionAgent, type AgentMemory, type ReflexionAgentOptions, type RunReport, type ConversationTurn } from "./reflexion/agent.js";
export type { ModelCall, TaskOutcome } from "./reflexion/state.js";
export type { MemoryEntry, ShortTermMemory, StepRecord } from "./reflexion/memory.js";

// Guarding your own agent's tool calls
export { guardedTool, type GuardedToolOptions } from "./tools/guarded-tool.js";
export type { ArgumentLimits } from "./tools/arguments.js";
export { guardRecordOf, type GuardRecord } from "./tools/budget.js";

// Durable state
export { openPersistence, DatabaseUnavailableError, type Persistence, type PersistenceOptions } from "./persistence.js";
export type { MultitaskOptions, MultitaskStrategy, ThreadLease, ThreadLocks, ThreadRunOptions } from "./threads.js";

// Models and environment
export { createChatModel, loadChatModel, type ChatModelFactory, type ModelRequest, type ModelSource } from "./models.js";
export { readEnvironment, type Environment } from "./environment.js";
export type { TokenUsage, UsageByModel } from "./shared/usage.js";
