/**
 * The model factory: the one place chat models are built. A model is named
 * `provider/model` (`anthropic/…`, `ollama/…`, `google-genai/…`, `openai/…`;
 * `provider:model` as LangChain's initChatModel writes it) or by a bare name,
 * which means a model on the OpenAI-compatible server (OpenAI, or any server
 * OPENAI_BASE_URL names). A provider's client package is an optional peer
 * dependency, loaded only when a name asks for it. Building a graph never
 * needs a key; building a model does, except the built-in simulated model,
 * which only its exact name selects (`LLM_MODEL=simulated`, or a run's model `simulated`).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage, BaseMessageChunk } from "@langchain/core/messages";
import { ChatOpenAI, ChatOpenAICompletions, type ChatOpenAIFields } from "@langchain/openai";
import { readEnvironment, SIMULATED_MODEL, type Environment } from "./environment.js";
import { ConfigurationError, ModelTimeoutError, registerSecret } from "./errors.js";
import { MODEL_PROVIDERS, modelNameProblem, parseModelName, type ModelProvider } from "./model-names.js";
import { simulatedModelSource } from "./simulated/model.js";

/** What a node asks the factory for. */
export interface ModelRequest {
  model: string;
  temperature?: number;
  /** Which role the model plays (generate, actor, evaluator, reflector), for factories that differ per role. */
  role: string;
}

/** Builds the chat model for a request; may load what it needs first. */
export type ChatModelFactory = (request: ModelRequest) => BaseChatModel | Promise<BaseChatModel>;

/** A graph's model: one chat model for every call, or a factory asked per run and role. */
export type ModelSource = BaseChatModel | ChatModelFactory;

/**
 * Models are built once per distinct setting and reused: a ChatOpenAI owns an
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
  if (env.openaiApiKey || env.openaiBaseUrl || env.model === SIMULATED_MODEL) return undefined;
  // A model of another provider: its run names what it needs (the package, the key) when it starts.
  const { provider } = parseModelName(env.model);
  if (provider !== undefined && provider !== "openai") return undefined;
  return (
    `No model provider is configured, so runs will fail: set OPENAI_API_KEY or OPENAI_BASE_URL (in the environment or .env), ` +
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
  const key = JSON.stringify([request.model, request.temperature, ...settingsFor(name.provider, env), env.timeoutMs, env.maxRetries]);
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

/** The environment settings a provider's model is built from (part of the cache key). */
function settingsFor(provider: ModelProvider | undefined, env: Environment): unknown[] {
  switch (provider) {
    case "anthropic":
      return [env.anthropicApiKey, env.anthropicBaseUrl];
    case "ollama":
      return [env.ollamaBaseUrl];
    case "google-genai":
      return [env.googleApiKey, env.googleBaseUrl];
    default:
      return [env.openaiApiKey, env.openaiBaseUrl];
  }
}

type ClientModules = {
  anthropic: typeof import("@langchain/anthropic");
  ollama: typeof import("@langchain/ollama");
  "google-genai": typeof import("@langchain/google-genai");
};
type LoadedProvider = keyof ClientModules;

/** How each optional client package is imported. */
type ClientImporters = { [P in LoadedProvider]: () => Promise<ClientModules[P]> };

/** Each optional client, imported only when a name asks for it (literal specifiers, so bundlers see them). */
const IMPORTERS: ClientImporters = {
  anthropic: () => import("@langchain/anthropic"),
  ollama: () => import("@langchain/ollama"),
  "google-genai": () => import("@langchain/google-genai"),
};

/**
 * The optional provider clients, each loaded once (or its failure kept). The factory's own instance imports
 * them by name; another instance with its own importers (a package made missing, say) shares nothing with it,
 * so no module registry needs to be touched to try one.
 */
export class ProviderClients {
  private readonly loaded: Partial<ClientModules> = {};
  private readonly loading = new Map<LoadedProvider, Promise<void>>();
  private readonly failed = new Map<LoadedProvider, ConfigurationError>();

  constructor(private readonly importers: ClientImporters = IMPORTERS) {}

  /**
   * Loads the client package a model name needs (none for bare, `openai/` and simulated names). A package
   * that cannot be loaded is a ConfigurationError saying what to install.
   */
  async loadFor(modelName: string): Promise<void> {
    const { provider } = parseModelName(modelName);
    if (provider === undefined || provider === "openai") return;
    let pending = this.loading.get(provider);
    if (pending === undefined) {
      pending = (this.importers[provider] as () => Promise<unknown>)().then(
        (module) => void ((this.loaded as Record<string, unknown>)[provider] = module),
        (error: unknown) => void this.failed.set(provider, missingClient(provider, error)),
      );
      this.loading.set(provider, pending);
    }
    await pending;
    const failure = this.failed.get(provider);
    if (failure) throw failure;
  }

  /** A loaded client package; a ConfigurationError when it is not loaded (yet, or at all). */
  get<P extends LoadedProvider>(provider: P, modelName: string): ClientModules[P] {
    const module = this.loaded[provider];
    if (module !== undefined) return module as ClientModules[P];
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
  switch (provider) {
    case "anthropic": {
      if (!env.anthropicApiKey && !env.anthropicBaseUrl) {
        throw new ConfigurationError(
          `"${request.model}" is an Anthropic model: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a server other than Anthropic's) in the process environment.`,
        );
      }
      registerSecret(env.anthropicApiKey);
      const { ChatAnthropic } = clients.get("anthropic", request.model);
      return new ChatAnthropic({
        model,
        temperature: request.temperature,
        apiKey: env.anthropicApiKey ?? "not-needed",
        ...(env.anthropicBaseUrl ? { anthropicApiUrl: env.anthropicBaseUrl } : {}),
        maxRetries: env.maxRetries,
        streamUsage: true,
        clientOptions: { fetch: fetchWithDeadline(env.timeoutMs), timeout: env.timeoutMs },
      });
    }
    case "ollama": {
      const { ChatOllama } = clients.get("ollama", request.model);
      // No key: Ollama serves on http://127.0.0.1:11434 unless OLLAMA_BASE_URL says otherwise.
      return new ChatOllama({
        model,
        temperature: request.temperature,
        ...(env.ollamaBaseUrl ? { baseUrl: env.ollamaBaseUrl } : {}),
        maxRetries: env.maxRetries,
        fetch: fetchWithDeadline(env.timeoutMs, fetchSayingOllamaErrors()),
      });
    }
    case "google-genai": {
      if (!env.googleApiKey)
        throw new ConfigurationError(`"${request.model}" is a Google Gemini model: set GOOGLE_API_KEY (or GEMINI_API_KEY) in the process environment.`);
      registerSecret(env.googleApiKey);
      const { ChatGoogleGenerativeAI } = clients.get("google-genai", request.model);
      const gemini = new ChatGoogleGenerativeAI({
        model,
        temperature: request.temperature,
        apiKey: env.googleApiKey,
        ...(env.googleBaseUrl ? { baseUrl: env.googleBaseUrl } : {}),
        maxRetries: env.maxRetries,
      });
      return withBoundedGeminiClient(gemini, env.timeoutMs);
    }
    default:
      return buildOpenAIModel(model, request, env);
  }
}

function buildOpenAIModel(model: string, request: ModelRequest, env: Environment): BaseChatModel {
  if (!env.openaiApiKey && !env.openaiBaseUrl) {
    throw new ConfigurationError(
      "No model provider is configured: set OPENAI_API_KEY (for OpenAI), or OPENAI_BASE_URL (any OpenAI-compatible server, " +
        "e.g. http://localhost:11434/v1 for Ollama) in the process environment (`npm start` and the command line also read them from ./.env; embedded code does not), " +
        "or name another provider's model, e.g. anthropic/claude-sonnet-4-5 with ANTHROPIC_API_KEY. " +
        `To try the graphs without a provider, LLM_MODEL=${SIMULATED_MODEL} selects the built-in simulated model (seeded rules, not a language model).`,
    );
  }
  registerSecret(env.openaiApiKey);
  const fields: ChatOpenAIFields = {
    model,
    temperature: request.temperature,
    // Local OpenAI-compatible servers ignore the key, but the client requires one.
    apiKey: env.openaiApiKey ?? "not-needed",
    // The client's own timeout stops at the response headers; the fetch below bounds the whole answer.
    configuration: { ...(env.openaiBaseUrl ? { baseURL: env.openaiBaseUrl } : {}), fetch: fetchWithDeadline(env.timeoutMs) },
    timeout: env.timeoutMs,
    maxRetries: env.maxRetries,
    // Token usage comes from the provider (`stream_options.include_usage` when streaming). `streaming`
    // stays unset: `true` makes invoke() estimate tokens with tiktoken, whose data file it downloads from
    // tiktoken.pages.dev on first use (a minute's stall offline); `false` turns streaming off altogether
    // (`disableStreaming`). Unset, LangGraph's stream modes call the model's stream path, which counts nothing locally.
    streamUsage: true,
  };
  return new ChatOpenAI({ ...fields, completions: new RefusalAwareCompletions(fields) });
}

/**
 * Chat Completions with the provider's refusal kept. @langchain/openai 1.5.8 drops OpenAI's
 * `message.refusal` (and the streamed `delta.refusal` pieces): a refused answer would arrive as empty
 * content, indistinguishable from a fault. Here it becomes `additional_kwargs.refusal` (streamed pieces
 * are joined when the chunks merge), where LangChain's Responses API converter puts it too.
 */
class RefusalAwareCompletions extends ChatOpenAICompletions {
  protected override _convertCompletionsMessageToBaseMessage(
    message: Parameters<ChatOpenAICompletions["_convertCompletionsMessageToBaseMessage"]>[0],
    rawResponse: Parameters<ChatOpenAICompletions["_convertCompletionsMessageToBaseMessage"]>[1],
  ): BaseMessage {
    return withRefusal(super._convertCompletionsMessageToBaseMessage(message, rawResponse), (message as { refusal?: unknown }).refusal);
  }

  protected override _convertCompletionsDeltaToBaseMessageChunk(
    delta: Record<string, any>,
    rawResponse: Parameters<ChatOpenAICompletions["_convertCompletionsDeltaToBaseMessageChunk"]>[1],
    defaultRole?: Parameters<ChatOpenAICompletions["_convertCompletionsDeltaToBaseMessageChunk"]>[2],
  ): BaseMessageChunk {
    return withRefusal(super._convertCompletionsDeltaToBaseMessageChunk(delta, rawResponse, defaultRole), delta.refusal);
  }
}

function withRefusal<M extends BaseMessage>(message: M, refusal: unknown): M {
  if (typeof refusal === "string" && refusal.length > 0) message.additional_kwargs = { ...message.additional_kwargs, refusal };
  return message;
}

/**
 * `fetch` for the model client with one deadline per HTTP request that covers the whole answer:
 * headers, body and every streamed chunk. A request still unfinished after `timeoutMs` fails with a
 * ModelTimeoutError (the body or the stream reader rejects with it), so a server that stalls after its
 * headers or drips its answer cannot hang a run.
 */
export function fetchWithDeadline(timeoutMs: number, fetchImpl: typeof fetch = (...args) => fetch(...args)): typeof fetch {
  return async (input, init) => {
    const deadline = startDeadline(timeoutMs, init?.signal ?? undefined);
    let response: Response;
    try {
      response = await fetchImpl(input, { ...init, signal: deadline.signal });
    } catch (error) {
      deadline.clear();
      throw error;
    }
    deadline.streamed = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    return settledWith(response, deadline.clear);
  };
}

/** Longest NDJSON line read for an error: an error line is short, and a longer line (a large tool call) is passed on unread. */
const MAX_WATCHED_LINE_CHARS = 64 * 1024;

/**
 * `fetch` for ChatOllama that makes a fault reported inside a stream say the provider's words. Ollama (or a
 * proxy in front of it) reports a fault mid-answer as an NDJSON line `{"error": …}`, and the ollama client
 * (0.6.4) throws `new Error(line.error)`: "[object Object]" when the error is an object (`{"message": …}`).
 * The body is passed on as it came until a line whose own field `error` is set; that ends the body with a
 * ResponseError (the client's name for a provider's error) whose message is the provider's: the error's
 * `message` when it has one, the error itself when it is text, else its JSON (bounded). The client then
 * throws that error as it is.
 */
export function fetchSayingOllamaErrors(fetchImpl: typeof fetch = (...args) => fetch(...args)): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (!response.ok || response.body === null) return response;
    const source = response.body.getReader();
    const decoder = new TextDecoder();
    /** The line read so far, unless it grew past the watched length (then it is skipped to its end). */
    let tail = "";
    let skipping = false;
    const errorIn = (text: string, last: boolean): Error | undefined => {
      const lines = text.split("\n");
      const rest = last ? "" : lines.pop()!;
      for (const [i, line] of lines.entries()) {
        const skipped = i === 0 && skipping;
        if (!skipped && line.includes('"error"')) {
          const error = providerErrorOf(line);
          if (error !== undefined) return error;
        }
      }
      if (lines.length > 0) skipping = false;
      if (skipping || rest.length > MAX_WATCHED_LINE_CHARS) {
        skipping = true;
        tail = "";
      } else tail = rest;
      return undefined;
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const chunk = await source.read();
        const error = errorIn(tail + (chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true })), chunk.done);
        if (error !== undefined) {
          controller.error(error);
          await source.cancel(error).catch(() => undefined);
        } else if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel(reason) {
        return source.cancel(reason);
      },
    });
    const watched = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    Object.defineProperty(watched, "url", { value: response.url });
    return watched;
  };
}

/** An NDJSON line's `error`, as an error that says it; undefined when the line is not an error line. */
function providerErrorOf(line: string): Error | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object" || !Object.hasOwn(parsed, "error")) return undefined;
  const field = (parsed as { error: unknown }).error;
  const message = (field as { message?: unknown } | null)?.message;
  const said = typeof field === "string" ? field : typeof message === "string" ? message : JSON.stringify(field);
  return Object.assign(new Error(said.length > 0 ? said.slice(0, 2_000) : "the provider reported an error with no message"), {
    name: "ResponseError",
    error: field,
  });
}

/**
 * One request's deadline: a signal that aborts with a ModelTimeoutError after `timeoutMs` (or with the
 * caller's own signal), and `clear` for when the request has settled. The timer is unref'd: a finished
 * request's deadline must not keep a process (the CLI) alive.
 */
function startDeadline(timeoutMs: number, callerSignal: AbortSignal | undefined) {
  const controller = new AbortController();
  const deadline = {
    /** The answer had started streaming when the deadline passed (a client cannot retry it, the graph node may). */
    streamed: false,
    signal: callerSignal ? AbortSignal.any([callerSignal, controller.signal]) : controller.signal,
    clear: () => clearTimeout(timer),
    /** The deadline's own error when it is what ended the request, else the error as it came. */
    explain: (error: unknown): unknown => (controller.signal.aborted ? controller.signal.reason : error),
  };
  const timer = setTimeout(() => controller.abort(new ModelTimeoutError(timeoutMs, deadline.streamed)), timeoutMs);
  timer.unref();
  return deadline;
}

/** What ChatGoogleGenerativeAI (2.3.2) calls on its `client`, @google/generative-ai's GenerativeModel. */
interface GeminiClient {
  generateContent(request: unknown, options?: { signal?: AbortSignal }): Promise<unknown>;
  generateContentStream(request: unknown, options?: { signal?: AbortSignal }): Promise<{ stream: AsyncIterable<unknown>; response: Promise<unknown> }>;
}

/**
 * A Gemini chat model whose requests are bounded and whose stray promise is held. @google/generative-ai
 * calls the global `fetch` (no fetch option) and takes only a timeout that covers nothing after the headers
 * and whose timer is never cleared; and its streamed call returns, beside the stream, a promise of the
 * whole answer read from a tee of the same body, which @langchain/google-genai never reads: when the body
 * fails (a reset, an abort, a stall cut off) that promise rejects with nobody listening, and Node ends the
 * process. So the model's `client` (the GenerativeModel it builds, which its own useCachedContent replaces
 * the same way) is given a wrapper that delegates to it: each request gets the whole-answer deadline as its
 * signal, the stream's errors become the deadline's when it passed, and the unread promise is handled (its
 * failure is the stream's own, which the stream reports).
 */
function withBoundedGeminiClient<M extends BaseChatModel>(model: M, timeoutMs: number): M {
  const client = (model as unknown as { client?: GeminiClient }).client;
  if (client === undefined || typeof client.generateContentStream !== "function" || typeof client.generateContent !== "function") {
    throw new ConfigurationError(
      `This release of ${MODEL_PROVIDERS["google-genai"].package} builds its client differently from ${MODEL_PROVIDERS["google-genai"].tested}, the release this package bounds: install that one.`,
    );
  }
  const bounded: GeminiClient = Object.assign(Object.create(client) as GeminiClient, {
    async generateContent(request: unknown, options?: { signal?: AbortSignal }) {
      const deadline = startDeadline(timeoutMs, options?.signal);
      try {
        return await client.generateContent(request, { ...options, signal: deadline.signal });
      } catch (error) {
        throw deadline.explain(error);
      } finally {
        deadline.clear();
      }
    },
    async generateContentStream(request: unknown, options?: { signal?: AbortSignal }) {
      const deadline = startDeadline(timeoutMs, options?.signal);
      let result: Awaited<ReturnType<GeminiClient["generateContentStream"]>>;
      try {
        result = await client.generateContentStream(request, { ...options, signal: deadline.signal });
      } catch (error) {
        deadline.clear();
        throw deadline.explain(error);
      }
      deadline.streamed = true;
      result.response.catch(() => undefined);
      return { stream: deadlined(result.stream, deadline), response: result.response };
    },
  });
  (model as unknown as { client: GeminiClient }).client = bounded;
  return model;
}

/** A stream read under its request's deadline, released when the stream ends, fails or is left. */
async function* deadlined<T>(stream: AsyncIterable<T>, deadline: ReturnType<typeof startDeadline>): AsyncGenerator<T> {
  try {
    for await (const item of stream) yield item;
  } catch (error) {
    throw deadline.explain(error);
  } finally {
    deadline.clear();
  }
}

/**
 * The response, with `done` called once its body has ended, failed or been cancelled (at once when it
 * has none): a finished request keeps no deadline timer, and so nothing the timer holds (its abort
 * signal, the caller's context).
 */
function settledWith(response: Response, done: () => void): Response {
  if (response.body === null) {
    done();
    return response;
  }
  const source = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof source.read>>;
      try {
        chunk = await source.read();
      } catch (error) {
        done();
        controller.error(error);
        return;
      }
      if (chunk.done) {
        done();
        controller.close();
      } else controller.enqueue(chunk.value);
    },
    cancel(reason) {
      done();
      return source.cancel(reason);
    },
  });
  const settled = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  // The client names the URL in its logs and errors.
  Object.defineProperty(settled, "url", { value: response.url });
  return settled;
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
