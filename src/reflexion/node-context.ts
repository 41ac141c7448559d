/**
 * What the Reflexion graph's nodes (and ReflexionAgent's methods) take from
 * their builder: the model, the limits on run-time specs, the store and the
 * default settings, made once per builder from its options, as the
 * validation graph's ValidationNodeContext is.
 */
import type { BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import { loadChatModel, type ModelRequest, type ModelSource } from "../models.js";
import type { EnsureOptions, RunConfigLike } from "../settings.js";
import type { RuntimeSpecLimits } from "../specs/limits.js";
import { ensureReflexionConfig, type ReflexionConfig, type ReflexionConfigInput } from "./configuration.js";

/** What the Reflexion graph's nodes are built with: the model (or a factory per role) and default settings. */
export interface ReflexionNodeOptions extends EnsureOptions<ReflexionConfigInput> {
  /** The chat model for every role, or a factory asked per run and role. A model's name here is taken as the default `model` setting. */
  model?: ModelSource | string;
  /** Limits on the specs runs supply (inline JSON) other than the defaults and the operator's RUNTIME_SPEC_LIMITS; a run cannot change them. */
  specLimits?: Partial<RuntimeSpecLimits>;
}

/**
 * One builder's share of what the Reflexion nodes need (not a run's context:
 * that holds the run's settings). Each node function takes it first; `bind`
 * gives the function LangGraph calls.
 */
export class ReflexionNodeContext {
  /** The chat model, or a factory asked per run and role; undefined: the process environment's model. */
  readonly model: ModelSource | undefined;
  /** Limits on the specs runs supply. */
  readonly specLimits: Partial<RuntimeSpecLimits> | undefined;
  /** Long-term memory's store when the builder was given one (else the run's, else the process's). */
  readonly store: BaseStore | undefined;
  readonly #defaults: EnsureOptions<ReflexionConfigInput>;

  /** Built from options whose `model` is read (withModelOption): a model or a factory, not a name. */
  constructor(options: ReflexionNodeOptions & { model?: ModelSource }, store?: BaseStore) {
    // Without a model of its own, a builder given an environment builds the models its runs name with it.
    const { env } = options;
    this.model = options.model ?? (env === undefined ? undefined : (request: ModelRequest) => loadChatModel(request, env));
    this.specLimits = options.specLimits;
    this.store = store;
    this.#defaults = { env: options.env, defaults: options.defaults };
  }

  /** A run's settings: what its config sets, over the builder's defaults. */
  settings(config?: RunConfigLike): ReflexionConfig {
    return ensureReflexionConfig(config, this.#defaults);
  }

  /**
   * A node function as LangGraph calls it, with this context. It keeps the
   * function's name: DirectCall names its runnable after it.
   */
  bind<S, R>(node: (ctx: ReflexionNodeContext, state: S, config: LangGraphRunnableConfig) => R): (state: S, config: LangGraphRunnableConfig) => R {
    const bound = (state: S, config: LangGraphRunnableConfig) => node(this, state, config);
    return Object.defineProperty(bound, "name", { value: node.name });
  }
}
