import { ChatAnthropic } from "@langchain/anthropic";
import { ChatOllama } from "@langchain/ollama";
import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { ConfigurationError } from "../../src/errors.js";
import { MODEL_PROVIDERS, modelNameProblem, parseModelName, type ModelProvider } from "../../src/providers/index.js";
import { createChatModel, loadChatModel } from "../../src/models.js";
import { ensureValidationConfig } from "../../src/validation/configuration.js";
import { ensureReflexionConfig } from "../../src/reflexion/configuration.js";

const env = readEnvironment({ OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test", OLLAMA_BASE_URL: "http://127.0.0.1:9" });

describe("provider-qualified model names", () => {
  it("reads provider/model and provider:model; other names stay bare", () => {
    expect(parseModelName("anthropic/claude-sonnet-4-5")).toEqual({ provider: "anthropic", model: "claude-sonnet-4-5" });
    expect(parseModelName("ollama:llama3.2:3b")).toEqual({ provider: "ollama", model: "llama3.2:3b" });
    expect(parseModelName("google-genai/gemini-2.5-flash")).toEqual({ provider: "google-genai", model: "gemini-2.5-flash" });
    expect(parseModelName("openai/meta-llama/Llama-3-8B")).toEqual({ provider: "openai", model: "meta-llama/Llama-3-8B" });
    // Names an OpenAI-compatible server knows keep their meaning.
    for (const bare of ["gpt-4o-mini", "llama3.2:3b", "meta-llama/Llama-3-8B", "simulated", "constructor/x"])
      expect(parseModelName(bare)).toEqual({ model: bare });
  });

  it("refuses a provider with no model, in every place a model is named", () => {
    expect(modelNameProblem("anthropic/")).toMatch(/no model/);
    expect(() => ensureValidationConfig({ context: { model: "anthropic/" } })).toThrow(ConfigurationError);
    expect(() => ensureValidationConfig({ context: { models: [{ model: "ollama/llama3.2" }, { model: "anthropic:" }] } })).toThrow(
      /models entry's model: "anthropic:" names the provider anthropic but no model/,
    );
    expect(() => ensureReflexionConfig({ context: { evaluatorModel: "ollama/ " } }, { env })).toThrow(/evaluatorModel/);
    expect(() => readEnvironment({ LLM_MODEL: "anthropic/" })).toThrow(/LLM_MODEL: "anthropic\/" names the provider anthropic but no model/);
    expect(readEnvironment({ LLM_MODEL: "anthropic/claude-sonnet-4-5" }).model).toBe("anthropic/claude-sonnet-4-5");
    expect(
      ensureValidationConfig({ context: { models: [{ model: "ollama/llama3.2", attempts: 2 }, { model: "anthropic/claude-sonnet-4-5" }] } }).models,
    ).toHaveLength(2);
  });

  it("refuses a Gemini model name that is not a name, since it goes into the request's URL: in every place, and at the factory", async () => {
    for (const bad of [
      "google-genai/x/../../v1/chat/completions",
      "google-genai/gemini-2.5-flash?alt=json",
      "google-genai/gemini#x",
      "google-genai/gemini%2F..",
      "google-genai/gemini 2",
      "google-genai/gemini\n2",
      "google-genai/gemini\u00002",
      "google-genai/models/../x",
      "google-genai/gemini-2.5-flash:streamGenerateContent",
      "google-genai:..",
    ]) {
      expect(modelNameProblem(bad), bad).toMatch(/is not a google-genai model name: the name goes into the request's URL/);
      expect(() => ensureValidationConfig({ context: { model: bad } }), bad).toThrow(ConfigurationError);
      expect(() => readEnvironment({ LLM_MODEL: bad }), bad).toThrow(ConfigurationError);
      await expect(loadChatModel({ model: bad, role: "generate" }, readEnvironment({ GOOGLE_API_KEY: "k" })), bad).rejects.toThrow(ConfigurationError);
    }
    for (const good of [
      "google-genai/gemini-2.5-flash",
      "google-genai/models/gemini-1.5-pro-001",
      "google-genai/tunedModels/my-model_1",
      "google-genai:gemini-2.0-flash-exp",
    ])
      expect(modelNameProblem(good), good).toBeUndefined();
    // ChatGoogle puts the name after /models/ itself: the google row takes a model's own name only.
    for (const bad of [
      "google/models/gemini-1.5-pro-001",
      "google/tunedModels/x",
      "google/x/../../v1",
      "google/gemini?alt=json",
      "google/gemini%2F",
      "google:..",
    ]) {
      expect(modelNameProblem(bad), bad).toMatch(/is not a google model name: the name goes into the request's URL/);
      await expect(loadChatModel({ model: bad, role: "generate" }, readEnvironment({ GOOGLE_API_KEY: "k" })), bad).rejects.toThrow(ConfigurationError);
    }
    expect(modelNameProblem("google/gemini-2.5-flash")).toBeUndefined();
    // Names that go only into a request body are the provider's business.
    expect(modelNameProblem("ollama/llama3.2:3b")).toBeUndefined();
    expect(modelNameProblem("openai/meta-llama/Llama-3-8B")).toBeUndefined();
  });

  it("builds each provider's own client from the environment's keys", async () => {
    const claude = await loadChatModel({ model: "anthropic/claude-sonnet-4-5", role: "generate" }, env);
    expect(claude).toBeInstanceOf(ChatAnthropic);
    expect((claude as ChatAnthropic).model).toBe("claude-sonnet-4-5");
    const llama = await loadChatModel({ model: "ollama:llama3.2", role: "generate" }, env);
    expect(llama).toBeInstanceOf(ChatOllama);
    expect((llama as ChatOllama).baseUrl).toBe("http://127.0.0.1:9");
    const gpt = await loadChatModel({ model: "openai/gpt-4o-mini", role: "generate" }, env);
    expect(gpt).toBeInstanceOf(ChatOpenAI);
    expect((gpt as ChatOpenAI).model).toBe("gpt-4o-mini");
    // Loaded once, the client builds synchronously too.
    expect(createChatModel({ model: "anthropic/claude-sonnet-4-5", role: "generate" }, env)).toBe(claude);
  });

  it("each provider's client names its provider to callbacks (ls_provider) as the table's row says (the createAgent middleware reads it for a model given by name)", async () => {
    const names = {
      openai: "openai/gpt-4o-mini",
      anthropic: "anthropic/claude-sonnet-4-5",
      ollama: "ollama/llama3.2",
      "google-genai": "google-genai/gemini-x",
    };
    for (const [provider, name] of Object.entries(names) as Array<[ModelProvider, string]>) {
      const model = await loadChatModel(
        { model: name, role: "generate" },
        { ...env, providers: { ...env.providers, "google-genai": { apiKey: "test-google-key" } } },
      );
      expect(model.getLsParams({}).ls_provider, provider).toBe(MODEL_PROVIDERS[provider].traced);
    }
  });

  it("says which key is missing for a provider's model", async () => {
    await expect(loadChatModel({ model: "anthropic/claude-sonnet-4-5", role: "generate" }, readEnvironment({}))).rejects.toThrow(/ANTHROPIC_API_KEY/);
    await expect(loadChatModel({ model: "google-genai/gemini-2.5-flash", role: "generate" }, readEnvironment({}))).rejects.toThrow(/GOOGLE_API_KEY/);
  });
});
