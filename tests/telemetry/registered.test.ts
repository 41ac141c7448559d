/**
 * Telemetry does its work only once an SDK has registered a tracer or a meter provider: with the API alone every
 * span and metric is the API's no-op, so none is made and a run costs what it costs with telemetry off. Whether
 * one is registered is read through the API's public surface (its proxy tracer provider's delegate, its no-op
 * meter); these tests fail if an upgrade of @opentelemetry/api changes either.
 */
import * as otel from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { openTelemetry, registered } from "../../src/telemetry/open-telemetry.js";

afterEach(() => {
  otel.trace.disable();
  otel.metrics.disable();
});

describe("telemetry with no SDK registered", () => {
  it("relies on the API's no-op tracer provider and no-op meter being one object each, whatever asks for them", () => {
    expect(new otel.ProxyTracerProvider().getDelegate()).toBe(new otel.ProxyTracerProvider().getDelegate());
    expect(otel.trace.getTracerProvider()).toBeInstanceOf(otel.ProxyTracerProvider);
    expect((otel.trace.getTracerProvider() as otel.ProxyTracerProvider).getDelegate()).toBe(new otel.ProxyTracerProvider().getDelegate());
    expect(otel.metrics.getMeterProvider().getMeter("any")).toBe(otel.createNoopMeter());
  });

  it("is off: openTelemetry() gives nothing, so no span or metric is made", async () => {
    expect(registered(otel)).toBe(false);
    expect(await openTelemetry()).toBeUndefined();
  });

  it("a tracer provider registered turns it on, and unregistered off again", async () => {
    otel.trace.setGlobalTracerProvider(new BasicTracerProvider());
    expect(registered(otel)).toBe(true);
    expect(await openTelemetry()).toBeDefined();
    otel.trace.disable();
    expect(registered(otel)).toBe(false);
  });

  it("a meter provider alone turns it on (runs are counted without traces)", async () => {
    otel.metrics.setGlobalMeterProvider(new MeterProvider());
    expect(registered(otel)).toBe(true);
    expect(await openTelemetry()).toBeDefined();
  });
});
