/** An OpenTelemetry SDK registered for one test file: spans in memory, metrics collected on demand, and all of it unregistered after. */
import { context, metrics, trace } from "@opentelemetry/api";
import { AggregationTemporality, MeterProvider, MetricReader, type DataPoint, type Histogram } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type Span, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

/** A metric reader the test collects from when it wants (cumulative: each collection holds every count so far). */
class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** Every span started and not yet ended (an exporter only ever sees the ended ones). */
class OpenSpanTracker implements SpanProcessor {
  readonly open = new Map<string, string>();
  readonly waiting: { prefix: string; resolve: (span: ReadableSpan) => void }[] = [];
  onStart(span: Span): void {
    this.open.set(span.spanContext().spanId, span.name);
  }
  onEnd(span: ReadableSpan): void {
    this.open.delete(span.spanContext().spanId);
    for (const waiter of this.waiting.filter((w) => span.name.startsWith(w.prefix))) {
      this.waiting.splice(this.waiting.indexOf(waiter), 1);
      waiter.resolve(span);
    }
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

export interface Recording {
  spans: InMemorySpanExporter;
  /** The names of the spans started and not ended yet. */
  openSpans(): string[];
  /**
   * The next span whose name starts with `prefix` to end (one that ended already is in `spans`): a run that is
   * aborted rejects at once, and ends its spans when LangGraph has stopped it.
   */
  nextEnded(prefix: string): Promise<ReadableSpan>;
  /** The registered tracer provider (to register again after a test replaced it). */
  tracerProvider: NodeTracerProvider;
  /** Every data point of the named metric, with its attributes. */
  points(name: string): Promise<DataPoint<number | Histogram>[]>;
  /** The sum of a counter's points whose attributes include `match`. */
  count(name: string, match?: Record<string, unknown>): Promise<number>;
  stop(): Promise<void>;
}

export function recordTelemetry(): Recording {
  const spans = new InMemorySpanExporter();
  const tracker = new OpenSpanTracker();
  const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans), tracker] });
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
    openSpans: () => [...tracker.open.values()],
    nextEnded: (prefix) => new Promise((resolve) => tracker.waiting.push({ prefix, resolve })),
    tracerProvider,
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
