/**
 * Through the real OTLP HTTP exporters to a receiver on 127.0.0.1: what a validation run with a retry sends is
 * what a collector gets (the spans with their GenAI and trustworthy.* attributes, the counters), in OTLP's JSON.
 */
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
import { attributesOf, startOtlpReceiver, type OtlpReceiver } from "./otlp-receiver.js";

let receiver: OtlpReceiver;
let base: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  base = receiver.url;
});
afterAll(async () => receiver.close());

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

    const spans = receiver.spans();
    const run = spans.find((span) => span.name === "invoke_agent Deterministic validation")!;
    const attempts = spans.filter((span) => span.name === "chat anthropic/claude-test");
    expect(attributesOf(run)).toMatchObject({ "trustworthy.stop_reason": "valid", "trustworthy.attempts": 2, "trustworthy.spec.name": "api-request" });
    expect(attempts.map((span) => span.parentSpanId)).toEqual([run.spanId, run.spanId]);
    expect(attempts.map((span) => attributesOf(span))).toMatchObject([
      { "gen_ai.provider.name": "anthropic", "trustworthy.valid": false, "trustworthy.error_class": "not_json", "trustworthy.error_count": 1 },
      { "gen_ai.provider.name": "anthropic", "trustworthy.valid": true, "trustworthy.error_count": 0 },
    ]);

    const sent = receiver.metrics();
    const runs = sent.find((metric: any) => metric.name === "trustworthy.runs");
    expect(runs.sum.dataPoints.map((point: any) => [attributesOf(point)["trustworthy.outcome"], Number(point.asInt ?? point.asDouble)])).toEqual([
      ["valid", 1],
    ]);
    const refused = sent.find((metric: any) => metric.name === "trustworthy.attempts.refused");
    expect(attributesOf(refused.sum.dataPoints[0])).toMatchObject({ "trustworthy.error_class": "not_json", "gen_ai.request.model": "anthropic/claude-test" });
  });
});
