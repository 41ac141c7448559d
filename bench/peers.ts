/**
 * Benchmark: the package next to what a user would pick instead, on the same
 * footing. Every client (bench/peer-clients.ts) makes the same requests to the
 * same scripted server (bench/model-server.ts, its own process), every run
 * needs exactly 2 attempts, and each client runs in its own child process
 * (bench/peer-worker.ts), so its RSS and heap are its own. Each repetition
 * runs every client once (in a rotated order); ratios are taken against the
 * baseline (the `openai` SDK + validator loop) of the same repetition, and
 * every figure is the median (min–max) over the repetitions.
 */
import type { ChildProcess } from "node:child_process";
import { compare, fmt, fmtRatio, median, outcomeBlocks, table, type BenchOptions, type BenchResult, type Comparison, type Target } from "./common.js";
import { lineStartingWith, spawnTs } from "./concurrency.js";
import { PEER_LABELS, PEERS, type PeerName } from "./peer-clients.js";
import type { PeerWorkerResult } from "./peer-worker.js";

export interface PeersOptions extends BenchOptions {
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

/** median (min–max) of a list of numbers. */
function spread(values: readonly number[], format: (x: number) => string = fmt): string {
  if (values.length === 1) return format(values[0]);
  return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

async function startServer(latencyMs: number): Promise<{ server: ChildProcess; baseUrl: string }> {
  const server = spawnTs("./model-server.ts", ["--port", "0", "--latency-ms", String(latencyMs), "--mode", "invalid-then-valid"]);
  return { server, baseUrl: await lineStartingWith(server, "READY ", 30_000) };
}

function stopServer(server: ChildProcess): void {
  server.stdin?.end();
  if (server.exitCode === null) server.kill();
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
}

export async function run(opts: PeersOptions): Promise<PeersResult> {
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
  try {
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
  } finally {
    stopServer(direct.server);
    stopServer(delayed.server);
  }
  return { ...report(reps, { runs1, runsN, latencyMs, warmup }), repetitions: reps };
}

function report(reps: PeerWorkerResult[][], sizes: { runs1: number; runsN: number; latencyMs: number; warmup: number }): BenchResult {
  const { runs1, runsN, latencyMs, warmup } = sizes;
  const idealMs = ATTEMPTS_PER_RUN * latencyMs;
  const of = (peer: PeerName, rep: PeerWorkerResult[]) => {
    const found = rep.find((x) => x.peer === peer);
    if (!found) throw new Error(`no result for ${peer}`);
    return found;
  };
  /** A figure of a peer over the repetitions. */
  const values = (peer: PeerName, figure: Figure) => reps.map((rep) => FIGURES[figure](of(peer, rep)));
  /** The figure's ratio to another peer's in the same repetition, over the repetitions. */
  const ratios = (peer: PeerName, figure: Figure, against: PeerName) => reps.map((rep) => FIGURES[figure](of(peer, rep)) / FIGURES[figure](of(against, rep)));
  const m = (peer: PeerName, figure: Figure) => median(values(peer, figure));
  const mr = (peer: PeerName, figure: Figure, against: PeerName) => median(ratios(peer, figure, against));

  const cpuRows = PEERS.map((p) => [
    PEER_LABELS[p],
    spread(values(p, "cpu1")),
    spread(ratios(p, "cpu1", BASELINE), fmtRatio),
    spread(values(p, "wall1")),
    spread(values(p, "cpuN")),
    spread(ratios(p, "cpuN", BASELINE), fmtRatio),
    spread(values(p, "wallN")),
    spread(values(p, "wallN").map((w) => w / idealMs), fmtRatio),
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

  const comparisons: Comparison[] = [
    compare("package graph vs its framework floor: CPU per attempt, concurrency 1", m(PACKAGE, "cpu1"), m(FLOOR, "cpu1"), "µs", "minimal two-node LangGraph graph"),
    compare("package graph vs a ChatOpenAI loop over HTTP: CPU per attempt, concurrency 1", m(PACKAGE, "cpu1"), m("chatopenai-loop", "cpu1"), "µs", "ChatOpenAI loop"),
    compare("package graph vs the openai SDK + validator loop: CPU per attempt, concurrency 1", m(PACKAGE, "cpu1"), m(BASELINE, "cpu1"), "µs", "openai SDK loop"),
    compare(`package graph vs its framework floor: CPU per attempt, ${runsN} at once`, m(PACKAGE, "cpuN"), m(FLOOR, "cpuN"), "µs", "minimal two-node LangGraph graph"),
    compare("package graph vs its framework floor: heap per in-flight run", m(PACKAGE, "heapPerRun"), m(FLOOR, "heapPerRun"), "KB", "minimal two-node LangGraph graph"),
    compare(`package graph vs its framework floor: peak RSS, ${runsN} at once`, m(PACKAGE, "rss"), m(FLOOR, "rss"), "MB", "minimal two-node LangGraph graph"),
    compare(`openai SDK + validator loop: wall time of ${runsN} runs at once`, m(BASELINE, "wallN"), idealMs, "ms", `ideal (${ATTEMPTS_PER_RUN} × ${latencyMs} ms)`),
  ];
  const target = (description: string, ratio: number[], limit: number): Target => ({
    description,
    met: median(ratio) <= limit,
    detail: `${spread(ratio, fmtRatio)} (median, min–max over ${reps.length} repetition${reps.length === 1 ? "" : "s"}), limit ${fmtRatio(limit)}`,
  });
  const targets: Target[] = [
    target("package graph within 1.1× of its framework floor in CPU per attempt (concurrency 1)", ratios(PACKAGE, "cpu1", FLOOR), 1.1),
    target(`package graph within 1.1× of its framework floor in CPU per attempt (${runsN} at once)`, ratios(PACKAGE, "cpuN", FLOOR), 1.1),
    target(`package graph within 1.1× of its framework floor in wall time (${runsN} at once)`, ratios(PACKAGE, "wallN", FLOOR), 1.1),
    target("package graph within 1.2× of its framework floor in heap per in-flight run", ratios(PACKAGE, "heapPerRun", FLOOR), 1.2),
    target(`package graph within 1.2× of its framework floor in peak RSS (${runsN} at once)`, ratios(PACKAGE, "rss", FLOOR), 1.2),
  ];
  const all = reps.flat();
  const checks = [
    {
      description: `every run of every client ended valid after exactly ${ATTEMPTS_PER_RUN} attempts (concurrency 1 and ${runsN} at once)`,
      ok: all.every((r) => r.c1.okRuns === r.c1.runs && r.cn.okRuns === r.cn.runs),
      detail: PEERS.map((p) => `${p}: ${reps.map((rep) => `${of(p, rep).c1.okRuns}/${runs1} + ${of(p, rep).cn.okRuns}/${runsN}`).join(", ")}`).join("; "),
    },
  ];

  const floorOverLoop = m(FLOOR, "cpu1") - m("chatopenai-loop", "cpu1");
  const packageOverFloor = m(PACKAGE, "cpu1") - m(FLOOR, "cpu1");
  const markdown = [
    "## 6. Peers: the package next to what a user would pick instead",
    "",
    `Every client makes the same requests (the deployment-config spec, the package's system prompt; the first answer breaks both cross-field rules, the retry is valid, so every run makes exactly ${ATTEMPTS_PER_RUN} attempts) ` +
      "to the same scripted OpenAI-compatible server (bench/model-server.ts, its own process), and every client checks answers with the same validator (`validateAgainstSpec`), so what differs is the client and its framework. " +
      `Each client runs in its own child process (bench/peer-worker.ts; clients in bench/peer-clients.ts, compiled to JavaScript as in bench/compiled.ts): after a warm-up of ${warmup} runs, ` +
      `${runs1} runs one after another against a server without latency, then ${runsN} runs at once against a server with ${latencyMs} ms per call (ideal wall time ${idealMs} ms), ` +
      `then ${runsN} runs held at their first HTTP request until all are waiting (heap per in-flight run = heap after GC then, less the heap after GC before they started, ÷ ${runsN}). ` +
      "Every client retries a failed HTTP call twice (a retry is not an attempt; the checks below show that every run made exactly 2 attempts). " +
      `CPU time is \`process.cpuUsage()\` of the client's process (user + system). ${reps.length} repetition${reps.length === 1 ? "" : "s"}, each running every client once in a rotated order; ` +
      "ratios are against the `openai` SDK loop of the same repetition; each cell is the median (min–max) over the repetitions.",
    "",
    "Clients: the `openai` SDK (v6) calling `chat.completions.create` in a loop (baseline); `ChatOpenAI` (@langchain/openai) in a loop; a minimal two-node LangGraph graph " +
      "(generate → validate → conditional edge, Annotation state, the same `ChatOpenAI` and prompts): the floor for any LangGraph graph making these calls; this package's compiled validation graph " +
      "(built by `buildValidationGraph` with `createChatModel`); the AI SDK (`ai` 6, `@ai-sdk/openai` 3 chat model) `generateObject` with the spec's JSON Schema and the validator as its `validate`, " +
      "in a loop that sends back the SDK's own error text; LangChain's `withStructuredOutput` (JSON-schema mode, `includeRaw`) in a loop that sends back the validator's messages. " +
      "The four clients that use the package's prompts send the same messages (their request bodies differ by the fields each client adds); the AI SDK and `withStructuredOutput` add the JSON Schema as `response_format` and retry as a conversation.",
    "",
    "instructor-js is not in the table: every release (`@instructor-ai/instructor` 1.7.0 and older) depends on `zod-stream` and `zod-validation-error` versions that declare zod 3 " +
      "(and `zod-stream` 3.0.0 pins `openai` 4.47.1) as peers, so it does not install beside this package's zod 4 and openai 6 without ERESOLVE (npm's `--dry-run` shows the conflict); forcing it would measure an unsupported combination.",
    "",
    "CPU and wall time:",
    "",
    table(
      ["client", "CPU µs/attempt, concurrency 1", "÷ baseline", "wall µs/attempt, concurrency 1 (no latency)", `CPU µs/attempt, ${runsN} at once`, "÷ baseline", `wall ms, ${runsN} at once`, `÷ ideal (${idealMs} ms)`],
      cpuRows,
    ),
    "",
    "Memory and request size:",
    "",
    table(
      ["client", `peak RSS MB, ${runsN} at once`, "÷ baseline", "heap after GC MB (after the runs)", "heap per in-flight run KB", "÷ baseline", "request bytes, first attempt", "request bytes, retry"],
      memoryRows,
    ),
    "",
    `Where the time goes (medians, concurrency 1): the minimal LangGraph graph costs ${fmt(floorOverLoop)} µs per attempt more than the same calls in a \`ChatOpenAI\` loop ` +
      `(${fmtRatio(mr(FLOOR, "cpu1", "chatopenai-loop"))}): that is LangGraph's machinery (two supersteps per attempt, a checkpoint-style state update per step, and a langsmith \`RunTree\` ` +
      "that LangChain builds for every node, router and channel write even with tracing off; see the profile in section 2), upstream of this package. " +
      `The package's graph costs ${fmt(Math.abs(packageOverFloor))} µs per attempt ${packageOverFloor >= 0 ? "more" : "less"} than that floor (${fmtRatio(mr(PACKAGE, "cpu1", FLOOR))}); what it adds is its own nodes, usage ledger, attempt records and front-door checks. ` +
      `Against a \`ChatOpenAI\` loop over HTTP the package's graph costs ${fmtRatio(mr(PACKAGE, "cpu1", "chatopenai-loop"))} per attempt; the ratio in section 2 is against an in-process model without HTTP, whose calls cost next to nothing, so it is far larger. ` +
      `At ${runsN} runs at once every client is bound by its own CPU: the wall time is about the client CPU time, so even the \`openai\` SDK loop lands at ${fmtRatio(m(BASELINE, "wallN") / idealMs)} of the ideal; ` +
      "a target against the ideal is not reachable by any of these clients on this machine, so the targets below are set against the framework floor.",
    "",
    outcomeBlocks(comparisons, targets, checks),
  ].join("\n");
  const rows = PEERS.flatMap((p) => [
    { label: `${p} CPU µs/attempt c1`, value: m(p, "cpu1"), unit: "µs" },
    { label: `${p} CPU µs/attempt at ${runsN}`, value: m(p, "cpuN"), unit: "µs" },
    { label: `${p} peak RSS`, value: m(p, "rss"), unit: "MB" },
    { label: `${p} heap per in-flight run`, value: m(p, "heapPerRun"), unit: "KB" },
  ]);
  return { id: "peers", title: "Peers", rows, comparisons, targets, checks, markdown };
}
