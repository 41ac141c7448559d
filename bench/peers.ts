/**
 * Benchmark: the package next to what a user would pick instead, on the same
 * footing. Every client (bench/peer-clients.ts) makes the same requests to the
 * same scripted server (bench/model-server.ts, its own process), and every run
 * needs exactly 2 attempts.
 *
 * The primary figures come from one process running every client interleaved
 * (bench/interleaved.ts: each client once per cycle, in a random order; one
 * ratio per pair and cycle). The check beside them runs each client in its own
 * child process (bench/peer-worker.ts), where RSS and heap are the client's
 * own: each repetition runs every client once (in a rotated order); ratios are
 * taken within a repetition. Every ratio is the median (min–max) of the
 * per-cycle or per-repetition ratios.
 */
import type { ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import {
  compareRepeated,
  fmt,
  fmtLoad,
  fmtRatio,
  median,
  outcomeBlocks,
  spread,
  table,
  type BenchOptions,
  type BenchResult,
  type Comparison,
  type Target,
} from "./common.js";
import { lineStartingWith, spawnTs } from "./concurrency.js";
import { allRunsValid, cycleRatios, figures, INTERLEAVED_CLIENTS, type InterleavedResult } from "./interleaved.js";
import { PEER_LABELS, PEERS, type ClientName, type PeerName } from "./peer-clients.js";
import type { PeerWorkerResult } from "./peer-worker.js";

export interface PeersOptions extends BenchOptions {
  /** Cycles of the interleaved measurement (one run at a time). */
  cycles?: number;
  /** Separate-process repetitions. */
  repetitions?: number;
  /** Runs one after another (concurrency 1). */
  runs1?: number;
  /** Runs at once. */
  runsN?: number;
  latencyMs?: number;
}

const BASELINE: PeerName = "openai-ajv";
const FLOOR: PeerName = "langgraph-floor";
const PACKAGE: PeerName = "package-graph";
const RAW: ClientName = "raw-http";
const FLOOR_PACKAGE_MODEL: ClientName = "floor-package-model";
const ATTEMPTS_PER_RUN = 2;

/** The figures compared per client, read from one worker's result. */
const FIGURES = {
  cpu1: (r: PeerWorkerResult) => r.c1.cpuUsPerAttempt,
  wall1: (r: PeerWorkerResult) => r.c1.wallUsPerAttempt,
  cpuN: (r: PeerWorkerResult) => r.cn.cpuUsPerAttempt,
  wallN: (r: PeerWorkerResult) => r.cn.wallMs,
  rss: (r: PeerWorkerResult) => r.cn.peakRssMb,
  heap: (r: PeerWorkerResult) => r.heapAfterGcMb,
  heapPerRun: (r: PeerWorkerResult) => r.heapPerInFlightKb,
  firstBytes: (r: PeerWorkerResult) => r.firstAttemptBytes,
  retryBytes: (r: PeerWorkerResult) => r.retryBytes,
};
type Figure = keyof typeof FIGURES;

async function startServer(latencyMs: number): Promise<{ server: ChildProcess; baseUrl: string }> {
  const server = spawnTs("./model-server.ts", ["--port", "0", "--latency-ms", String(latencyMs), "--mode", "invalid-then-valid"]);
  return { server, baseUrl: await lineStartingWith(server, "READY ", 30_000) };
}

function stopServer(server: ChildProcess): void {
  server.stdin?.end();
  if (server.exitCode === null) server.kill();
}

/** The interleaved measurement in a process of its own (so the harness's heap is not in it). */
export async function runInterleavedWorker(
  baseUrl: string,
  args: { runs: number; blockMs?: number; cycles: number; warmup: number; atOnce: boolean; seed?: number },
): Promise<InterleavedResult> {
  const worker = spawnTs(
    "./interleaved.ts",
    [
      "--url",
      baseUrl,
      "--runs",
      String(args.runs),
      "--cycles",
      String(args.cycles),
      "--warmup",
      String(args.warmup),
      "--seed",
      String(args.seed ?? 1),
      ...(args.blockMs === undefined ? [] : ["--block-ms", String(args.blockMs)]),
      ...(args.atOnce ? ["--at-once"] : []),
    ],
    ["--expose-gc"],
  );
  try {
    return JSON.parse(await lineStartingWith(worker, "RESULT ", 1_800_000)) as InterleavedResult;
  } finally {
    if (worker.exitCode === null) worker.kill();
  }
}

async function runWorker(peer: PeerName, url1: string, urlN: string, runs1: number, runsN: number, warmup: number): Promise<PeerWorkerResult> {
  const args = ["--peer", peer, "--url1", url1, "--urln", urlN, "--runs1", String(runs1), "--runsn", String(runsN), "--warmup", String(warmup)];
  const worker = spawnTs("./peer-worker.ts", args, ["--expose-gc"]);
  try {
    return JSON.parse(await lineStartingWith(worker, "RESULT ", 900_000)) as PeerWorkerResult;
  } finally {
    if (worker.exitCode === null) worker.kill();
  }
}

export interface PeersResult extends BenchResult {
  /** Every worker's result, by repetition. */
  repetitions: PeerWorkerResult[][];
  /** The interleaved measurement, one run at a time. */
  interleaved: InterleavedResult;
  /** Load average before and after the separate-process repetitions. */
  separateLoad: { before: number[]; after: number[] };
}

export async function run(opts: PeersOptions): Promise<PeersResult> {
  const cycles = opts.cycles ?? (opts.quick ? 3 : 31);
  const repetitions = opts.repetitions ?? (opts.quick ? 1 : 3);
  const runs1 = opts.runs1 ?? (opts.quick ? 4 : 100);
  const runsN = opts.runsN ?? (opts.quick ? 20 : 1000);
  const latencyMs = opts.latencyMs ?? (opts.quick ? 20 : 100);
  const warmup = opts.quick ? 2 : 20;
  const direct = await startServer(0);
  const delayed = await startServer(latencyMs).catch((e: unknown) => {
    stopServer(direct.server);
    throw e;
  });
  const reps: PeerWorkerResult[][] = [];
  let interleaved: InterleavedResult;
  let separateLoad: PeersResult["separateLoad"];
  try {
    process.stderr.write(`bench: peers: interleaved, ${cycles} cycles\n`);
    interleaved = await runInterleavedWorker(direct.baseUrl, {
      runs: opts.quick ? 2 : 10,
      blockMs: opts.quick ? 20 : 250,
      cycles,
      warmup: opts.quick ? 2 : 200,
      atOnce: false,
    });
    const before = loadavg();
    for (let r = 0; r < repetitions; r++) {
      // A rotated order, so no client always runs first or last on a busy machine.
      const order = PEERS.map((_, i) => PEERS[(i + r) % PEERS.length]);
      const results: PeerWorkerResult[] = [];
      for (const peer of order) {
        process.stderr.write(`bench: peers: repetition ${r + 1}/${repetitions}: ${peer}\n`);
        // One retry of a worker that failed (e.g. a connection refused on a loaded machine): the figures of a failed process are lost anyway.
        results.push(
          await runWorker(peer, direct.baseUrl, delayed.baseUrl, runs1, runsN, warmup).catch((error: unknown) => {
            process.stderr.write(`bench: peers: ${peer} failed, running it again: ${String(error).slice(0, 300)}\n`);
            return runWorker(peer, direct.baseUrl, delayed.baseUrl, runs1, runsN, warmup);
          }),
        );
      }
      reps.push(results);
    }
    separateLoad = { before, after: loadavg() };
  } finally {
    stopServer(direct.server);
    stopServer(delayed.server);
  }
  return { ...report(reps, interleaved, separateLoad, { runs1, runsN, latencyMs, warmup }), repetitions: reps, interleaved, separateLoad };
}

/** The ratios both methods measure, one run at a time: [figure, reference]. */
const AGREEMENT_PAIRS: [PeerName, PeerName][] = [
  [PACKAGE, FLOOR],
  [PACKAGE, BASELINE],
  [FLOOR, BASELINE],
  ["chatopenai-loop", BASELINE],
  ["ai-sdk", BASELINE],
  ["with-structured-output", BASELINE],
];

/** How far a separate-process ratio is from the interleaved one, as a signed percentage of the interleaved. */
function gap(separate: number, interleaved: number): string {
  const pct = (separate / interleaved - 1) * 100;
  return `${pct >= 0 ? "+" : "−"}${Math.abs(pct).toFixed(0)}%`;
}

function agreementTable(rows: { label: string; interleaved: number[]; separate: number[] }[]): string {
  return table(
    ["ratio (value ÷ reference)", "interleaved in one process", "each client in its own process", "separate ÷ interleaved"],
    rows.map((r) => [r.label, spread(r.interleaved, fmtRatio), spread(r.separate, fmtRatio), gap(median(r.separate), median(r.interleaved))]),
  );
}

function report(
  reps: PeerWorkerResult[][],
  il: InterleavedResult,
  separateLoad: PeersResult["separateLoad"],
  sizes: { runs1: number; runsN: number; latencyMs: number; warmup: number },
): BenchResult {
  const { runs1, runsN, latencyMs, warmup } = sizes;
  const idealMs = ATTEMPTS_PER_RUN * latencyMs;
  const of = (peer: PeerName, rep: PeerWorkerResult[]) => {
    const found = rep.find((x) => x.peer === peer);
    if (!found) throw new Error(`no result for ${peer}`);
    return found;
  };
  /** A figure of a peer over the separate-process repetitions. */
  const values = (peer: PeerName, figure: Figure) => reps.map((rep) => FIGURES[figure](of(peer, rep)));
  /** The figure's ratio to another peer's in the same repetition, over the repetitions. */
  const ratios = (peer: PeerName, figure: Figure, against: PeerName) => reps.map((rep) => FIGURES[figure](of(peer, rep)) / FIGURES[figure](of(against, rep)));
  // Interleaved, one run at a time.
  const cpu = (c: ClientName) => figures(il, c, "cpuPerAttempt");
  const ir = (c: ClientName, ref: ClientName) => cycleRatios(il, c, ref, "cpuPerAttempt");
  const mi = (c: ClientName) => median(cpu(c));
  const mir = (c: ClientName, ref: ClientName) => median(ir(c, ref));

  const interleavedRows = INTERLEAVED_CLIENTS.filter((c) => il.clients.includes(c)).map((c) => [
    PEER_LABELS[c],
    spread(cpu(c)),
    spread(ir(c, RAW), fmtRatio),
    spread(ir(c, BASELINE), fmtRatio),
    spread(ir(c, FLOOR), fmtRatio),
    spread(figures(il, c, "wallPerAttempt")),
  ]);
  const cpuRows = PEERS.map((p) => [
    PEER_LABELS[p],
    spread(values(p, "cpu1")),
    spread(ratios(p, "cpu1", BASELINE), fmtRatio),
    spread(values(p, "wall1")),
    spread(values(p, "cpuN")),
    spread(ratios(p, "cpuN", BASELINE), fmtRatio),
    spread(values(p, "wallN")),
    spread(
      values(p, "wallN").map((w) => w / idealMs),
      fmtRatio,
    ),
  ]);
  const memoryRows = PEERS.map((p) => [
    PEER_LABELS[p],
    spread(values(p, "rss")),
    spread(ratios(p, "rss", BASELINE), fmtRatio),
    spread(values(p, "heap")),
    spread(values(p, "heapPerRun")),
    spread(ratios(p, "heapPerRun", BASELINE), fmtRatio),
    spread(values(p, "firstBytes")),
    spread(values(p, "retryBytes")),
  ]);
  const agreementRows = AGREEMENT_PAIRS.map(([c, ref]) => ({
    label: `${PEER_LABELS[c]} ÷ ${PEER_LABELS[ref]}`,
    interleaved: ir(c, ref),
    separate: ratios(c, "cpu1", ref),
  }));
  const gaps = agreementRows.map((r) => Math.abs(median(r.separate) / median(r.interleaved) - 1));

  const cmp = (label: string, c: ClientName, ref: ClientName, referenceLabel: string) => compareRepeated(label, cpu(c), cpu(ref), "µs", referenceLabel);
  const sep = (label: string, figure: Figure, unit: string) =>
    compareRepeated(label, values(PACKAGE, figure), values(FLOOR, figure), unit, "minimal two-node LangGraph graph");
  const comparisons: Comparison[] = [
    cmp("package graph vs its framework floor: CPU per attempt, one run at a time", PACKAGE, FLOOR, "minimal two-node LangGraph graph"),
    cmp("package graph vs the openai SDK + validator loop: CPU per attempt, one run at a time", PACKAGE, BASELINE, "openai SDK loop"),
    cmp("package graph vs a ChatOpenAI loop: CPU per attempt, one run at a time", PACKAGE, "chatopenai-loop", "ChatOpenAI loop"),
    cmp("package graph vs the raw floor: CPU per attempt, one run at a time", PACKAGE, RAW, "raw node:http + JSON.parse + validator"),
    cmp(
      "package graph vs the minimal graph with the package's model client: CPU per attempt, one run at a time",
      PACKAGE,
      FLOOR_PACKAGE_MODEL,
      "minimal two-node graph, createChatModel",
    ),
    cmp("minimal two-node LangGraph graph vs the openai SDK loop: CPU per attempt, one run at a time", FLOOR, BASELINE, "openai SDK loop"),
    cmp("openai SDK loop vs the raw floor: CPU per attempt, one run at a time", BASELINE, RAW, "raw node:http + JSON.parse + validator"),
    sep("package graph vs its framework floor: heap per in-flight run (own processes)", "heapPerRun", "KB"),
    sep(`package graph vs its framework floor: peak RSS, ${runsN} at once (own processes)`, "rss", "MB"),
  ];
  const target = (description: string, r: number[], limit: number, what: string): Target => ({
    description,
    met: median(r) <= limit,
    detail: `${spread(r, fmtRatio)} (median, min–max over ${r.length} ${what}), limit ${fmtRatio(limit)}`,
  });
  const targets: Target[] = [
    target("package graph at or below its framework floor in CPU per attempt (one run at a time, interleaved)", ir(PACKAGE, FLOOR), 1.0, "cycles"),
    target("package graph within 2.8× of the openai SDK loop in CPU per attempt (one run at a time, interleaved)", ir(PACKAGE, BASELINE), 2.8, "cycles"),
    target(
      "package graph within 1.2× of its framework floor in heap per in-flight run (own processes)",
      ratios(PACKAGE, "heapPerRun", FLOOR),
      1.2,
      "repetitions",
    ),
    target(`package graph within 1.2× of its framework floor in peak RSS (${runsN} at once, own processes)`, ratios(PACKAGE, "rss", FLOOR), 1.2, "repetitions"),
  ];
  const all = reps.flat();
  const checks = [
    {
      description: `interleaved: every run of every client ended valid after exactly ${ATTEMPTS_PER_RUN} attempts`,
      ok: allRunsValid(il),
      detail: `${il.clients.length} clients × ${il.blocks[PACKAGE]?.length ?? 0} cycles, ${Object.values(il.blocks)
        .flat()
        .reduce((n, b) => n + b.runs, 0)} runs`,
    },
    {
      description: `own processes: every run of every client ended valid after exactly ${ATTEMPTS_PER_RUN} attempts (one at a time and ${runsN} at once)`,
      ok: all.every((r) => r.c1.okRuns === r.c1.runs && r.cn.okRuns === r.cn.runs),
      detail: PEERS.map((p) => `${p}: ${reps.map((rep) => `${of(p, rep).c1.okRuns}/${runs1} + ${of(p, rep).cn.okRuns}/${runsN}`).join(", ")}`).join("; "),
    },
  ];

  const floorOverLoop = mi(FLOOR) - mi("chatopenai-loop");
  const packageOverFloor = mi(PACKAGE) - mi(FLOOR);
  const cycles = il.blocks[PACKAGE]?.length ?? 0;
  const markdown = [
    "## 7. Peers: the package next to what a user would pick instead",
    "",
    `Every client makes the same requests (the deployment-config spec, the package's system prompt; the first answer breaks both cross-field rules, the retry is valid, so every run makes exactly ${ATTEMPTS_PER_RUN} attempts) ` +
      "to the same scripted OpenAI-compatible server (bench/model-server.ts, its own process), and every client checks answers with the same validator (`checkValueSync`), so what differs is the client and its framework. " +
      "Clients (bench/peer-clients.ts, compiled to JavaScript as in bench/compiled.ts): the raw floor (one `node:http` request per attempt on a kept-alive socket, `JSON.parse` of the body and of the answer, the validator: the least any client does); " +
      "the `openai` SDK (v6) calling `chat.completions.create` in a loop; `ChatOpenAI` (@langchain/openai) in a loop; a minimal two-node LangGraph graph " +
      "(generate → validate → conditional edge, Annotation state, the same `ChatOpenAI` and prompts): the floor for any LangGraph graph making these calls; this package's compiled validation graph " +
      "(built by `buildValidationGraph` with `createChatModel`); the same minimal graph with the package's model client (`createChatModel`: `ChatOpenAI` with a deadline over each whole answer and provider refusals kept), " +
      "which splits what the package adds between its model client and its graph (interleaved only); the AI SDK (`ai` 6, `@ai-sdk/openai` 3 chat model) `generateObject` with the spec's JSON Schema and the validator as its `validate`, " +
      "in a loop that sends back the SDK's own error text; LangChain's `withStructuredOutput` (JSON-schema mode, `includeRaw`) in a loop that sends back the validator's messages. " +
      "The clients that use the package's prompts send the same messages (their request bodies differ by the fields each client adds); the AI SDK and `withStructuredOutput` add the JSON Schema as `response_format` and retry as a conversation.",
    "",
    "instructor-js is not in the tables: every release (`@instructor-ai/instructor` 1.7.0 and older) depends on `zod-stream` and `zod-validation-error` versions that declare zod 3 " +
      "(and `zod-stream` 3.0.0 pins `openai` 4.47.1) as peers, so it does not install beside this package's zod 4 and openai 6 without ERESOLVE (npm's `--dry-run` shows the conflict); forcing it would measure an unsupported combination.",
    "",
    "### Interleaved in one process, one run at a time (primary)",
    "",
    `All clients in one child process (bench/interleaved.ts) against a server without latency: after a warm-up of ${il.warmup} runs per client, ${cycles} cycles, each running every client once, in a random order, ` +
      `for a block of runs one after another sized from its warm-up to take about ${il.blockMs ?? "?"} ms (runs per block: ${il.clients.map((c) => `${c} ${il.runsPerBlock[c]}`).join(", ")}), so a GC pause or a time slice lost to another process weighs alike on every client; ` +
      "a scavenge before each block, not timed. " +
      "CPU time is `process.cpuUsage()` of the process (user + system, all threads) over the block, ÷ its attempts; wall time beside it. " +
      `Each cell is the median (min–max) over the cycles; each ratio is taken within a cycle. Load average (1 / 5 / 15 min): ${fmtLoad(il.loadBefore)} before, ${fmtLoad(il.loadAfter)} after.`,
    "",
    table(["client", "CPU µs/attempt", "÷ raw floor", "÷ openai SDK loop", "÷ minimal LangGraph graph", "wall µs/attempt"], interleavedRows),
    "",
    `Where the time goes (medians of the per-cycle ratios and figures above): the raw floor costs ${fmt(mi(RAW))} µs per attempt: one HTTP round trip through \`node:http\`, two \`JSON.parse\` calls and the validator; ` +
      `the \`openai\` SDK loop costs ${fmtRatio(mir(BASELINE, RAW))} that. The minimal LangGraph graph costs ${fmt(floorOverLoop)} µs per attempt more than the same calls in a \`ChatOpenAI\` loop ` +
      `(${fmtRatio(mir(FLOOR, "chatopenai-loop"))}): that is LangGraph's machinery (two supersteps per attempt, a checkpoint object built every step even with no checkpointer, and a langsmith \`RunTree\` ` +
      "that LangChain builds for every node, router and channel write even with tracing off; see the profile in section 2), upstream of this package. " +
      `The package's graph costs ${fmt(Math.abs(packageOverFloor))} µs per attempt ${packageOverFloor >= 0 ? "more" : "less"} than that floor (${fmtRatio(mir(PACKAGE, FLOOR))}); ` +
      `the same minimal graph with the package's model client (\`createChatModel\`) costs ${fmtRatio(mir(FLOOR_PACKAGE_MODEL, FLOOR))} the floor (the client's share), and the package's graph ${fmtRatio(mir(PACKAGE, FLOOR_PACKAGE_MODEL))} that graph ` +
      "(the graph's share: its own nodes, the settings fixed on the edge from START, usage ledger, attempt records and front-door checks). " +
      `Against the \`openai\` SDK loop the package's graph costs ${fmtRatio(mir(PACKAGE, BASELINE))} per attempt, against the raw floor ${fmtRatio(mir(PACKAGE, RAW))}.`,
    "",
    "### Check: each client in its own process",
    "",
    `Each client in its own child process (bench/peer-worker.ts), so its RSS and heap are its own: after a warm-up of ${warmup} runs, ` +
      `${runs1} runs one after another against the server without latency, then ${runsN} runs at once against a server with ${latencyMs} ms per call (ideal wall time ${idealMs} ms), ` +
      `then ${runsN} runs held at their first HTTP request until all are waiting (heap per in-flight run = heap after GC then, less the heap after GC before they started, ÷ ${runsN}). ` +
      "Every client retries a failed HTTP call twice (a retry is not an attempt; the checks below show that every run made exactly 2 attempts). " +
      `${reps.length} repetition${reps.length === 1 ? "" : "s"}, each running every client once in a rotated order; ratios are against the \`openai\` SDK loop of the same repetition; each cell is the median (min–max) over the repetitions. ` +
      `The raw floor is not run here: it does not go through \`fetch\`, where these workers hold requests. Load average: ${fmtLoad(separateLoad.before)} before, ${fmtLoad(separateLoad.after)} after.`,
    "",
    "CPU and wall time:",
    "",
    table(
      [
        "client",
        "CPU µs/attempt, one at a time",
        "÷ openai SDK loop",
        "wall µs/attempt, one at a time (no latency)",
        `CPU µs/attempt, ${runsN} at once`,
        "÷ openai SDK loop",
        `wall ms, ${runsN} at once`,
        `÷ ideal (${idealMs} ms)`,
      ],
      cpuRows,
    ),
    "",
    "Memory and request size:",
    "",
    table(
      [
        "client",
        `peak RSS MB, ${runsN} at once`,
        "÷ openai SDK loop",
        "heap after GC MB (after the runs)",
        "heap per in-flight run KB",
        "÷ openai SDK loop",
        "request bytes, first attempt",
        "request bytes, retry",
      ],
      memoryRows,
    ),
    "",
    "### How far the two methods agree (one run at a time)",
    "",
    agreementTable(agreementRows),
    "",
    `The separate-process figures are one block of ${runs1} runs per process after a warm-up of ${warmup}, so they carry more of each client's start-up (JIT compilation threads count in \`process.cpuUsage()\`) and of the machine's load at that moment; ` +
      `the ratios of the two methods differ by ${(Math.min(...gaps) * 100).toFixed(0)}–${(Math.max(...gaps) * 100).toFixed(0)}% here. ` +
      "The 1,000-at-once figures of both methods are compared at the end of section 3.",
    "",
    outcomeBlocks(comparisons, targets, checks),
  ].join("\n");
  const rows = [
    ...il.clients.map((c) => ({ label: `${c} CPU µs/attempt, interleaved`, value: mi(c), unit: "µs" })),
    ...PEERS.flatMap((p) => [
      { label: `${p} CPU µs/attempt c1`, value: median(values(p, "cpu1")), unit: "µs" },
      { label: `${p} CPU µs/attempt at ${runsN}`, value: median(values(p, "cpuN")), unit: "µs" },
      { label: `${p} peak RSS`, value: median(values(p, "rss")), unit: "MB" },
      { label: `${p} heap per in-flight run`, value: median(values(p, "heapPerRun")), unit: "KB" },
    ]),
  ];
  return { id: "peers", title: "Peers", rows, comparisons, targets, checks, markdown };
}

/**
 * The 1,000-at-once ratios of the interleaved measurement (section 3) beside the separate-process ones
 * (this section), for the report's end of section 3.
 */
export function atOnceAgreement(peers: PeersResult, atOnce: InterleavedResult): string {
  const ratios = (c: PeerName, ref: PeerName) =>
    peers.repetitions.map((rep) => {
      const get = (p: PeerName) => rep.find((x) => x.peer === p)!.cn.cpuUsPerAttempt;
      return get(c) / get(ref);
    });
  const rows = AGREEMENT_PAIRS.filter(([c, ref]) => atOnce.clients.includes(c) && atOnce.clients.includes(ref)).map(([c, ref]) => ({
    label: `${PEER_LABELS[c]} ÷ ${PEER_LABELS[ref]}`,
    interleaved: cycleRatios(atOnce, c, ref, "cpuPerAttempt"),
    separate: ratios(c, ref),
  }));
  return ["How far the two methods agree at this size (CPU per attempt; separate processes: section 7):", "", agreementTable(rows)].join("\n");
}
