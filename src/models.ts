/**
 * The model factory: the one place chat models are built. A model is named
 * `provider/model` (a provider of the table in ./providers/, then the model's own name;
 * `provider:model` as LangChain's initChatModel writes it) or by a bare name,
 * which means a model on the default provider's server (the OpenAI-compatible one).
 * A provider's client package is an optional peer dependency, loaded only when a
 * name asks for it. Building a graph never needs a key; building a model does,
 * except the built-in simulated model, which only its exact name selects
 * (`LLM_MODEL=simulated`, or a run's model `simulated`).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { readEnvironment, SIMULATED_MODEL, type Environment } from "./environment.js";
import { ConfigurationError, registerSecret } from "./errors.js";
import { DEFAULT_PROVIDER, MODEL_PROVIDERS, modelNameProblem, parseModelName, providerRow, type ModelProvider } from "./providers/index.js";
import { simulatedModelSource } from "./simulated/model.js";

/** What a node asks the factory for. */
export interface ModelRequest {
  model: string;
  temperature?: number;
  /** Which role the model plays (generate, actor, evaluator, reflector), for factories that differ per role. */
  role: string;
}

/** Builds the chat model for a request; may load what it needs first. */
export type ChatModelFactory = Exclude<ModelSource, BaseChatModel>;

/** A graph's model: one chat model for every call, or a factory asked per run and role. */
export type ModelSource = BaseChatModel | ((request: ModelRequest) => BaseChatModel | Promise<BaseChatModel>);

/**
 * Models are built once per distinct setting and reused: a provider's chat model owns an
 * HTTP client, and building one per call costs CPU and memory under load.
 */
const models = new Map<string, BaseChatModel>();
const MAX_CACHED_MODELS = 64;

/**
 * The built-in simulated model, one per role. Its seed is fixed, so a request always gets the same answers;
 * its evaluations and reflections open with a line saying where they came from.
 */
const simulatedModel = simulatedModelSource({
  seed: 1,
  label: `(built-in simulated model "${SIMULATED_MODEL}": seeded rules, not a language model)`,
});

/**
 * The line a server logs at start when its runs would fail for want of a provider (no key, no base URL, and a
 * model other than the simulated one); undefined when runs can call a model.
 */
export function missingProviderNotice(env: Environment = readEnvironment()): string | undefined {
  if (env.model === SIMULATED_MODEL) return undefined;
  // A model of another provider: its run names what it needs (the package, the key) when it starts.
  const { provider = DEFAULT_PROVIDER } = parseModelName(env.model);
  if (provider !== DEFAULT_PROVIDER) return undefined;
  const row = providerRow(provider);
  if (row.missing(env.providers[provider] ?? {}, env.model) === undefined) return undefined;
  return (
    `No model provider is configured, so runs will fail: set ${[...row.env.apiKey, row.env.baseUrl].join(" or ")} (in the environment or .env), ` +
    `or try it keyless with LLM_MODEL=${SIMULATED_MODEL} npm start (the built-in simulated model: seeded rules, not a language model).`
  );
}

/**
 * The chat model a name asks for. A provider's client must have been loaded first (`loadChatModel` does
 * that, and so do the graphs): a `provider/model` name whose client is not loaded yet is a ConfigurationError.
 */
export function createChatModel(request: ModelRequest, env: Environment = readEnvironment()): BaseChatModel {
  return createChatModelWith(defaultClients, request, env);
}

function createChatModelWith(clients: ProviderClients, request: ModelRequest, env: Environment): BaseChatModel {
  // The name alone decides: the simulated model is never a fallback for a missing or failing provider.
  if (request.model === SIMULATED_MODEL) return simulatedModel(request);
  const name = parseModelName(request.model);
  // Only the factory's own clients' models are cached: another set of clients builds its own.
  if (clients !== defaultClients) return buildChatModel(clients, name.provider, name.model, request, env);
  const settings = env.providers[name.provider ?? DEFAULT_PROVIDER] ?? {};
  const key = JSON.stringify([request.model, request.temperature, settings.apiKey, settings.baseUrl, env.timeoutMs, env.maxRetries]);
  const cached = models.get(key);
  if (cached) return cached;
  const model = buildChatModel(clients, name.provider, name.model, request, env);
  if (models.size >= MAX_CACHED_MODELS) models.delete(models.keys().next().value as string);
  models.set(key, model);
  return model;
}

/** The chat model a name asks for, its provider's client loaded first (once). */
export async function loadChatModel(request: ModelRequest, env: Environment = readEnvironment()): Promise<BaseChatModel> {
  return loadChatModelWith(defaultClients, request, env);
}

/** loadChatModel with clients of the caller's own (see ProviderClients). */
export async function loadChatModelWith(clients: ProviderClients, request: ModelRequest, env: Environment = readEnvironment()): Promise<BaseChatModel> {
  await clients.loadFor(request.model);
  return createChatModelWith(clients, request, env);
}

/** A provider whose client package is loaded on first use (an optional peer dependency): its row has `load`. */
type LoadedProvider = ModelProvider;

/** How each optional client package is imported (a provider with none here needs no loading). */
type ClientImporters = Partial<Record<LoadedProvider, () => Promise<unknown>>>;

/** Each optional client, imported only when a name asks for it, as its row imports it (literal specifiers, so bundlers see them). */
const IMPORTERS = Object.fromEntries(
  Object.entries(MODEL_PROVIDERS).flatMap(([provider, row]) => ("load" in row ? [[provider, row.load]] : [])),
) as ClientImporters;

/**
 * The optional provider clients, each loaded once (or its failure kept). The factory's own instance imports
 * them by name; another instance with its own importers (a package made missing, say) shares nothing with it,
 * so no module registry needs to be touched to try one.
 */
export class ProviderClients {
  private readonly loaded: Partial<Record<LoadedProvider, unknown>> = {};
  private readonly loading = new Map<LoadedProvider, Promise<void>>();
  private readonly failed = new Map<LoadedProvider, ConfigurationError>();

  constructor(private readonly importers: ClientImporters = IMPORTERS) {}

  /**
   * Loads the client package a model name needs (none for bare and simulated names, nor for a provider whose client this package depends on). A package
   * that cannot be loaded is a ConfigurationError saying what to install.
   */
  async loadFor(modelName: string): Promise<void> {
    const { provider } = parseModelName(modelName);
    if (provider === undefined || !Object.hasOwn(this.importers, provider)) return;
    let pending = this.loading.get(provider);
    if (pending === undefined) {
      pending = this.importers[provider]!().then(
        (module: unknown) => void (this.loaded[provider] = module),
        (error: unknown) => void this.failed.set(provider, missingClient(provider, error)),
      );
      this.loading.set(provider, pending);
    }
    await pending;
    const failure = this.failed.get(provider);
    if (failure) throw failure;
  }

  /** A loaded client package; a ConfigurationError when it is not loaded (yet, or at all). */
  get(provider: LoadedProvider, modelName: string): unknown {
    const module = this.loaded[provider];
    if (module !== undefined) return module;
    throw (
      this.failed.get(provider) ??
      new ConfigurationError(
        `The ${provider} client is loaded on first use: build "${modelName}" with await loadChatModel(…) (the graphs do this themselves), not createChatModel.`,
      )
    );
  }
}

/** The factory's own clients, imported by name. */
const defaultClients = new ProviderClients();

/** The error for a client package that could not be loaded: which package, the tested release, and why. */
function missingClient(provider: LoadedProvider, error: unknown): ConfigurationError {
  const { package: name, tested } = MODEL_PROVIDERS[provider];
  const detail = (error instanceof Error ? error.message : String(error)).split("\n")[0].slice(0, 300);
  return new ConfigurationError(
    `Models named ${provider}/… need the package ${name}, which could not be loaded (${detail}). Install it beside this package: npm install ${name}@${tested}`,
  );
}

function buildChatModel(clients: ProviderClients, provider: ModelProvider | undefined, model: string, request: ModelRequest, env: Environment): BaseChatModel {
  // The settings refuse such a name; a factory of the caller's own may not have asked them.
  const problem = modelNameProblem(request.model);
  if (problem !== undefined) throw new ConfigurationError(`${problem}.`);
  const row = providerRow(provider);
  const settings = env.providers[provider ?? DEFAULT_PROVIDER] ?? {};
  const missing = row.missing(settings, request.model);
  if (missing !== undefined) {
    // The default provider's message is the one a first run meets: it names the way to try without a provider.
    const keyless = `To try the graphs without a provider, LLM_MODEL=${SIMULATED_MODEL} selects the built-in simulated model (seeded rules, not a language model).`;
    throw new ConfigurationError(provider === undefined || provider === DEFAULT_PROVIDER ? `${missing} ${keyless}` : missing);
  }
  registerSecret(settings.apiKey);
  const module = row.load === undefined || provider === undefined ? undefined : clients.get(provider, request.model);
  return row.build(module as never, {
    model,
    name: request.model,
    temperature: request.temperature,
    settings,
    timeoutMs: env.timeoutMs,
    maxRetries: env.maxRetries,
  });
}

/**
 * The chat model a node should call for this run and role. The provider's client a name needs is
 * loaded first, also for a caller's own factory (which may build the model with createChatModel).
 */
export async function resolveModel(source: ModelSource | undefined, request: ModelRequest): Promise<BaseChatModel> {
  if (source === undefined) return loadChatModel(request);
  if (typeof source !== "function") return source;
  // A factory may build such a model some other way: a client that cannot be loaded is its business.
  await defaultClients.loadFor(request.model).catch(() => undefined);
  return source(request);
}
