/**
 * The graph's side of the concurrency benchmark, in its own process: N
 * validation runs at once through the real ChatOpenAI client (built by the
 * package's `createChatModel`) against the scripted server, under the CPU
 * profiler, with every request counted (in flight, on the wire, sockets,
 * connections). The timed figures of the concurrency benchmark come from the
 * interleaved measurement (bench/interleaved.ts); this pass shows where the
 * graph's CPU goes and that the HTTP client does not serialise the calls.
 *
 *   node --expose-gc --import tsx bench/concurrency-worker.ts --base-url URL --runs 1000 [--warmup 50]
 *
 * With --faults, only the graph runs, against a server that fails some calls
 * (bench/model-server.ts --fail-every N), with the client's own retries on
 * (maxRetries 2); every run is waited for up to a deadline and counted by how
 * it ended (valid, explicit failure, provider error, or lost):
 *
 *   node --expose-gc --import tsx bench/concurrency-worker.ts --faults --base-url URL --runs 1000 [--warmup 50] [--deadline-ms 120000]
 *
 * Prints one line `RESULT {json}` (a WorkerResult, or a FaultWorkerResult with --faults).
 */
import diagnostics from "node:diagnostics_channel";
import type { ModelRequest } from "../src/models.js";
import { compiled } from "./compiled.js";
import { profile, summarizeProfile, type ProfileSummary } from "./profile.js";
import { flagValue, runIfMain } from "./common.js";

export interface PhaseResult {
  runs: number;
  okRuns: number;
  attempts: number;
  wallMs: number;
  cpuMs: number;
  baselineRssMb: number;
  peakRssMb: number;
  /** Largest gap between two 10 ms RSS samples (how late the sampler's timer fired). */
  maxSampleGapMs: number;
  maxInFlightRequests: number;
  /** Most requests on the wire at once (sent, no response headers yet). */
  maxOnWire: number;
  /** Distinct sockets that carried a request in the phase. */
  socketsUsed: number;
  connectionsOpened: number;
  requestP50Ms: number;
  requestP99Ms: number;
}

/** How the graph runs ended when some model calls fail (see runFaultWorker). */
export interface FaultPhaseResult {
  runs: number;
  /** How long each run was waited for before it counted as lost. */
  deadlineMs: number;
  /** Client-side retries of a failed model call (the Environment's maxRetries). */
  maxRetries: number;
  /** Runs that resolved with success: true. */
  valid: number;
  /** Valid runs whose final state records exactly 2 attempts: the faults the client retried are not validation attempts. */
  validAfterTwoAttempts: number;
  /** Runs that resolved with success: false and a stopReason. */
  explicitFailure: number;
  /** Runs that rejected with an error naming the provider (a ProviderError after the client's retries). */
  providerError: number;
  /** Runs that did not settle within the deadline, or ended in any other state. */
  lost: number;
  /** How the runs that were not valid ended, with counts: `stopReason: …`, the provider error's `name: message…`, or what a lost run did. */
  endings: Record<string, number>;
  wallMs: number;
  cpuMs: number;
  /** Chat-completion requests the client sent in the timed runs (the client's retries included). */
  requests: number;
  /** Of those, the ones answered with HTTP 503. */
  faultAnswers: number;
}

export interface FaultWorkerResult {
  faults: FaultPhaseResult;
  /** Requests sent and 503 answers received over the whole process (warm-up included), to compare with the server's counts. */
  requestsTotal: number;
  faultAnswersTotal: number;
}

// Instrumentation: requests in flight (the OpenAI client calls the global fetch) and new connections (undici's diagnostics channel).
let inFlight = 0;
let maxInFlight = 0;
let durations: number[] = [];
let connections = 0;
let fetchCalls = 0;
let answers503 = 0;
// Requests on the wire: headers sent on a socket, response headers not yet received. A per-origin connection cap would bound this.
let onWire = 0;
let maxOnWire = 0;
let sockets = new WeakSet<object>();
let socketsUsed = 0;

/**
 * Counts every request through the global fetch (in flight, durations, 503s) and, through undici's
 * diagnostics channels, connections and requests on the wire. Installed for the length of one worker call
 * and removed after, so a caller in the same process (the smoke test) gets its fetch back.
 */
async function instrumented<T>(work: () => Promise<T>): Promise<T> {
  const realFetch = globalThis.fetch;
  const counting = async (...args: Parameters<typeof fetch>) => {
    inFlight++;
    fetchCalls++;
    if (inFlight > maxInFlight) maxInFlight = inFlight;
    const start = performance.now();
    try {
      const response = await realFetch(...args);
      if (response.status === 503) answers503++;
      return response;
    } finally {
      inFlight--;
      durations.push(performance.now() - start);
    }
  };
  const connected = () => {
    connections++;
  };
  const sent = (message: unknown) => {
    onWire++;
    if (onWire > maxOnWire) maxOnWire = onWire;
    const socket = (message as { socket?: object }).socket;
    if (socket && !sockets.has(socket)) {
      sockets.add(socket);
      socketsUsed++;
    }
  };
  const answered = () => {
    onWire = Math.max(0, onWire - 1);
  };
  const channels: Array<[string, (message: unknown) => void]> = [
    ["undici:client:connected", connected],
    ["undici:client:sendHeaders", sent],
    ["undici:request:headers", answered],
    ["undici:request:error", answered],
  ];
  globalThis.fetch = counting as typeof fetch;
  for (const [name, listener] of channels) diagnostics.subscribe(name, listener);
  try {
    return await work();
  } finally {
    for (const [name, listener] of channels) diagnostics.unsubscribe(name, listener);
    globalThis.fetch = realFetch;
  }
}

const mb = (bytes: number) => bytes / 2 ** 20;

async function phase(runs: number, one: (i: number) => Promise<{ success: boolean; attempts: number }>): Promise<PhaseResult> {
  (globalThis as { gc?: () => void }).gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  let last = performance.now();
  let maxGap = 0;
  const sampler = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  maxInFlight = 0;
  connections = 0;
  maxOnWire = 0;
  sockets = new WeakSet<object>();
  socketsUsed = 0;
  durations = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: runs }, (_, i) => one(i)));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const sorted = [...durations].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
  return {
    runs,
    okRuns: outcomes.filter((o) => o.success && o.attempts === 2).length,
    attempts: outcomes.reduce((n, o) => n + o.attempts, 0),
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    baselineRssMb: mb(baseline),
    peakRssMb: mb(peak),
    maxSampleGapMs: maxGap,
    maxInFlightRequests: maxInFlight,
    maxOnWire,
    socketsUsed,
    connectionsOpened: connections,
    requestP50Ms: at(50),
    requestP99Ms: at(99),
  };
}

/** The graph run, through ChatOpenAI built by `createChatModel` against `baseUrl`. */
async function validationRuns(baseUrl: string, maxRetries: number) {
  // The package as compiled JavaScript (see bench/compiled.ts).
  const { readEnvironment } = await compiled<typeof import("../src/environment.js")>("src/environment");
  const { createChatModel } = await compiled<typeof import("../src/models.js")>("src/models");
  const { builtinSpecs } = await compiled<typeof import("../src/specs/registry.js")>("src/specs/registry");
  const { buildValidationGraph } = await compiled<typeof import("../src/validation/graph.js")>("src/validation/graph");
  const env = { ...readEnvironment({}), providers: { openai: { apiKey: "bench-key", baseUrl: baseUrl } }, maxRetries, timeoutMs: 120_000 };
  const model = (request: ModelRequest) => createChatModel(request, env);
  const spec = builtinSpecs.get("deployment-config");
  if (!spec) throw new Error("deployment-config spec missing");
  const graph = buildValidationGraph({ model });
  const context = { spec: "deployment-config", maxAttempts: 3 };
  const request = (i: number) => `A deployment config for payments-api with 8 replicas (run ${i})`;
  const graphRun = (i: number) => graph.invoke({ request: request(i) }, { context });
  return { graphRun };
}

/** The graph's profiled pass: its counts (the timing figures are the profiler's, not reported), and where the CPU went. */
export interface ClientPhaseResult {
  phase: PhaseResult;
  /** process.resourceUsage().maxRSS at the end of the phase (lifetime peak of this process), MB. */
  maxRssMb: number;
  undici: string;
  profile: ProfileSummary;
}

export function runWorker(baseUrl: string, runs: number, warmup: number): Promise<ClientPhaseResult> {
  return instrumented(() => clientWorker(baseUrl, runs, warmup));
}

async function clientWorker(baseUrl: string, runs: number, warmup: number): Promise<ClientPhaseResult> {
  const { graphRun } = await validationRuns(baseUrl, 0);
  // Warm-up: load and compile everything once; open some connections.
  await Promise.all(Array.from({ length: warmup }, (_, i) => graphRun(i)));
  const profiled = await profile(() => phase(runs, graphRun), 200);
  return {
    phase: profiled.result,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    undici: process.versions.undici ?? "unknown",
    profile: summarizeProfile(profiled.profile, 12),
  };
}

type Ending =
  { kind: "valid"; attempts: unknown } | { kind: "explicit-failure"; what: string } | { kind: "provider-error"; what: string } | { kind: "lost"; what: string };

const prefix = (text: string, max = 120) => (text.length <= max ? text : `${text.slice(0, max)}…`);

/** How a run that settled ended. */
function endingOf(settled: { ok: true; value: unknown } | { ok: false; error: unknown }): Ending {
  if (settled.ok) {
    const out = settled.value as { success?: unknown; stopReason?: unknown; attempts?: unknown } | null;
    if (out?.success === true) return { kind: "valid", attempts: out.attempts };
    if (out?.success === false && typeof out.stopReason === "string") return { kind: "explicit-failure", what: `stopReason: ${out.stopReason}` };
    return { kind: "lost", what: `resolved with success ${String(out?.success)} and stopReason ${String(out?.stopReason)}` };
  }
  const e = settled.error as { name?: unknown; message?: unknown } | null;
  const name = typeof e?.name === "string" ? e.name : typeof settled.error;
  const message = typeof e?.message === "string" ? e.message : String(settled.error);
  const what = `${name}: ${prefix(message)}`;
  return name === "ProviderError" || /provider/i.test(message) ? { kind: "provider-error", what } : { kind: "lost", what: `rejected with ${what}` };
}

/** Start one run and wait for it up to `deadlineMs`; a run still pending then is lost. */
function endingWithin(start: () => Promise<unknown>, deadlineMs: number): Promise<Ending> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ kind: "lost", what: `not settled within ${deadlineMs / 1000} s` }), deadlineMs);
    let running: Promise<unknown>;
    try {
      running = start();
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (value) => {
        clearTimeout(timer);
        resolve(endingOf({ ok: true, value }));
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolve(endingOf({ ok: false, error }));
      },
    );
  });
}

/**
 * The graph runs against a server that fails some calls (bench/model-server.ts --fail-every N), with the
 * client's own retries on: after a warm-up against the same server, N runs at once, each counted by how it ended.
 */
export function runFaultWorker(baseUrl: string, runs: number, warmup: number, deadlineMs = 120_000, maxRetries = 2): Promise<FaultWorkerResult> {
  return instrumented(() => faultWorker(baseUrl, runs, warmup, deadlineMs, maxRetries));
}

async function faultWorker(baseUrl: string, runs: number, warmup: number, deadlineMs: number, maxRetries: number): Promise<FaultWorkerResult> {
  const { graphRun } = await validationRuns(baseUrl, maxRetries);
  await Promise.all(Array.from({ length: warmup }, (_, i) => endingWithin(() => graphRun(i), deadlineMs)));

  (globalThis as { gc?: () => void }).gc?.();
  const calls0 = fetchCalls;
  const faults0 = answers503;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const endings = await Promise.all(Array.from({ length: runs }, (_, i) => endingWithin(() => graphRun(i), deadlineMs)));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);

  const count = (kind: Ending["kind"]) => endings.filter((e) => e.kind === kind).length;
  const tally: Record<string, number> = {};
  for (const e of endings) if (e.kind !== "valid") tally[`${e.kind}: ${e.what}`] = (tally[`${e.kind}: ${e.what}`] ?? 0) + 1;
  return {
    faults: {
      runs,
      deadlineMs,
      maxRetries,
      valid: count("valid"),
      validAfterTwoAttempts: endings.filter((e) => e.kind === "valid" && e.attempts === 2).length,
      explicitFailure: count("explicit-failure"),
      providerError: count("provider-error"),
      lost: count("lost"),
      endings: tally,
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
      requests: fetchCalls - calls0,
      faultAnswers: answers503 - faults0,
    },
    requestsTotal: fetchCalls,
    faultAnswersTotal: answers503,
  };
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string) => flagValue(argv, name);
  const baseUrl = arg("--base-url");
  if (!baseUrl) throw new Error("--base-url is required");
  const runs = Number(arg("--runs") ?? 1000);
  const warmup = Number(arg("--warmup") ?? 50);
  const result = argv.includes("--faults")
    ? await runFaultWorker(baseUrl, runs, warmup, Number(arg("--deadline-ms") ?? 120_000))
    : await runWorker(baseUrl, runs, warmup);
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

runIfMain(import.meta.url, main, { exitWhenDone: true });
