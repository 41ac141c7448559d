/**
 * The model boundary over real HTTP: the real ChatOpenAI client, built by the
 * package's model factory, against the scripted OpenAI-compatible server, in
 * plain JSON and in SSE streaming, through the compiled graphs and the CLI.
 * The CLI cases run in-process through runGenerateCli; two run as a real process
 * (exit status and stdout of the process, the process's last-resort handlers).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel } from "../../src/models.js";
import { ReflexionAgent } from "../../src/reflexion/agent.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { runCli, runCliProcess, startCliProcess } from "../../testkit/cli.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const BROKEN = JSON.stringify({ ...(builtinSpecs.get("deployment-config")!.example as object), replicas: 8 });
const REQUEST = { request: "A deployment config for payments-api with 8 replicas" };

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedOpenAIServer();
});
afterAll(async () => {
  await server?.close();
});

function httpModel() {
  const env = { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
  return (request: Parameters<typeof createChatModel>[0]) => createChatModel(request, env);
}

describe("validation graph through ChatOpenAI over HTTP", () => {
  it("plain JSON responses: corrected on the second attempt", async () => {
    server.setReplies([BROKEN, VALID]);
    const before = server.requests.length;
    const out = await buildValidationGraph({ model: httpModel() }).invoke(REQUEST);
    expect(out.success).toBe(true);
    expect(out.attempts).toBe(2);
    const sent = server.requests.slice(before);
    expect(sent.map((r) => r.stream)).toEqual([false, false]);
    expect(sent[1].messages.at(-1)!.content).toContain(RULES.replicasNeedCpu(0.5, 8));
    // usage reported by the provider reaches the ledger
    expect(out.usage.calls).toBe(2);
    expect(out.usage.inputTokens).toBeGreaterThan(0);
  });

  it("SSE streaming: tokens stream and the run still validates", async () => {
    server.setReplies([BROKEN, VALID]);
    const before = server.requests.length;
    const graph = buildValidationGraph({ model: httpModel() });
    let tokens = "";
    let final: Record<string, any> = {};
    for await (const [mode, chunk] of await graph.stream(REQUEST, { streamMode: ["messages", "values"] })) {
      if (mode === "messages") tokens += String((chunk as [{ content: unknown }, unknown])[0].content);
      else final = chunk as Record<string, any>;
    }
    expect(server.requests.slice(before).map((r) => r.stream)).toEqual([true, true]);
    expect(tokens).toContain(VALID);
    expect(final.success).toBe(true);
    expect(final.value).toEqual(JSON.parse(VALID));
  });

  it("a provider error names what the provider said", async () => {
    server.setReplies([{ fault: "status", status: 400, body: { error: { message: "The model `nope` does not exist" } } }]);
    await expect(buildValidationGraph({ model: httpModel() }).invoke(REQUEST)).rejects.toThrow(/HTTP 400.*does not exist/);
  });
});

describe("reflexion through ChatOpenAI over HTTP", () => {
  it("runs a task with actor, evaluator and reflector calls", async () => {
    server.setResponder((req) => {
      const system = req.messages[0]?.content ?? "";
      if (system.includes("evaluator")) return "Clear and correct. Final score: 9.5/10";
      if (system.includes("reflect")) return "Keep examples short.";
      return "Recursion is a function calling itself on a smaller input.";
    });
    const agent = new ReflexionAgent({ model: httpModel(), maxLoops: 2 });
    const results = await agent.run(["Explain recursion"]);
    expect(results).toEqual(["Recursion is a function calling itself on a smaller input."]);
    const steps = await agent.run(["Explain recursion briefly"], { includeIntermediates: true });
    expect(steps[0][0].score).toBe(0.95);
    expect(steps[0][0].reflection).toBe("Keep examples short.");
  });
});

describe("command line against the scripted server", () => {
  const env = () => ({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0" });
  /** stdout must be exactly one JSON document, whatever happened. */
  const documentOf = (stdout: string) => JSON.parse(stdout);

  it("exit 0 with the valid JSON on stdout and progress on stderr", async () => {
    server.setReplies([BROKEN, VALID]);
    const r = await runCli(["--spec", "deployment-config", REQUEST.request], env());
    expect(r.code).toBe(0);
    expect(documentOf(r.stdout)).toEqual(JSON.parse(VALID));
    expect(r.stderr).toContain("attempt 1 of 3: 1 error(s)");
    expect(r.stderr).toContain(RULES.replicasNeedCpu(0.5, 8));
    expect(r.stderr).toContain("attempt 2 of 3: valid");
  });

  it("exit 1 when still invalid after the last attempt: one JSON document that says so, with the last errors and answer", async () => {
    server.setReplies([BROKEN, BROKEN]);
    const r = await runCli(["--max-attempts", "2", REQUEST.request], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not valid after 2 attempt(s) (max_attempts)");
    const doc = documentOf(r.stdout);
    expect(doc).toMatchObject({ success: false, exitCode: 1, stopReason: "max_attempts", attempts: 2, value: JSON.parse(BROKEN) });
    expect(doc.errors.join("\n")).toContain(RULES.replicasNeedCpu(0.5, 8));
  });

  it("--max-attempts 20, every answer refused: the run spends its 20 attempts and ends max_attempts (not on LangGraph's recursion limit)", async () => {
    server.setReplies(Array.from({ length: 20 }, () => BROKEN));
    const r = await runCli(["--max-attempts", "20", REQUEST.request], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not valid after 20 attempt(s) (max_attempts)");
    expect(documentOf(r.stdout)).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 20 });
  });

  it("exit 2 for bad usage or configuration, before any model call, with one JSON document naming the problem", async () => {
    const before = server.requests.length;
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [["--max-attempts", "0", "x"], env(), /maxAttempts must be an integer from 1 to 20/],
      [["--spec", "no-such-spec", "x"], env(), /neither a built-in spec/],
      [[], env(), /exactly one request/],
      [["--nope", "x"], env(), /Unknown option '--nope'/],
      [["x"], { ...env(), LLM_TIMEOUT_MS: "soon" }, /LLM_TIMEOUT_MS must be an integer/],
      [["x"], {}, /OPENAI_API_KEY.*OPENAI_BASE_URL/s],
    ];
    for (const [args, environment, says] of cases) {
      const r = await runCli(args, environment);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(says);
      const doc = documentOf(r.stdout);
      expect(doc).toMatchObject({ success: false, exitCode: 2 });
      expect(doc.error.message).toMatch(says);
    }
    expect(server.requests.length).toBe(before);
  });

  it("--spec on a file that is not JSON says where, and never prints what the file holds", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-spec-"));
    const key = "sk-live-DoNotPrintMe0123456789";
    writeFileSync(join(dir, ".env"), `# settings\nOPENAI_API_KEY=${key}\n`);
    writeFileSync(join(dir, "broken.json"), '{\n  "name": "x",\n  "schema": {"type": "object",}\n}\n');
    const dotEnv = await runCli(["--spec", join(dir, ".env"), "x"], env());
    expect(dotEnv.code).toBe(2);
    expect(dotEnv.stderr + dotEnv.stdout).not.toContain("DoNotPrintMe");
    expect(dotEnv.stderr + dotEnv.stdout).not.toContain("OPENAI_API_KEY");
    expect(documentOf(dotEnv.stdout).error.message).toMatch(/is not a valid JSON spec: a JSON value expected at line 1, column 1/);
    const broken = await runCli(["--spec", join(dir, "broken.json"), "x"], env());
    expect(broken.code).toBe(2);
    expect(documentOf(broken.stdout).error.message).toMatch(/not a valid JSON spec: a property name in double quotes expected at line 3, column 31/);
    const directory = await runCli(["--spec", dir, "x"], env());
    expect(documentOf(directory.stdout).error.message).toMatch(/is not a file/);
  });

  it("exit 3 when the provider keeps failing; the failure names the endpoint it tried", async () => {
    server.setReplies([{ fault: "status", status: 503 }]);
    const r = await runCli(["x"], env());
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/HTTP 503/);
    expect(r.stderr).toContain(`(model endpoint: ${server.baseURL})`);
    expect(documentOf(r.stdout)).toMatchObject({ success: false, exitCode: 3, error: { name: "ProviderError", endpoint: server.baseURL } });
  });

  it("a connection failure names the endpoint and what lies under it", async () => {
    const r = await runCli(["x"], { OPENAI_BASE_URL: "http://user:pw@127.0.0.1:1/v1", OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0" });
    expect(r.code).toBe(3);
    const doc = documentOf(r.stdout);
    expect(doc.error.endpoint).toBe("http://127.0.0.1:1/v1");
    expect(doc.error.message).toMatch(/Connection error\. \(.+\)/);
    expect(r.stdout + r.stderr).not.toContain("user:pw");
  }, 60_000);

  it("a provider that echoes the Authorization header: the key appears nowhere in the output", async () => {
    const key = "sk-proj-CliEcho0123456789SECRET";
    server.setResponder(() => ({ fault: "echo-auth" }));
    const r = await runCli(["x"], { ...env(), OPENAI_API_KEY: key });
    expect(r.code).toBe(3);
    expect(server.requests.at(-1)!.headers.authorization).toBe(`Bearer ${key}`);
    expect(r.stdout + r.stderr).not.toContain("CliEcho0123456789");
    expect(documentOf(r.stdout).error.message).toMatch(/HTTP 401.*Bearer \[redacted\]/s);
  });

  it("reads .env from the current directory; a variable set in the environment wins over the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-dotenv-"));
    writeFileSync(join(dir, ".env"), `OPENAI_BASE_URL=${server.baseURL}\nOPENAI_API_KEY=from-the-file\nLLM_MAX_RETRIES=0\nLLM_MODEL=model-from-file\n`);
    server.setReplies([VALID]);
    const fromFile = await runCli(["x"], {}, { cwd: dir });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(documentOf(fromFile.stdout)).toEqual(JSON.parse(VALID));
    expect(fromFile.stderr).toContain(`settings from the environment and ${join(dir, ".env")}`);
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer from-the-file");
    expect(server.requests.at(-1)!.model).toBe("model-from-file");

    writeFileSync(join(dir, ".env"), "OPENAI_BASE_URL=http://127.0.0.1:1/v1\nOPENAI_API_KEY=from-the-file\n");
    server.setReplies([VALID]);
    const envWins = await runCli(["x"], env(), { cwd: dir });
    expect(envWins.code, envWins.stderr).toBe(0);
    expect(server.requests.at(-1)!.headers.authorization).toBe("Bearer test-key");
  });

  it("--help lists every option, the environment variables, the output and the exit statuses", async () => {
    const r = await runCli(["--help"], {});
    expect(r.code).toBe(0);
    for (const word of [
      "--spec",
      "--max-attempts",
      "--model",
      "--stop-on-no-progress",
      "--thread",
      "--help",
      "OPENAI_BASE_URL",
      "OPENAI_API_KEY",
      "LLM_MODEL",
      "LLM_TIMEOUT_MS",
      "LLM_MAX_RETRIES",
      "DATABASE_URL",
      ".env",
      "npm run -s generate",
      "exactly one JSON document",
      "130 interrupted",
    ]) {
      expect(r.stdout).toContain(word);
    }
  });

  it("interrupted (Ctrl-C): exit 130 and one JSON document; no unhandled rejection", async () => {
    server.setReplies([{ fault: "hang" }]);
    const before = server.requests.length;
    const interrupt = new AbortController();
    const running = runCli(["x"], env(), { signal: interrupt.signal });
    await waitFor(() => server.requests.length > before);
    interrupt.abort();
    const r = await running;
    expect(r.code).toBe(130);
    expect(documentOf(r.stdout)).toMatchObject({ success: false, exitCode: 130, error: { name: "Interrupted" } });
  });

  // Real processes: what only a process shows.
  it("as a process: a retried model call, LangGraph's retry lines on stderr, stdout exactly the JSON, exit 0", async () => {
    server.setReplies([{ fault: "no-choices" }, VALID]);
    const r = await runCliProcess(["x"], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Retrying task "generate"');
    expect(documentOf(r.stdout)).toEqual(JSON.parse(VALID));
  }, 90_000);

  it("as a process: a rejection that escapes everything ends in one JSON document and exit 5", async () => {
    server.setReplies([VALID]);
    const preload = join(import.meta.dirname, "../support/stray-rejection.ts");
    const r = await runCliProcess(["x"], env(), { nodeArgs: ["--import", preload] });
    expect(r.code, r.stderr).toBe(5);
    expect(documentOf(r.stdout)).toMatchObject({ success: false, exitCode: 5, error: { message: "stray rejection from a library" } });
    expect(r.stderr).toContain("Internal error (please report it)");
  }, 90_000);

  it("as a process: Ctrl-C (SIGINT) during a model call ends in one JSON document and exit 130", async () => {
    server.setReplies([{ fault: "hang" }]);
    const before = server.requests.length;
    const cli = startCliProcess(["x"], env());
    await waitFor(() => server.requests.length > before, 60_000);
    cli.child.kill("SIGINT");
    const r = await cli.result;
    expect(r.code, r.stderr).toBe(130);
    expect(documentOf(r.stdout)).toMatchObject({ success: false, exitCode: 130, error: { name: "Interrupted" } });
  }, 90_000);
});

async function waitFor(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
