import { beforeAll, describe, expect, it, vi } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { ConfigurationError } from "../../src/errors.js";
import { buildValidationGraph } from "../../src/index.js";

// As when the optional peer dependency is not installed.
vi.mock("@langchain/ollama", () => {
  throw Object.assign(new Error("Cannot find package '@langchain/ollama' imported from src/models.ts"), { code: "ERR_MODULE_NOT_FOUND" });
});

// Unit test files share their modules (vitest.config.ts: isolate false), and the model factory keeps the clients
// it has loaded: this file loads a copy of its own (a distinct module id), so another file having loaded the real
// client cannot hide the mock, and no other file's modules are reset.
let models: typeof import("../../src/models.js");
beforeAll(async () => {
  models = (await import("../../src/models.ts?missing-client" as string)) as typeof import("../../src/models.js");
});

describe("a provider whose client package is missing", () => {
  it("is one ConfigurationError saying what to install", async () => {
    const error = await models.loadChatModel({ model: "ollama/llama3.2", role: "generate" }, readEnvironment({})).catch((e: unknown) => e);
    expect(ConfigurationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/ollama\/… need the package @langchain\/ollama.*npm install @langchain\/ollama@1\.3\.0/);
  });

  it("ends a run with that error, before any model call", async () => {
    // The graph's model source is the factory copy above.
    const graph = buildValidationGraph({ model: (request) => models.loadChatModel(request, readEnvironment({})) });
    await expect(graph.invoke({ request: "a deployment" }, { context: { model: "ollama/llama3.2" } })).rejects.toThrow(/npm install @langchain\/ollama/);
  });
});
