/**
 * The clients' cost per attempt, measured interleaved in one process: every
 * client (bench/peer-clients.ts: the package's graph, the minimal two-node
 * LangGraph graph, the `openai` SDK loop, a `ChatOpenAI` loop, the AI SDK and
 * `withStructuredOutput` loops, and the raw `node:http` floor) against the same
 * scripted OpenAI-compatible server, each once per cycle in a random order, so
 * drift in the machine's load reaches every client alike and each cycle gives
 * one ratio per pair. CPU time per attempt (`process.cpuUsage()`), wall time
 * beside it. A scavenge before each block (not timed; see minorGc).
 *
 * Two modes: one run at a time (`runs` runs one after another per block), and
 * at once (`runs` runs started together per block).
 *
 *   node --expose-gc --import tsx bench/interleaved.ts --url URL --runs 25 --cycles 31 [--block-ms 250] [--at-once] [--warmup 100] [--clients a,b] [--seed 1]
 *
 * Prints one line `RESULT {json}` (an InterleavedResult).
 */
import { loadavg } from "node:os";
import { cpuUs, median, nowNs, rng, shuffled, flagValue, runIfMain } from "./common.js";
import { compiled } from "./compiled.js";
import type { ClientName } from "./peer-clients.js";

/** Every client measured interleaved, cheapest first. */
export const INTERLEAVED_CLIENTS: ClientName[] = [
  "raw-http",
  "openai-ajv",
  "chatopenai-loop",
  "ai-sdk",
  "with-structured-output",
  "langgraph-floor",
  "floor-package-model",
  "package-graph",
];

export interface BlockSample {
  runs: number;
  attempts: number;
  /** Runs that ended valid after exactly 2 attempts. */
  okRuns: number;
  /** CPU time of the whole process over the block, µs. */
  cpuUs: number;
  wallMs: number;
}

export interface InterleavedResult {
  mode: "one at a time" | "at once";
  clients: ClientName[];
  /** Runs per block, by client (one at a time: sized so every client's block takes about the same time). */
  runsPerBlock: Record<string, number>;
  /** The block length aimed at (one at a time), ms. */
  blockMs?: number;
  warmup: number;
  /** Each client's blocks, one per cycle, in cycle order (index i of two clients is one cycle). */
  blocks: Record<string, BlockSample[]>;
  /** The order the clients ran in, per cycle. */
  orders: ClientName[][];
  /** Runs made in all (warm-up included), for the server's request count. */
  totalRuns: number;
  loadBefore: number[];
  loadAfter: number[];
}

export interface InterleavedOptions {
  baseUrl: string;
  /** Runs per block; one at a time, the least (see blockMs). */
  runs: number;
  /**
   * One at a time: size each client's block to take about this long (from its warm-up), at least `runs` runs.
   * Equal blocks let a GC pause or a stolen time slice weigh alike on every client; a cheap client's short
   * block otherwise carries whole pauses that the heavy clients left behind.
   */
  blockMs?: number;
  cycles: number;
  atOnce: boolean;
  warmup: number;
  clients?: readonly ClientName[];
  seed?: number;
  log?: (line: string) => void;
}

const gc = (globalThis as { gc?: (options?: { type: "minor" | "major" }) => void }).gc;

/**
 * A scavenge before each block (not timed), so a block does not pay for the young garbage of the one before.
 * Not a full GC: with a forced full GC before each block every block ran about twice as slow (the raw floor
 * ~0.9 ms against ~0.4 ms per attempt on a 2-core machine), which no client sees in service.
 */
function minorGc(): void {
  gc?.({ type: "minor" });
}

export async function runInterleaved(opts: InterleavedOptions): Promise<InterleavedResult> {
  const { makePeer } = await compiled<typeof import("./peer-clients.js")>("bench/peer-clients");
  const clients = [...(opts.clients ?? INTERLEAVED_CLIENTS)];
  const run = new Map(clients.map((c) => [c, makePeer(c, opts.baseUrl)]));
  let totalRuns = 0;
  const block = async (client: ClientName, runs: number, offset: number): Promise<BlockSample> => {
    const one = run.get(client)!;
    minorGc();
    const cpu0 = process.cpuUsage();
    const t0 = nowNs();
    let outcomes: { success: boolean; attempts: number }[];
    if (opts.atOnce) outcomes = await Promise.all(Array.from({ length: runs }, (_, i) => one(offset + i)));
    else {
      outcomes = [];
      for (let i = 0; i < runs; i++) outcomes.push(await one(offset + i));
    }
    const wallMs = (nowNs() - t0) / 1e6;
    const cpu = cpuUs(cpu0);
    totalRuns += runs;
    return {
      runs,
      attempts: outcomes.reduce((n, o) => n + o.attempts, 0),
      okRuns: outcomes.filter((o) => o.success && o.attempts === 2).length,
      cpuUs: cpu,
      wallMs,
    };
  };

  const loadBefore = loadavg();
  // Warm-up: load and optimise every client's code and open connections, in the same mode as the blocks;
  // its second half sizes the blocks.
  const runsPerBlock: Record<string, number> = {};
  for (const client of clients) {
    opts.log?.(`warm-up: ${client}`);
    const half = Math.max(1, Math.floor(opts.warmup / 2));
    await block(client, half, 0);
    const settled = await block(client, half, half);
    runsPerBlock[client] = opts.atOnce || !opts.blockMs ? opts.runs : Math.max(opts.runs, Math.round((opts.blockMs * half) / Math.max(settled.wallMs, 1e-3)));
  }
  const random = rng(opts.seed ?? 1);
  const blocks: Record<string, BlockSample[]> = Object.fromEntries(clients.map((c) => [c, []]));
  const orders: ClientName[][] = [];
  for (let cycle = 0; cycle < opts.cycles; cycle++) {
    const order = shuffled(clients, random);
    orders.push(order);
    opts.log?.(`cycle ${cycle + 1}/${opts.cycles}: ${order.join(", ")}`);
    for (const client of order) blocks[client].push(await block(client, runsPerBlock[client], (cycle + 1) * 100_000));
  }
  return {
    mode: opts.atOnce ? "at once" : "one at a time",
    clients,
    runsPerBlock,
    blockMs: opts.atOnce ? undefined : opts.blockMs,
    warmup: opts.warmup,
    blocks,
    orders,
    totalRuns,
    loadBefore,
    loadAfter: loadavg(),
  };
}

/** A figure of a block: CPU µs per attempt, wall µs per attempt, or the block's wall time in ms. */
export type BlockFigure = "cpuPerAttempt" | "wallPerAttempt" | "wallMs";

export function figureOf(b: BlockSample, figure: BlockFigure): number {
  return figure === "cpuPerAttempt" ? b.cpuUs / b.attempts : figure === "wallPerAttempt" ? (b.wallMs * 1000) / b.attempts : b.wallMs;
}

/** A client's figure over the cycles. */
export function figures(r: InterleavedResult, client: ClientName, figure: BlockFigure): number[] {
  return r.blocks[client].map((b) => figureOf(b, figure));
}

/** A client's figure ÷ another's, within each cycle. */
export function cycleRatios(r: InterleavedResult, client: ClientName, reference: ClientName, figure: BlockFigure): number[] {
  return r.blocks[client].map((b, i) => figureOf(b, figure) / figureOf(r.blocks[reference][i], figure));
}

export function medianFigure(r: InterleavedResult, client: ClientName, figure: BlockFigure): number {
  return median(figures(r, client, figure));
}

/** Every run of every block ended valid after exactly 2 attempts. */
export function allRunsValid(r: InterleavedResult): boolean {
  return Object.values(r.blocks).every((bs) => bs.every((b) => b.okRuns === b.runs));
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string) => flagValue(argv, name);
  const baseUrl = arg("--url");
  if (!baseUrl) throw new Error("--url is required");
  const result = await runInterleaved({
    baseUrl,
    runs: Number(arg("--runs") ?? 25),
    blockMs: arg("--block-ms") === undefined ? undefined : Number(arg("--block-ms")),
    cycles: Number(arg("--cycles") ?? 31),
    atOnce: argv.includes("--at-once"),
    warmup: Number(arg("--warmup") ?? 100),
    clients: arg("--clients")?.split(",") as ClientName[] | undefined,
    seed: Number(arg("--seed") ?? 1),
    log: (line) => process.stderr.write(`interleaved: ${line}\n`),
  });
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

runIfMain(import.meta.url, main, { exitWhenDone: true });
