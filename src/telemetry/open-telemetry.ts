/**
 * OpenTelemetry traces and metrics of every verdict, through `@opentelemetry/api`, an optional peer
 * dependency loaded on first use: without it installed nothing is recorded, and without an SDK
 * registered the API is its own no-op. The graphs, the createAgent middleware, the guarded tools and
 * Reflexion call the few functions here; what each span and instrument means is in docs/tracing.md.
 *
 * Spans follow the OpenTelemetry GenAI semantic conventions (`gen_ai.*`) where they apply, and carry the
 * package's own facts under one prefix, `trustworthy.`. Metric attributes are few and bounded: a spec or
 * a model name a run supplies counts as itself only among the first MAX_ATTRIBUTE_VALUES seen, and as
 * "other" after that, so a server's callers cannot grow a metrics backend without bound.
 *
 * Telemetry never changes a run: a fault here (a missing package, an SDK that throws) records nothing.
 */
import type * as OtelApi from "@opentelemetry/api";
import { DEFAULT_PROVIDER, parseModelName } from "../providers/index.js";
import { bound } from "../shared/text.js";

type Api = typeof OtelApi;
type Span = OtelApi.Span;
type Context = OtelApi.Context;
type Attributes = OtelApi.Attributes;

/** The instrumentation scope's name: the package's. */
const TELEMETRY_SCOPE = "langgraph-trustworthy-output";

/** What is recorded beyond the verdicts: configureTelemetry's options. */
type TelemetryOptions = NonNullable<Parameters<typeof configureTelemetry>[0]>;

const DEFAULT_OPTIONS: Required<TelemetryOptions> = { enabled: true, recordContent: false, maxContentChars: 1_000 };
let settings: Required<TelemetryOptions> = { ...DEFAULT_OPTIONS };

/**
 * Set what the package records for OpenTelemetry, for the whole process (docs/tracing.md). Call it with
 * no argument to go back to the defaults.
 *
 * @example
 * ```ts
 * import { configureTelemetry } from "langgraph-trustworthy-output";
 *
 * configureTelemetry({ recordContent: true, maxContentChars: 500 });
 * ```
 */
export function configureTelemetry(
  options: {
    /** Record traces and metrics at all (default true; they cost nothing measurable without an SDK). */
    enabled?: boolean;
    /** Put the request and the answer's text on the spans (default false: never, they may hold personal data). */
    recordContent?: boolean;
    /** The most characters of each text recorded when recordContent is on (default 1,000). */
    maxContentChars?: number;
  } = {},
): void {
  const maxContentChars = options.maxContentChars ?? DEFAULT_OPTIONS.maxContentChars;
  if (!Number.isInteger(maxContentChars) || maxContentChars < 1) throw new RangeError("maxContentChars must be a positive integer");
  settings = { ...DEFAULT_OPTIONS, ...options, maxContentChars };
}

let api: Api | undefined;
let loading: Promise<Api | undefined> | undefined;

/**
 * The OpenTelemetry API, loaded once; undefined when telemetry is off or the package is not installed
 * (or fails to load: telemetry is never a reason for a run to fail).
 */
export async function openTelemetry(): Promise<Api | undefined> {
  if (!settings.enabled) return undefined;
  if (api !== undefined) return api;
  loading ??= import("@opentelemetry/api").then(
    (module) => (api = module),
    () => undefined,
  );
  return loading;
}

/** The most distinct values one metric attribute (a spec, a model) takes before the rest count as "other". */
const MAX_ATTRIBUTE_VALUES = 100;
const seenValues = new Map<string, Set<string>>();

/** A metric attribute's value, bounded in number (see the file's head). */
function boundedValue(key: string, value: string): string {
  let seen = seenValues.get(key);
  if (seen === undefined) seenValues.set(key, (seen = new Set()));
  if (seen.has(value)) return value;
  if (seen.size >= MAX_ATTRIBUTE_VALUES) return "other";
  seen.add(value);
  return value;
}

/** The instruments, made anew when the global meter provider changes (the API has no proxy for meters). */
interface Instruments {
  provider: unknown;
  runs: OtelApi.Counter;
  runAttempts: OtelApi.Histogram;
  refusedAttempts: OtelApi.Counter;
  validOutputTokens: OtelApi.Histogram;
  escalations: OtelApi.Counter;
  budgetStops: OtelApi.Counter;
  reviews: OtelApi.Counter;
  toolRefusals: OtelApi.Counter;
  earlyStops: OtelApi.Counter;
  reflexionRounds: OtelApi.Histogram;
}
let instruments: Instruments | undefined;

function instrumentsOf(otel: Api): Instruments {
  const provider = otel.metrics.getMeterProvider();
  if (instruments?.provider === provider) return instruments;
  const meter = provider.getMeter(TELEMETRY_SCOPE);
  instruments = {
    provider,
    runs: meter.createCounter("trustworthy.runs", { description: "Runs ended, by outcome (the stop reason)", unit: "{run}" }),
    runAttempts: meter.createHistogram("trustworthy.run.attempts", {
      description: "Attempts per ended run",
      unit: "{attempt}",
      advice: { explicitBucketBoundaries: [1, 2, 3, 4, 5, 6, 8, 10, 15, 20] },
    }),
    refusedAttempts: meter.createCounter("trustworthy.attempts.refused", {
      description: "Attempts the check step refused, by error class",
      unit: "{attempt}",
    }),
    validOutputTokens: meter.createHistogram("trustworthy.valid_output.tokens", {
      description: "Tokens a run spent for its valid output (every attempt's input and output)",
      unit: "{token}",
    }),
    escalations: meter.createCounter("trustworthy.escalations", { description: "Attempts made by the next model of an escalation list", unit: "{attempt}" }),
    budgetStops: meter.createCounter("trustworthy.budget_stops", {
      description: "Runs stopped before a call that would pass their token budget",
      unit: "{run}",
    }),
    reviews: meter.createCounter("trustworthy.reviews", { description: "A person's answers at the review step, by decision", unit: "{review}" }),
    toolRefusals: meter.createCounter("trustworthy.tool.refusals", { description: "Tool calls a guarded tool refused", unit: "{call}" }),
    earlyStops: meter.createCounter("trustworthy.early_stops", {
      description: "Model requests stopped while the answer streamed, by reason",
      unit: "{attempt}",
    }),
    reflexionRounds: meter.createHistogram("trustworthy.reflexion.rounds", { description: "Rounds per Reflexion run", unit: "{round}" }),
  };
  return instruments;
}

/** The low-cardinality attributes of a verdict's metrics. */
interface MetricLabels {
  spec?: string;
  model?: string;
  outcome?: string;
  errorClass?: string;
  decision?: string;
  reason?: string;
  tool?: string;
}

function metricAttributes(labels: MetricLabels): Attributes {
  const attributes: Attributes = {};
  if (labels.spec !== undefined) attributes["trustworthy.spec"] = boundedValue("spec", labels.spec);
  if (labels.model !== undefined) {
    attributes["gen_ai.request.model"] = boundedValue("model", labels.model);
    attributes["gen_ai.provider.name"] = providerName(labels.model);
  }
  if (labels.outcome !== undefined) attributes["trustworthy.outcome"] = labels.outcome;
  if (labels.errorClass !== undefined) attributes["trustworthy.error_class"] = labels.errorClass;
  if (labels.decision !== undefined) attributes["trustworthy.decision"] = labels.decision;
  if (labels.reason !== undefined) attributes["trustworthy.reason"] = labels.reason;
  if (labels.tool !== undefined) attributes["trustworthy.tool"] = boundedValue("tool", labels.tool);
  return attributes;
}

/** What one metric records: a count, or a value of a histogram. */
type MetricName = Exclude<keyof Instruments, "provider">;

/** Adds `value` to a counter, or records it in a histogram, with the labels' attributes. */
export function recordMetric(otel: Api | undefined, name: MetricName, value: number, labels: MetricLabels): void {
  if (otel === undefined) return;
  try {
    const instrument = instrumentsOf(otel)[name];
    const attributes = metricAttributes(labels);
    if ("add" in instrument) instrument.add(value, attributes);
    else instrument.record(value, attributes);
  } catch {
    // A meter that throws records nothing; the run goes on.
  }
}

/**
 * The GenAI conventions' `gen_ai.provider.name` for a model name: the provider its prefix names,
 * or the default provider's for a bare name. A chat model passed in as an object is
 * known here only by the model name of the run.
 */
export function providerName(model: string): string {
  return parseModelName(model).provider ?? DEFAULT_PROVIDER;
}

/** A text for a span, when the user opted in (recordContent), bounded; else nothing. */
export function contentAttribute(text: string | undefined): string | undefined {
  if (!settings.recordContent || text === undefined) return undefined;
  return bound(text, settings.maxContentChars);
}

/** The first few errors of a verdict, each bounded: enough to see why, never a whole answer. */
export function firstErrors(errors: readonly string[]): string[] {
  return errors.slice(0, MAX_SPAN_ERRORS).map((error) => bound(error, MAX_SPAN_ERROR_CHARS));
}
const MAX_SPAN_ERRORS = 3;
const MAX_SPAN_ERROR_CHARS = 300;

/** Drops the undefined entries of an attribute set (OpenTelemetry attributes have no undefined). */
export function defined(attributes: Record<string, OtelApi.AttributeValue | undefined>): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

/** The package's tracer (the API's proxy: spans go to whichever provider is registered when they start). */
function tracerOf(otel: Api): OtelApi.Tracer {
  return otel.trace.getTracer(TELEMETRY_SCOPE);
}

/** Starts a span under `parent` (default: the active context, so a caller's own span is its parent). */
export function startSpan(otel: Api, name: string, options: OtelApi.SpanOptions, parent: Context = otel.context.active()): Span | undefined {
  try {
    return tracerOf(otel).startSpan(name, options, parent);
  } catch {
    return undefined;
  }
}

/** Sets attributes and ends the span; `error` marks it failed with the exception. Never throws. */
export function endSpan(otel: Api, span: Span | undefined, attributes: Attributes, error?: unknown): void {
  if (span === undefined) return;
  try {
    span.setAttributes(attributes);
    if (error !== undefined) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: otel.SpanStatusCode.ERROR, message: bound(error instanceof Error ? error.message : String(error), 200) });
    }
    span.end();
  } catch {
    // An SDK that throws loses this span; the run goes on.
  }
}

/** Runs `fn` with `span` as the active span, so spans made meanwhile (the model's HTTP call, a user's own) nest under it. */
export function withSpan<T>(otel: Api, span: Span | undefined, fn: () => T, parent: Context = otel.context.active()): T {
  if (span === undefined) return fn();
  return otel.context.with(otel.trace.setSpan(parent, span), fn);
}

/**
 * A span's context as W3C `traceparent` text, to be kept with a run (in its settings, in the checkpoint)
 * so every step of the run, a resumed one included, nests its spans under the run's; undefined when the
 * span is not recorded (no SDK, or not sampled).
 */
export function traceparentOf(otel: Api, span: Span | undefined): string | undefined {
  const context = span?.spanContext();
  if (context === undefined || !otel.trace.isSpanContextValid(context) || !span!.isRecording()) return undefined;
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 1).toString(16).padStart(2, "0")}`;
}

/** The context whose parent is the span a `traceparent` names (as kept by traceparentOf), under the active one. */
export function contextOf(otel: Api, traceparent: string | undefined): Context {
  const active = otel.context.active();
  const match = traceparent === undefined ? null : /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent);
  if (match === null) return active;
  return otel.trace.setSpanContext(active, { traceId: match[1], spanId: match[2], traceFlags: Number.parseInt(match[3], 16), isRemote: true });
}

/**
 * The createAgent middleware's verdict on one answer, counted: a refused answer by error class, and the
 * answer's end (valid, or out of attempts) with its attempts.
 */
export async function countAnswerVerdict(verdict: { spec: string; valid: boolean; attempts: number; stopReason?: string; errorClass?: string }): Promise<void> {
  const otel = await openTelemetry();
  if (otel === undefined) return;
  if (!verdict.valid) recordMetric(otel, "refusedAttempts", 1, { spec: verdict.spec, errorClass: verdict.errorClass ?? "spec" });
  if (verdict.stopReason === undefined) return;
  recordMetric(otel, "runs", 1, { spec: verdict.spec, outcome: verdict.stopReason });
  recordMetric(otel, "runAttempts", verdict.attempts, { spec: verdict.spec, outcome: verdict.stopReason });
}

/** A guarded tool's verdict on one call: ran (its arguments passed), or not, with why. */
interface ToolCallVerdict {
  tool: string;
  spec: string;
  valid: boolean;
  /** Why the call did not run: "invalid" arguments, or "refused" (its budget was spent). */
  outcome?: string;
  attempt?: number;
  errors: readonly string[];
}

/**
 * A guarded tool's call: a GenAI `execute_tool` span with the verdict on its arguments, active while its
 * function runs (so the function's own spans nest), and a refused call counted.
 */
export async function traceToolCall<T>(verdict: ToolCallVerdict, run: () => Promise<T> | T): Promise<T> {
  const otel = await openTelemetry();
  if (otel === undefined) return run();
  if (!verdict.valid) recordMetric(otel, "toolRefusals", 1, { tool: verdict.tool, spec: verdict.spec, errorClass: verdict.outcome });
  const span = startSpan(otel, `execute_tool ${verdict.tool}`, {
    kind: 0,
    attributes: defined({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": verdict.tool,
      "trustworthy.spec.name": verdict.spec,
      "trustworthy.valid": verdict.valid,
      "trustworthy.attempt": verdict.attempt,
      "trustworthy.error_count": verdict.errors.length,
      "trustworthy.errors": firstErrors(verdict.errors),
      "trustworthy.error_class": verdict.outcome,
    }),
  });
  try {
    const out = await withSpan(otel, span, run);
    endSpan(otel, span, {});
    return out;
  } catch (error) {
    endSpan(otel, span, {}, error);
    throw error;
  }
}

/**
 * The spans open between two steps of a run (a run's span from its start to its verdict, an attempt's
 * from the model call to the check step), by key. Bounded: past MAX_OPEN_SPANS the oldest is ended,
 * marked abandoned (a run that stopped on a thrown error, or resumed in another process, never reaches
 * its verdict here).
 */
export class OpenSpans {
  private readonly spans = new Map<string, Span>();

  constructor(private readonly max = MAX_OPEN_SPANS) {}

  keep(key: string, span: Span | undefined): void {
    if (span === undefined) return;
    this.spans.set(key, span);
    if (this.spans.size > this.max) {
      const [oldest, abandoned] = this.spans.entries().next().value!;
      this.spans.delete(oldest);
      try {
        abandoned.setAttribute("trustworthy.abandoned", true);
        abandoned.end();
      } catch {
        // Nothing to do: the span is dropped either way.
      }
    }
  }

  take(key: string): Span | undefined {
    const span = this.spans.get(key);
    this.spans.delete(key);
    return span;
  }
}
const MAX_OPEN_SPANS = 1_000;

export type { Api as OpenTelemetryApi };
