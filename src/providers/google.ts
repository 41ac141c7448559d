/**
 * Google's Gemini API through @langchain/google (`ChatGoogle`): one row of the providers' table (./index.ts).
 * Its structured output is `responseJsonSchema`, JSON Schema in the subset Gemini documents (`$ref`, `$defs`,
 * `anyOf`, numeric bounds, `prefixItems`), where the older `responseSchema` (the google-genai row) takes an
 * OpenAPI 3.0 subset. The Gemini facts both rows share (stop words, environment variables, the key's check) are kept here.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AsyncCaller } from "@langchain/core/utils/async_caller";
import type { JsonSchema } from "../specs/spec.js";
import { fetchWithDeadline } from "./deadline.js";
import { sendable, type ProviderRow, type ProviderSettings, type StopWords } from "./provider.js";
import { schemaSubset, type SchemaProfile } from "./schema-subset.js";

/** Gemini's `finishReason`: only STOP is a finished answer (docs/providers.md has the table). */
export const GEMINI_STOPS: readonly StopWords[] = [
  {
    field: "finishReason",
    finished: ["STOP"],
    cut: ["MAX_TOKENS"],
    withheld: ["SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "RECITATION"],
  },
];

/** What both rows read from the environment: the key Google's own SDKs read (GEMINI_API_KEY) or LangChain's (GOOGLE_API_KEY). */
export const GEMINI_ENV = { apiKey: ["GOOGLE_API_KEY", "GEMINI_API_KEY"], baseUrl: "GOOGLE_BASE_URL" } as const;

/** What a Gemini request needs from the settings: a key. */
export function geminiKeyMissing(settings: ProviderSettings, name: string): string | undefined {
  return settings.apiKey ? undefined : `"${name}" is a Google Gemini model: set GOOGLE_API_KEY (or GEMINI_API_KEY) in the process environment.`;
}

const ENDPOINT = "https://generativelanguage.googleapis.com";

/**
 * The JSON Schema `responseJsonSchema` takes, as Gemini's structured-output guide lists it
 * (ai.google.dev/gemini-api/docs/structured-output, "JSON Schema support"); `oneOf` is sent as `anyOf`, which
 * holds every answer `oneOf` does. Anything else is left out and listed; the validator judges every keyword.
 */
const PROFILE: SchemaProfile = {
  keep: new Set([
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "propertyOrdering",
    "enum",
    "minimum",
    "maximum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "anyOf",
  ]),
  rename: { oneOf: "anyOf" },
};

/** HTTP statuses worth another try (as Google's clients retry them). */
const RETRIED = new Set([408, 429, 500, 502, 503, 504]);

type Module = typeof import("@langchain/google");

export const google: ProviderRow<Module> = {
  title: "Gemini",
  example: "gemini-2.5-flash",
  help: [["GOOGLE_API_KEY", "for google/… and google-genai/… models (or GEMINI_API_KEY; GOOGLE_BASE_URL: another server speaking its API)"]],
  package: "@langchain/google",
  tested: "0.1.12",
  client: "google",
  traced: "google_genai",
  env: GEMINI_ENV,
  defaultBaseUrl: ENDPOINT,
  missing: geminiKeyMissing,
  load: () => import("@langchain/google"),
  build({ ChatGoogle }, request): BaseChatModel {
    return new ChatGoogle({
      model: request.model,
      temperature: request.temperature,
      platformType: "gai",
      apiClient: geminiApiClient(request.settings.apiKey ?? "", request.settings.baseUrl, request.timeoutMs, request.maxRetries),
    });
  },
  stops: GEMINI_STOPS,
  // ChatGoogle puts the name after `/models/` itself: a name of its own only (a `models/` or `tunedModels/` prefix would be sent as part of it).
  urlName: { pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, says: 'letters, digits, ".", "_" and "-", with no ".."' },
  auto: "json_schema",
  autoSays: "responseJsonSchema",
  modes: {
    json_schema: (request) => {
      const taken = schemaSubset(definitionsAsDefs(sendable(request.schema)), PROFILE);
      return { options: { responseSchema: taken.schema }, dropped: taken.dropped };
    },
  },
  profile: PROFILE,
};

/** Keywords whose values are data, not schemas: a `$ref` inside them is not a reference. */
const DATA = new Set(["enum", "const", "default", "examples", "example"]);
/** Keywords whose value maps names (anything, "enum" included) to schemas. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * The schema with draft-07's `definitions` under `$defs`, the name `responseJsonSchema` takes, and every
 * `#/definitions/…` reference pointing there: left out, they would send references to nothing. A root that
 * already has `$defs`, or none, is sent as it is.
 */
function definitionsAsDefs(schema: JsonSchema): JsonSchema {
  const { definitions, ...rest } = schema as JsonSchema & { definitions?: unknown };
  if (definitions === null || typeof definitions !== "object" || rest.$defs !== undefined) return schema;
  // A schema's keywords: `$ref` rewritten, data left alone, and the entries of a map of schemas (named anything) walked as schemas.
  const moved = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(moved);
    if (node === null || typeof node !== "object") return node;
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => {
        if (k === "$ref" && typeof v === "string" && v.startsWith("#/definitions/")) return [k, `#/$defs/${v.slice("#/definitions/".length)}`];
        if (DATA.has(k)) return [k, v];
        if (SCHEMA_MAPS.has(k) && v !== null && typeof v === "object" && !Array.isArray(v))
          return [k, Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, moved(sub)]))];
        return [k, moved(v)];
      }),
    );
  };
  return moved({ ...rest, $defs: definitions }) as JsonSchema;
}

/** What ChatGoogle asks of the `apiClient` it is given (its ApiClient: the transport it documents as replaceable). */
interface GeminiApiClient {
  hasApiKey(): boolean;
  getProjectId(): Promise<string>;
  fetch(request: Request): Promise<Response>;
}

/**
 * ChatGoogle's transport, through its `apiClient` option: the key in Gemini's header; the request sent to
 * GOOGLE_BASE_URL when one is set (ChatGoogle itself only ever calls `https://` plus a host); one deadline
 * per request covering the whole answer, headers, body and every streamed event (ChatGoogle has none); and
 * the client's retries, which ChatGoogle does not make, on the statuses Google's clients retry, with
 * LangChain's backoff. A status still failing after the last try is given back to ChatGoogle, which reports it.
 */
function geminiApiClient(apiKey: string, baseUrl: string | undefined, timeoutMs: number, maxRetries: number): GeminiApiClient {
  const send = fetchWithDeadline(timeoutMs);
  const caller = new AsyncCaller({ maxRetries, maxConcurrency: Infinity });
  const base = baseUrl === undefined ? undefined : baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`;
  return {
    hasApiKey: () => apiKey !== "",
    getProjectId: async () => "",
    async fetch(request: Request): Promise<Response> {
      const sent = new URL(request.url);
      const url = base === undefined ? sent : new URL(`${sent.pathname.slice(1)}${sent.search}`, base);
      const headers = new Headers(request.headers);
      headers.set("x-goog-api-key", apiKey);
      const body = await request.text();
      // The last try's failed response, kept to give back should no try succeed; an earlier one's body is let go.
      let failed: Response | undefined;
      const letGo = async () => {
        await failed?.body?.cancel().catch(() => undefined);
        failed = undefined;
      };
      try {
        // The run's own cancellation ends the tries at once.
        return await caller.callWithOptions({ signal: request.signal }, async () => {
          let response: Response;
          try {
            response = await send(url, { method: request.method, headers, body, signal: request.signal });
          } catch (error) {
            await letGo();
            throw error;
          }
          await letGo();
          if (!RETRIED.has(response.status)) return response;
          failed = response;
          throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
        });
      } catch (error) {
        if (failed !== undefined) return failed;
        throw error;
      }
    },
  };
}
