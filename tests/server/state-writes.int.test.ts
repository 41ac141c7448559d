/**
 * The verdict cannot be written, on the package's own server: the cases of ./state-write-cases.ts against the
 * LangGraph dev server with auth off and with auth on. Two servers for the whole file, started side by side.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startDevServer, type DevServer } from "../../testkit/dev-server.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { STATE_WRITE_CASES, stateWriteResponder, type StateWriteTarget } from "./state-write-cases.js";

const TEST_TIMEOUT = 120_000;
const START_TIMEOUT = 240_000;

type Target = StateWriteTarget & { server: DevServer };

let model: ScriptedServer | undefined;
let off: Target | undefined;
let on: Target | undefined;

async function start(keys: string): Promise<DevServer> {
  return startDevServer({
    env: { OPENAI_BASE_URL: model!.baseURL, OPENAI_API_KEY: "test", LLM_MAX_RETRIES: "0", LANGGRAPH_API_KEYS: keys },
    startTimeoutMs: START_TIMEOUT - 30_000,
  });
}

beforeAll(async () => {
  model = await startScriptedOpenAIServer({ responder: stateWriteResponder });
  const started = await Promise.allSettled([start(""), start("alice-key:alice,bob-key:bob")]);
  const [a, b] = started.map((s) => (s.status === "fulfilled" ? s.value : undefined));
  if (!a || !b) {
    await Promise.all([a?.stop(), b?.stop()]);
    throw (started.find((s) => s.status === "rejected") as PromiseRejectedResult).reason;
  }
  off = { server: a, model, client: new Client({ apiUrl: a.url, apiKey: null }), headers: { "content-type": "application/json" } };
  on = {
    server: b,
    model,
    client: new Client({ apiUrl: b.url, apiKey: "alice-key" }),
    headers: { "content-type": "application/json", "x-api-key": "alice-key" },
  };
}, START_TIMEOUT);

afterAll(async () => {
  await Promise.all([off?.server.stop(), on?.server.stop()]);
  await model?.close();
}, 60_000);

/** Runs a case; on failure, appends the server's recent output to the error. */
async function withServerOutput(target: Target | undefined, run: (target: StateWriteTarget) => Promise<void>): Promise<void> {
  try {
    await run(target!);
  } catch (error) {
    const tail = target?.server.tail(4_000);
    if (tail && error instanceof Error) error.message += `\n--- langgraphjs dev output (tail) ---\n${tail}`;
    throw error;
  }
}

describe.each([
  ["auth off", "off"],
  ["auth on", "on"],
] as const)("%s", (_label, auth) => {
  for (const c of STATE_WRITE_CASES.filter((c) => c.auth === auth)) {
    it(c.name, () => withServerOutput(auth === "off" ? off : on, c.run), TEST_TIMEOUT);
  }
});
