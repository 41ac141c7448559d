/**
 * Public API: specs and the validator, the output parser, the graph builders,
 * the Reflexion agent, configuration, the model factory and the state types.
 */
export { ConfigurationError, ProviderError, SpecError } from "./errors.js";

// Specs and validation (pure: no model, no graph)
export { defineSpec, type BusinessRule, type FieldType, type JsonSchema, type Spec, type SpecDefinition } from "./specs/spec.js";
export { builtinSpecs, DEFAULT_SPEC_NAME, resolveSpec, type InlineSpec, type SpecRef } from "./specs/registry.js";
export { describeSpec } from "./specs/describe.js";
export { validateAgainstSpec, DEFAULT_VALIDATION_LIMITS, type ValidationLimits, type ValidationReport } from "./validation/validate.js";
export { extractJson, DEFAULT_JSON_LIMITS, type ExtractResult, type JsonLimits } from "./shared/json.js";

// The validation graph
export { buildValidationGraph, createValidationGraphBuilder, type ValidationGraphOptions } from "./validation/graph.js";
export {
  ValidationState,
  ValidationInputSchema,
  ValidationOutputSchema,
  type AttemptRecord,
  type StopReason,
  type ValidationStateType,
} from "./validation/state.js";

// The Reflexion graph and agent
export { buildReflexionGraph, createReflexionGraphBuilder, type ReflexionGraphOptions } from "./reflexion/graph.js";
export { ReflexionAgent, AgentMemory, type ReflexionAgentOptions, type RunReport, type ConversationTurn } from "./reflexion/agent.js";
export { ReflexionState, ReflexionInputSchema, ReflexionOutputSchema, StepRecordSchema, type TaskOutcome } from "./reflexion/state.js";
export { parseScore, DEFAULT_SCORE } from "./reflexion/score.js";
export {
  LongTermMemory,
  ShortTermMemory,
  getRelevantMemories,
  scanRelevantMemories,
  jaccard,
  words,
  relevance,
  type MemoryEntry,
  type StepRecord,
} from "./reflexion/memory.js";
export { StoreMemory, memoryNamespace } from "./reflexion/memory-store.js";
export { EARLY_STOP_SCORE, pickBest, taskStop } from "./reflexion/loop.js";

// Durable state
export { openPersistence, DatabaseUnavailableError, describeDatabaseUrl, type Persistence, type PersistenceOptions } from "./persistence.js";

// Configuration and models
export {
  ensureValidationConfig,
  ensureReflexionConfig,
  readEnvironment,
  ValidationConfigSchema,
  ReflexionConfigSchema,
  type Environment,
  type ValidationConfig,
  type ReflexionConfig,
} from "./configuration.js";
export { createChatModel, resolveModel, type ChatModelFactory, type ModelRequest, type ModelSource } from "./models.js";
export { addUsage, ZERO_USAGE, type TokenUsage } from "./shared/usage.js";
