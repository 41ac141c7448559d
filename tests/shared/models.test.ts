import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/configuration.js";
import { ConfigurationError } from "../../src/errors.js";
import { createChatModel } from "../../src/models.js";

describe("model factory", () => {
  const env = { ...readEnvironment({}), openaiBaseUrl: "http://127.0.0.1:9/v1" };

  it("builds a ChatOpenAI for any OpenAI-compatible server, with the environment's timeout and retries", () => {
    const model = createChatModel({ model: "llama3.1", temperature: 0.2, role: "generate" }, { ...env, timeoutMs: 1234, maxRetries: 1 });
    expect(model).toBeInstanceOf(ChatOpenAI);
    const openai = model as ChatOpenAI;
    expect(openai.model).toBe("llama3.1");
    expect(openai.temperature).toBe(0.2);
    expect(openai.timeout).toBe(1234);
  });

  it("reuses one client per distinct setting, so a busy process does not build one per call", () => {
    const a = createChatModel({ model: "m", temperature: 0, role: "generate" }, env);
    expect(createChatModel({ model: "m", temperature: 0, role: "actor" }, env)).toBe(a);
    expect(createChatModel({ model: "m", temperature: 0.5, role: "generate" }, env)).not.toBe(a);
    expect(createChatModel({ model: "other", temperature: 0, role: "generate" }, env)).not.toBe(a);
    expect(createChatModel({ model: "m", temperature: 0, role: "generate" }, { ...env, openaiBaseUrl: "http://127.0.0.1:10/v1" })).not.toBe(a);
  });

  it("without a key and a base URL, names both variables", () => {
    expect(() => createChatModel({ model: "m", role: "generate" }, readEnvironment({}))).toThrow(ConfigurationError);
    expect(() => createChatModel({ model: "m", role: "generate" }, readEnvironment({}))).toThrow(/OPENAI_API_KEY.*OPENAI_BASE_URL/s);
  });

  it("bad environment values are refused with the variable's name", () => {
    expect(() => readEnvironment({ LLM_TIMEOUT_MS: "soon" })).toThrow(/LLM_TIMEOUT_MS must be an integer/);
    expect(() => readEnvironment({ LLM_MAX_RETRIES: "-1" })).toThrow(/LLM_MAX_RETRIES must be an integer from 0 to 10/);
  });
});
