/**
 * The model factory: the one place chat models are built. Any OpenAI-compatible
 * server works (OpenAI, Ollama, vLLM, LM Studio, llama.cpp) through
 * OPENAI_BASE_URL. Building a graph never needs a key; building a model does.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI } from "@langchain/openai";
import { readEnvironment, type Environment } from "./configuration.js";
import { ConfigurationError } from "./errors.js";

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

export function createChatModel(request: ModelRequest, env: Environment = readEnvironment()): BaseChatModel {
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
        "e.g. http://localhost:11434/v1 for Ollama) in the environment or in .env.",
    );
  }
  return new ChatOpenAI({
    model: request.model,
    temperature: request.temperature,
    // Local OpenAI-compatible servers ignore the key, but the client requires one.
    apiKey: env.openaiApiKey ?? "not-needed",
    configuration: env.openaiBaseUrl ? { baseURL: env.openaiBaseUrl } : undefined,
    timeout: env.timeoutMs,
    maxRetries: env.maxRetries,
    streamUsage: true,
  });
}

/** The chat model a node should call for this run and role. */
export function resolveModel(source: ModelSource | undefined, request: ModelRequest): BaseChatModel {
  if (source === undefined) return createChatModel(request);
  if (typeof source === "function") return source(request);
  return source;
}
