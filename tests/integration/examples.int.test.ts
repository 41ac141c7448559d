/** The README's embedded example runs as written, against the scripted OpenAI-compatible server. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runNode } from "../../testkit/cli.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";

let server: ScriptedServer;
beforeAll(async () => {
  const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
  server = await startScriptedOpenAIServer({
    responder: (req) => {
      const system = req.messages[0]?.content ?? "";
      const retry = req.messages.at(-1)!.content.includes("A validator rejected it");
      if (system.includes("discount code")) return JSON.stringify(retry ? { code: "VIP-SAVE40", percent: 40 } : { code: "SAVE40", percent: 40 });
      if (system.startsWith("You write JSON")) return JSON.stringify(retry ? example : { ...example, replicas: 8 });
      if (system.includes("evaluator")) return "Final score: 9.5/10";
      if (system.startsWith("You reflect")) return "Be concrete.";
      return "Validators find every error; self-review misses them.";
    },
  });
});
afterAll(async () => server?.close());

describe("examples/embedded.ts", () => {
  it("runs as written", async () => {
    // `--conditions=langgraph-trustworthy-output-source` resolves the package's own name to its TypeScript source instead of dist/ (a condition of its own, so a consumer's "source" condition never points at files the tarball does not hold).
    const result = await runNode(["--conditions=langgraph-trustworthy-output-source", "examples/embedded.ts"], { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("valid after 2 attempt(s)");
    expect(result.stdout).toContain('discount: {"code":"VIP-SAVE40","percent":40}');
    expect(result.stdout).toContain("reflexion: Validators find every error");
  }, 120_000); // a child process through tsx: 21 s measured with the machine's load average near 19
});
