/**
 * The `model` option every entry point takes, read once: a chat model, a
 * factory, or a model's name. A name written there is taken as the name (as
 * the option that holds names would take it); anything else is refused with a
 * ConfigurationError before any model call, rather than failing later inside
 * the graph.
 */
import { ConfigurationError } from "./errors.js";
import type { ModelSource } from "./models.js";

/**
 * The model source and the model name that `model` and the name option beside it (`nameOption`, e.g.
 * "modelName") say together. A string `model` is the name, unless the name option is given too.
 */
export function readModelOption(model: unknown, name: string | undefined, nameOption: string): { model: ModelSource | undefined; name: string | undefined } {
  if (model === undefined) return { model: undefined, name };
  if (typeof model === "string") {
    if (name !== undefined) {
      throw new ConfigurationError(`model is a name ("${model}") and ${nameOption} is "${name}": give the model's name once, in ${nameOption}`);
    }
    return { model: undefined, name: model };
  }
  if (typeof model === "function" || isChatModel(model)) return { model: model as ModelSource, name };
  throw new ConfigurationError(
    `model must be a chat model (a LangChain chat model instance), a function that returns one, or a model's name ("provider/model", or in ${nameOption}); got ${describe(model)}`,
  );
}

/** A builder's options with a model name given as `model` moved to its default `model` setting. */
export function withModelOption<O extends { model?: ModelSource | string; defaults?: { model?: string } }>(options: O): O & { model?: ModelSource } {
  if (options.model === undefined) return options as O & { model?: ModelSource };
  const { model, name } = readModelOption(options.model, options.defaults?.model, "defaults.model");
  return { ...options, model, ...(name === undefined ? {} : { defaults: { ...options.defaults, model: name } }) };
}

/** What LangChain's chat models have in common that a node calls: `invoke` and `stream`. */
function isChatModel(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const model = value as { invoke?: unknown; stream?: unknown };
  return typeof model.invoke === "function" && typeof model.stream === "function";
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object that is not a chat model (it has no invoke and stream methods)" : `a ${typeof value}`;
}
