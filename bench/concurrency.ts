/**
 * Benchmark 3: concurrency. N validation runs at once against the scripted
 * server with a fixed latency per call; every run needs two attempts
 * (invalid, then valid), so the ideal wall time is 2 × latency.
 *
 * The figures: every client of the peers benchmark and the raw floor,
 * interleaved in one process (bench/interleaved.ts: each client once per
 * cycle, in a random order, N runs at once per block), so each cycle gives one
 * ratio per pair. Then one untimed pass of the package's graph in a process of
 * its own, under the CPU profiler and with every request counted.
 *
 * A last phase repeats the graph runs against a second server that fails
 * every 10th call with HTTP 503 (bench/model-server.ts --fail-every 10), with
 * the client's own retries on, and counts how every run ended: valid,
 * explicit failure, provider error, or lost (not settled by a deadline).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  checkLines,
  compare,
  compareRepeated,
  fmt,
  fmtLoad,
  fmtRatio,
  median,
  spread,
  table,
  type BenchOptions,
  type BenchResult,
  outcomeBlocks,
  type Target,
} from "./common.js";
import type { ClientPhaseResult, FaultWorkerResult } from "./concurrency-worker.js";
import { allRunsValid, cycleRatios, figures, INTERLEAVED_CLIENTS, type InterleavedResult } from "./interleaved.js";
import type { ModelServerOptions } from "./model-server.js";
import { PEER_LABELS, type ClientName } from "./peer-clients.js";
import type { ProfileSummary } from "./profile.js";

/** The interleaved measurement, and the graph's profiled pass from a process of its own. */
interface MainPhases {
  interleaved: InterleavedResult;
  graph: ClientPhaseResult;
}

function profileSection(p: ProfileSummary, runs: number): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `Where the package graph's CPU goes with ${runs} runs at once (a pass of its own, in its own process, under the CPU profiler, not timed above; ${fmt(p.totalMs)} ms of samples):`,
    "",
    table(
      ["package", "self ms", "share"],
      p.categories.slice(0, 10).map((c) => [c.category, fmt(c.selfMs), pct(c.share)]),
    ),
    "",
    table(
      ["function", "where", "self ms", "share"],
      p.functions.slice(0, 10).map((f) => [f.name, f.location || "—", fmt(f.selfMs), pct(f.share)]),
    ),
  ].join("\n");
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ATTEMPTS_PER_RUN = 2;
/** The fault phase: every FAIL_EVERY-th model call is answered with HTTP 503. */
const FAIL_EVERY = 10;
const FAULT_LABEL = `With ${100 / FAIL_EVERY}% of model calls failing (503)`;

/** Start a TypeScript child process; resolve with it and the first stdout line that starts with `prefix`. */
export function spawnTs(file: string, args: string[], nodeFlags: string[] = [], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [...nodeFlags, "--import", "tsx", fileURLToPath(new URL(file, import.meta.url)), ...args], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, LANGCHAIN_TRACING_V2: "false", LANGSMITH_TRACING: "false", ...env },
  });
}

export function lineStartingWith(child: ChildProcess, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr?.on("data", (d) => (stderr += d));
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`no "${prefix}" line within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`)), timeoutMs);
    const onLine = (line: string) => {
      if (line.startsWith(prefix)) {
        clearTimeout(timer);
        lines.off("line", onLine);
        resolve(line.slice(prefix.length).trim());
      }
    };
    lines.on("line", onLine);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code}) before "${prefix}"; stderr: ${stderr.slice(-2000)}`));
    });
  });
}

export interface ConcurrencyOptions extends BenchOptions {
  runs?: number;
  /** Cycles of the interleaved measurement. */
  cycles?: number;
  latencyMs?: number;
  /**
   * Server and clients in this process instead of one process each (for the smoke test): the same runs
   * and checks, but CPU and RSS then cover all of them, so the figures are not the benchmark's.
   */
  inProcess?: boolean;
  /** How long each run of the fault phase is waited for before it counts as lost. */
  faultDeadlineMs?: number;
}

type ServerStats = { requests: number; faults: number; cpuMs: number; rssMb: number };

/** How the runs of the fault phase ended, and what the server injected. */
export interface FaultPhaseSummary {
  label: string;
  failEvery: number;
  runs: number;
  valid: number;
  explicitFailure: number;
  providerError: number;
  lost: number;
  /** Valid runs whose final state records exactly 2 attempts. */
  validAfterTwoAttempts: number;
  wallMs: number;
  cpuMs: number;
  /** 503 answers the server injected over the phase (warm-up included) and the requests it received. */
  faultsInjected: number;
  serverRequests: number;
  /** 503 answers the client received during the timed runs, out of the requests it sent then. */
  faultsInTimedRuns: number;
  requestsInTimedRuns: number;
  endings: Record<string, number>;
}

export interface ConcurrencyResult extends BenchResult {
  faults: FaultPhaseSummary;
  interleaved: InterleavedResult;
}

/** Ask a model server for its counters. */
async function serverStats(server: ChildProcess): Promise<ServerStats> {
  const statsLine = lineStartingWith(server, "STATS ", 10_000);
  server.stdin?.write("STATS\n");
  return JSON.parse(await statsLine) as ServerStats;
}

/** Run a worker process (with --expose-gc) to its `RESULT` line, waiting up to `timeoutMs` for it. */
export async function runChild<T>(file: string, args: string[], timeoutMs = 600_000): Promise<T> {
  const worker = spawnTs(file, args, ["--expose-gc"]);
  try {
    return JSON.parse(await lineStartingWith(worker, "RESULT ", timeoutMs)) as T;
  } finally {
    if (worker.exitCode === null) worker.kill();
  }
}

/** Run workers against their own model server (bench/model-server.ts with `serverArgs`, its own process); stop it afterwards. */
export async function withServer<T>(serverArgs: string[], work: (baseUrl: string) => Promise<T>): Promise<{ result: T; stats: ServerStats }> {
  const server = spawnTs("./model-server.ts", serverArgs);
  try {
    const baseUrl = await lineStartingWith(server, "READY ", 30_000);
    const result = await work(baseUrl);
    return { result, stats: await serverStats(server) };
  } finally {
    server.stdin?.end();
    if (server.exitCode === null) server.kill();
  }
}

/** Run workers against a model server in this process; stop it afterwards. */
async function withServerInProcess<T>(server: ModelServerOptions, work: (baseUrl: string) => Promise<T>): Promise<{ result: T; stats: ServerStats }> {
  const { startModelServer } = await import("./model-server.js");
  const running = await startModelServer(server);
  try {
    const result = await work(running.baseURL);
    return { result, stats: running.stats() };
  } finally {
    await running.close();
  }
}

export async function run(opts: ConcurrencyOptions): Promise<ConcurrencyResult> {
  if (opts.inProcess) return runInProcess(opts);
  const runs = opts.runs ?? (opts.quick ? 20 : 1000);
  const cycles = opts.cycles ?? (opts.quick ? 2 : 5);
  const latencyMs = opts.latencyMs ?? (opts.quick ? 20 : 100);
  const warmup = opts.quick ? 4 : 50;
  const deadlineMs = opts.faultDeadlineMs ?? (opts.quick ? 30_000 : 120_000);
  const serverArgs = ["--port", "0", "--latency-ms", String(latencyMs), "--mode", "invalid-then-valid"];
  const { runInterleavedWorker } = await import("./peers.js");

  const main = await withServer<MainPhases>(serverArgs, async (baseUrl) => {
    const interleaved = await runInterleavedWorker(baseUrl, { runs, cycles, warmup, atOnce: true });
    const graph = await runChild<ClientPhaseResult>("./concurrency-worker.ts", ["--base-url", baseUrl, "--runs", String(runs), "--warmup", String(warmup)]);
    return { interleaved, graph };
  });
  const faulty = await withServer<FaultWorkerResult>([...serverArgs, "--fail-every", String(FAIL_EVERY)], (baseUrl) =>
    runChild<FaultWorkerResult>("./concurrency-worker.ts", [
      "--faults",
      "--base-url",
      baseUrl,
      "--runs",
      String(runs),
      "--warmup",
      String(warmup),
      "--deadline-ms",
      String(deadlineMs),
    ]),
  );
  const faults = faultSummary(faulty);
  return { ...report(main.result, main.stats, faulty.result, faulty.stats, runs, latencyMs, warmup), faults, interleaved: main.result.interleaved };
}

/** How the fault phase's runs ended, with what the server injected. */
function faultSummary(faulty: { result: FaultWorkerResult; stats: ServerStats }): FaultPhaseSummary {
  const f = faulty.result.faults;
  return {
    label: FAULT_LABEL,
    failEvery: FAIL_EVERY,
    runs: f.runs,
    valid: f.valid,
    explicitFailure: f.explicitFailure,
    providerError: f.providerError,
    lost: f.lost,
    validAfterTwoAttempts: f.validAfterTwoAttempts,
    wallMs: f.wallMs,
    cpuMs: f.cpuMs,
    faultsInjected: faulty.stats.faults,
    serverRequests: faulty.stats.requests,
    faultsInTimedRuns: f.faultAnswers,
    requestsInTimedRuns: f.requests,
    endings: f.endings,
  };
}

/** The smoke test's set-up: the same phases, with server and clients in this process. */
async function runInProcess(opts: ConcurrencyOptions): Promise<ConcurrencyResult> {
  const runs = opts.runs ?? 20;
  const latencyMs = opts.latencyMs ?? 20;
  const warmup = 4;
  const deadlineMs = opts.faultDeadlineMs ?? 30_000;
  const { runWorker, runFaultWorker } = await import("./concurrency-worker.js");
  const { runInterleaved } = await import("./interleaved.js");
  const server: ModelServerOptions = { latencyMs, mode: "invalid-then-valid" };
  const main = await withServerInProcess<MainPhases>(server, async (baseUrl) => {
    const interleaved = await runInterleaved({ baseUrl, runs, cycles: opts.cycles ?? 2, atOnce: true, warmup });
    const graph = await runWorker(baseUrl, runs, warmup);
    return { interleaved, graph };
  });
  const faulty = await withServerInProcess({ ...server, failEvery: FAIL_EVERY }, (baseUrl) => runFaultWorker(baseUrl, runs, warmup, deadlineMs));
  const faults = faultSummary(faulty);
  const result = report(main.result, main.stats, faulty.result, faulty.stats, runs, latencyMs, warmup);
  // Say so where a reader of the section looks first: the text below describes the benchmark's own set-up.
  const [heading, ...rest] = result.markdown.split("\n");
  result.markdown = [heading, "", "**This run had server and clients in one process** (the smoke test's set-up): CPU figures cover both.", ...rest].join("\n");
  return { ...result, faults, interleaved: main.result.interleaved };
}

const PACKAGE: ClientName = "package-graph";
const FLOOR: ClientName = "langgraph-floor";
const BASELINE: ClientName = "openai-ajv";
const RAW: ClientName = "raw-http";

function report(
  r: MainPhases,
  server: ServerStats,
  fw: FaultWorkerResult,
  faultServer: ServerStats,
  runs: number,
  latencyMs: number,
  warmup: number,
): BenchResult {
  const idealMs = ATTEMPTS_PER_RUN * latencyMs;
  const il = r.interleaved;
  const g = r.graph.phase;
  const cycles = il.blocks[PACKAGE]?.length ?? 0;
  const cpu = (c: ClientName) => figures(il, c, "cpuPerAttempt");
  const wall = (c: ClientName) => figures(il, c, "wallMs");
  const ir = (c: ClientName, ref: ClientName) => cycleRatios(il, c, ref, "cpuPerAttempt");
  const packageWall = median(wall(PACKAGE));
  const comparisons = [
    compareRepeated(
      `package graph vs its framework floor: CPU per attempt, ${runs} at once`,
      cpu(PACKAGE),
      cpu(FLOOR),
      "µs",
      "minimal two-node LangGraph graph",
    ),
    compareRepeated(`package graph vs the openai SDK + validator loop: CPU per attempt, ${runs} at once`, cpu(PACKAGE), cpu(BASELINE), "µs", "openai SDK loop"),
    compareRepeated(`package graph vs the raw floor: CPU per attempt, ${runs} at once`, cpu(PACKAGE), cpu(RAW), "µs", "raw node:http + JSON.parse + validator"),
    compareRepeated(
      `package graph vs its framework floor: wall time of ${runs} runs at once`,
      wall(PACKAGE),
      wall(FLOOR),
      "ms",
      "minimal two-node LangGraph graph",
    ),
    compareRepeated(
      `raw floor: wall time of ${runs} runs at once`,
      wall(RAW),
      wall(RAW).map(() => idealMs),
      "ms",
      `ideal (${ATTEMPTS_PER_RUN} attempts × ${latencyMs} ms)`,
    ),
    compare(`package graph, ${FAULT_LABEL.toLowerCase()}, vs without: wall time`, fw.faults.wallMs, packageWall, "ms", "no failures (interleaved median)"),
  ];
  const target = (description: string, ratios: number[], limit: number): Target => ({
    description,
    met: median(ratios) <= limit,
    detail: `${spread(ratios, fmtRatio)} (median, min–max over ${ratios.length} cycles), limit ${fmtRatio(limit)}`,
  });
  // No target against the ideal: no Node client reaches it with this many runs on two cores (the raw floor row shows it); the graph is held to its framework floor.
  const targets: Target[] = [
    target(`package graph within 1.05× of its framework floor in CPU per attempt (${runs} at once, interleaved)`, ir(PACKAGE, FLOOR), 1.05),
    target(`package graph within 1.1× of its framework floor in wall time (${runs} at once, interleaved)`, cycleRatios(il, PACKAGE, FLOOR, "wallMs"), 1.1),
  ];
  const checks = [
    {
      description: `every run of every client ended valid after exactly ${ATTEMPTS_PER_RUN} attempts (interleaved: ${il.clients.length} clients × ${cycles} cycles × ${runs} runs; and the graph's profiled pass)`,
      ok: allRunsValid(il) && g.okRuns === runs,
      detail: `profiled pass: ${g.okRuns}/${runs}`,
    },
    {
      description: "the server answered every call (warm-ups and the profiled pass included)",
      ok: server.requests === ATTEMPTS_PER_RUN * (il.totalRuns + warmup + runs),
      detail: `${server.requests} requests for ${il.totalRuns + warmup + runs} runs`,
    },
    {
      description: `the HTTP client did not serialise the graph's calls: at least ${Math.min(runs, 100)} requests on the wire at once, each on its own socket (the profiled pass)`,
      ok: g.maxOnWire >= Math.min(runs, 100),
      detail: `most on the wire at once: ${g.maxOnWire}; fetch calls in flight at most: ${g.maxInFlightRequests}; sockets used: ${g.socketsUsed}; connections opened: ${g.connectionsOpened}; ${ATTEMPTS_PER_RUN * runs} requests`,
    },
  ];
  const f = fw.faults;
  const ended = f.valid + f.explicitFailure + f.providerError;
  const faultChecks = [
    {
      description: `${FAULT_LABEL.toLowerCase()}: every run ended, none lost (valid, explicit failure or provider error within ${f.deadlineMs / 1000} s)`,
      ok: f.lost === 0 && ended === f.runs && f.runs === runs,
      detail: `${f.valid} valid + ${f.explicitFailure} explicit failure + ${f.providerError} provider error = ${ended} of ${f.runs} runs; ${f.lost} lost`,
    },
    {
      description: `faults did not count as validation attempts: every valid run has exactly ${ATTEMPTS_PER_RUN} attempts in its final state`,
      ok: f.validAfterTwoAttempts === f.valid,
      detail: `${f.validAfterTwoAttempts}/${f.valid} valid runs`,
    },
    {
      description: `the server failed every ${FAIL_EVERY}th call with 503 and the client received each of those answers`,
      ok: faultServer.faults > 0 && faultServer.faults === Math.floor(faultServer.requests / FAIL_EVERY) && fw.faultAnswersTotal === faultServer.faults,
      detail: `${faultServer.faults} faults in ${faultServer.requests} requests (warm-up included); 503 answers received by the client: ${fw.faultAnswersTotal}`,
    },
  ];
  const clientRows = INTERLEAVED_CLIENTS.filter((c) => il.clients.includes(c)).map((c) => [
    PEER_LABELS[c],
    spread(cpu(c)),
    spread(ir(c, RAW), fmtRatio),
    spread(ir(c, BASELINE), fmtRatio),
    spread(ir(c, FLOOR), fmtRatio),
    spread(wall(c)),
    spread(
      wall(c).map((w) => w / idealMs),
      fmtRatio,
    ),
  ]);
  const markdown = [
    `## 3. Concurrency: ${runs.toLocaleString("en-US")} runs at once`,
    "",
    `${runs} validation runs started together against the scripted server (bench/model-server.ts, its own process) with ${latencyMs} ms latency per call. ` +
      `Every run needs ${ATTEMPTS_PER_RUN} attempts (the first answer breaks both rules, the retry is valid), so the ideal wall time is ${idealMs} ms. ` +
      `The clients are those of section 7 and the raw floor (bench/peer-clients.ts), measured interleaved in one process (bench/interleaved.ts): after a warm-up of ${warmup} runs at once per client, ` +
      `${cycles} cycles, each running every client once, in a random order, for a block of ${runs} runs at once; a scavenge before each block, not timed. ` +
      "CPU time is `process.cpuUsage()` of the process over the block ÷ its attempts; each cell is the median (min–max) over the cycles, each ratio taken within a cycle. " +
      `Load average (1 / 5 / 15 min): ${fmtLoad(il.loadBefore)} before, ${fmtLoad(il.loadAfter)} after.`,
    "",
    table(
      ["client", "CPU µs/attempt", "÷ raw floor", "÷ openai SDK loop", "÷ minimal LangGraph graph", `wall ms of ${runs} runs`, `÷ ideal (${idealMs} ms)`],
      clientRows,
    ),
    "",
    outcomeBlocks(comparisons, targets, checks),
    "",
    `Every client is bound by its own CPU at this size: the work of all runs is serialised on one JavaScript thread, so wall time ≈ max(ideal, client CPU time); even the raw floor takes ${fmtRatio(median(wall(RAW)) / idealMs)} the ideal. ` +
      `Connection limits: the clients that call the global \`fetch\` use Node's bundled undici (${r.graph.undici}), whose default dispatcher opens as many connections per origin as there are requests ` +
      '(`connections: null`, no per-origin cap), so nothing needs configuring. The check above shows it for the package\'s graph, in a pass of its own (below): "on the wire" counts requests whose headers undici has sent on a socket and whose response has not arrived ' +
      "(from undici's diagnostics channels), so a connection cap would bound it. " +
      `The scripted server used ${fmt(server.cpuMs)} ms of CPU in its own process for ${server.requests} requests.`,
    "",
    profileSection(r.graph.profile, runs),
    "",
    faultSection(fw, faultServer, faultChecks, runs, latencyMs, warmup),
  ].join("\n");
  const rows = [
    { label: "ideal wall time", value: idealMs, unit: "ms" },
    ...il.clients.flatMap((c) => [
      { label: `${c} CPU µs/attempt at ${runs}`, value: median(cpu(c)), unit: "µs" },
      { label: `${c} wall ms at ${runs}`, value: median(wall(c)), unit: "ms" },
    ]),
    { label: `graph wall time, ${100 / FAIL_EVERY}% of calls failing`, value: f.wallMs, unit: "ms" },
    { label: `graph client CPU, ${100 / FAIL_EVERY}% of calls failing`, value: f.cpuMs, unit: "ms" },
  ];
  return { id: "concurrency", title: "Concurrency", rows, comparisons, targets, checks: [...checks, ...faultChecks], markdown };
}

function faultSection(fw: FaultWorkerResult, server: ServerStats, checks: BenchResult["checks"], runs: number, latencyMs: number, warmup: number): string {
  const f = fw.faults;
  const share = (n: number) => `${((n * 100) / Math.max(1, f.runs)).toFixed(1)}%`;
  const endings = Object.entries(f.endings).sort((a, b) => b[1] - a[1]);
  return [
    `### ${FAULT_LABEL}`,
    "",
    `The same ${runs} graph runs at once, against a second scripted server (its own process, ${latencyMs} ms latency per call) started with \`--fail-every ${FAIL_EVERY}\`: ` +
      `every ${FAIL_EVERY}th chat-completion request it receives, counted in order of arrival, is answered with HTTP 503 instead of its reply. ` +
      `The client's own retries are on (\`maxRetries: ${f.maxRetries}\` in the Environment given to \`createChatModel\`; LangChain's client waits about 1–2 s before the first retry and 2–4 s before the second), ` +
      `so a call fails for good only when it and both of its retries draw a 503; the graph then ends with a ProviderError that says so. ` +
      `After a warm-up of ${warmup} runs against the same server, each run is waited for up to ${f.deadlineMs / 1000} s and counted by how it ended: ` +
      "valid (`success: true`), explicit failure (`success: false` with a `stopReason`), provider error (the run rejected with an error naming the provider), " +
      "or lost (still pending at the deadline, or any other ending).",
    "",
    table(
      [
        "client",
        "runs",
        "valid",
        "explicit failure",
        "provider error",
        "lost",
        "wall ms",
        "client CPU ms",
        "requests sent (retries included)",
        "503 answers received",
      ],
      [[FAULT_LABEL, f.runs, f.valid, f.explicitFailure, f.providerError, f.lost, fmt(f.wallMs), fmt(f.cpuMs), f.requests, f.faultAnswers]],
    ),
    "",
    `Outcomes: ${f.valid} valid (${share(f.valid)}), ${f.explicitFailure} explicit failure (${share(f.explicitFailure)}), ${f.providerError} provider error (${share(f.providerError)}), ${f.lost} lost (${share(f.lost)}).`,
    "",
    ...(endings.length > 0 ? ["How the runs that were not valid ended:", ...endings.map(([what, n]) => `- ${n} × ${what}`), ""] : []),
    `The server injected ${server.faults} faults in ${server.requests} requests over the phase, warm-up included (${f.faultAnswers} of them during the timed runs, out of ${f.requests} requests); ` +
      `it used ${fmt(server.cpuMs)} ms of CPU.`,
    "",
    "Checks:",
    checkLines(checks),
  ].join("\n");
}
