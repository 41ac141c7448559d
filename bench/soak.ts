/**
 * Benchmark: a soak. The validation graph with the package's model client (`createChatModel`'s ChatOpenAI)
 * over HTTP against the scripted server (bench/model-server.ts, its own process; every run needs one retry),
 * with a steady number of runs in flight for minutes, the client in a process of its own (bench/soak-worker.ts,
 * with --expose-gc). Every sample, taken once the runs in flight have finished: runs done, heap after a forced
 * GC, RSS, live timers and handles. Reported: the heap's growth per 1,000 runs after the warm-up (the
 * least-squares slope over the samples), and the live timers and handles once every run has settled, against
 * the baseline before the first run.
 */
import { compare, fmt, leastSquaresSlope, outcomeBlocks, table, type BenchOptions, type BenchResult, type Target } from "./common.js";
import { runChild, withServer } from "./concurrency.js";
import type { SoakSample, SoakWorkerResult } from "./soak-worker.js";

export interface SoakOptions extends BenchOptions {
  /** How long runs are started for (default 3 minutes; quick: 20 s). */
  durationMs?: number;
  /** Time between samples (default 10 s; quick: 2 s). */
  sampleMs?: number;
  /** Samples before this are the warm-up, left out of the slope (default 60 s; quick: 8 s). */
  warmupMs?: number;
}

const CONCURRENCY = 8;
const LATENCY_MS = 5;
const ATTEMPTS_PER_RUN = 2;
/**
 * The bound on the heap's growth, 500 KB per 1,000 runs (half a KB a run): well below what a run leaves behind if
 * any part of it outlives it (a request's deadline timer left live keeps about 3 KB with its closure, AbortController
 * and combined signal, measured on Node 20, and a run makes two requests; a run's state, its prompts and answers, is
 * several KB), and above the noise of the measure: with every run settled, the heap after a full GC still moves by
 * about ±0.5 MB from sample to sample (V8's compiled code and bytecode come and go), which puts about ±100 KB per
 * 1,000 runs on the slope of a 3-minute run on two busy cores.
 */
const HEAP_SLOPE_LIMIT_KB = 500;

export interface SoakResult extends BenchResult {
  soak: SoakWorkerResult;
  /** Heap growth per 1,000 runs after the warm-up, KB (least-squares slope of heap after GC over runs done). */
  heapSlopeKbPer1000: number;
}

const handleText = (h: Record<string, number>) =>
  Object.entries(h)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => `${kind} ${n}`)
    .join(", ") || "none";

export async function run(opts: SoakOptions): Promise<SoakResult> {
  const durationMs = opts.durationMs ?? (opts.quick ? 20_000 : 180_000);
  const sampleMs = opts.sampleMs ?? (opts.quick ? 2_000 : 10_000);
  const warmupMs = opts.warmupMs ?? (opts.quick ? 8_000 : 60_000);
  const serverArgs = ["--port", "0", "--latency-ms", String(LATENCY_MS), "--mode", "invalid-then-valid"];
  const { result: s, stats: server } = await withServer(serverArgs, (baseUrl) =>
    runChild<SoakWorkerResult>(
      "./soak-worker.ts",
      ["--base-url", baseUrl, "--duration-ms", String(durationMs), "--sample-ms", String(sampleMs), "--concurrency", String(CONCURRENCY)],
      durationMs + 300_000,
    ),
  );
  const measured = s.samples.filter((x) => x.seconds * 1000 >= warmupMs);
  const slope = leastSquaresSlope(
    measured.map((x) => x.runs),
    measured.map((x) => x.heapMb * 1024),
  );
  const heapSlopeKbPer1000 = slope * 1000;
  const first = measured[0];
  const last = measured.at(-1);
  const span = durationMs % 60_000 === 0 ? `${durationMs / 60_000} minute${durationMs === 60_000 ? "" : "s"}` : `${durationMs / 1000} s`;

  const comparisons =
    first && last
      ? [
          compare(
            "heap after GC, last sample vs the first after the warm-up",
            last.heapMb,
            first.heapMb,
            "MB",
            `first sample after the warm-up (${fmt(first.seconds)} s)`,
          ),
        ]
      : [];
  const settledLooks = [...s.samples, s.end];
  const refTimersSettled = settledLooks.map((x) => x.refTimers);
  const targets: Target[] = [
    {
      description:
        "live timers (`process.getActiveResourcesInfo()`) equal the baseline before the first run at the end, every run settled, and at every sample (the runs in flight let finish first)",
      met: refTimersSettled.every((n) => n === s.baseline.refTimers),
      detail: `${s.end.refTimers} at the end, ${s.baseline.refTimers} before the first run; at the samples: ${[...new Set(s.samples.map((x) => x.refTimers))].join(", ") || "none taken"}`,
    },
    {
      description: `heap growth after the warm-up under ${HEAP_SLOPE_LIMIT_KB} KB per 1,000 runs (least-squares slope of heap after GC over runs done)`,
      // A quick run ends inside the heap's warm-up (V8 still compiling, for about the first minute here): its slope is shown, not judged.
      met: opts.quick || !Number.isFinite(heapSlopeKbPer1000) ? null : heapSlopeKbPer1000 < HEAP_SLOPE_LIMIT_KB,
      detail:
        `${fmt(heapSlopeKbPer1000)} KB per 1,000 runs over ${measured.length} samples (${first?.runs ?? 0}–${last?.runs ?? 0} runs)` +
        (opts.quick ? "; not judged in a quick run, which ends inside the heap's warm-up (about the first minute)" : ""),
    },
  ];
  const inFlightDeadlines = s.samples.map((x) => x.inFlight?.packageTimers ?? 0);
  const checks = [
    {
      description: `every run ended valid after exactly ${ATTEMPTS_PER_RUN} attempts`,
      ok: s.runs > 0 && s.validAfterTwoAttempts === s.runs && s.errors.length === 0,
      detail: `${s.validAfterTwoAttempts}/${s.runs}${s.errors.length ? `; errors: ${s.errors.join(" | ")}` : ""}`,
    },
    {
      description: `the server answered ${ATTEMPTS_PER_RUN} requests a run`,
      ok: server.requests === ATTEMPTS_PER_RUN * s.runs,
      detail: `${server.requests} requests for ${s.runs} runs`,
    },
    {
      description:
        "no deadline timer of the package's model client is live once the runs have settled (at every sample and at the end), and the count sees them while requests are in flight",
      ok: settledLooks.every((x) => x.packageTimers === 0) && Math.max(0, ...inFlightDeadlines) > 0,
      detail: `settled: ${[...new Set(settledLooks.map((x) => x.packageTimers))].join(", ")}; just before each sample, with runs in flight: ${inFlightDeadlines.join(", ") || "none"}`,
    },
    {
      description: "at least two samples after the warm-up",
      ok: measured.length >= 2,
      detail: `${measured.length} samples after the warm-up`,
    },
  ];
  const row = (label: string, x: SoakSample) => [
    label,
    fmt(x.seconds),
    x.runs.toLocaleString("en-US"),
    fmt(x.heapMb),
    fmt(x.rssMb),
    x.inFlight ? `${x.inFlight.inFlight} / ${x.inFlight.refTimers} / ${x.inFlight.packageTimers}` : "—",
    x.refTimers,
    x.packageTimers,
    handleText(x.handles),
  ];
  const markdown = [
    `## Soak: ${CONCURRENCY} validation runs in flight for ${span}`,
    "",
    `The package's validation graph with its own model client (the ChatOpenAI \`createChatModel\` builds) over HTTP, against the scripted server (bench/model-server.ts, its own process, ${LATENCY_MS} ms latency per call; ` +
      `every run needs ${ATTEMPTS_PER_RUN} attempts: the first answer breaks both rules, the retry is valid), with ${CONCURRENCY} runs in flight for ${fmt(durationMs / 1000)} s, ` +
      `the client in a process of its own (bench/soak-worker.ts, \`--expose-gc\`). Every ${fmt(sampleMs / 1000)} s a sample: first a look at the runs in flight and the timers they hold; ` +
      "then no new run starts until those have finished, and with every run settled: runs done, heap used after a forced full GC (what stays between runs, not what runs in flight hold), RSS, " +
      "the live timers `process.getActiveResourcesInfo()` lists (the ref'd ones, which keep a process alive), the package's live deadline timers " +
      "(unref'd, so absent from that list; counted through an async hook that records the stack creating each timer, testkit/live-timers.ts), and the other resources that list shows; then the runs resume. " +
      `The heap's growth is the least-squares slope of the heap after GC over the runs done, on the samples after a warm-up of ${fmt(warmupMs / 1000)} s. ` +
      `${s.runs.toLocaleString("en-US")} runs in ${fmt(s.wallMs / 1000)} s (${fmt(s.runs / (s.wallMs / 1000))} runs/s, the pauses for the samples included), ${fmt(s.cpuMs / 1000)} s of the client's CPU; ` +
      "the async hook sees every promise, so this rate is not the graph's (sections 3 and 7 time it).",
    "",
    table(
      [
        "sample",
        "seconds",
        "runs done",
        "heap after GC (MB)",
        "RSS (MB)",
        "before it: runs in flight / ref'd timers / deadline timers",
        "ref'd timers",
        "deadline timers",
        "other resources",
      ],
      [
        row("baseline, before the first run", s.baseline),
        ...s.samples.map((x, i) => row(x.seconds * 1000 < warmupMs ? `${i + 1} (warm-up)` : String(i + 1), x)),
        row("end, every run settled", s.end),
      ],
    ),
    "",
    `Heap growth after the warm-up: **${fmt(heapSlopeKbPer1000)} KB per 1,000 runs**. Live ref'd timers at the end: **${s.end.refTimers}** (baseline ${s.baseline.refTimers}); ` +
      `the package's deadline timers at the end: **${s.end.packageTimers}**. Other resources at the end: ${handleText(s.end.handles)} (baseline: ${handleText(s.baseline.handles)}). ` +
      "With runs in flight, each request holds the client's ref'd timeout (the `openai` SDK's, cleared once the headers arrive) and the package's deadline over the whole answer, and its socket; " +
      "between runs the sockets stay open in undici's pool, unref'd, so that list leaves them out; an Immediate in it is a callback queued for the next turn of the event loop, which holds nothing. " +
      `The scripted server used ${fmt(server.cpuMs)} ms of CPU in its own process for ${server.requests.toLocaleString("en-US")} requests.`,
    "",
    outcomeBlocks(comparisons, targets, checks),
  ].join("\n");
  const rows = [
    { label: "runs", value: s.runs, unit: "runs" },
    { label: "runs per second", value: s.runs / (s.wallMs / 1000), unit: "runs/s" },
    { label: "heap after GC, first sample after the warm-up", value: first?.heapMb ?? NaN, unit: "MB" },
    { label: "heap after GC, last sample", value: last?.heapMb ?? NaN, unit: "MB" },
    { label: "RSS at the end", value: s.end.rssMb, unit: "MB" },
  ];
  return { id: "soak", title: "Soak", rows, comparisons, targets, checks, markdown, soak: s, heapSlopeKbPer1000 };
}
