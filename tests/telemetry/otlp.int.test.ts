/**
 * Through the real OTLP HTTP exporters to a receiver on 127.0.0.1: what a validation run with a retry sends is
 * what a collector gets (the spans with their GenAI and trustworthy.* attributes, the counters), in OTLP's JSON.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { context, metrics, trace } from "@opentelemetry/api";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  name: string;
  spanId: string;
  parentSpanId?: string;
  attributes: OtlpAttribute[];
}

const received: { path: string; body: any }[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ path: req.url ?? "", body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const read = (value: OtlpValue): unknown =>
  value.arrayValue
    ? value.arrayValue.values.map(read)
    : (value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined));
const attributesOf = (span: { attributes: OtlpAttribute[] }) => Object.fromEntries(span.attributes.map((a) => [a.key, read(a.value)]));

describe("the OTLP HTTP exporters", () => {
  it("carry a run's spans and counters to a collector", async () => {
    const tracerProvider = new NodeTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${base}/v1/traces` }))],
    });
    tracerProvider.register();
    const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics` }), exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    metrics.setGlobalMeterProvider(meterProvider);
    try {
      const valid = builtinSpecs.get("api-request")!.example as Record<string, unknown>;
      const out = await buildValidationGraph({ model: scriptedModel(["not json", JSON.stringify(valid)]) }).invoke(
        { request: "POST /orders" },
        { context: { spec: "api-request", model: "anthropic/claude-test" } },
      );
      expect(out).toMatchObject({ success: true, attempts: 2 });
      await tracerProvider.forceFlush();
      await meterProvider.forceFlush();
    } finally {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      context.disable();
    }

    const spans: OtlpSpan[] = received
      .filter((r) => r.path === "/v1/traces")
      .flatMap((r) => r.body.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans)));
    const run = spans.find((span) => span.name === "invoke_agent Deterministic validation")!;
    const attempts = spans.filter((span) => span.name === "chat anthropic/claude-test");
    expect(attributesOf(run)).toMatchObject({ "trustworthy.stop_reason": "valid", "trustworthy.attempts": 2, "trustworthy.spec.name": "api-request" });
    expect(attempts.map((span) => span.parentSpanId)).toEqual([run.spanId, run.spanId]);
    expect(attempts.map((span) => attributesOf(span))).toMatchObject([
      { "gen_ai.provider.name": "anthropic", "trustworthy.valid": false, "trustworthy.error_class": "not_json", "trustworthy.error_count": 1 },
      { "gen_ai.provider.name": "anthropic", "trustworthy.valid": true, "trustworthy.error_count": 0 },
    ]);

    const sent = received
      .filter((r) => r.path === "/v1/metrics")
      .flatMap((r) => r.body.resourceMetrics.flatMap((rm: any) => rm.scopeMetrics.flatMap((sm: any) => sm.metrics)));
    const runs = sent.find((metric: any) => metric.name === "trustworthy.runs");
    expect(runs.sum.dataPoints.map((point: any) => [attributesOf(point)["trustworthy.outcome"], Number(point.asInt ?? point.asDouble)])).toEqual([
      ["valid", 1],
    ]);
    const refused = sent.find((metric: any) => metric.name === "trustworthy.attempts.refused");
    expect(attributesOf(refused.sum.dataPoints[0])).toMatchObject({ "trustworthy.error_class": "not_json", "gen_ai.request.model": "anthropic/claude-test" });
  });
});
