/**
 * The providers' table: one row per provider (its own file here), and model names as LangGraph users write
 * them: `provider/model` (or `provider:model`, as LangChain's `initChatModel` reads them), or a bare name,
 * which means a model on the OpenAI-compatible server. Adding a provider is a file here and a line in the
 * table. No optional client package is loaded here: each row loads its own when a name asks for it.
 */
import { anthropic } from "./anthropic.js";
import { google } from "./google.js";
import { googleGenai } from "./google-genai.js";
import { ollama } from "./ollama.js";
import { openai } from "./openai.js";
import type { ProviderRow, ProviderSettings } from "./provider.js";

/**
 * The providers this package can build a chat model for, one row each (./provider.ts says what a row holds).
 * The key is the prefix of the provider's model names, as LangChain's `initChatModel` spells it.
 */
export const MODEL_PROVIDERS = {
  openai,
  anthropic,
  ollama,
  google,
  "google-genai": googleGenai,
} as const satisfies Record<string, ProviderRow<any>>;

/** The provider of a bare model name: the OpenAI-compatible server. */
export const DEFAULT_PROVIDER: ModelProvider = "openai";

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
  const row: ProviderRow<any> = MODEL_PROVIDERS[provider];
  if (row.urlName !== undefined && (!row.urlName.pattern.test(model) || model.includes(".."))) {
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

/** A provider's row; a bare name's (undefined) is the default provider's. */
export function providerRow(provider: ModelProvider | undefined): ProviderRow<any> {
  return MODEL_PROVIDERS[provider ?? DEFAULT_PROVIDER];
}

/** Each provider's settings, read from the environment variables its row names (the first key set wins). */
export function providerSettings(read: (name: string) => string | undefined): Record<ModelProvider, ProviderSettings> {
  return Object.fromEntries(
    Object.entries(MODEL_PROVIDERS).map(([provider, row]: [string, ProviderRow<any>]) => {
      const apiKey = row.env.apiKey.map(read).find((value) => value !== undefined);
      const baseUrl = read(row.env.baseUrl);
      return [provider, { ...(apiKey !== undefined ? { apiKey } : {}), ...(baseUrl !== undefined ? { baseUrl } : {}) }];
    }),
  ) as Record<ModelProvider, ProviderSettings>;
}

/** A provider's example model name, as help texts show it. */
function exampleName(provider: ModelProvider): string {
  return `${provider}/${MODEL_PROVIDERS[provider].example}`;
}

/** How help texts (the run settings' descriptions, the command line's help) name the providers, all from the table. */
export const PROVIDER_HELP = {
  /** The prefixes: `openai/…, anthropic/…, …`. */
  prefixes: Object.keys(MODEL_PROVIDERS)
    .map((provider) => `${provider}/…`)
    .join(", "),
  /** A local model, then a hosted one (an escalation's order). */
  examples: [exampleName("ollama"), exampleName("anthropic")] as const,
  /** What "auto" asks each provider for. */
  auto: Object.values(MODEL_PROVIDERS)
    .map((row: ProviderRow<any>) => `${row.title} ${row.autoSays}`)
    .join(", "),
  /** The environment variables each provider reads, one `[variable, says]` pair a line. */
  environment: Object.values(MODEL_PROVIDERS).flatMap((row: ProviderRow<any>) => row.help),
};
