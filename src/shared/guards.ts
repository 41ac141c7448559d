/**
 * Readable refusals at the graph's front door. LangGraph checks a run's input
 * and context against the zod schemas before any node runs, but reports a raw
 * ZodError (a JSON dump of issues). This replaces those two checks on a
 * compiled graph with the package's own, which throw a ConfigurationError
 * saying what to change: still before any node, so before any model call.
 */
import { isCommand } from "@langchain/langgraph";
import { z } from "zod";
import type { RunConfigLike } from "../configuration.js";
import { ConfigurationError } from "../errors.js";

/**
 * How graphs declare their context schema's type. LangGraph types `context`
 * as the schema's output (every field required, defaults already applied);
 * callers pass any subset and the package applies the defaults itself.
 */
export type LooseContext = z.ZodObject<{}>;

export interface FrontDoorChecks {
  /** Check a new input (not a resume with null, not a Command). */
  input: (input: Record<string, unknown>) => void;
  /** Check the run configuration (context or configurable). */
  config: (config: RunConfigLike) => void;
}

type Validating = {
  _validateInput?: (input: unknown) => Promise<unknown>;
  _validateContext?: (context: unknown) => Promise<unknown>;
};

export function guardFrontDoor<G extends object>(graph: G, checks: FrontDoorChecks): G {
  const g = graph as G & Validating;
  const validateInput = g._validateInput?.bind(g);
  if (validateInput) {
    g._validateInput = async (input: unknown) => {
      if (input !== null && input !== undefined && !isCommand(input)) {
        if (typeof input !== "object" || Array.isArray(input)) throw new ConfigurationError("The input must be a JSON object.");
        checks.input(input as Record<string, unknown>);
      }
      try {
        return await validateInput(input);
      } catch (error) {
        if (error instanceof z.ZodError) throw new ConfigurationError(z.prettifyError(error));
        throw error;
      }
    };
  }
  if (g._validateContext) {
    g._validateContext = async (context: unknown) => {
      checks.config({ context });
      return context;
    };
  }
  return graph;
}
