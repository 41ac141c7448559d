/**
 * The validation graph's traces and metrics (../telemetry.ts; docs/tracing.md): each node as graph.ts
 * binds it, wrapped so it reports what it did, read from what it returns. A span per run (from its
 * start to its verdict) and one per attempt (from the model call to the check step's verdict on it),
 * nested under the caller's active span; the run's span context is kept in its settings, so a resumed
 * run's attempts join the same trace. A stop also puts its verdict on the graph's LangSmith run when the
 * run is traced there (../telemetry/langsmith-feedback.ts). The nodes themselves know nothing of it.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Command, Send } from "@langchain/langgraph";
import { fingerprintSpec } from "../specs/registry.js";
import { markRunVerdict } from "../telemetry/langsmith-feedback.js";
import {
  contentAttribute,
  contextOf,
  defined,
  endSpan,
  firstErrors,
  OpenSpans,
  openTelemetry,
  providerName,
  recordMetric,
  startSpan,
  traceparentOf,
  withSpan,
  type OpenTelemetryApi,
} from "../telemetry/open-telemetry.js";
import type { ValidationNodeContext } from "./node-context.js";
import type { generate, review, startRun, validate } from "./nodes.js";
import type { AttemptRecord, RunSettings, ValidationStateType, ValidationUpdate } from "./state.js";

/** The graph's name on its run span (the compiled graph's name). */
const GRAPH_NAME = "Deterministic validation";
const SPAN_KIND_CLIENT = 2;
const SPAN_KIND_INTERNAL = 0;

const open = new OpenSpans();

/** The spec a run's metrics carry: its name (a run-supplied inline spec counts under its kind, "inline"). */
function specLabel(run: RunSettings): string {
  return run.spec.kind === "inline" ? "inline" : run.spec.name;
}

/** startRun, and the run's span: started under the caller's active span, its context kept in the run's settings. */
export function tracedStartRun(start: typeof startRun) {
  return async (ctx: ValidationNodeContext, state: ValidationStateType, config: LangGraphRunnableConfig): Promise<Send> => {
    const send = start(ctx, state, config);
    const otel = await openTelemetry();
    if (otel === undefined) return send;
    const run = (send.args as { newRun: RunSettings }).newRun;
    const spec = ctx.specs.find(run.spec);
    const span = startSpan(otel, `invoke_agent ${GRAPH_NAME}`, {
      kind: SPAN_KIND_INTERNAL,
      attributes: defined({
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
      }),
    });
    const trace = traceparentOf(otel, span);
    if (trace === undefined) {
      endSpan(otel, span, {});
      return send;
    }
    open.keep(trace, span);
    return new Send(send.node, { newRun: { ...run, trace } });
  };
}

/**
 * generate, and the attempt's span: a GenAI `chat` span, active while the model is called (the client's
 * own spans nest under it), left open for the check step's verdict.
 */
export function tracedGenerate(attempt: typeof generate) {
  return async (ctx: ValidationNodeContext, input: Parameters<typeof generate>[1], config: LangGraphRunnableConfig): Promise<ValidationUpdate> => {
    const otel = await openTelemetry();
    const starting = "newRun" in input && input.newRun !== null && typeof input.newRun === "object";
    const state = starting ? undefined : (input as ValidationStateType);
    const run = starting ? (input as { newRun: RunSettings }).newRun : state!.run;
    if (otel === undefined || run?.trace === undefined) return attempt(ctx, input, config);
    const number = (state?.attempts ?? 0) + 1;
    const span = startSpan(
      otel,
      "chat",
      { kind: SPAN_KIND_CLIENT, attributes: { "gen_ai.operation.name": "chat", "trustworthy.attempt": number } },
      contextOf(otel, run.trace),
    );
    let update: ValidationUpdate;
    try {
      update = await withSpan(otel, span, () => attempt(ctx, input, config));
    } catch (error) {
      endSpan(otel, span, {}, error);
      throw error;
    }
    describeAttempt(otel, span, run, state, update);
    open.keep(`${run.trace}#${number}`, span);
    return update;
  };
}

/** What generate's update says of the attempt, on its span; an escalation and an early stop counted. */
function describeAttempt(
  otel: OpenTelemetryApi,
  span: ReturnType<typeof startSpan>,
  run: RunSettings,
  state: ValidationStateType | undefined,
  update: ValidationUpdate,
): void {
  const draft = update.draft;
  if (span === undefined || draft === null || draft === undefined) return;
  try {
    if (draft.budget !== undefined) {
      span.updateName("budget stop");
      span.setAttributes({ "trustworthy.budget.exceeded": true, "trustworthy.budget.left": Math.max(0, draft.budget.limit - draft.budget.spent) });
      return;
    }
    const model = draft.model ?? run.model;
    const spent = (state?.usage.totalTokens ?? 0) + draft.usage.totalTokens;
    const previousModel = state?.history.findLast((record) => record.by !== "human")?.model;
    const escalated = previousModel !== undefined && previousModel !== model;
    const step = run.models?.findIndex((entry) => entry.model === model);
    span.updateName(`chat ${model}`);
    span.setAttributes(
      defined({
        "gen_ai.provider.name": providerName(model),
        "gen_ai.request.model": model,
        "gen_ai.usage.input_tokens": draft.usage.inputTokens,
        "gen_ai.usage.output_tokens": draft.usage.outputTokens,
        "gen_ai.response.finish_reasons": [draft.truncated, draft.unfinished].filter((reason) => reason !== undefined),
        "trustworthy.output_mode": draft.mode,
        "trustworthy.fallbacks": draft.fallbacks,
        "trustworthy.schema_dropped": draft.schemaDropped,
        "trustworthy.corrections_asked": draft.corrections,
        "trustworthy.escalation.step": step !== undefined && step >= 0 ? step : undefined,
        "trustworthy.budget.left": run.tokenLimit !== undefined ? Math.max(0, run.tokenLimit - spent) : undefined,
        "trustworthy.stopped_early": draft.stopped?.reason,
        "trustworthy.refusal": draft.refusal !== undefined,
        "trustworthy.answer": contentAttribute(draft.output),
      }),
    );
    const spec = specLabel(run);
    if (escalated) recordMetric(otel, "escalations", 1, { spec, model });
    if (draft.stopped !== undefined) recordMetric(otel, "earlyStops", 1, { spec, model, reason: draft.stopped.reason });
  } catch {
    // A span that throws loses its attributes; the run goes on.
  }
}

/** validate, and the verdict: on the attempt's span, which it ends; at a stop, on the run's span, which it ends too. */
export function tracedValidate(judge: typeof validate) {
  return async (ctx: ValidationNodeContext, state: ValidationStateType, config: LangGraphRunnableConfig): Promise<Command> => {
    const command = await judge(ctx, state);
    verdictOnLangSmithRun(config, state, command);
    const otel = await openTelemetry();
    const run = state.run;
    if (otel === undefined || run === null) return command;
    const update = (command.update ?? {}) as ValidationUpdate;
    const record = (update.history as AttemptRecord[] | undefined)?.[0];
    const model = state.draft?.model ?? run.model;
    const spec = specLabel(run);
    if (record !== undefined && !record.valid) recordMetric(otel, "refusedAttempts", 1, { spec, model, errorClass: errorClass(state, record, update) });
    if (run.trace !== undefined) {
      // A call not made (the budget) counted no attempt.
      const span = open.take(`${run.trace}#${state.draft?.budget !== undefined ? state.attempts + 1 : state.attempts}`);
      endSpan(
        otel,
        span,
        record === undefined
          ? {}
          : defined({
              "trustworthy.valid": record.valid,
              "trustworthy.error_count": record.errors.length,
              "trustworthy.errors": firstErrors(record.errors),
              "trustworthy.error_class": record.valid ? undefined : errorClass(state, record, update),
              "trustworthy.repairs": record.repairs?.length,
              "trustworthy.correction.applied": record.correction?.applied,
            }),
      );
    }
    const stopReason = update.stopReason;
    if (stopReason !== undefined && stopReason !== null) endRun(otel, run, state, stopReason, update.success === true);
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
function endRun(otel: OpenTelemetryApi, run: RunSettings, state: ValidationStateType, stopReason: string, valid: boolean): void {
  const model = state.draft?.model ?? state.history.findLast((record) => record.model !== undefined)?.model ?? run.model;
  const spec = specLabel(run);
  const tokens = state.usage.totalTokens;
  recordMetric(otel, "runs", 1, { spec, model, outcome: stopReason });
  recordMetric(otel, "runAttempts", state.attempts, { spec, model, outcome: stopReason });
  if (valid) recordMetric(otel, "validOutputTokens", tokens, { spec, model });
  if (stopReason === "budget") recordMetric(otel, "budgetStops", 1, { spec, model });
  if (run.trace === undefined) return;
  endSpan(
    otel,
    open.take(run.trace),
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

/** review, and a person's decision: counted, and a span under the run's. */
export function tracedReview(decide: typeof review) {
  return async (ctx: ValidationNodeContext, state: ValidationStateType, config: LangGraphRunnableConfig): Promise<Command> => {
    // interrupt() throws to pause the run: only a decision is recorded.
    const command = await decide(ctx, state);
    verdictOnLangSmithRun(config, state, command);
    const otel = await openTelemetry();
    const run = state.run;
    if (otel === undefined || run === null) return command;
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
    if (run.trace === undefined) return command;
    const span = startSpan(otel, "review", { kind: SPAN_KIND_INTERNAL, attributes: { "trustworthy.decision": decision } }, contextOf(otel, run.trace));
    endSpan(otel, span, defined({ "trustworthy.stop_reason": update.stopReason ?? undefined }));
    return command;
  };
}
