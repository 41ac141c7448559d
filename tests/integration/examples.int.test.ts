/**
 * Every example runs as written: against the scripted OpenAI-compatible server, and keyless with only
 * LLM_MODEL=simulated (no key, no base URL), as a newcomer's first run does. So does every TypeScript
 * block of the README and docs/ that is a whole program (tests/docs/samples.ts says which is which). The examples import the
 * package by its name; `--conditions=langgraph-trustworthy-output-source` resolves it to the TypeScript
 * source instead of dist/ (a condition of its own, so a consumer's "source" condition never points at
 * files the tarball does not hold).
 */
import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runNode, startNode } from "../../testkit/cli.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { startScriptedAnthropicServer, startScriptedOllamaServer } from "../../testkit/provider-servers.js";
import { documentationPages, typescriptBlocks } from "../docs/markdown.js";
import {
  AUTH_SERVER_BLOCKS,
  KEYLESS_BLOCKS,
  OPENAI_BLOCKS,
  PROVIDER_BLOCKS,
  removeBlockFolder,
  runBlock,
  SERVER_BLOCKS,
  STREAMING_PAGE_BLOCKS,
  UNRUN_BLOCKS,
} from "../docs/samples.js";

const SOURCE = "--conditions=langgraph-trustworthy-output-source";
const KEYLESS = { LLM_MODEL: "simulated" };

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

// Each child runs under a CPU-time budget (CHILD_CPU_SECONDS, testkit/cli.ts; about 2 s used), which waiting
// for a core does not spend; the wall-clock limit is only a backstop for a child that hangs without using CPU.
const CHILD_MS = 900_000;

describe("examples/embedded.ts", () => {
  it(
    "runs as written",
    async () => {
      const result = await runNode([SOURCE, "examples/embedded.ts"], { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("valid after 2 attempt(s)");
      expect(result.stdout).toContain('discount: {"code":"VIP-SAVE40","percent":40}');
      expect(result.stdout).toContain("reflexion: Validators find every error");
    },
    CHILD_MS,
  );
});

describe("every example keyless, with LLM_MODEL=simulated", () => {
  it("the examples folder holds the examples this suite runs", () => {
    expect(readdirSync("examples").sort()).toEqual(["create-agent.ts", "embedded.ts", "guarded-agent.ts", "service.ts"]);
  });

  it(
    "examples/embedded.ts: a valid deployment after the retry, the discount spec answered from its schema, Reflexion saying what it cannot do",
    async () => {
      const result = await runNode([SOURCE, "examples/embedded.ts"], KEYLESS);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^valid after 2 attempt\(s\): \{"service_name"/m);
      expect(result.stdout).toMatch(/^discount: /m);
      expect(result.stdout).toMatch(/^reflexion: .*built-in simulated model/m);
    },
    CHILD_MS,
  );

  it(
    "examples/create-agent.ts: a valid answer, exit 0",
    async () => {
      const result = await runNode([SOURCE, "examples/create-agent.ts"], KEYLESS);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^valid answer after 1 attempt\(s\): \{"service_name":"payments-api"/m);
    },
    CHILD_MS,
  );

  it(
    "examples/guarded-agent.ts: the guard's errors fixed on the next call, one call run",
    async () => {
      const result = await runNode([SOURCE, "examples/guarded-agent.ts"], KEYLESS);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/deploy_service was called [2-3] time\(s\); 1 call\(s\) ran\./);
      expect(result.stdout).toMatch(/deployed payments-api/);
    },
    CHILD_MS,
  );

  it(
    "examples/service.ts: says it is simulated, answers POST /validate with a valid value, stops on SIGTERM",
    async () => {
      const service = startNode([SOURCE, "examples/service.ts"], { ...KEYLESS, PORT: "0" });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let seen = "";
          service.child.stdout!.on("data", (d) => {
            seen += d;
            const match = /service listening on (http:\/\/\S+)/.exec(seen);
            if (match && seen.includes("built-in simulated model")) resolve(match[1]);
          });
          service.child.once("close", (code) => reject(new Error(`the service exited (${code}) before it listened`)));
        });
        const res = await fetch(`${url}/validate`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ request: "A deployment config for payments-api with 8 replicas" }),
        });
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ success: true, stopReason: "valid" });
      } finally {
        service.child.kill("SIGTERM");
      }
      expect((await service.result).code).toBe(0);
    },
    CHILD_MS,
  );
});

// The samples are independent programs: they run side by side (vitest's maxConcurrency at a time).
describe.concurrent("docs samples", () => {
  afterAll(removeBlockFolder);
  const block = (page: string, index: number) => typescriptBlocks(page)[index];

  it("every TypeScript block of the README and docs/ is classified: run here, run against the dev server, or not run (and why)", () => {
    const classified = [
      ...KEYLESS_BLOCKS,
      ...SERVER_BLOCKS,
      ...AUTH_SERVER_BLOCKS,
      ...OPENAI_BLOCKS,
      ...PROVIDER_BLOCKS,
      ...STREAMING_PAGE_BLOCKS,
      ...UNRUN_BLOCKS,
    ].map(([page, index]) => `${page}#${index}`);
    const blocks = documentationPages().flatMap((page) => typescriptBlocks(page).map((_, index) => `${page}#${index}`));
    expect(classified.sort()).toEqual(blocks.sort());
    // Blocks are run, here or against a server: the ones left unrun (each with its reason) are a small share.
    expect(classified.length - UNRUN_BLOCKS.length).toBeGreaterThan(UNRUN_BLOCKS.length * 5);
  });

  describe.each(KEYLESS_BLOCKS)("%s block %i, keyless with LLM_MODEL=simulated", (page, index, stdout) => {
    it(
      "runs to its end, exit status 0, nothing on stderr",
      async ({ expect }) => {
        const result = await runBlock(block(page, index), KEYLESS);
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr).toBe("");
        expect(result.stdout).toMatch(stdout);
      },
      CHILD_MS,
    );
  });

  describe.each(PROVIDER_BLOCKS)("%s block %i, naming Ollama and Anthropic models, against scripted servers of each", (page, index) => {
    it(
      "runs to its end: each model called through its own client and wire format, in the order the page gives",
      async ({ expect }) => {
        const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
        const broken = JSON.stringify({ ...example, replicas: 8 });
        const ollama = await startScriptedOllamaServer([{ text: broken }, { text: broken }]);
        const anthropic = await startScriptedAnthropicServer([{ toolUse: { input: JSON.stringify(example) } }]);
        try {
          const env = { OLLAMA_BASE_URL: ollama.baseURL, ANTHROPIC_BASE_URL: anthropic.baseURL, ANTHROPIC_API_KEY: "sk-ant-test", LLM_MAX_RETRIES: "0" };
          const result = await runBlock(block(page, index), env);
          expect(result.code, result.stderr).toBe(0);
          expect(result.stderr).toBe("");
          expect(result.stdout).toMatch(/ollama\/llama3\.2[\s\S]*ollama\/llama3\.2[\s\S]*anthropic\/claude-sonnet-4-5/);
          expect(ollama.requests.map((q) => q.body.model)).toEqual(["llama3.2", "llama3.2"]);
          expect(anthropic.requests.map((q) => q.body.model)).toEqual(["claude-sonnet-4-5"]);
        } finally {
          await Promise.all([ollama.close(), anthropic.close()]);
        }
      },
      CHILD_MS,
    );
  });

  describe.each(OPENAI_BLOCKS)("%s block %i, naming OpenAI models, against the scripted OpenAI-compatible server", (page, index) => {
    it(
      "runs to its end: the first model's answer refused, the run valid",
      async ({ expect }) => {
        const result = await runBlock(block(page, index), { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" });
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr).toBe("");
        expect(result.stdout).toContain("gpt-4o-mini");
      },
      CHILD_MS,
    );
  });
});
