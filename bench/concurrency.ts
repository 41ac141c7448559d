/**
 * Benchmark 3: concurrency. N validation runs at once through the real
 * ChatOpenAI client against the scripted server with a fixed latency per
 * call; every run needs two attempts (invalid, then valid), so the ideal wall
 * time is 2 × latency. Server and client each run in their own process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  checkLines,
  compare,
  comparisonTable,
  fmt,
  table,
  targetLines,
  type BenchOptions,
  type BenchResult,
  type Target,
} from "./common.js";
import type { PhaseResult, WorkerResult } from "./concurrency-worker.js";
import type { ProfileSummary } from "./profile.js";

function profileSection(p: ProfileSummary, runs: number): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `Where the client's CPU goes with ${runs} graph runs at once (a separate pass under the CPU profiler, not timed above; ${fmt(p.totalMs)} ms of samples):`,
    "",
    table(["package", "self ms", "share"], p.categories.slice(0, 10).map((c) => [c.category, fmt(c.selfMs), pct(c.share)])),
    "",
    table(["function", "where", "self ms", "share"], p.functions.slice(0, 10).map((f) => [f.name, f.location || "—", fmt(f.selfMs), pct(f.share)])),
  ].join("\n");
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ATTEMPTS_PER_RUN = 2;

/** Start a TypeScript child process; resolve with it and the first stdout line that starts with `prefix`. */
function spawnTs(file: string, args: string[], nodeFlags: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeFlags, "--import", "tsx", fileURLToPath(new URL(file, import.meta.url)), ...args], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, LANGCHAIN_TRACING_V2: "false", LANGSMITH_TRACING: "false" },
  });
}

function lineStartingWith(child: ChildProcess, prefix: string, timeoutMs: number): Promise<string> {
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
  latencyMs?: number;
}

export async function run(opts: ConcurrencyOptions): Promise<BenchResult> {
  const runs = opts.runs ?? (opts.quick ? 20 : 1000);
  const latencyMs = opts.latencyMs ?? (opts.quick ? 20 : 100);
  const warmup = opts.quick ? 4 : 50;

  const server = spawnTs("./model-server.ts", ["--port", "0", "--latency-ms", String(latencyMs), "--mode", "invalid-then-valid"]);
  let worker: ChildProcess | undefined;
  try {
    const baseUrl = await lineStartingWith(server, "READY ", 30_000);
    worker = spawnTs("./concurrency-worker.ts", ["--base-url", baseUrl, "--runs", String(runs), "--warmup", String(warmup), "--profile"], ["--expose-gc"]);
    const result = JSON.parse(await lineStartingWith(worker, "RESULT ", 600_000)) as WorkerResult;
    const statsLine = lineStartingWith(server, "STATS ", 10_000);
    server.stdin?.write("STATS\n");
    const stats = JSON.parse(await statsLine) as { requests: number; cpuMs: number; rssMb: number };
    return report(result, stats, runs, latencyMs, warmup);
  } finally {
    if (worker && worker.exitCode === null) worker.kill();
    server.stdin?.end();
    if (server.exitCode === null) server.kill();
  }
}

function report(r: WorkerResult, server: { requests: number; cpuMs: number; rssMb: number }, runs: number, latencyMs: number, warmup: number): BenchResult {
  const idealMs = ATTEMPTS_PER_RUN * latencyMs;
  const g = r.graph;
  const l = r.loop;
  const comparisons = [
    compare(`graph: wall time of ${runs} concurrent runs`, g.wallMs, idealMs, "ms", `ideal (${ATTEMPTS_PER_RUN} attempts × ${latencyMs} ms)`, "value/reference"),
    compare(`plain loop, same calls: wall time of ${runs} concurrent runs`, l.wallMs, idealMs, "ms", "ideal", "value/reference"),
    compare("graph vs plain loop: wall time", g.wallMs, l.wallMs, "ms", "plain loop", "value/reference"),
    compare("graph vs plain loop: client CPU time", g.cpuMs, l.cpuMs, "ms", "plain loop", "value/reference"),
  ];
  const graphRatio = g.wallMs / idealMs;
  const targets: Target[] = [
    { description: `wall time within 1.3× of ideal (${idealMs} ms)`, met: graphRatio <= 1.3, detail: `${fmt(g.wallMs)} ms = ${graphRatio.toFixed(2)}× ideal` },
    { description: "peak RSS under 300 MB", met: g.peakRssMb < 300, detail: `${fmt(g.peakRssMb)} MB sampled every 10 ms (baseline ${fmt(g.baselineRssMb)} MB; lifetime maxRSS ${fmt(r.maxRssAfterGraphMb)} MB)` },
  ];
  const expectedRequests = ATTEMPTS_PER_RUN * runs;
  const checks = [
    { description: `every graph run ended valid after exactly ${ATTEMPTS_PER_RUN} attempts`, ok: g.okRuns === runs, detail: `${g.okRuns}/${runs}` },
    { description: `every plain-loop run ended valid after exactly ${ATTEMPTS_PER_RUN} attempts`, ok: l.okRuns === runs, detail: `${l.okRuns}/${runs}` },
    {
      description: "the server answered every call (warm-ups and the profiled pass included)",
      // graph and loop, each with its warm-up, and the profiled pass of graph runs
      ok: server.requests === ATTEMPTS_PER_RUN * (2 * (runs + warmup) + (r.profile ? runs : 0)),
      detail: `${server.requests} requests`,
    },
    {
      description: `the HTTP client did not serialise the calls: at least ${Math.min(runs, 100)} requests on the wire at once, each on its own socket`,
      ok: Math.min(g.maxOnWire, l.maxOnWire) >= Math.min(runs, 100),
      detail: `most on the wire at once: graph ${g.maxOnWire}, loop ${l.maxOnWire}; sockets used: graph ${g.socketsUsed}, loop ${l.socketsUsed}; ${expectedRequests} requests per phase`,
    },
  ];
  const phaseRow = (name: string, p: PhaseResult) => [
    name,
    fmt(p.wallMs),
    `${(p.wallMs / idealMs).toFixed(2)}×`,
    fmt(p.cpuMs),
    fmt((p.cpuMs * 1000) / Math.max(1, p.attempts)),
    fmt(p.peakRssMb),
    fmt(p.peakRssMb - p.baselineRssMb),
    String(p.maxInFlightRequests),
    String(p.maxOnWire),
    String(p.socketsUsed),
    String(p.connectionsOpened),
    `${fmt(p.requestP50Ms)} / ${fmt(p.requestP99Ms)}`,
  ];
  const markdown = [
    `## 3. Concurrency: ${runs.toLocaleString("en-US")} runs at once through ChatOpenAI`,
    "",
    `${runs} validation runs started together, each through the real \`ChatOpenAI\` client built by \`createChatModel(request, env)\` with \`openaiBaseUrl\` pointing at the scripted server ` +
      `(bench/model-server.ts, its own process) with ${latencyMs} ms latency per call. Every run needs ${ATTEMPTS_PER_RUN} attempts (the first answer breaks both rules, the retry is valid), ` +
      `so the ideal wall time is ${idealMs} ms. The client runs in its own process (bench/concurrency-worker.ts, the package compiled to JavaScript as in bench/compiled.ts), after a warm-up of ${warmup} runs; RSS is sampled every 10 ms. ` +
      "The same runs as plain loops making the same calls follow, as a reference.",
    "",
    table(
      ["client", "wall ms", "÷ ideal", "client CPU ms", "CPU µs/attempt", "peak RSS MB", "RSS growth MB", "fetch calls in flight (max)", "requests on the wire (max)", "sockets used", "connections opened", "request p50 / p99 ms"],
      [phaseRow("compiled graph", g), phaseRow("plain loop, same calls", l)],
    ),
    "",
    comparisonTable(comparisons),
    "",
    "Targets:",
    targetLines(targets),
    "",
    "Checks:",
    checkLines(checks),
    "",
    `Connection limits: the OpenAI client (openai v6) calls the global \`fetch\`, i.e. Node's bundled undici (${r.undici}), whose default dispatcher opens as many connections per origin as there are requests ` +
      "(`connections: null`, no per-origin cap), so nothing needs configuring. The table shows it: \"requests on the wire\" counts requests whose headers undici has sent on a socket and whose response has not arrived " +
      "(from undici's diagnostics channels), so a connection cap would bound it; \"sockets used\" counts distinct sockets. " +
      `The scripted server used ${fmt(server.cpuMs)} ms of CPU in its own process for ${server.requests} requests. ` +
      "When the wall time exceeds the ideal, the client's CPU time is the reason: the work of all runs is serialised on one JavaScript thread, so wall time ≈ max(ideal, client CPU time).",
    r.profile ? `\n${profileSection(r.profile, runs)}` : "",
  ].join("\n");
  const rows = [
    { label: "graph wall time", value: g.wallMs, unit: "ms" },
    { label: "plain loop wall time", value: l.wallMs, unit: "ms" },
    { label: "ideal wall time", value: idealMs, unit: "ms" },
    { label: "graph peak RSS", value: g.peakRssMb, unit: "MB" },
    { label: "graph client CPU", value: g.cpuMs, unit: "ms" },
    { label: "plain loop client CPU", value: l.cpuMs, unit: "ms" },
  ];
  return { id: "concurrency", title: "Concurrency", rows, comparisons, targets, checks, markdown };
}
