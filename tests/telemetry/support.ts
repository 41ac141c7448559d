/** An OpenTelemetry SDK registered for one test file: spans in memory, metrics collected on demand, and all of it unregistered after. */
import { context, metrics, trace } from "@opentelemetry/api";
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

/** A metric reader the test collects from when it wants (cumulative: each collection holds every count so far). */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

export interface Recording {
  spans: InMemorySpanExporter;
  /** Every data point of the named metric, with its attributes. */
  points(name: string): Promise<DataPoint<number | Histogram>[]>;
  /** The sum of a counter's points whose attributes include `match`. */
  count(name: string, match?: Record<string, unknown>): Promise<number>;
  stop(): Promise<void>;
}

export function recordTelemetry(): Recording {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  tracerProvider.register();
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  const points = async (name: string) => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics.flatMap((scope) =>
      scope.metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as DataPoint<number | Histogram>[]),
    );
  };
  return {
    spans,
    points,
    async count(name, match = {}) {
      const found = await points(name);
      return found
        .filter((point) => Object.entries(match).every(([key, value]) => point.attributes[key] === value))
        .reduce((sum, point) => sum + (typeof point.value === "number" ? point.value : point.value.count), 0);
    },
    async stop() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      context.disable();
    },
  };
}

/** The finished spans whose name starts with `prefix`, in the order they ended. */
export function spansNamed(spans: InMemorySpanExporter, prefix: string): ReadableSpan[] {
  return spans.getFinishedSpans().filter((span) => span.name.startsWith(prefix));
}

/** A span's parent span id (the SDK 2.x keeps it in `parentSpanContext`). */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}
