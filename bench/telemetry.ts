/**
 * What OpenTelemetry costs a validation run (docs/tracing.md), measured interleaved in one process: the same
 * run (a scripted model, two attempts: a broken answer, then a valid one) with telemetry off (as without
 * `@opentelemetry/api` installed), with the API and no SDK registered (the default), with the SDK registered
 * and an exporter that drops everything, and with the OTLP HTTP exporters sending to a receiver on 127.0.0.1
 * (in this process: it drains the bytes unread). Each variant once per cycle, in a random order; CPU time
 * per run (`process.cpuUsage()`) over a block of runs, each variant's ratio to "off" within its cycle.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { context, metrics, trace } from "@opentelemetry/api";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { builtinSpecs } from "../src/specs/registry.js";
import { configureTelemetry } from "../src/telemetry/open-telemetry.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { ScriptedChatModel } from "../testkit/scripted-model.js";
import {
  compareRepeated,
  cpuUs,
  fmt,
  fmtLoad,
  median,
  outcomeBlocks,
  rng,
  runIfMain,
  shuffled,
  table,
  type BenchOptions,
  type BenchResult,
  type Comparison,
} from "./common.js";

const VARIANTS = ["off", "no SDK", "SDK, no-op exporter", "SDK, OTLP exporter"] as const;
type Variant = (typeof VARIANTS)[number];

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const BROKEN = JSON.stringify({ ...VALID, replicas: 8 });
const REQUEST = "A deployment config for payments-api with 8 replicas";

/** An exporter that drops everything it is given (spans or metrics). */
const dropping: SpanExporter & PushMetricExporter = {
  export: (_items: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
  shutdown: async () => {},
  forceFlush: async () => {},
  selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
} as SpanExporter & PushMetricExporter;

/** A registered SDK: its providers, set as the global ones while its variant runs. */
interface Sdk {
  tracer: NodeTracerProvider;
  meter: MeterProvider;
}

function sdkWith(spans: SpanExporter, metricExporter: PushMetricExporter): Sdk {
  return {
    tracer: new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans)] }),
    meter: new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 1_000 })] }),
  };
}

/** Sets the variant's globals: telemetry off, the API alone, or an SDK's providers and a context manager. */
function use(variant: Variant, sdks: Record<string, Sdk>): void {
  trace.disable();
  metrics.disable();
  context.disable();
  configureTelemetry({ enabled: variant !== "off" });
  const sdk = sdks[variant];
  if (sdk === undefined) return;
  // The tracer provider's own registration: the global provider and an AsyncLocalStorage context manager.
  sdk.tracer.register();
  metrics.setGlobalMeterProvider(sdk.meter);
}

async function oneRun(): Promise<void> {
  const out = await buildValidationGraph({ model: new ScriptedChatModel({ answers: [BROKEN, JSON.stringify(VALID)] }) }).invoke({ request: REQUEST });
  if (out.stopReason !== "valid" || out.attempts !== 2) throw new Error(`telemetry bench: unexpected run ${out.stopReason}/${out.attempts}`);
}

export interface TelemetryCost {
  cycles: number;
  runsPerBlock: number;
  /** CPU µs per run, one block per cycle, by variant. */
  cpuPerRun: Record<Variant, number[]>;
  /** OTLP requests the receiver got (the exporter did send). */
  received: number;
  loadBefore: number[];
  loadAfter: number[];
}

export async function measureTelemetryCost(options: { cycles: number; runsPerBlock: number; warmup: number; seed?: number }): Promise<TelemetryCost> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sdks: Record<string, Sdk> = {
    "SDK, no-op exporter": sdkWith(dropping, dropping),
    "SDK, OTLP exporter": sdkWith(new OTLPTraceExporter({ url: `${base}/v1/traces` }), new OTLPMetricExporter({ url: `${base}/v1/metrics` })),
  };
  const cpuPerRun = Object.fromEntries(VARIANTS.map((v) => [v, [] as number[]])) as Record<Variant, number[]>;
  const random = rng(options.seed ?? 44);
  const loadBefore = (await import("node:os")).loadavg();
  try {
    for (const variant of VARIANTS) {
      use(variant, sdks);
      for (let i = 0; i < options.warmup; i++) await oneRun();
    }
    for (let cycle = 0; cycle < options.cycles; cycle++) {
      for (const variant of shuffled(VARIANTS, random)) {
        use(variant, sdks);
        const start = process.cpuUsage();
        for (let i = 0; i < options.runsPerBlock; i++) await oneRun();
        cpuPerRun[variant].push(cpuUs(start) / options.runsPerBlock);
      }
    }
    for (const sdk of Object.values(sdks)) {
      await sdk.tracer.forceFlush();
      await sdk.meter.forceFlush();
    }
  } finally {
    for (const sdk of Object.values(sdks)) {
      await sdk.tracer.shutdown();
      await sdk.meter.shutdown();
    }
    use("no SDK", {});
    configureTelemetry();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return { cycles: options.cycles, runsPerBlock: options.runsPerBlock, cpuPerRun, received, loadBefore, loadAfter: (await import("node:os")).loadavg() };
}

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const cost = await measureTelemetryCost(opts.quick ? { cycles: 3, runsPerBlock: 5, warmup: 3 } : { cycles: 21, runsPerBlock: 40, warmup: 40 });
  const off = cost.cpuPerRun.off;
  const comparisons: Comparison[] = VARIANTS.slice(1).map((variant) =>
    compareRepeated(`CPU per run, ${variant}`, cost.cpuPerRun[variant], off, "µs", "telemetry off"),
  );
  const noSdk = comparisons[0];
  const targets = [
    {
      description: "with no SDK registered, telemetry costs a run at most 1 % of its CPU (median of the per-cycle ratios)",
      met: opts.quick ? null : noSdk.ratio <= 1.01,
      detail: `${fmt(noSdk.ratio)}× telemetry off`,
    },
  ];
  const checks = [{ description: "the OTLP exporters sent to the receiver", ok: cost.received > 0, detail: `${cost.received} requests` }];
  const rows = VARIANTS.map((variant) => [variant, `${fmt(median(cost.cpuPerRun[variant]))} µs`]);
  const markdown = [
    "## OpenTelemetry's cost per run",
    "",
    "A validation run of two attempts (a scripted model: a broken answer, then a valid one), the same run in four set-ups, " +
      `each once per cycle in a random order, ${cost.cycles} cycles of ${cost.runsPerBlock} runs: telemetry off (\`configureTelemetry({ enabled: false })\`, ` +
      "what a project without `@opentelemetry/api` gets), the API with no SDK registered (the default), the Node SDK with batch span processors and an exporter that drops everything, " +
      "and the OTLP HTTP exporters sending to a receiver on 127.0.0.1 (in the same process, so its CPU is counted; it drains the bytes unread). " +
      `Load average ${fmtLoad(cost.loadBefore)} before, ${fmtLoad(cost.loadAfter)} after. What the spans and metrics are: [docs/tracing.md](docs/tracing.md).`,
    "",
    table(["set-up", "CPU per run (median)"], rows),
    "",
    outcomeBlocks(comparisons, targets, checks),
  ].join("\n");
  return {
    id: "telemetry",
    title: "OpenTelemetry's cost per run",
    rows: VARIANTS.map((variant) => ({ label: `CPU per run, ${variant}`, value: median(cost.cpuPerRun[variant]), unit: "µs" })),
    comparisons,
    targets,
    checks,
    markdown,
  };
}

runIfMain(import.meta.url, async () => {
  const result = await run({ quick: process.argv.includes("--quick") });
  console.log(result.markdown);
});
