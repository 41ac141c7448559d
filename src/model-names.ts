/**
 * Model names as LangGraph users write them: `provider/model` (or `provider:model`, as LangChain's
 * `initChatModel` reads them), or a bare name, which keeps its old meaning (a model on the
 * OpenAI-compatible server). Pure: no provider package is loaded here.
 */

/** The providers this package can build a chat model for, and the package each needs. */
export const MODEL_PROVIDERS = {
  openai: { package: "@langchain/openai", tested: "1.5.8" },
  anthropic: { package: "@langchain/anthropic", tested: "1.5.11" },
  ollama: { package: "@langchain/ollama", tested: "1.3.0" },
  "google-genai": { package: "@langchain/google-genai", tested: "2.3.2" },
} as const;

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

/** What is wrong with a model name, or undefined: a provider's prefix must be followed by a model. */
export function modelNameProblem(name: string): string | undefined {
  const { provider, model } = parseModelName(name);
  if (provider !== undefined && model.trim().length === 0) return `"${name}" names the provider ${provider} but no model; write ${provider}/<model>`;
  return undefined;
}
