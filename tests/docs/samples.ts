/**
 * The TypeScript blocks of the README and docs/ pages as programs: which block is which kind, and how one
 * is run. Every block is type-checked (code-blocks.int.test.ts); the whole programs also run, keyless with
 * LLM_MODEL=simulated where they take their model from the environment (tests/integration/examples.int.test.ts)
 * or with a scripted model of their own (tests/streaming/docs.int.test.ts),
 * against the dev server with the simulated model where they are the SDK's (tests/server/simulated.int.test.ts),
 * and against a scripted OpenAI-compatible server where they name models of a provider.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runNode, type ChildResult } from "../../testkit/cli.js";
import { REPO_ROOT } from "../../testkit/dev-server.js";

/** A block: the page it is on and its position among the page's TypeScript blocks (typescriptBlocks). */
export type BlockRef = readonly [page: string, index: number];

/** Whole programs whose model comes from the environment: run with LLM_MODEL=simulated, and what stdout must show. */
export const KEYLESS_BLOCKS: ReadonlyArray<readonly [page: string, index: number, stdout: RegExp]> = [
  // The simulated model takes the number the request gives a field ("8 replicas").
  ["README.md", 0, /^8\n$/],
  ["README.md", 2, /success: true/],
  ["docs/agents.md", 0, /service_name: 'payments-api'/],
  ["docs/agents.md", 3, /success: true/],
  // The guard refuses the first call before the tool runs; the call with the named errors fixed runs it.
  ["docs/agents.md", 4, /^deploy_service call 1 of 3 was not run: its arguments do not match the deployment-config spec\.\ndeployed payments-api\ntrue\n$/],
  ["docs/embedded.md", 0, /service_name: 'payments-api'/],
  ["docs/embedded.md", 2, /^$/],
  ["docs/guarded-tools.md", 0, /deployed payments-api/],
  // The one attempt allowed fails, the run pauses with its errors, and the person's value ends it.
  ["docs/human-review.md", 0, /^\[\n  'resources\.[\s\S]*'\n\]\ntrue valid human\n$/],
  ["docs/production.md", 0, /^$/],
  ["docs/production.md", 1, /^true \{/],
  // The modules a server's langgraph.json names: they load and print nothing (the pack test serves them).
  ["docs/server.md", 2, /^$/],
  ["docs/server.md", 3, /^$/],
  ["docs/specs.md", 0, /^\d+\n$/],
  // A Valibot schema as the spec: the age, when the simulated model's answer passes within its attempts.
  ["docs/specs.md", 1, /^(\d+\n)?$/],
  // The simulated model cannot know the services the rule's facts name, so it may run out of attempts.
  ["docs/specs.md", 2, /^(true|false)\n$/],
  ["docs/specs.md", 3, /^function 10000\n$/],
  ["docs/tracing.md", 2, /^$/],
];

/** Whole programs with a scripted model of their own, run by tests/streaming/docs.int.test.ts (which checks they print what the page shows). */
export const STREAMING_PAGE_BLOCKS: readonly BlockRef[] = [
  ["docs/streaming.md", 0],
  ["docs/streaming.md", 1],
  ["docs/streaming.md", 2],
  ["docs/streaming.md", 4],
];

/** The SDK's programs against the server on http://127.0.0.1:8123 (the dev server with auth off), and what stdout must show. */
export const SERVER_BLOCKS: ReadonlyArray<readonly [page: string, index: number, stdout: RegExp]> = [
  ["README.md", 1, /success: true/],
  ["docs/server.md", 0, /^true \d+ \{/m],
  ["docs/streaming.md", 3, /\[ 'validate' \]/],
];

/** The SDK's program against the server with LANGGRAPH_API_KEYS=alice-secret:alice,bob-secret:bob: the statuses its comments give. */
export const AUTH_SERVER_BLOCKS: ReadonlyArray<readonly [page: string, index: number, stdout: RegExp]> = [
  ["docs/server.md", 1, /^404\n\d+\n403\n403\nfalse\n$/],
];

/** Programs that name OpenAI models (gpt-4o-mini, gpt-4o): run against a scripted OpenAI-compatible server. */
export const OPENAI_BLOCKS: readonly BlockRef[] = [
  ["docs/configuration.md", 0],
  ["docs/embedded.md", 1],
];

/** Programs that name Ollama and Anthropic models: run against scripted servers speaking each one's wire format. */
export const PROVIDER_BLOCKS: readonly BlockRef[] = [["docs/providers.md", 0]];

/**
 * Not run: declarations only (a function); the SDK reading an agent a project serves (tests/agents/streamed-answer.int.test.ts
 * runs one through the dev server); LangSmith's client, which needs its key and service; an OpenTelemetry SDK exporting to a
 * collector (tests/telemetry/otlp.int.test.ts runs the same exporters against a receiver of its own).
 */
export const UNRUN_BLOCKS: readonly BlockRef[] = [
  ["docs/agents.md", 1],
  ["docs/agents.md", 2],
  ["docs/tracing.md", 0],
  ["docs/tracing.md", 1],
];

/** The server address the SDK's samples are written for, replaced by a test's own server. */
export const SAMPLE_SERVER_URL = "http://127.0.0.1:8123";

const dir = join(REPO_ROOT, `.docs-check-samples-${process.pid}`);
let written = 0;

/**
 * Runs a block as a module with tsx, from a folder of the repository (so its imports resolve, the package's
 * name to its source through its own export condition), with only PATH, HOME and `env` as its environment.
 */
export async function runBlock(code: string, env: Record<string, string>): Promise<ChildResult> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `block-${written++}.ts`);
  writeFileSync(file, `${code}\nexport {};\n`);
  try {
    return await runNode(["--conditions=langgraph-trustworthy-output-source", file], env);
  } finally {
    rmSync(file, { force: true });
  }
}

/** Removes the folder runBlock writes into (call it after the last run). */
export function removeBlockFolder(): void {
  rmSync(dir, { recursive: true, force: true });
}
