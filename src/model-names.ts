/**
 * Model names as LangGraph users write them, and what this package knows of each provider: its client
 * package, how its client names itself, which of its stop reasons mean the model finished, and what a
 * model name may hold where it goes into a URL. `provider/model` (or `provider:model`, as LangChain's
 * `initChatModel` reads them), or a bare name, which keeps its old meaning (a model on the
 * OpenAI-compatible server). Pure: no provider package is loaded here.
 */

/**
 * How a provider says why an answer ended: the field its client leaves on the message, and which of its
 * values mean the model finished, cut the answer at a limit, or withheld it. Any other value, and no
 * value at all, means the answer did not finish (docs/providers.md has the table).
 */
export interface StopWords {
  /** The field (in `response_metadata` or `additional_kwargs`). */
  field: string;
  /** The model finished its answer: the only stops an answer can be valid after. */
  finished: readonly string[];
  /** Cut at the output limit or the context window: the answer is incomplete, and a shorter one may fit. */
  cut: readonly string[];
  /** The provider withheld the answer (a refusal, a safety or recitation block). */
  withheld: readonly string[];
}

/**
 * The providers this package can build a chat model for: the package each needs, its client's `_llmType`, the
 * provider its client names in the metadata it gives callbacks (LangSmith's `ls_provider`), and its stop words.
 */
export const MODEL_PROVIDERS = {
  openai: {
    package: "@langchain/openai",
    tested: "1.5.8",
    client: "openai",
    traced: "openai",
    // Chat Completions' `finish_reason` (OpenAI, and the OpenAI-compatible servers: Ollama's /v1, vLLM, llama.cpp); the
    // Responses API's `status`. `function_call` is the legacy name of a tool call's finish.
    stops: [
      { field: "finish_reason", finished: ["stop", "tool_calls", "function_call"], cut: ["length"], withheld: ["content_filter"] },
      { field: "status", finished: ["completed"], cut: [], withheld: [] },
    ],
  },
  anthropic: {
    package: "@langchain/anthropic",
    tested: "1.5.11",
    client: "anthropic",
    traced: "anthropic",
    stops: [
      {
        field: "stop_reason",
        finished: ["end_turn", "tool_use", "stop_sequence"],
        cut: ["max_tokens", "model_context_window_exceeded"],
        withheld: ["refusal"],
      },
    ],
  },
  ollama: {
    package: "@langchain/ollama",
    tested: "1.3.0",
    client: "ollama",
    traced: "ollama",
    stops: [{ field: "done_reason", finished: ["stop"], cut: ["length"], withheld: [] }],
  },
  "google-genai": {
    package: "@langchain/google-genai",
    tested: "2.3.2",
    client: "googlegenerativeai",
    traced: "google_genai",
    stops: [
      {
        field: "finishReason",
        finished: ["STOP"],
        cut: ["MAX_TOKENS"],
        withheld: ["SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "RECITATION"],
      },
    ],
    // The name goes into the request's URL path (`/v1beta/models/{name}:generateContent`): a model's own name, or a tuned model's.
    urlName: {
      pattern: /^(?:(?:models|tunedModels)\/)?[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
      says: 'letters, digits, ".", "_" and "-" (after an optional models/ or tunedModels/), with no ".."',
    },
  },
} as const satisfies Record<
  string,
  { package: string; tested: string; client: string; traced: string; stops: readonly StopWords[]; urlName?: { pattern: RegExp; says: string } }
>;

export type ModelProvider = keyof typeof MODEL_PROVIDERS;

interface ParsedModelName {
  /** The provider the name qualifies; undefined for a bare name (the OpenAI-compatible server). */
  provider?: ModelProvider;
  /** The model's own name, as its provider knows it. */
  model: string;
}

/**
 * A model name, split. Only a known provider's prefix qualifies a name: `llama3.2:3b` and
 * `meta-llama/Llama-3-8B` stay bare, as before; `openai/meta-llama/Llama-3-8B` sends a name that
 * starts with a provider's word to the OpenAI-compatible server as it is.
 */
export function parseModelName(name: string): ParsedModelName {
  const match = /^([a-z][a-z-]*)[/:]/.exec(name);
  if (match !== null && Object.hasOwn(MODEL_PROVIDERS, match[1])) {
    return { provider: match[1] as ModelProvider, model: name.slice(match[0].length) };
  }
  return { model: name };
}

/**
 * What is wrong with a model name, or undefined: a provider's prefix must be followed by a model, and a
 * name that goes into a URL may hold only what its provider's names are made of (never a path, a query
 * or an escape that would send the request, and its key, elsewhere on the host).
 */
export function modelNameProblem(name: string): string | undefined {
  const { provider, model } = parseModelName(name);
  if (provider === undefined) return undefined;
  if (model.trim().length === 0) return `"${name}" names the provider ${provider} but no model; write ${provider}/<model>`;
  const row = MODEL_PROVIDERS[provider];
  if ("urlName" in row && (!row.urlName.pattern.test(model) || model.includes(".."))) {
    return `${JSON.stringify(name)} is not a ${provider} model name: the name goes into the request's URL, so it may hold only ${row.urlName.says}`;
  }
  return undefined;
}

/** The provider whose client a chat model's `_llmType` names, or undefined (a chat model of your own, a fake, the simulated model). */
export function providerOfClient(llmType: string): ModelProvider | undefined {
  for (const [provider, row] of Object.entries(MODEL_PROVIDERS)) if (row.client === llmType) return provider as ModelProvider;
  return undefined;
}

/** The provider whose client reports `ls_provider` as its callbacks' metadata, or undefined (a client of another provider, or of your own). */
export function providerOfTrace(lsProvider: unknown): ModelProvider | undefined {
  for (const [provider, row] of Object.entries(MODEL_PROVIDERS)) if (row.traced === lsProvider) return provider as ModelProvider;
  return undefined;
}
