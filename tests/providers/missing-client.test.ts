import { beforeAll, describe, expect, it, vi } from "vitest";

// As when the optional peer dependency is not installed.
vi.mock("@langchain/ollama", () => {
  throw Object.assign(new Error("Cannot find package '@langchain/ollama' imported from src/models.ts"), { code: "ERR_MODULE_NOT_FOUND" });
});

// Unit test files share their modules (vitest.config.ts: isolate false), and the model factory keeps the clients
// it has loaded: this file imports a fresh copy, so another file having loaded the real client cannot hide the mock.
let src: typeof import("../../src/index.js");
let models: typeof import("../../src/models.js");
let environment: typeof import("../../src/environment.js");
let errors: typeof import("../../src/errors.js");
beforeAll(async () => {
  vi.resetModules();
  [src, models, environment, errors] = await Promise.all([import("../../src/index.js"), import("../../src/models.js"), import("../../src/environment.js"), import("../../src/errors.js")]);
});

describe("a provider whose client package is missing", () => {
  it("is one ConfigurationError saying what to install", async () => {
    const error = await models.loadChatModel({ model: "ollama/llama3.2", role: "generate" }, environment.readEnvironment({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.ConfigurationError);
    expect((error as Error).message).toMatch(/ollama\/… need the package @langchain\/ollama.*npm install @langchain\/ollama@1\.3\.0/);
  });

  it("ends a run with that error, before any model call", async () => {
    const graph = src.buildValidationGraph();
    await expect(graph.invoke({ request: "a deployment" }, { context: { model: "ollama/llama3.2" } })).rejects.toThrow(/npm install @langchain\/ollama/);
  });
});
