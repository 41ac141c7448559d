/**
 * One client of the peers benchmark (bench/peers.ts) in its own process, so
 * that its RSS and heap figures are its own. Against two scripted servers
 * (bench/model-server.ts: one without latency, one with 100 ms per call):
 *
 *   1. concurrency 1: runs one after another; CPU and wall time per attempt,
 *      and the request body bytes of every first attempt and every retry;
 *   2. N runs at once against the server with latency: CPU and wall time,
 *      peak RSS (sampled every 10 ms), heap after GC once they are done;
 *   3. heap per in-flight run: N runs started with every HTTP request held
 *      at the fetch call until all N are waiting, then GC and measure.
 *
 *   node --expose-gc --import tsx bench/peer-worker.ts --peer NAME --url1 URL --urln URL --runs1 200 --runsn 1000 [--warmup 20]
 *
 * Prints one line `RESULT {json}` (a PeerWorkerResult).
 */
import { compiled } from "./compiled.js";
import type { PeerName, PeerRun } from "./peer-clients.js";
import { runIfMain } from "./common.js";

export interface PeerWorkerResult {
  peer: PeerName;
  /** Concurrency 1. */
  c1: { runs: number; attempts: number; okRuns: number; cpuUsPerAttempt: number; wallUsPerAttempt: number };
  /** N runs at once, latency per call as served. */
  cn: { runs: number; attempts: number; okRuns: number; cpuUsPerAttempt: number; wallMs: number; peakRssMb: number; baselineRssMb: number };
  /** Heap used after a full GC once the N runs are done (what stays), MB. */
  heapAfterGcMb: number;
  /** Heap used after GC with N runs waiting at their first model call, less the heap before they started, per run, KB. */
  heapPerInFlightKb: number;
  /** Request body bytes (the JSON the client sends), median over the concurrency-1 runs. */
  firstAttemptBytes: number;
  retryBytes: number;
}

const gc = (globalThis as { gc?: () => void }).gc;
const mb = (bytes: number) => bytes / 2 ** 20;

// Every client here calls the global fetch (openai v6, ChatOpenAI through it, the AI SDK): count, size and, when asked, hold its requests.
let record: number[] | undefined;
let held: (() => void)[] | undefined;
const realFetch = globalThis.fetch;
globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
  if (record)
    record.push(typeof init?.body === "string" ? Buffer.byteLength(init.body) : input instanceof Request ? (await input.clone().arrayBuffer()).byteLength : -1);
  if (held) await new Promise<void>((resolve) => held!.push(resolve));
  return realFetch(input, init);
};

const medianOf = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? NaN;
};
const cpuUs = (since: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(since);
  return c.user + c.system;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function fullGc(): void {
  if (!gc) throw new Error("run with --expose-gc");
  gc();
  gc();
}

async function concurrencyOne(run: PeerRun, runs: number): Promise<PeerWorkerResult["c1"] & { bytes: number[] }> {
  const bytes: number[] = [];
  record = bytes;
  let attempts = 0;
  let okRuns = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) {
    const out = await run(i);
    attempts += out.attempts;
    if (out.success && out.attempts === 2) okRuns++;
  }
  const wallUs = (performance.now() - t0) * 1000;
  const cpu = cpuUs(cpu0);
  record = undefined;
  return { runs, attempts, okRuns, cpuUsPerAttempt: cpu / attempts, wallUsPerAttempt: wallUs / attempts, bytes };
}

async function manyAtOnce(run: PeerRun, runs: number): Promise<PeerWorkerResult["cn"]> {
  fullGc();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: runs }, (_, i) => run(i)));
  const wallMs = performance.now() - t0;
  const cpu = cpuUs(cpu0);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const attempts = outcomes.reduce((n, o) => n + o.attempts, 0);
  return {
    runs,
    attempts,
    okRuns: outcomes.filter((o) => o.success && o.attempts === 2).length,
    cpuUsPerAttempt: cpu / attempts,
    wallMs,
    peakRssMb: mb(peak),
    baselineRssMb: mb(baseline),
  };
}

async function heapPerInFlight(run: PeerRun, runs: number): Promise<number> {
  fullGc();
  const before = process.memoryUsage().heapUsed;
  held = [];
  const gate = held;
  const all = Promise.all(Array.from({ length: runs }, (_, i) => run(i)));
  const deadline = Date.now() + 300_000;
  while (gate.length < runs) {
    if (Date.now() > deadline) throw new Error(`only ${gate.length} of ${runs} runs reached their model call`);
    await sleep(5);
  }
  fullGc();
  const during = process.memoryUsage().heapUsed;
  held = undefined;
  // Released in batches: a thousand connects at once overflow the server's listen backlog, which no real client does either.
  for (let i = 0; i < gate.length; i += 50) {
    for (const release of gate.slice(i, i + 50)) release();
    await sleep(1);
  }
  await all;
  return (during - before) / 1024 / runs;
}

export async function runPeerWorker(peer: PeerName, url1: string, urlN: string, runs1: number, runsN: number, warmup: number): Promise<PeerWorkerResult> {
  const { makePeer } = await compiled<typeof import("./peer-clients.js")>("bench/peer-clients");
  const one = makePeer(peer, url1);
  const many = makePeer(peer, urlN);
  // Warm-up: load and optimise the code, open connections.
  for (let i = 0; i < warmup; i++) await one(i);
  await Promise.all(Array.from({ length: warmup }, (_, i) => many(i)));

  const c1 = await concurrencyOne(one, runs1);
  const cn = await manyAtOnce(many, runsN);
  fullGc();
  const heapAfterGcMb = mb(process.memoryUsage().heapUsed);
  const heapPerInFlightKb = await heapPerInFlight(many, runsN);
  const { bytes, ...c1Figures } = c1;
  return {
    peer,
    c1: c1Figures,
    cn,
    heapAfterGcMb,
    heapPerInFlightKb,
    // Every run makes exactly 2 calls one after the other: first attempt, retry.
    firstAttemptBytes: medianOf(bytes.filter((_, i) => i % 2 === 0)),
    retryBytes: medianOf(bytes.filter((_, i) => i % 2 === 1)),
  };
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string): string => {
    const i = argv.indexOf(name);
    if (i < 0 || argv[i + 1] === undefined) throw new Error(`${name} is required`);
    return argv[i + 1];
  };
  const result = await runPeerWorker(
    arg("--peer") as PeerName,
    arg("--url1"),
    arg("--urln"),
    Number(arg("--runs1")),
    Number(arg("--runsn")),
    Number(argv.includes("--warmup") ? arg("--warmup") : 20),
  );
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

runIfMain(import.meta.url, main, { exitWhenDone: true });
