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
 * The spans a graph's invocation holds open between its steps are the invocation's own (Invocation), and end
 * with it however it ends (traceInvocation): nothing is kept from one invocation to the next.
 *
 * Telemetry never changes a run: a fault here (a missing package, an SDK that throws) records nothing.
 */
import type * as OtelApi from "@opentelemetry/api";
import { AsyncLocalStorage } from "node:async_hooks";
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
    /** Record traces and metrics at all (default true; with no SDK registered nothing is recorded, and nothing is spent). */
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
 * The OpenTelemetry API, loaded once; undefined when telemetry is off, when the package is not installed (or
 * fails to load: telemetry is never a reason for a run to fail), and while no SDK has registered a tracer or a
 * meter provider: every span and metric would then be the API's no-op, so none is made, and a run costs what
 * it costs with telemetry off (`npm run bench -- --only telemetry`).
 */
export async function openTelemetry(): Promise<Api | undefined> {
  if (!settings.enabled) return undefined;
  if (api === undefined) {
    loading ??= import("@opentelemetry/api").then(
      (module) => (api = module),
      () => undefined,
    );
    await loading;
    if (api === undefined) return undefined;
  }
  return registered(api) ? api : undefined;
}

/** The API's own no-op tracer provider: what a tracer provider with no SDK behind it delegates to. */
let noopTracers: OtelApi.TracerProvider | undefined;

/**
 * Whether an SDK has registered a tracer provider or a meter provider, through the API's public surface: the
 * global tracer provider is the API's proxy, whose delegate is the API's no-op until one is registered (a fresh
 * proxy's delegate is that no-op); the global meter provider gives the API's no-op meter until one is.
 * tests/telemetry/registered.test.ts fails if an upgrade of the API changes either.
 */
export function registered(otel: Api): boolean {
  try {
    const tracers = otel.trace.getTracerProvider();
    noopTracers ??= new otel.ProxyTracerProvider().getDelegate();
    if (!(tracers instanceof otel.ProxyTracerProvider) || tracers.getDelegate() !== noopTracers) return true;
    return otel.metrics.getMeterProvider().getMeter(TELEMETRY_SCOPE) !== otel.createNoopMeter();
  } catch {
    return false;
  }
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

/** Whether a span is being recorded, or was (an SDK sampled it): a span that ended may still be a parent. */
export function recorded(otel: Api, span: Span | undefined): boolean {
  try {
    const context = span?.spanContext();
    return context !== undefined && otel.trace.isSpanContextValid(context) && (context.traceFlags & 1) === 1;
  } catch {
    return false;
  }
}

/**
 * A span's context as W3C `traceparent` text, to be kept with a run (in its settings, in the checkpoint)
 * so every step of the run, a resumed one included, nests its spans under the run's; undefined when the
 * span is not recorded (no SDK, or not sampled).
 */
export function traceparentOf(otel: Api, span: Span | undefined): string | undefined {
  try {
    const context = span?.spanContext();
    if (context === undefined || !otel.trace.isSpanContextValid(context) || !span!.isRecording()) return undefined;
    return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 1).toString(16).padStart(2, "0")}`;
  } catch {
    return undefined;
  }
}

/** The context whose parent is the span a `traceparent` names (as kept by traceparentOf), under the active one. */
export function contextOf(otel: Api, traceparent: string | undefined): Context {
  const active = otel.context.active();
  const match = traceparent === undefined ? null : /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent);
  if (match === null) return active;
  return otel.trace.setSpanContext(active, { traceId: match[1], spanId: match[2], traceFlags: Number.parseInt(match[3], 16), isRemote: true });
}

/** OpenTelemetry's SpanKind values (the enum is the API's, loaded on first use). */
const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;

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
    kind: SPAN_KIND_INTERNAL,
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

/** What an attempt's span says of the model's answer: the GenAI conventions' facts, and the package's own. */
export interface AnswerFacts {
  /** The model name (absent: not known, e.g. a chat model object that does not say). */
  model?: string;
  /** The provider, when known otherwise than from the model name. */
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** The provider's stop, in its words, when it cut the answer or did not say it finished. */
  finishReasons?: string[];
  mode?: string;
  fallbacks?: string[];
  schemaDropped?: string[];
  correctionsAsked?: boolean;
  escalationStep?: number;
  budgetLeft?: number;
  /** Why the answer's request was stopped while it streamed. */
  stoppedEarly?: string;
  refusal?: boolean;
  /** The answer's text: recorded only when the user opted in (contentAttribute). */
  text?: string;
}

/** What the check step's verdict on an attempt puts on its span. */
interface VerdictFacts {
  valid: boolean;
  errors: readonly string[];
  errorClass?: string;
  /** How many syntax slips were repaired before the answer was judged. */
  repairs?: number;
  correctionApplied?: boolean;
  /** Set on the attempt that ended the answer or the run. */
  stopReason?: string;
}

/**
 * An attempt's span: a GenAI `chat` span, named `chat <model>` once the model is known (describeAnswer),
 * under `parent` (default: the active context).
 */
export function startAttemptSpan(otel: Api, attempt: number, parent?: Context): Span | undefined {
  return startSpan(otel, "chat", { kind: SPAN_KIND_CLIENT, attributes: { "gen_ai.operation.name": "chat", "trustworthy.attempt": attempt } }, parent);
}

/** What the model answered, on its attempt's span (renamed `chat <model>`). Never throws. */
export function describeAnswer(span: Span | undefined, facts: AnswerFacts): void {
  if (span === undefined) return;
  try {
    if (facts.model !== undefined) span.updateName(`chat ${facts.model}`);
    span.setAttributes(
      defined({
        "gen_ai.provider.name": facts.provider ?? (facts.model === undefined ? undefined : providerName(facts.model)),
        "gen_ai.request.model": facts.model,
        "gen_ai.usage.input_tokens": facts.inputTokens,
        "gen_ai.usage.output_tokens": facts.outputTokens,
        "gen_ai.response.finish_reasons": facts.finishReasons,
        "trustworthy.output_mode": facts.mode,
        "trustworthy.fallbacks": facts.fallbacks,
        "trustworthy.schema_dropped": facts.schemaDropped,
        "trustworthy.corrections_asked": facts.correctionsAsked,
        "trustworthy.escalation.step": facts.escalationStep,
        "trustworthy.budget.left": facts.budgetLeft,
        "trustworthy.stopped_early": facts.stoppedEarly,
        "trustworthy.refusal": facts.refusal,
        "trustworthy.answer": contentAttribute(facts.text),
      }),
    );
  } catch {
    // A span that throws loses its attributes; the run goes on.
  }
}

/** The check step's verdict, as an attempt's span carries it: valid, how many errors and the first few, why. */
export function verdictAttributes(verdict: VerdictFacts): Attributes {
  return defined({
    "trustworthy.valid": verdict.valid,
    "trustworthy.error_count": verdict.errors.length,
    "trustworthy.errors": firstErrors(verdict.errors),
    "trustworthy.error_class": verdict.valid ? undefined : verdict.errorClass,
    "trustworthy.repairs": verdict.repairs,
    "trustworthy.correction.applied": verdict.correctionApplied,
    "trustworthy.stop_reason": verdict.stopReason,
  });
}

/**
 * One model call of the createAgent middleware, traced: a GenAI `chat` span from the call to the check step's
 * verdict, under the caller's active span and active while the model answers (the client's spans and the
 * caller's own nest under it), with the same attributes as the validation graph's attempts; each verdict
 * counted (a refused answer by class, the answer's end with its attempts). With no API loaded, nothing.
 */
export class AnswerTrace {
  private constructor(
    private readonly otel: Api | undefined,
    private readonly span: Span | undefined,
    private readonly spec: string,
  ) {}

  static async start(facts: { spec: string; fingerprint: string; attempt: number }): Promise<AnswerTrace> {
    const otel = await openTelemetry();
    const span = otel === undefined ? undefined : startAttemptSpan(otel, facts.attempt);
    try {
      span?.setAttributes({ "trustworthy.spec.name": facts.spec, "trustworthy.spec.fingerprint": facts.fingerprint });
    } catch {
      // As for any attribute: lost, and the run goes on.
    }
    return new AnswerTrace(otel, span, facts.spec);
  }

  /** Calls the model with the span active. */
  call<T>(fn: () => T | Promise<T>): T | Promise<T> {
    return this.otel === undefined ? fn() : withSpan(this.otel, this.span, fn);
  }

  /** The call failed: the span ends with its error. */
  fail(error: unknown): void {
    if (this.otel !== undefined) endSpan(this.otel, this.span, {}, error);
  }

  /**
   * The model called the agent's other tools: a turn of work, not an answer; `ended` when it was one turn too
   * many, and the answer ended without one (counted as the answer's end).
   */
  endTurn(answer: AnswerFacts, ended?: { stopReason: string; attempts: number }): void {
    const otel = this.otel;
    if (otel === undefined) return;
    describeAnswer(this.span, answer);
    endSpan(otel, this.span, defined({ "trustworthy.tool_turn": true, "trustworthy.stop_reason": ended?.stopReason }));
    if (ended !== undefined) this.countEnd(answer, ended);
  }

  /** The verdict on the answer: on the span, which it ends, and counted. */
  endVerdict(answer: AnswerFacts, verdict: VerdictFacts & { attempts: number }): void {
    const otel = this.otel;
    if (otel === undefined) return;
    describeAnswer(this.span, answer);
    endSpan(otel, this.span, verdictAttributes(verdict));
    const labels = { spec: this.spec, model: answer.model };
    if (!verdict.valid) recordMetric(otel, "refusedAttempts", 1, { ...labels, errorClass: verdict.errorClass ?? "spec" });
    if (answer.stoppedEarly !== undefined) recordMetric(otel, "earlyStops", 1, { ...labels, reason: answer.stoppedEarly });
    if (verdict.stopReason !== undefined) this.countEnd(answer, { stopReason: verdict.stopReason, attempts: verdict.attempts });
  }

  /** The answer's end, counted with its attempts. */
  private countEnd(answer: AnswerFacts, ended: { stopReason: string; attempts: number }): void {
    const labels = { spec: this.spec, model: answer.model, outcome: ended.stopReason };
    recordMetric(this.otel, "runs", 1, labels);
    recordMetric(this.otel, "runAttempts", ended.attempts, labels);
  }
}

/**
 * The invocation each step runs in. Kept apart from OpenTelemetry's context, which carries nothing without a
 * context manager (a process that registers a meter provider and no tracer still counts how runs end).
 */
const invocations = new AsyncLocalStorage<Invocation>();

/** How many invocations are under way in this process (every one ends, however it ends: tests/telemetry/run-end.test.ts). */
let invocationsUnderWay = 0;

/** The invocations under way in this process. */
export function invocationsInFlight(): number {
  return invocationsUnderWay;
}

/** How an invocation ended, when it did not end as the graph does (at its end or at an interrupt). */
interface InvocationEnd {
  /** The error it threw: a node's, LangGraph's (its recursion limit), a checkpointer's. */
  error?: unknown;
  /** It was aborted, or its reader stopped reading. */
  cancelled?: boolean;
}

/**
 * One invocation of a graph (an invoke, a stream, a resume): the spans it holds open between its steps, and
 * the run's metric labels. Made for each invocation by traceInvocation, found by its steps (invocationOf), and
 * ended with it whichever way it ends: no span outlives the invocation that started it,
 * and nothing of it is held once it has ended.
 */
export class Invocation {
  private run: { span: Span | undefined; labels: MetricLabels; ended: boolean } | undefined;
  private readonly attempts = new Map<number, Span>();
  private ended = false;

  /** `otel`: the API, as openTelemetry() gave it when the invocation started (an SDK registered). */
  constructor(readonly otel: Api) {
    invocationsUnderWay++;
  }

  /** The run's span in this invocation (undefined: none started yet, or not recorded). */
  get runSpan(): Span | undefined {
    return this.run?.span;
  }

  /** Whether the run's span was started in this invocation (by its start, or for a resumed run). */
  get hasRun(): boolean {
    return this.run !== undefined;
  }

  /** The run's span, and the labels of the run's metrics should the invocation end on an error. */
  startRun(span: Span | undefined, labels: MetricLabels): void {
    this.run = { span, labels, ended: false };
  }

  /** The run's verdict: its span ended with it (once). */
  endRun(otel: Api, attributes: Attributes): void {
    if (this.run === undefined || this.run.ended) return;
    this.run.ended = true;
    endSpan(otel, this.run.span, attributes);
  }

  /** An attempt's span, open from the model call to the check step. */
  keepAttempt(attempt: number, span: Span | undefined): void {
    if (span !== undefined && !this.ended) this.attempts.set(attempt, span);
  }

  takeAttempt(attempt: number): Span | undefined {
    const span = this.attempts.get(attempt);
    this.attempts.delete(attempt);
    return span;
  }

  /**
   * The invocation's end: every span still open is ended. A thrown error marks them failed with it, and a
   * cancelled invocation as cancelled, and the run is counted with that outcome; an invocation that ended
   * without its run's verdict (at an interrupt, waiting for a person) marks them interrupted.
   */
  end(otel: Api, how: InvocationEnd = {}): void {
    if (this.ended) return;
    this.ended = true;
    invocationsUnderWay--;
    const failed = how.error !== undefined || how.cancelled === true;
    const outcome = how.cancelled === true ? "cancelled" : "error";
    const error = how.error ?? (how.cancelled === true ? "the run was cancelled" : undefined);
    const attributes: Attributes = !failed
      ? { "trustworthy.interrupted": true }
      : { "error.type": how.cancelled === true ? "cancelled" : errorType(how.error) };
    for (const span of this.attempts.values()) endSpan(otel, span, attributes, error);
    this.attempts.clear();
    const run = this.run;
    this.run = undefined;
    if (run === undefined || run.ended) return;
    if (failed) recordMetric(otel, "runs", 1, { ...run.labels, outcome });
    endSpan(otel, run.span, attributes, error);
  }
}

/** The `error.type` of a thrown error (the OpenTelemetry conventions'): its class's name. */
function errorType(error: unknown): string {
  return error instanceof Error ? error.name : "_OTHER";
}

/**
 * The invocation a step runs in: undefined outside traceInvocation, and in an invocation that started with no
 * SDK registered (one registered meanwhile is seen from the next invocation on). Its `otel` is the API to report
 * through: the steps ask here, not openTelemetry(), so whether an SDK is registered is read once per invocation.
 */
export function invocationOf(): Invocation | undefined {
  return invocations.getStore();
}

/**
 * Runs one invocation of a graph, as LangGraph streams it (`start` makes the stream), with an Invocation that every
 * step finds (invocationOf), and ends the Invocation when the stream ends, whichever way: it completed, it threw,
 * or its reader gave it up (a cancel, a `break`, an abort). `signal` is the invocation's own: aborted, the thrown
 * error is a cancel. `paused` tells a thrown pause from an error (an interrupt a subgraph hands to its parent).
 */
export async function* traceInvocation<T>(
  start: () => AsyncGenerator<T>,
  options: { signal?: AbortSignal; paused?: (error: unknown) => boolean } = {},
): AsyncGenerator<T> {
  const otel = await openTelemetry();
  if (otel === undefined) {
    yield* start();
    return;
  }
  const invocation = new Invocation(otel);
  // LangGraph starts the steps when the stream is first read: every read runs within the invocation.
  const inner = invocations.run(invocation, start);
  const within: AsyncIterableIterator<T> = {
    next: (...args) => invocations.run(invocation, () => inner.next(...args)),
    return: (value) => invocations.run(invocation, () => inner.return(value)),
    throw: (error) => invocations.run(invocation, () => inner.throw(error)),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  let ended = false;
  try {
    yield* within;
    ended = true;
    invocation.end(otel);
  } catch (error) {
    ended = true;
    if (options.paused?.(error) === true) invocation.end(otel);
    else invocation.end(otel, { error, cancelled: options.signal?.aborted === true });
    throw error;
  } finally {
    // Neither completed nor thrown: its reader gave it up.
    if (!ended) invocation.end(otel, { cancelled: true });
  }
}

export type { Api as OpenTelemetryApi };
