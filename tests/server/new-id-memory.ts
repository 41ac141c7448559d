/**
 * Measures how the dev server's memory grows under requests that name new ids
 * (auth on, one valid key): for each route, SECONDS of requests with a fresh
 * id each, CONCURRENCY at a time, twice per route; before and after the heap in use of the
 * server process after a full garbage collection (heap-probe.cjs, preloaded),
 * and the resident memory of its process group.
 *
 *   npx tsx tests/server/new-id-memory.ts [SECONDS=10] [CONCURRENCY=20] [REPO_ROOT]
 *
 * REPO_ROOT serves another checkout's langgraph.json (e.g. an older commit's,
 * to compare). Not a test (it takes a while and its figures depend on the
 * machine): the README quotes its output.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startDevServer } from "../../testkit/dev-server.js";

const SECONDS = Number(process.argv[2] ?? 10);
const CONCURRENCY = Number(process.argv[3] ?? 20);
const REPO = process.argv[4] ? resolve(process.argv[4]) : undefined;
const PROBE_DIR = mkdtempSync(join(tmpdir(), "heap-probe-"));
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

/**
 * The server's heap once it has settled: probed every 2 s until two readings
 * differ by less than 256 KB (at most 60 s), as the server's log lines for a
 * burst of requests stay buffered in its heap until the pipe has taken them.
 */
async function settledHeap(pgid: number): Promise<number> {
  let last = await serverHeap(pgid);
  for (let i = 0; i < 30; i++) {
    const next = await serverHeap(pgid);
    if (Math.abs(next - last) < 256 * 1024) return next;
    last = next;
  }
  return last;
}

/** The largest heap in use (bytes, after GC) among the group's processes: the server's. */
async function serverHeap(pgid: number): Promise<number> {
  for (const f of readdirSync(PROBE_DIR)) rmSync(join(PROBE_DIR, f));
  process.kill(-pgid, "SIGUSR2");
  await new Promise((r) => setTimeout(r, 2_000));
  const heaps = readdirSync(PROBE_DIR).map((f) => (JSON.parse(readFileSync(join(PROBE_DIR, f), "utf8")) as { heapUsed: number }).heapUsed);
  if (heaps.length === 0) throw new Error("no process answered the heap probe");
  return Math.max(...heaps);
}

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

const server = await startDevServer({
  repoRoot: REPO,
  env: {
    LANGGRAPH_API_KEYS: `${KEY}:alice`,
    OPENAI_API_KEY: "unused",
    NODE_OPTIONS: `--require ${join(import.meta.dirname, "heap-probe.cjs")}`,
    HEAP_PROBE_DIR: PROBE_DIR,
  },
});
try {
  const created = await fetch(`${server.url}/threads`, { method: "POST", headers, body: "{}" });
  ownThread = ((await created.json()) as { thread_id: string }).thread_id;
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(`dev server pid group ${server.pid}; ${SECONDS} s per route, ${CONCURRENCY} concurrent`);
  // Warm up (code loaded and compiled on first use is not growth): a few requests on each route.
  for (const probe of probes)
    await Promise.all(
      Array.from({ length: 50 }, () =>
        probe.request(server.url).then(
          (r) => r.arrayBuffer(),
          () => undefined,
        ),
      ),
    );
  // Each route twice: growth that is not warm-up shows again in the second round.
  for (const probe of probes.flatMap((p) => [p, p])) {
    const [heapBefore, rssBefore] = [await settledHeap(server.pid), groupRss(server.pid)];
    const { requests, statuses } = await hammer(server.url, probe);
    const [heapAfter, rssAfter] = [await settledHeap(server.pid), groupRss(server.pid)];
    const delta = (a: number, b: number) => `${b >= a ? "+" : ""}${mb(b - a)}`;
    const perRequest = requests > 0 ? `${Math.round((heapAfter - heapBefore) / requests)} B/request` : "";
    console.log(
      `${probe.name}: ${requests} requests ${JSON.stringify(statuses)}; heap after GC ${mb(heapBefore)} -> ${mb(heapAfter)} (${delta(heapBefore, heapAfter)}, ${perRequest}); RSS ${delta(rssBefore, rssAfter)}`,
    );
  }
} finally {
  await server.stop();
  rmSync(PROBE_DIR, { recursive: true, force: true });
}
