/**
 * The validation graph's nodes and edges with the state declared as a
 * LangGraph Annotation instead of zod objects: LangGraph then does not
 * validate node updates against the state schema. Used only to measure what
 * that validation costs; the package's graph keeps zod (it gives Studio its
 * forms, with descriptions and defaults).
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { addUsage, ZERO_USAGE, type TokenUsage } from "../src/shared/usage.js";
import { makeValidationNodes, type ValidationNodeOptions } from "../src/validation/nodes.js";
import type { AttemptRecord, StopReason, ValidationStateType } from "../src/validation/state.js";

const last = <T>(fallback: () => T) => Annotation<T>({ reducer: (_: T, next: T) => next, default: fallback });

export const AnnotationValidationState = Annotation.Root({
  request: last<string>(() => ""),
  success: last<boolean>(() => false),
  result: last<unknown>(() => null),
  errors: last<string[]>(() => []),
  attempts: last<number>(() => 0),
  stopReason: last<StopReason | null>(() => null),
  spec: last<string>(() => ""),
  history: Annotation<AttemptRecord[]>({ reducer: (list, next) => list.concat(next), default: () => [] }),
  usage: Annotation<TokenUsage>({ reducer: addUsage, default: () => ({ ...ZERO_USAGE }) }),
  draft: last<{ output: string; usage: TokenUsage } | null>(() => null),
});

export function buildAnnotationValidationGraph(options: ValidationNodeOptions) {
  const { generate, validate, routeAfterValidate } = makeValidationNodes(options);
  // The nodes take (state, config); LangGraph passes the config as the second argument whatever the declared type.
  type State = typeof AnnotationValidationState.State;
  type Update = typeof AnnotationValidationState.Update;
  type Node = (state: State) => Update | Promise<Update>;
  return new StateGraph(AnnotationValidationState)
    .addNode("generate", generate as unknown as Node)
    .addNode("validate", validate as unknown as Node)
    .addEdge(START, "generate")
    .addEdge("generate", "validate")
    .addConditionalEdges("validate", (state) => routeAfterValidate(state as unknown as ValidationStateType), { generate: "generate", [END]: END })
    .compile();
}
