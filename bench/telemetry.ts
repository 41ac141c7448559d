/**
 * What OpenTelemetry costs a validation run (docs/tracing.md): CPU time per run (`process.cpuUsage()`),
 * measured in a process of its own (started with --expose-gc), interleaved, with a confidence interval,
 * so the report can say whether the cost is within 1 % of a run, over it, or that this run cannot tell.
 *
 * One graph, built once as a service builds it, runs the same run again and again: a scripted model,
 * two attempts (a broken answer, then a valid one). Two parts, each in cycles of short blocks, one block
 * per set-up per cycle, in an order that rotates through every order of the set-ups (so each comes first,
 * second and last equally often, and drift in the machine's load reaches all alike), a scavenge before
 * each block (not timed):
 *
 * - the target: telemetry off (`configureTelemetry({ enabled: false })`, what a project without
 *   `@opentelemetry/api` gets), off again (an A/A control: the same set-up as a second arm, whose ratio to
 *   the first shows the method's own error), and the API with no SDK registered (the default);
 * - with an SDK: off, the Node SDK with batch span processors and exporters that drop everything, and the
 *   OTLP HTTP exporters sending to a receiver in the parent process (so its CPU is not counted). Each SDK
 *   block ends with a forceFlush inside its timed window, so it pays for exporting its own spans and
 *   metrics (one metric export per block: more often than a service's exporters, an upper bound).
 *
 * Short blocks matter more than long ones here: on a shared machine the noise comes from the load, which
 * drifts over seconds; two set-ups measured milliseconds apart see the same load. Each cycle gives one
 * ratio per set-up (its block ÷ off's); reported are the median ratio, its 95 % bootstrap interval and the
 * ratios' interquartile range, and the ratio of the total CPU times (the mean, GC pauses included).
 *
 *   node --expose-gc --import tsx bench/telemetry.ts --worker --otlp URL [--quick]   (prints RESULT {json})
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { context, metrics, trace } from "@opentelemetry/api";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { compiled } from "./compiled.js";
import {
  compareRepeated,
  cpuUs,
  flagValue,
  fmt,
  fmtLoad,
  median,
  medianRatioInterval,
  runIfMain,
  table,
  verdictUnder,
  checkLines,
  targetLines,
  type BenchOptions,
  type BenchResult,
  type Comparison,
  type RatioInterval,
  type Target,
} from "./common.js";
import { lineStartingWith, spawnTs } from "./concurrency.js";

/** The set-ups. */
const OFF = "off";
const OFF_AGAIN = "off (A/A control)";
const NO_SDK = "no SDK";
const SDK_NOOP = "SDK, no-op exporter";
const SDK_OTLP = "SDK, OTLP exporter";
type SetUp = typeof OFF | typeof OFF_AGAIN | typeof NO_SDK | typeof SDK_NOOP | typeof SDK_OTLP;

/** The two parts: the set-ups each interleaves, the reference first. */
const TARGET_PART: readonly SetUp[] = [OFF, OFF_AGAIN, NO_SDK];
const SDK_PART: readonly SetUp[] = [OFF, SDK_NOOP, SDK_OTLP];

/** The target: with no SDK, telemetry costs a run at most 1 % of its CPU. */
const LIMIT = 1.01;

/** How many cycles and runs per block each part takes, and the warm-up runs per set-up. */
export interface TelemetryBenchSize {
  cycles: number;
  runsPerBlock: number;
  sdkCycles: number;
  sdkRunsPerBlock: number;
  warmup: number;
}

/** Full size: about two minutes of runs on a quiet two-core machine (each run about 3 ms of CPU). */
export const FULL_SIZE: TelemetryBenchSize = { cycles: 900, runsPerBlock: 10, sdkCycles: 60, sdkRunsPerBlock: 50, warmup: 300 };
const QUICK_SIZE: TelemetryBenchSize = { cycles: 12, runsPerBlock: 2, sdkCycles: 6, sdkRunsPerBlock: 2, warmup: 4 };

/** What the worker measured: CPU µs per run, one block per cycle, by set-up, for each part. */
export interface TelemetryMeasurement {
  size: TelemetryBenchSize;
  target: Record<string, number[]>;
  sdk: Record<string, number[]>;
  /** Runs that did not end valid after exactly two attempts (must be 0). */
  badRuns: number;
  /** Whether blocks were preceded by a scavenge (the worker had `gc`). */
  scavenged: boolean;
  loadBefore: number[];
  loadAfter: number[];
}

/** Every order of `items`, each once (rotated through by the cycles). */
export function orders<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((first, i) => orders([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [first, ...rest]));
}

/** An exporter that drops everything it is given (spans or metrics). */
const dropping: SpanExporter & PushMetricExporter = {
  export: (_items: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
  shutdown: async () => {},
  forceFlush: async () => {},
  selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
} as SpanExporter & PushMetricExporter;

/** A registered SDK: its providers, made global while its set-up runs. */
interface Sdk {
  tracer: NodeTracerProvider;
  meter: MeterProvider;
}

function sdkWith(spans: SpanExporter, metricExporter: PushMetricExporter): Sdk {
  return {
    tracer: new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans)] }),
    // Exported at each block's end (forceFlush), not on a timer that would fire in another set-up's block.
    meter: new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 })] }),
  };
}

/** Measures, in this process: run it in one started with --expose-gc (see the file's head). */
export async function measureTelemetryCost(size: TelemetryBenchSize, otlpBase: string): Promise<TelemetryMeasurement> {
  // The package as it ships (bench/compiled.ts); its telemetry settings are this copy's.
  const { buildValidationGraph } = await compiled<typeof import("../src/validation/graph.js")>("src/validation/graph");
  const { configureTelemetry } = await compiled<typeof import("../src/telemetry/open-telemetry.js")>("src/telemetry/open-telemetry");
  const { builtinSpecs } = await compiled<typeof import("../src/specs/registry.js")>("src/specs/registry");
  const { ScriptedChatModel } = await compiled<typeof import("../testkit/scripted-model.js")>("testkit/scripted-model");
  const valid = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
  const answers = [JSON.stringify({ ...valid, replicas: 8 }), JSON.stringify(valid)];
  const graph = buildValidationGraph({ model: new ScriptedChatModel({ answers, repeat: true, record: false }) });
  const request = { request: "A deployment config for payments-api with 8 replicas" };
  let badRuns = 0;

  const sdks: Partial<Record<SetUp, Sdk>> = {
    [SDK_NOOP]: sdkWith(dropping, dropping),
    [SDK_OTLP]: sdkWith(new OTLPTraceExporter({ url: `${otlpBase}/v1/traces` }), new OTLPMetricExporter({ url: `${otlpBase}/v1/metrics` })),
  };
  const use = (setUp: SetUp) => {
    trace.disable();
    metrics.disable();
    context.disable();
    configureTelemetry({ enabled: setUp !== OFF && setUp !== OFF_AGAIN });
    const sdk = sdks[setUp];
    if (sdk === undefined) return;
    // The tracer provider's own registration: the global provider and an AsyncLocalStorage context manager.
    sdk.tracer.register();
    metrics.setGlobalMeterProvider(sdk.meter);
  };
  const gc = (globalThis as { gc?: (options?: { type: "minor" | "major" }) => void }).gc;
  const block = async (setUp: SetUp, runs: number): Promise<number> => {
    use(setUp);
    gc?.({ type: "minor" });
    const sdk = sdks[setUp];
    const start = process.cpuUsage();
    for (let i = 0; i < runs; i++) {
      const out = await graph.invoke(request);
      if (out.stopReason !== "valid" || out.attempts !== 2) badRuns++;
    }
    if (sdk !== undefined) {
      await sdk.tracer.forceFlush();
      await sdk.meter.forceFlush();
    }
    return cpuUs(start) / runs;
  };
  const part = async (setUps: readonly SetUp[], cycles: number, runs: number): Promise<Record<string, number[]>> => {
    const perRun: Record<string, number[]> = Object.fromEntries(setUps.map((s) => [s, []]));
    const rotation = orders(setUps);
    for (let cycle = 0; cycle < cycles; cycle++) for (const setUp of rotation[cycle % rotation.length]) perRun[setUp].push(await block(setUp, runs));
    return perRun;
  };

  const loadBefore = loadavg();
  try {
    // Warm-up: every set-up's code paths loaded and optimised, in blocks as measured.
    const all = [...new Set([...TARGET_PART, ...SDK_PART])];
    for (let round = 0; round < 3; round++) for (const setUp of all) await block(setUp, Math.max(1, Math.round(size.warmup / 3)));
    const target = await part(TARGET_PART, size.cycles, size.runsPerBlock);
    const sdk = await part(SDK_PART, size.sdkCycles, size.sdkRunsPerBlock);
    return { size, target, sdk, badRuns, scavenged: gc !== undefined, loadBefore, loadAfter: loadavg() };
  } finally {
    for (const sdk of Object.values(sdks)) {
      await sdk.tracer.shutdown();
      await sdk.meter.shutdown();
    }
    use(NO_SDK);
    configureTelemetry();
  }
}

/** One set-up against off: the median per-cycle ratio with its interval, and the ratio of total CPU. */
export interface SetUpCost {
  setUp: string;
  /** CPU µs per run, the median block. */
  perRun: number;
  interval: RatioInterval;
  /** Total CPU of the set-up's blocks ÷ off's: the mean cost, every GC pause included. */
  totalRatio: number;
}

export function costOf(setUp: string, values: readonly number[], off: readonly number[]): SetUpCost {
  const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
  return { setUp, perRun: median(values), interval: medianRatioInterval(values, off), totalRatio: sum(values) / sum(off) };
}

/**
 * The target's verdict, on the no-SDK ratio's interval widened on both sides by the A/A control's largest
 * distance from 1 (the method's own error in this run, which the bootstrap alone does not see): met when
 * the widened interval lies at or under the limit, not met when it lies over it, else this run cannot tell.
 */
export function targetVerdict(noSdk: RatioInterval, control: RatioInterval, quick: boolean): Target {
  const description = `with no SDK registered, telemetry costs a run at most ${Math.round((LIMIT - 1) * 100)} % of its CPU (the median per-cycle ratio's 95 % interval, widened by the A/A control's error, within ${LIMIT.toFixed(2)}×)`;
  const error = Math.max(0, 1 - control.low, control.high - 1);
  const widened = { low: noSdk.low - error, high: noSdk.high + error };
  const detail =
    `${noSdk.median.toFixed(3)}× telemetry off, 95 % interval ${noSdk.low.toFixed(3)}–${noSdk.high.toFixed(3)}; ` +
    `A/A control ${control.median.toFixed(3)}× (${control.low.toFixed(3)}–${control.high.toFixed(3)}), so ${widened.low.toFixed(3)}–${widened.high.toFixed(3)}`;
  if (quick) return { description, met: null, detail: `${detail} (quick: too few runs to tell)` };
  const verdict = verdictUnder(LIMIT, widened);
  if (verdict === "cannot tell") return { description, met: null, undecided: true, detail };
  return { description, met: verdict === "met", detail };
}

/** Runs the worker and reads its RESULT line. */
async function measureInWorker(quick: boolean, otlpBase: string): Promise<TelemetryMeasurement> {
  const worker = spawnTs("./telemetry.ts", ["--worker", "--otlp", otlpBase, ...(quick ? ["--quick"] : [])], ["--expose-gc"]);
  try {
    return JSON.parse(await lineStartingWith(worker, "RESULT", 30 * 60_000)) as TelemetryMeasurement;
  } finally {
    worker.kill();
  }
}

/** A receiver for the OTLP exporters, in this process: it drains what arrives unread and counts the requests. */
async function otlpReceiver(): Promise<{ base: string; received: () => number; close: () => Promise<void> }> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const pct = (ratio: number) => `${ratio >= 1 ? "+" : "−"}${Math.abs((ratio - 1) * 100).toFixed(1)} %`;

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const receiver = await otlpReceiver();
  let m: TelemetryMeasurement;
  try {
    m = await measureInWorker(opts.quick, receiver.base);
  } finally {
    await receiver.close();
  }
  const costs = [
    costOf(OFF_AGAIN, m.target[OFF_AGAIN], m.target[OFF]),
    costOf(NO_SDK, m.target[NO_SDK], m.target[OFF]),
    costOf(SDK_NOOP, m.sdk[SDK_NOOP], m.sdk[OFF]),
    costOf(SDK_OTLP, m.sdk[SDK_OTLP], m.sdk[OFF]),
  ];
  const [control, noSdk] = costs;
  const comparisons: Comparison[] = costs.slice(1).map((cost) => {
    const part = cost.setUp === NO_SDK ? m.target : m.sdk;
    const c = compareRepeated(`CPU per run, ${cost.setUp}`, part[cost.setUp], part[OFF], "µs", "telemetry off");
    return { ...c, interval: { low: cost.interval.low, high: cost.interval.high, level: cost.interval.level } };
  });
  const targets = [targetVerdict(noSdk.interval, control.interval, opts.quick)];
  const checks = [
    { description: "every run ended valid after two attempts", ok: m.badRuns === 0, detail: `${m.badRuns} did not` },
    { description: "the OTLP exporters sent to the receiver", ok: receiver.received() > 0, detail: `${receiver.received()} requests` },
  ];
  if (!opts.quick) checks.push({ description: "each block was preceded by a scavenge (the worker had gc)", ok: m.scavenged, detail: String(m.scavenged) });
  const s = m.size;
  const rows = costs.map((cost) => {
    const offPerRun = median(cost.setUp === OFF_AGAIN || cost.setUp === NO_SDK ? m.target[OFF] : m.sdk[OFF]);
    const i = cost.interval;
    const extra = (ratio: number) => {
      const us = Math.round((ratio - 1) * offPerRun);
      return `${us < 0 ? "−" : "+"}${Math.abs(us).toLocaleString("en-US")}`;
    };
    return [
      cost.setUp,
      `${fmt(cost.perRun)} µs`,
      `${fmt(offPerRun)} µs`,
      `${i.median.toFixed(3)}× (${pct(i.median)})`,
      `${i.low.toFixed(3)}–${i.high.toFixed(3)}`,
      `${extra(i.median)} µs (${extra(i.low)} to ${extra(i.high)})`,
      `${i.q1.toFixed(3)}–${i.q3.toFixed(3)}`,
      `${cost.totalRatio.toFixed(3)}×`,
      String(i.n),
    ];
  });
  const markdown = [
    "## OpenTelemetry's cost per run",
    "",
    "What telemetry costs a validation run in CPU time (`process.cpuUsage()`), in a process of its own: one graph built once, " +
      "the same run of two attempts again and again (a scripted model: a broken answer, then a valid one). " +
      `Two parts, each in cycles of one block per set-up, in an order that rotates through every order (each set-up first, second and last equally often), a scavenge before each block, untimed. ` +
      `The target's part: ${s.cycles} cycles of ${s.runsPerBlock} runs a block, telemetry off (\`configureTelemetry({ enabled: false })\`, what a project without \`@opentelemetry/api\` gets), ` +
      "off again as an A/A control (the same set-up: its ratio shows the method's own error), and the API with no SDK registered (the default). " +
      `The SDK's part: ${s.sdkCycles} cycles of ${s.sdkRunsPerBlock} runs a block, off, the Node SDK with batch span processors and exporters that drop everything, ` +
      "and the OTLP HTTP exporters sending to a receiver in the parent process (not counted); each SDK block ends with a forceFlush inside its timed window, " +
      "so it pays for exporting its own spans and metrics (a metric export every block, more often than a service's exporters: an upper bound). " +
      "Short blocks measured milliseconds apart see the same load, which on a shared machine drifts over seconds; " +
      "each cycle gives one ratio per set-up (its block ÷ off's block). " +
      `Load average ${fmtLoad(m.loadBefore)} before, ${fmtLoad(m.loadAfter)} after. What the spans and metrics are: [docs/tracing.md](docs/tracing.md).`,
    "",
    table(
      [
        "set-up",
        "CPU per run (median block)",
        "off (median block)",
        "median per-cycle ratio",
        "its 95 % interval (bootstrap)",
        "extra CPU per run (interval)",
        "per-cycle ratios, interquartile range",
        "total CPU ÷ off's (mean, GC included)",
        "cycles",
      ],
      rows,
    ),
    "",
    "Extra CPU per run is (ratio − 1) × off's CPU per run: what telemetry adds to a run whatever the run costs. The run measured here is about the cheapest a run can be " +
      "(a model in the process, no HTTP); telemetry's work per run does not depend on how the model is reached, so a run with a model client over HTTP pays about the same microseconds, a smaller share of its CPU. " +
      "The interquartile range says how far one cycle strays; the interval, how far the median could. " +
      "For the target, the no-SDK interval is widened on both sides by the A/A control's largest distance from 1.000 (the method's own error in this run): " +
      "met when it then lies at or under 1.01×, not met when it lies over, and otherwise this run cannot tell at its noise.",
    "",
    "Targets:",
    targetLines(targets),
    "",
    "Checks:",
    checkLines(checks),
  ].join("\n");
  return {
    id: "telemetry",
    title: "OpenTelemetry's cost per run",
    rows: [
      { label: "CPU per run, off", value: median(m.target[OFF]), unit: "µs" },
      ...costs.map((cost) => ({ label: `CPU per run, ${cost.setUp}`, value: cost.perRun, unit: "µs" })),
    ],
    comparisons,
    targets,
    checks,
    markdown,
  };
}

runIfMain(
  import.meta.url,
  async (argv) => {
    const quick = argv.includes("--quick");
    if (argv.includes("--worker")) {
      const otlp = flagValue(argv, "--otlp");
      if (otlp === undefined) throw new Error("--otlp URL is required");
      const result = await measureTelemetryCost(quick ? QUICK_SIZE : FULL_SIZE, otlp);
      process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
      return;
    }
    console.log((await run({ quick })).markdown);
  },
  { exitWhenDone: true },
);
