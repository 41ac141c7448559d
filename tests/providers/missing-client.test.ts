import { describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { ConfigurationError } from "../../src/errors.js";
import { buildValidationGraph } from "../../src/index.js";
import { loadChatModelWith, ProviderClients } from "../../src/models.js";

/** Clients as when the optional peer dependency @langchain/ollama is not installed; the others import as usual. */
function withoutOllama(): ProviderClients {
  return new ProviderClients({
    anthropic: () => import("@langchain/anthropic"),
    "google-genai": () => import("@langchain/google-genai"),
    ollama: () =>
      Promise.reject(Object.assign(new Error("Cannot find package '@langchain/ollama' imported from src/models.ts"), { code: "ERR_MODULE_NOT_FOUND" })),
  });
}

describe("a provider whose client package is missing", () => {
  it("is one ConfigurationError saying what to install", async () => {
    const error = await loadChatModelWith(withoutOllama(), { model: "ollama/llama3.2", role: "generate" }, readEnvironment({})).catch((e: unknown) => e);
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/ollama\/… need the package @langchain\/ollama.*npm install @langchain\/ollama@1\.3\.0/);
  });

  it("is kept: the next load fails the same way without importing again", async () => {
    let imports = 0;
    const clients = new ProviderClients({
      anthropic: () => import("@langchain/anthropic"),
      "google-genai": () => import("@langchain/google-genai"),
      ollama: () => {
        imports++;
        return Promise.reject(new Error("Cannot find package '@langchain/ollama'"));
      },
    });
    for (let i = 0; i < 2; i++) await expect(clients.loadFor("ollama:llama3.2")).rejects.toThrow(/npm install @langchain\/ollama/);
    expect(imports).toBe(1);
  });

  it("ends a run with that error, before any model call", async () => {
    const clients = withoutOllama();
    const graph = buildValidationGraph({ model: (request) => loadChatModelWith(clients, request, readEnvironment({})) });
    await expect(graph.invoke({ request: "a deployment" }, { context: { model: "ollama/llama3.2" } })).rejects.toThrow(/npm install @langchain\/ollama/);
  });

  it("leaves the factory's own clients as they are", async () => {
    await loadChatModelWith(withoutOllama(), { model: "ollama/llama3.2", role: "generate" }, readEnvironment({})).catch(() => undefined);
    const { loadChatModel } = await import("../../src/models.js");
    const { ChatOllama } = await import("@langchain/ollama");
    expect(await loadChatModel({ model: "ollama/llama3.2", role: "generate" }, readEnvironment({}))).toBeInstanceOf(ChatOllama);
  });
});
