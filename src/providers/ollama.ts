/**
 * Ollama's own API through @langchain/ollama: one row of the providers' table (./index.ts). (Its
 * OpenAI-compatible /v1 endpoint is reached with a bare model name and a base URL instead.)
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { fetchWithDeadline } from "./deadline.js";
import { sendable, type ProviderRow } from "./provider.js";

type Module = typeof import("@langchain/ollama");

export const ollama: ProviderRow<Module> = {
  title: "Ollama",
  example: "llama3.2",
  help: [["OLLAMA_BASE_URL", "for ollama/… models (default http://127.0.0.1:11434)"]],
  package: "@langchain/ollama",
  tested: "1.3.0",
  client: "ollama",
  env: { apiKey: [], baseUrl: "OLLAMA_BASE_URL" },
  defaultBaseUrl: "http://127.0.0.1:11434",
  // No key: it serves on http://127.0.0.1:11434 unless OLLAMA_BASE_URL says otherwise.
  missing: () => undefined,
  load: () => import("@langchain/ollama"),
  build({ ChatOllama }, request): BaseChatModel {
    return new ChatOllama({
      model: request.model,
      temperature: request.temperature,
      ...(request.settings.baseUrl ? { baseUrl: request.settings.baseUrl } : {}),
      maxRetries: request.maxRetries,
      fetch: fetchWithDeadline(request.timeoutMs),
    });
  },
  stops: [{ field: "done_reason", finished: ["stop"], cut: ["length"], withheld: [] }],
  auto: "json_schema",
  autoSays: "format",
  modes: {
    json_object: () => ({ options: { format: "json" } }),
    json_schema: (request) => ({ options: { format: sendable(request.schema) } }),
  },
};
