/**
 * Google's Gemini API through @langchain/google-genai: one row of the providers' table (./index.ts).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ConfigurationError } from "../errors.js";
import { deadlined, startDeadline } from "./deadline.js";
import { GEMINI_ENV, GEMINI_STOPS, geminiKeyMissing } from "./google.js";
import { sendable, type ProviderRow } from "./provider.js";
import { schemaSubset, type SchemaProfile } from "./schema-subset.js";

const PACKAGE = "@langchain/google-genai";
const TESTED = "2.3.2";

/** Gemini's Schema (an OpenAPI 3.0 subset), which `responseSchema` takes. */
const PROFILE: SchemaProfile = {
  keep: new Set([
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
  ]),
};

type Module = typeof import("@langchain/google-genai");

export const googleGenai: ProviderRow<Module> = {
  title: "Gemini",
  example: "gemini-2.5-flash",
  // The google row's line names these variables for both rows.
  help: [],
  package: PACKAGE,
  tested: TESTED,
  client: "googlegenerativeai",
  traced: "google_genai",
  env: GEMINI_ENV,
  defaultBaseUrl: "https://generativelanguage.googleapis.com",
  missing: geminiKeyMissing,
  load: () => import("@langchain/google-genai"),
  build({ ChatGoogleGenerativeAI }, request): BaseChatModel {
    const gemini = new ChatGoogleGenerativeAI({
      model: request.model,
      temperature: request.temperature,
      apiKey: request.settings.apiKey,
      ...(request.settings.baseUrl ? { baseUrl: request.settings.baseUrl } : {}),
      maxRetries: request.maxRetries,
    });
    return withBoundedGeminiClient(gemini, request.timeoutMs);
  },
  stops: GEMINI_STOPS,
  // The name goes into the request's URL path (`/v1beta/models/{name}:generateContent`): a model's own name, or a tuned model's.
  urlName: {
    pattern: /^(?:(?:models|tunedModels)\/)?[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
    says: 'letters, digits, ".", "_" and "-" (after an optional models/ or tunedModels/), with no ".."',
  },
  auto: "json_schema",
  autoSays: "responseSchema",
  modes: {
    json_schema: (request) => {
      const taken = schemaSubset(sendable(request.schema), PROFILE);
      return { options: { responseSchema: taken.schema }, dropped: taken.dropped };
    },
  },
  profile: PROFILE,
};

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
    throw new ConfigurationError(`This release of ${PACKAGE} builds its client differently from ${TESTED}, the release this package bounds: install that one.`);
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
