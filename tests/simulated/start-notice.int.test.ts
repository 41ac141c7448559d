/**
 * `npm start` without a provider says at once how to run keyless: the entry point langgraph.json names logs one
 * line when no key, base URL or simulated model is configured, and nothing when one is.
 */
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { missingProviderNotice } from "../../src/models.js";
import { runNode } from "../../testkit/cli.js";

const LOAD_GRAPH = 'await import("./graphs/validation.ts");';

describe("the server's entry point without a provider", () => {
  it("logs one line saying how to run keyless", async () => {
    const result = await runNode(["--input-type=module", "-e", LOAD_GRAPH], {});
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/No model provider is configured.*OPENAI_API_KEY.*LLM_MODEL=simulated npm start/);
  }, 120_000); // a child process through tsx: ~3 s quiet, 21 s measured with the load average near 19

  it("says nothing when runs can call a model", () => {
    for (const env of [{ OPENAI_API_KEY: "sk-test" }, { OPENAI_BASE_URL: "http://localhost:11434/v1" }, { LLM_MODEL: "simulated" }]) {
      expect(missingProviderNotice(readEnvironment(env)), JSON.stringify(env)).toBeUndefined();
    }
    expect(missingProviderNotice(readEnvironment({}))).toBeDefined();
  });
});
