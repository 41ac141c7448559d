/**
 * The model factory: the one place chat models are built. Any OpenAI-compatible
 * server works (OpenAI, Ollama, vLLM, LM Studio, llama.cpp) through
 * OPENAI_BASE_URL. Building a graph never needs a key; building a model does,
 * except the built-in simulated model, which only its exact name selects
 * (`LLM_MODEL=simulated`, or a run's model `simulated`).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage, BaseMessageChunk } from "@langchain/core/messages";
import { ChatOpenAI, ChatOpenAICompletions, type ChatOpenAIFields } from "@langchain/openai";
import { readEnvironment, SIMULATED_MODEL, type Environment } from "./environment.js";
import { ConfigurationError, ModelTimeoutError, registerSecret } from "./errors.js";
import { simulatedModelSource } from "./simulated/model.js";

/** What a node asks the factory for. */
export interface ModelRequest {
  model: string;
  temperature?: number;
  /** Which role the model plays (generate, actor, evaluator, reflector), for factories that differ per role. */
  role: string;
}

export type ChatModelFactory = (request: ModelRequest) => BaseChatModel;

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
  return (
    `No model provider is configured, so runs will fail: set OPENAI_API_KEY or OPENAI_BASE_URL (in the environment or .env), ` +
    `or try it keyless with LLM_MODEL=${SIMULATED_MODEL} npm start (the built-in simulated model: seeded rules, not a language model).`
  );
}

export function createChatModel(request: ModelRequest, env: Environment = readEnvironment()): BaseChatModel {
  // The name alone decides: the simulated model is never a fallback for a missing or failing provider.
  if (request.model === SIMULATED_MODEL) return simulatedModel(request);
  const key = JSON.stringify([request.model, request.temperature, env.openaiApiKey, env.openaiBaseUrl, env.timeoutMs, env.maxRetries]);
  const cached = models.get(key);
  if (cached) return cached;
  const model = buildChatModel(request, env);
  if (models.size >= MAX_CACHED_MODELS) models.delete(models.keys().next().value as string);
  models.set(key, model);
  return model;
}

function buildChatModel(request: ModelRequest, env: Environment): BaseChatModel {
  if (!env.openaiApiKey && !env.openaiBaseUrl) {
    throw new ConfigurationError(
      "No model provider is configured: set OPENAI_API_KEY (for OpenAI), or OPENAI_BASE_URL (any OpenAI-compatible server, " +
        "e.g. http://localhost:11434/v1 for Ollama) in the process environment (`npm start` and the command line also read them from ./.env; embedded code does not). " +
        `To try the graphs without a provider, LLM_MODEL=${SIMULATED_MODEL} selects the built-in simulated model (seeded rules, not a language model).`,
    );
  }
  registerSecret(env.openaiApiKey);
  const fields: ChatOpenAIFields = {
    model: request.model,
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
export class RefusalAwareCompletions extends ChatOpenAICompletions {
  protected override _convertCompletionsMessageToBaseMessage(message: Parameters<ChatOpenAICompletions["_convertCompletionsMessageToBaseMessage"]>[0], rawResponse: Parameters<ChatOpenAICompletions["_convertCompletionsMessageToBaseMessage"]>[1]): BaseMessage {
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
    const deadline = new AbortController();
    let streamed = false;
    // unref: a finished request's deadline must not keep a process (the CLI) alive.
    const timer = setTimeout(() => deadline.abort(new ModelTimeoutError(timeoutMs, streamed)), timeoutMs);
    timer.unref();
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
    let response: Response;
    try {
      response = await fetchImpl(input, { ...init, signal });
    } catch (error) {
      clearTimeout(timer);
      throw error;
    }
    streamed = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    return settledWith(response, () => clearTimeout(timer));
  };
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

/** The chat model a node should call for this run and role. */
export function resolveModel(source: ModelSource | undefined, request: ModelRequest): BaseChatModel {
  if (source === undefined) return createChatModel(request);
  if (typeof source === "function") return source(request);
  return source;
}
