/** The README's embedded example runs as written, against the scripted OpenAI-compatible server. */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../support/openai-server.js";

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
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      // `--conditions=source` resolves the package's own name to its TypeScript source instead of dist/.
      const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "examples/embedded.ts"], {
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("valid after 2 attempt(s)");
    expect(result.stdout).toContain('discount: {"code":"VIP-SAVE40","percent":40}');
    expect(result.stdout).toContain("reflexion: Validators find every error");
  }, 60_000);
});
