/**
 * One user's request cannot hurt everyone (src/server/request-bounds.ts),
 * through the real dev server with auth off: a run whose ruleContext nests
 * 20,000 levels is refused at the door, its thread's runs list still answers,
 * and the server still writes its state file, so another user's newer thread
 * survives a restart. No model is needed: nothing here runs a graph.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, expect, it } from "vitest";
import { RULE_CONTEXT_LIMITS } from "../../src/validation/configuration.js";
import { startDevServer, type DevServer } from "../../testkit/dev-server.js";

const START_TIMEOUT = 180_000;

/** JSON text of an object nested `levels` deep, written out (JSON.stringify cannot write one this deep). */
const nestedText = (levels: number) => `${'{"a":'.repeat(levels - 1)}{"a":1}${"}".repeat(levels - 1)}`;

/** The file's text once it holds `needle`; undefined if it never does within the test's own time. */
async function waitForFile(path: string, needle: string, timeoutMs = START_TIMEOUT - 30_000): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = await readFile(path, "utf8").catch(() => "");
    if (text.includes(needle)) return text;
    await new Promise((r) => setTimeout(r, 250));
  }
  return undefined;
}

let dir: string | undefined;
const servers: DevServer[] = [];

async function start(): Promise<DevServer> {
  const server = await startDevServer({ dir, startTimeoutMs: START_TIMEOUT - 30_000 });
  servers.push(server);
  return server;
}

afterAll(async () => {
  for (const server of servers) await server.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

it(
  "a 20,000-deep ruleContext gets 422 naming the limit; the thread's runs list answers 200; another user's newer thread survives a restart",
  async () => {
    dir = await mkdtemp(join(tmpdir(), "langgraph-bounds-"));
    const first = await start();
    const client = new Client({ apiUrl: first.url, apiKey: null });
    const thread = await client.threads.create({ metadata: { user: "mallory" } });

    const res = await fetch(`${first.url}/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"assistant_id":"validation","input":{"request":"A deployment config"},"context":{"ruleContext":${nestedText(20_000)}}}`,
    });
    const reply = (await res.json()) as { message?: string };
    expect(res.status, first.tail(2_000)).toBe(422);
    expect(reply.message).toContain(`context.ruleContext nests deeper than ${RULE_CONTEXT_LIMITS.maxDepth} levels`);

    const runs = await fetch(`${first.url}/threads/${thread.thread_id}/runs`);
    expect(runs.status, await runs.clone().text()).toBe(200);
    expect(await runs.json()).toEqual([]);

    const other = await client.threads.create({ metadata: { user: "alice" } });
    // The server writes its state file 3 s after a change (and again as it exits, within a 3 s grace that a busy
    // machine can overrun): wait for the scheduled write, keep what it wrote, and restart from exactly that.
    const stateFile = join(dir, ".langgraph_api", ".langgraphjs_ops.json");
    const written = await waitForFile(stateFile, other.thread_id);
    expect(written, first.tail(2_000)).toContain(other.thread_id);
    await first.stop();
    await writeFile(stateFile, written!);

    const second = await start();
    const again = new Client({ apiUrl: second.url, apiKey: null });
    expect((await again.threads.get(other.thread_id)).metadata).toMatchObject({ user: "alice" });
    expect((await again.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
  },
  2 * START_TIMEOUT,
);
