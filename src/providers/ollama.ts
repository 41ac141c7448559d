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
  traced: "ollama",
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
      fetch: fetchWithDeadline(request.timeoutMs, fetchSayingOllamaErrors()),
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
