/**
 * Measures how the dev server's memory grows under requests that name new ids
 * (auth on, one valid key): for each route, SECONDS of requests with a fresh
 * id each, CONCURRENCY at a time, then the resident memory of the server's
 * process group before and after, and the status codes seen.
 *
 *   npx tsx tests/server/new-id-memory.ts [SECONDS=10] [CONCURRENCY=20]
 *
 * Not a test (it takes a while and its figures depend on the machine): the
 * README and the report quote its output.
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { startDevServer } from "../support/dev-server.js";

const SECONDS = Number(process.argv[2] ?? 10);
const CONCURRENCY = Number(process.argv[3] ?? 20);
const KEY = "alice-key";

/** Resident memory (bytes) of every process in the process group `pgid`. */
function groupRss(pgid: number): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue; // field 5 of stat: the process group
      total += Number(fields[21]) * 4096; // field 24: resident pages
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

interface Probe {
  name: string;
  request: (base: string) => Promise<Response>;
}

const headers = { "x-api-key": KEY, "content-type": "application/json" };
const probes: Probe[] = [
  {
    name: "POST /threads/{new id}/commands (state.get)",
    request: (base) => fetch(`${base}/threads/${randomUUID()}/commands`, { method: "POST", headers, body: JSON.stringify({ id: 1, method: "state.get" }) }),
  },
  {
    name: "GET /runs/{new id}/stream",
    request: (base) => fetch(`${base}/runs/${randomUUID()}/stream`, { headers, signal: AbortSignal.timeout(5_000) }),
  },
  {
    name: "GET /threads/{own thread}/runs/{new id}/join",
    request: async (base) => fetch(`${base}/threads/${ownThread}/runs/${randomUUID()}/join`, { headers, signal: AbortSignal.timeout(5_000) }),
  },
  {
    name: "GET /threads/{new id}/state",
    request: (base) => fetch(`${base}/threads/${randomUUID()}/state`, { headers }),
  },
];

let ownThread = "";

async function hammer(base: string, probe: Probe): Promise<{ requests: number; statuses: Record<string, number> }> {
  const deadline = Date.now() + SECONDS * 1000;
  const statuses: Record<string, number> = {};
  let requests = 0;
  const worker = async () => {
    while (Date.now() < deadline) {
      let status: string;
      try {
        const res = await probe.request(base);
        await res.arrayBuffer().catch(() => undefined);
        status = String(res.status);
      } catch (error) {
        status = (error as Error).name;
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
      requests++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { requests, statuses };
}

const server = await startDevServer({ env: { LANGGRAPH_API_KEYS: `${KEY}:alice`, OPENAI_API_KEY: "unused" } });
try {
  const created = await fetch(`${server.url}/threads`, { method: "POST", headers, body: "{}" });
  ownThread = ((await created.json()) as { thread_id: string }).thread_id;
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  console.log(`dev server pid group ${server.pid}; ${SECONDS} s per route, ${CONCURRENCY} concurrent`);
  for (const probe of probes) {
    // Let the collector settle so the figure is what stays, not garbage in flight.
    await new Promise((r) => setTimeout(r, 3_000));
    const before = groupRss(server.pid);
    const { requests, statuses } = await hammer(server.url, probe);
    await new Promise((r) => setTimeout(r, 5_000));
    const after = groupRss(server.pid);
    console.log(`${probe.name}: ${requests} requests ${JSON.stringify(statuses)}; RSS ${mb(before)} -> ${mb(after)} (${after >= before ? "+" : ""}${mb(after - before)})`);
  }
} finally {
  await server.stop();
}
