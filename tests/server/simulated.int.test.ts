/**
 * The dev server with LLM_MODEL=simulated and no model provider at all (what `LLM_MODEL=simulated npm start`
 * gives a newcomer): a validation run and a Reflexion run through the SDK end valid, and each says that its
 * answers come from the built-in simulated model: the validation run's settings name the model, and the
 * Reflexion run's evaluations open with the model's label. Studio's configuration forms show it as the
 * model field's default (the model in effect). The SDK's samples in the README and docs/ run against it as
 * written, their server address aside; the one about authentication against a second server with API keys.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIMULATED_MODEL } from "../../src/environment.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { checkValue } from "../../src/specs/check.js";
import { startDevServer, type DevServer } from "../../testkit/dev-server.js";
import { typescriptBlocks } from "../docs/markdown.js";
import { AUTH_SERVER_BLOCKS, removeBlockFolder, runBlock, SAMPLE_SERVER_URL, SERVER_BLOCKS } from "../docs/samples.js";

const START_TIMEOUT = 180_000;
const TEST_TIMEOUT = 120_000;
// A docs sample: a child process through tsx making the sample's runs, ~5 s alone; 30-55 s measured under
// `BUSY_LOOPS=4 scripts/busy.sh` at load 23, with other test files beside it.
const SAMPLE_TIMEOUT = 240_000;

afterAll(removeBlockFolder);

/** A docs block written for the server on 127.0.0.1:8123, run as a program against `url` instead. */
async function expectBlockRuns(page: string, index: number, url: string, stdout: RegExp): Promise<void> {
  const code = typescriptBlocks(page)[index];
  expect(code).toContain(SAMPLE_SERVER_URL);
  const result = await runBlock(code.replaceAll(SAMPLE_SERVER_URL, url), {});
  expect(result.code, result.stderr).toBe(0);
  expect(result.stderr).toBe("");
  expect(result.stdout).toMatch(stdout);
}

describe("LangGraph server with LLM_MODEL=simulated and no provider", () => {
  let server: DevServer | undefined;
  let client: Client;

  beforeAll(async () => {
    server = await startDevServer({ env: { LLM_MODEL: "simulated" }, startTimeoutMs: START_TIMEOUT - 20_000 });
    client = new Client({ apiUrl: server.url, apiKey: null });
  }, START_TIMEOUT);

  afterAll(async () => {
    await server?.stop();
  }, 60_000);

  /** On failure, the server's recent output is part of the message. */
  const test = (name: string, fn: () => Promise<void>, timeout = TEST_TIMEOUT) =>
    it(
      name,
      async () => {
        try {
          await fn();
        } catch (error) {
          if (error instanceof Error) error.message += `\n--- langgraphjs dev output (tail) ---\n${server?.tail(6_000)}`;
          throw error;
        }
      },
      timeout,
    );

  test("Studio's forms show the model in effect: each graph's model field defaults to simulated", async () => {
    const assistants = await client.assistants.search({ limit: 100 });
    expect(assistants.map((a) => a.graph_id).sort()).toEqual(["reflexion", "validation"]);
    for (const assistant of assistants) {
      const schemas = await client.assistants.getSchemas(assistant.assistant_id);
      for (const schema of [schemas.config_schema, schemas.context_schema] as Array<{ properties: Record<string, { default?: unknown }> }>) {
        expect(schema.properties.model, assistant.graph_id).toMatchObject({ title: "Model", default: SIMULATED_MODEL });
      }
    }
  });

  test("a validation run ends valid after its errors are fed back; the run settings say model: simulated", async () => {
    const thread = await client.threads.create();
    const out = (await client.runs.wait(thread.thread_id, "validation", {
      input: { request: "A deployment config for payments-api with 8 replicas" },
    })) as { success: boolean; value: unknown; history: Array<{ valid: boolean; errors: string[] }> };
    expect(out.success, JSON.stringify(out)).toBe(true);
    expect(out.history[0]).toMatchObject({ valid: false });
    expect(out.history[0].errors.length).toBeGreaterThan(0);
    expect((await checkValue(builtinSpecs.get("deployment-config")!, out.value)).valid).toBe(true);
    const state = await client.threads.getState<{ run: { model: string } }>(thread.thread_id);
    expect(state.values.run.model).toBe("simulated");
  });

  test("a Reflexion run with a gate spec: a valid best response, evaluations labelled as the simulated model's", async () => {
    const out = (await client.runs.wait(null, "reflexion", {
      input: { tasks: ["A deployment config for payments-api with 8 replicas"] },
      context: { spec: "deployment-config", maxLoops: 3 },
    })) as { results: Array<string | null>; outcomes: Array<{ valid: boolean | null }>; steps: Array<Array<{ evaluation: string }>> };
    expect(out.outcomes[0]?.valid, JSON.stringify(out)).toBe(true);
    expect((await checkValue(builtinSpecs.get("deployment-config")!, JSON.parse(out.results[0]!))).valid).toBe(true);
    expect(out.steps[0].length).toBeGreaterThan(0);
    for (const step of out.steps[0]) expect(step.evaluation).toMatch(/^\(built-in simulated model "simulated": seeded rules, not a language model\)/);
  });

  for (const [page, index, stdout] of SERVER_BLOCKS) {
    test(`${page} block ${index}, the SDK's sample, runs against it`, () => expectBlockRuns(page, index, server!.url, stdout), SAMPLE_TIMEOUT);
  }
});

describe("LangGraph server with LLM_MODEL=simulated and API keys for two users", () => {
  let server: DevServer | undefined;
  beforeAll(async () => {
    server = await startDevServer({
      env: { LLM_MODEL: "simulated", LANGGRAPH_API_KEYS: "alice-secret:alice,bob-secret:bob" },
      startTimeoutMs: START_TIMEOUT - 20_000,
    });
  }, START_TIMEOUT);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);

  for (const [page, index, stdout] of AUTH_SERVER_BLOCKS) {
    it(
      `${page} block ${index}, the SDK's sample with two users, runs against it and prints the statuses it says`,
      async () => {
        try {
          await expectBlockRuns(page, index, server!.url, stdout);
        } catch (error) {
          if (error instanceof Error) error.message += `\n--- langgraphjs dev output (tail) ---\n${server?.tail(6_000)}`;
          throw error;
        }
      },
      SAMPLE_TIMEOUT,
    );
  }
});
