/**
 * The command line's --output-mode through the real ChatOpenAI against the scripted server: each mode
 * reaches the provider as that mode's request, the validator still judges the answer, and a mode that
 * does not exist is refused before any model call (exit 2) with the run configuration's own message.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runCli } from "../../testkit/cli.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";

const EXAMPLE = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const VALID = JSON.stringify(EXAMPLE);
const BROKEN = JSON.stringify({ ...EXAMPLE, replicas: 8 });
const REQUEST = "A deployment config for payments-api with 8 replicas";

let server: ScriptedServer;
let env: Record<string, string>;
beforeAll(async () => {
  server = await startScriptedOpenAIServer();
  env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0" };
});
afterAll(async () => {
  await server?.close();
});
let seen = 0;
beforeEach(() => {
  seen = server.requests.length;
});
const sent = () => server.requests.slice(seen).map((r) => r.body);

describe("--output-mode", () => {
  it("json_schema: every request carries the spec's schema as response_format; the validator still judges (a broken rule is fed back)", async () => {
    server.setReplies([BROKEN, VALID]);
    const r = await runCli(["--output-mode", "json_schema", REQUEST], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(EXAMPLE);
    expect(r.stderr).toMatch(/attempt 1 of 3: 1 error/);
    const bodies = sent();
    expect(bodies).toHaveLength(2);
    for (const body of bodies) expect(body.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "deployment-config_output" } });
  });

  it("tool: a forced call of the spec's function; its arguments are the answer", async () => {
    server.setReplies([{ content: null, toolCalls: [{ name: "deployment-config_output", arguments: VALID }] }]);
    const r = await runCli(["--output-mode", "tool", REQUEST], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(EXAMPLE);
    const [body] = sent();
    expect(body.tool_choice).toMatchObject({ type: "function", function: { name: "deployment-config_output" } });
  });

  it("json_object and text: the provider's JSON mode, and no response_format at all", async () => {
    server.setReplies([VALID]);
    expect((await runCli(["--output-mode", "json_object", REQUEST], env)).code).toBe(0);
    expect(sent()[0].response_format).toEqual({ type: "json_object" });
    seen = server.requests.length;
    server.setReplies([VALID]);
    expect((await runCli(["--output-mode", "text", REQUEST], env)).code).toBe(0);
    expect(sent()[0].response_format).toBeUndefined();
  });

  it("a mode that does not exist: exit 2 before any model call, naming the modes; --help lists the option", async () => {
    const r = await runCli(["--output-mode", "yaml", REQUEST], env);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toBe('--output-mode must be one of "auto", "text", "json_object", "json_schema", "tool"; got "yaml".');
    expect(sent()).toEqual([]);
    const help = await runCli(["--help"], {});
    expect(help.stdout).toMatch(/--output-mode MODE +how the model is asked for JSON: text .*json_object .*json_schema .*tool/s);
  });
});
