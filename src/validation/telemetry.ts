/**
 * The validation graph's traces and metrics (../telemetry/open-telemetry.ts; docs/tracing.md): each node as
 * graph.ts binds it, wrapped so it reports what it did, read from what it returns. A span per run (from its
 * start to its verdict) and one per attempt (from the model call to the check step's verdict on it), nested
 * under the caller's active span. Each span is held by the invocation that started it (an Invocation, which
 * ../graph/traced-graph.ts gives every invocation) and ends, at the latest, with it: a run that throws, is
 * cancelled or stops at an interrupt ends its spans then, and a resumed run is a span of its own in the same
 * trace (the first span's context is kept in the run's settings). A stop also puts its verdict on the graph's
 * LangSmith run when the run is traced there (../telemetry/langsmith-feedback.ts). The nodes themselves know
 * nothing of it. Whether an SDK is registered is read once per invocation: the steps report through theirs.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Command, Send } from "@langchain/langgraph";
import { fingerprintSpec } from "../specs/registry.js";
import { markRunVerdict } from "../telemetry/langsmith-feedback.js";
import {
  contentAttribute,
  contextOf,
  defined,
  describeAnswer,
  endSpan,
  invocationOf,
  providerName,
  recorded,
  recordMetric,
  startAttemptSpan,
  startSpan,
  traceparentOf,
  verdictAttributes,
  withSpan,
  type Invocation,
  type OpenTelemetryApi,
} from "../telemetry/open-telemetry.js";
import type { ValidationNodeContext } from "./node-context.js";
import type { generate, review, startRun, validate } from "./nodes.js";
import type { AttemptRecord, RunSettings, ValidationStateType, ValidationUpdate } from "./state.js";

/** The graph's name on its run span (the compiled graph's name). */
const GRAPH_NAME = "Deterministic validation";
const RUN_SPAN = `invoke_agent ${GRAPH_NAME}`;

type Span = ReturnType<typeof startSpan>;

/** The spec a run's metrics carry: its name (a run-supplied inline spec counts under its kind, "inline"). */
function specLabel(run: RunSettings): string {
  return run.spec.kind === "inline" ? "inline" : run.spec.name;
}

/** What a run's span says from its start: the GenAI agent attributes and the run's settings. */
function runAttributes(ctx: ValidationNodeContext, run: RunSettings) {
  const spec = ctx.specs.find(run.spec);
  return defined({
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": GRAPH_NAME,
    "gen_ai.request.model": run.model,
    "gen_ai.provider.name": providerName(run.model),
    "trustworthy.spec.name": spec.name,
    "trustworthy.spec.fingerprint": fingerprintSpec(spec),
    "trustworthy.max_attempts": run.maxAttempts,
    "trustworthy.output_mode": run.outputMode,
    "trustworthy.escalation.models": run.models?.map((step) => step.model),
    "trustworthy.budget.limit": run.tokenLimit,
    "trustworthy.request": contentAttribute(run.request),
  });
}

/**
 * The run's span in this invocation: the one its start made, or, in an invocation that resumes the run (after
 * an interrupt), one of its own, a child of the run's first span (so the whole run is one trace) linked to the
 * caller's active span, marked resumed.
 */
function runSpanOf(otel: OpenTelemetryApi, invocation: Invocation, ctx: ValidationNodeContext, run: RunSettings): Span {
  if (invocation.hasRun) return invocation.runSpan;
  const caller = otel.trace.getSpanContext(otel.context.active());
  const span = startSpan(
    otel,
    RUN_SPAN,
    {
      attributes: { ...runAttributes(ctx, run), "trustworthy.resumed": true },
      links: caller !== undefined && otel.trace.isSpanContextValid(caller) ? [{ context: caller }] : [],
    },
    contextOf(otel, run.trace),
  );
  invocation.startRun(span, { spec: specLabel(run), model: run.model });
  return span;
}

/** The context whose active span is `span` (the active one when there is none). */
function under(otel: OpenTelemetryApi, span: Span) {
  const active = otel.context.active();
  return span === undefined ? active : otel.trace.setSpan(active, span);
}

/** startRun, and the run's span: started under the caller's active span, its context kept in the run's settings. */
export function tracedStartRun(start: typeof startRun) {
  return async (ctx: ValidationNodeContext, state: ValidationStateType, config: LangGraphRunnableConfig): Promise<Send> => {
    const send = start(ctx, state, config);
    const invocation = invocationOf();
    const otel = invocation?.otel;
    if (otel === undefined || invocation === undefined) return send;
    const run = (send.args as { newRun: RunSettings }).newRun;
    const span = startSpan(otel, RUN_SPAN, { attributes: runAttributes(ctx, run) });
    invocation.startRun(span, { spec: specLabel(run), model: run.model });
    const trace = traceparentOf(otel, span);
    return trace === undefined ? send : new Send(send.node, { newRun: { ...run, trace } });
  };
}

/**
 * generate, and the attempt's span: a GenAI `chat` span under the run's, active while the model is called
 * (the client's own spans nest under it), left open for the check step's verdict.
 */
export function tracedGenerate(attempt: typeof generate) {
  return async (ctx: ValidationNodeContext, input: Parameters<typeof generate>[1], config: LangGraphRunnableConfig): Promise<ValidationUpdate> => {
    const invocation = invocationOf();
    const otel = invocation?.otel;
    const starting = "newRun" in input && input.newRun !== null && typeof input.newRun === "object";
    const state = starting ? undefined : (input as ValidationStateType);
    const run = starting ? (input as { newRun: RunSettings }).newRun : state!.run;
    if (otel === undefined || invocation === undefined || run === null || run === undefined) return attempt(ctx, input, config);
    const number = (state?.attempts ?? 0) + 1;
    const parent = runSpanOf(otel, invocation, ctx, run);
    const span = recorded(otel, parent) ? startAttemptSpan(otel, number, under(otel, parent)) : undefined;
    let update: ValidationUpdate;
    try {
      update = await withSpan(otel, span, () => attempt(ctx, input, config));
    } catch (error) {
      endSpan(otel, span, {}, error);
      throw error;
    }
    describeAttempt(otel, span, run, state, update);
    invocation.keepAttempt(number, span);
    return update;
  };
}

/** What generate's update says of the attempt, on its span; an escalation and an early stop counted. */
function describeAttempt(otel: OpenTelemetryApi, span: Span, run: RunSettings, state: ValidationStateType | undefined, update: ValidationUpdate): void {
  const draft = update.draft;
  if (draft === null || draft === undefined) return;
  if (draft.budget !== undefined) {
    try {
      span?.updateName("budget stop");
      span?.setAttributes({ "trustworthy.budget.exceeded": true, "trustworthy.budget.left": Math.max(0, draft.budget.limit - draft.budget.spent) });
    } catch {
      // A span that throws loses its attributes; the run goes on.
    }
    return;
  }
  const model = draft.model ?? run.model;
  const spent = (state?.usage.totalTokens ?? 0) + draft.usage.totalTokens;
  const previousModel = state?.history.findLast((record) => record.by !== "human")?.model;
  const step = run.models?.findIndex((entry) => entry.model === model);
  describeAnswer(span, {
    model,
    inputTokens: draft.usage.inputTokens,
    outputTokens: draft.usage.outputTokens,
    finishReasons: [draft.truncated, draft.unfinished].filter((reason) => reason !== undefined),
    mode: draft.mode,
    fallbacks: draft.fallbacks,
    schemaDropped: draft.schemaDropped,
    correctionsAsked: draft.corrections,
    escalationStep: step !== undefined && step >= 0 ? step : undefined,
    budgetLeft: run.tokenLimit !== undefined ? Math.max(0, run.tokenLimit - spent) : undefined,
    stoppedEarly: draft.stopped?.reason,
    refusal: draft.refusal !== undefined,
    text: draft.output,
  });
  const spec = specLabel(run);
  if (previousModel !== undefined && previousModel !== model) recordMetric(otel, "escalations", 1, { spec, model });
  if (draft.stopped !== undefined) recordMetric(otel, "earlyStops", 1, { spec, model, reason: draft.stopped.reason });
}

/** validate, and the verdict: on the attempt's span, which it ends; at a stop, on the run's span, which it ends too. */
export function tracedValidate(judge: typeof validate) {
  return async (ctx: ValidationNodeContext, state: ValidationStateType, config: LangGraphRunnableConfig): Promise<Command> => {
    const command = await judge(ctx, state);
    verdictOnLangSmithRun(config, state, command);
    const invocation = invocationOf();
    const otel = invocation?.otel;
    const run = state.run;
    if (otel === undefined || run === null) return command;
    const update = (command.update ?? {}) as ValidationUpdate;
    const record = (update.history as AttemptRecord[] | undefined)?.[0];
    const model = state.draft?.model ?? run.model;
    const spec = specLabel(run);
    const refused = record !== undefined && !record.valid ? errorClass(state, record, update) : undefined;
    if (refused !== undefined) recordMetric(otel, "refusedAttempts", 1, { spec, model, errorClass: refused });
    // A call not made (the budget) counted no attempt.
    const span = invocation?.takeAttempt(state.draft?.budget !== undefined ? state.attempts + 1 : state.attempts);
    endSpan(
      otel,
      span,
      record === undefined
        ? {}
        : verdictAttributes({
            valid: record.valid,
            errors: record.errors,
            errorClass: refused,
            repairs: record.repairs?.length,
            correctionApplied: record.correction?.applied,
          }),
    );
    const stopReason = update.stopReason;
    if (stopReason !== undefined && stopReason !== null) endRun(otel, invocation, ctx, run, state, stopReason, update.success === true);
    return command;
  };
}

/** A stop's verdict on the graph's LangSmith run, as metadata and tags, when the run is traced (markRunVerdict). */
function verdictOnLangSmithRun(config: LangGraphRunnableConfig, state: ValidationStateType, command: Command): void {
  const update = (command.update ?? {}) as ValidationUpdate;
  const stopReason = update.stopReason;
  if (stopReason === undefined || stopReason === null || state.run === null) return;
  markRunVerdict(config, { valid: update.success === true, stopReason, attempts: state.attempts, spec: state.run.spec.name });
}

/** The run's verdict: its span ended with it, and the run counted. */
function endRun(
  otel: OpenTelemetryApi,
  invocation: Invocation | undefined,
  ctx: ValidationNodeContext,
  run: RunSettings,
  state: ValidationStateType,
  stopReason: string,
  valid: boolean,
): void {
  const model = state.draft?.model ?? state.history.findLast((record) => record.model !== undefined)?.model ?? run.model;
  const spec = specLabel(run);
  const tokens = state.usage.totalTokens;
  recordMetric(otel, "runs", 1, { spec, model, outcome: stopReason });
  recordMetric(otel, "runAttempts", state.attempts, { spec, model, outcome: stopReason });
  if (valid) recordMetric(otel, "validOutputTokens", tokens, { spec, model });
  if (stopReason === "budget") recordMetric(otel, "budgetStops", 1, { spec, model });
  if (invocation === undefined) return;
  runSpanOf(otel, invocation, ctx, run);
  invocation.endRun(
    otel,
    defined({
      "trustworthy.valid": valid,
      "trustworthy.stop_reason": stopReason,
      "trustworthy.attempts": state.attempts,
      "gen_ai.usage.input_tokens": state.usage.inputTokens,
      "gen_ai.usage.output_tokens": state.usage.outputTokens,
      "trustworthy.budget.left": run.tokenLimit !== undefined ? Math.max(0, run.tokenLimit - tokens) : undefined,
    }),
  );
}

/**
 * Why the check step refused an attempt, in one word of a short list (a metric's attribute): the provider
 * refused, cut or did not finish the answer, the model called another tool, the answer was stopped while it
 * streamed, a correction was set aside, the text was not one JSON value, or the value broke the spec.
 */
function errorClass(state: ValidationStateType, record: AttemptRecord, update: ValidationUpdate): string {
  if (record.refusal !== undefined) return "refusal";
  if (record.truncated !== undefined) return "truncated";
  if (record.unfinished !== undefined) return "unfinished";
  if (state.draft?.missing !== undefined) return "missing_answer";
  if (record.stopped !== undefined) return "stopped_early";
  if (record.correction !== undefined && !record.correction.applied) return "correction_unused";
  if (update.value === null) return "not_json";
  return "spec";
}

/**
 * review, and a person's decision: counted, and a span under the run's; a decision that ends the run (accepted,
 * rejected) ends the run's span in this invocation with it.
 */
export function tracedReview(decide: typeof review) {
  return async (ctx: ValidationNodeContext, state: ValidationStateType, config: LangGraphRunnableConfig): Promise<Command> => {
    // interrupt() throws to pause the run: only a decision is recorded (the pause ends the invocation, and its spans with it).
    const command = await decide(ctx, state);
    verdictOnLangSmithRun(config, state, command);
    const invocation = invocationOf();
    const otel = invocation?.otel;
    const run = state.run;
    if (otel === undefined || invocation === undefined || run === null) return command;
    const update = (command.update ?? {}) as ValidationUpdate;
    const decision =
      update.stopReason === "rejected"
        ? "rejected"
        : update.stopReason === "valid"
          ? "accepted"
          : [command.goto].flat().includes("generate")
            ? "new_request"
            : update.success === false
              ? "refused_value"
              : "unreadable";
    recordMetric(otel, "reviews", 1, { spec: specLabel(run), decision });
    const parent = runSpanOf(otel, invocation, ctx, run);
    if (recorded(otel, parent)) {
      const span = startSpan(otel, "review", { attributes: { "trustworthy.decision": decision } }, under(otel, parent));
      endSpan(otel, span, defined({ "trustworthy.stop_reason": update.stopReason ?? undefined }));
    }
    const stopReason = update.stopReason;
    if (stopReason !== undefined && stopReason !== null) {
      invocation.endRun(otel, { "trustworthy.valid": update.success === true, "trustworthy.stop_reason": stopReason, "trustworthy.decision": decision });
    }
    return command;
  };
}
