/**
 * The command line's --model and --escalate-to with provider-qualified names, against scripted Anthropic
 * and Ollama servers: each attempt through its provider's own client, keys and URLs read from the environment.
 */
import { afterEach, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runCli } from "../../testkit/cli.js";
import { startScriptedAnthropicServer, startScriptedOllamaServer, type ScriptedProviderServer } from "../../testkit/provider-servers.js";

const EXAMPLE = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const VALID = JSON.stringify(EXAMPLE);
const BROKEN = JSON.stringify({ ...EXAMPLE, replicas: 8 });
const REQUEST = "A deployment config for payments-api with 8 replicas";

const servers: ScriptedProviderServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("--model and --escalate-to with provider/model names", () => {
  it("escalates from ollama/… to anthropic/…, each through its own server", async () => {
    const ollama = await startScriptedOllamaServer([{ text: BROKEN }]);
    const anthropic = await startScriptedAnthropicServer([{ toolUse: { input: VALID } }]);
    servers.push(ollama, anthropic);
    const env = { OLLAMA_BASE_URL: ollama.baseURL, ANTHROPIC_BASE_URL: anthropic.baseURL, ANTHROPIC_API_KEY: "sk-ant-test", LLM_MAX_RETRIES: "0" };
    const r = await runCli(["--model", "ollama/llama3.2", "--escalate-to", "anthropic/claude-sonnet-4-5", REQUEST], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(EXAMPLE);
    expect(ollama.requests.map((q) => q.body.model)).toEqual(["llama3.2"]);
    expect(anthropic.requests.map((q) => q.body.model)).toEqual(["claude-sonnet-4-5"]);
    expect(r.stderr).toMatch(/\(ollama\/llama3\.2\)[\s\S]*\(anthropic\/claude-sonnet-4-5\): valid/);
  });

  it("an anthropic/… model without its key is refused before any call, naming the key (exit 2)", async () => {
    const r = await runCli(["--model", "anthropic/claude-sonnet-4-5", REQUEST], { LLM_MAX_RETRIES: "0" });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toMatch(/ANTHROPIC_API_KEY/);
  });

  it("a provider with no model is refused with the run's own message (exit 2)", async () => {
    const r = await runCli(["--model", "ollama/", REQUEST], {});
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toMatch(/"ollama\/" names the provider ollama but no model/);
  });
});
