import { describe, expect, it, vi } from "vitest";
import { buildValidationGraph } from "../../src/index.js";
import { readEnvironment } from "../../src/environment.js";
import { ConfigurationError } from "../../src/errors.js";
import { loadChatModel } from "../../src/models.js";

// As when the optional peer dependency is not installed.
vi.mock("@langchain/ollama", () => {
  throw Object.assign(new Error("Cannot find package '@langchain/ollama' imported from src/models.ts"), { code: "ERR_MODULE_NOT_FOUND" });
});

describe("a provider whose client package is missing", () => {
  it("is one ConfigurationError saying what to install", async () => {
    const error = await loadChatModel({ model: "ollama/llama3.2", role: "generate" }, readEnvironment({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/ollama\/… need the package @langchain\/ollama.*npm install @langchain\/ollama@1\.3\.0/);
  });

  it("ends a run with that error, before any model call", async () => {
    const graph = buildValidationGraph();
    await expect(graph.invoke({ request: "a deployment" }, { context: { model: "ollama/llama3.2" } })).rejects.toThrow(/npm install @langchain\/ollama/);
  });
});
