/**
 * The model boundary over real HTTP: the real ChatOpenAI client, built by the
 * package's model factory, against the scripted OpenAI-compatible server, in
 * plain JSON and in SSE streaming, through the compiled graphs and the CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/configuration.js";
import { createChatModel } from "../../src/models.js";
import { ReflexionAgent } from "../../src/reflexion/agent.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { runCli } from "../support/cli.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";

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
  const env = { ...readEnvironment({}), openaiApiKey: "test-key", openaiBaseUrl: server.baseURL, maxRetries: 0 };
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
    expect(sent[1].messages.at(-1)!.content).toContain("replicas=8 requires resources.cpu_limit >= 1.0");
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
    expect(final.result).toEqual(JSON.parse(VALID));
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

  it("exit 0 with the valid JSON on stdout and progress on stderr", async () => {
    server.setReplies([BROKEN, VALID]);
    const r = await runCli(["--spec", "deployment-config", REQUEST.request], env());
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(VALID));
    expect(r.stderr).toContain("attempt 1 of 3: 1 error(s)");
    expect(r.stderr).toContain("replicas=8 requires resources.cpu_limit >= 1.0");
    expect(r.stderr).toContain("attempt 2 of 3: valid");
  });

  it("exit 1 when still invalid after the last attempt", async () => {
    server.setReplies([BROKEN, BROKEN]);
    const r = await runCli(["--max-attempts", "2", REQUEST.request], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not valid after 2 attempt(s) (max_attempts)");
  });

  it("exit 2 for bad usage or configuration, before any model call", async () => {
    const before = server.requests.length;
    expect((await runCli(["--max-attempts", "0", "x"], env())).code).toBe(2);
    expect((await runCli(["--spec", "no-such-spec", "x"], env())).code).toBe(2);
    expect((await runCli([], env())).code).toBe(2);
    const noProvider = await runCli(["x"], {});
    expect(noProvider.code).toBe(2);
    expect(noProvider.stderr).toMatch(/OPENAI_API_KEY.*OPENAI_BASE_URL/s);
    expect(server.requests.length).toBe(before);
  });

  it("exit 3 when the provider keeps failing", async () => {
    server.setReplies([{ fault: "status", status: 503 }]);
    const r = await runCli(["x"], env());
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/HTTP 503/);
  });
});
