/**
 * What the validation graph's nodes take from their builder: the model, the
 * code-defined specs of the runs in progress and the settings the front door
 * checked, made once per builder from its options.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { EnsureOptions } from "../settings.js";
import { CheckedSettings, type ValidationConfigInput } from "./configuration.js";
import { loadChatModel, type ModelRequest, type ModelSource } from "../models.js";
import { HeldSpecs } from "../specs/held.js";
import { isSchemaInCode, resolveSpec, type SpecRef } from "../specs/registry.js";
import { isSpec, type Spec } from "../specs/spec.js";
import type { RuntimeSpecLimits } from "../specs/limits.js";

/** What the validation graph's nodes are built with: the model (or a factory by name) and default settings. */
export interface ValidationNodeOptions extends EnsureOptions<ValidationConfigInput> {
  /** The chat model, or a factory asked per run; defaults to the environment's OpenAI-compatible model. A model's name here is taken as the default `model` setting. */
  model?: ModelSource | string;
  /** Default spec for runs that name none: a built-in name, an inline JSON spec, a Spec from defineSpec (with code rules), or a schema in code (zod, Valibot, ArkType, Effect …). */
  spec?: SpecRef;
  /** Default attempt limit for runs that set none (1-20). */
  maxAttempts?: number;
  /**
   * Limits on the specs runs supply (inline JSON) other than the defaults and the operator's
   * RUNTIME_SPEC_LIMITS, e.g. `{ maxChars: 200_000 }` (see docs/specs.md). A run cannot change them.
   */
  specLimits?: Partial<RuntimeSpecLimits>;
}

/** The configuration defaults a builder was given: its `defaults`, with `spec` and `maxAttempts` on top. */
export function builderDefaults(options: ValidationNodeOptions): EnsureOptions<ValidationConfigInput> {
  const defaults: Partial<ValidationConfigInput> = { ...options.defaults };
  if (options.spec !== undefined) defaults.spec = (builderSpecOf(options) ?? options.spec) as ValidationConfigInput["spec"];
  if (options.maxAttempts !== undefined) defaults.maxAttempts = options.maxAttempts;
  return { env: options.env, defaults };
}

/** The builder's own code-defined spec (a Spec, or a schema in code made into one), if it was given one. */
function builderSpecOf(options: ValidationNodeOptions): Spec | undefined {
  if (options.spec === undefined) return undefined;
  // Resolved when the graph is built, whatever it is: what is not a spec is refused here, not at a run.
  const spec = resolveSpec(options.spec, { specLimits: options.specLimits });
  return isSpec(options.spec) || isSchemaInCode(options.spec) ? spec : undefined;
}

/**
 * One builder's share of what its nodes need (not a run's context: that holds
 * the run's settings). Each node function takes it first; `bind` gives the
 * function LangGraph calls.
 */
export class ValidationNodeContext {
  /** The chat model, or a factory asked per run; undefined: the process environment's model. */
  readonly model: ModelSource | undefined;
  /** The code-defined specs of the runs in progress, the builder's own always among them. */
  readonly specs: HeldSpecs;
  /** The settings the front door checked, which the runs' starts take. */
  readonly settings: CheckedSettings;

  /** Built from options whose `model` is read (withModelOption): a model or a factory, not a name. */
  constructor(options: ValidationNodeOptions & { model?: ModelSource }) {
    // Without a model of its own, a builder given an environment builds the models its runs name with it.
    const { env } = options;
    this.model = options.model ?? (env === undefined ? undefined : (request: ModelRequest) => loadChatModel(request, env));
    this.specs = new HeldSpecs({ own: builderSpecOf(options), specLimits: options.specLimits });
    this.settings = new CheckedSettings(builderDefaults(options));
  }

  /**
   * A node function as LangGraph calls it, with this context. It keeps the
   * function's name: DirectCall names its runnable after it, and LangGraph
   * names an edge's condition by its runnable.
   */
  bind<S, R>(node: (ctx: ValidationNodeContext, state: S, config: LangGraphRunnableConfig) => R): (state: S, config: LangGraphRunnableConfig) => R {
    const bound = (state: S, config: LangGraphRunnableConfig) => node(this, state, config);
    return Object.defineProperty(bound, "name", { value: node.name });
  }
}
