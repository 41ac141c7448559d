/**
 * Reflexion's traces and metrics (../telemetry.ts; docs/tracing.md): a span per task, active while its rounds
 * run (their model calls' spans nest under it), with one child span per round carrying its score, and the
 * task's outcome; rounds per task counted. The graph calls traceTask around each task, and puts the run's
 * verdict on its LangSmith run when it is traced there (markReflexionVerdict).
 */
import type { TaskOutcome } from "./state.js";
import type { StepRecord } from "./memory.js";
import type { SpecRecord } from "../specs/registry.js";
import type { RunnableConfig } from "@langchain/core/runnables";
import { markRunVerdict } from "../telemetry/langsmith-feedback.js";
import { defined, endSpan, openTelemetry, recordMetric, startSpan, withSpan } from "../telemetry/open-telemetry.js";

/**
 * The run's verdict on its LangSmith run, when it is traced there (markRunVerdict): valid when a spec judged every
 * task's result and each passed, each task's stop reason, and the rounds over all tasks.
 */
export function markReflexionVerdict(config: RunnableConfig, outcomes: readonly TaskOutcome[], spec: string | undefined): void {
  if (outcomes.length === 0) return;
  markRunVerdict(config, {
    ...(spec !== undefined ? { valid: outcomes.every((outcome) => outcome.valid === true), spec } : {}),
    stopReason: [...new Set(outcomes.map((outcome) => outcome.stopReason))].join(","),
    attempts: outcomes.reduce((rounds, outcome) => rounds + outcome.iterations, 0),
  });
}

/** What a traced task returns: its steps (one per round), whether each passed the gate, and its outcome. */
interface TracedTask {
  steps: readonly StepRecord[];
  passed: readonly boolean[];
  outcome: TaskOutcome;
}

/** Runs one task under its span; each round becomes a child span with its score when the task ends. */
export async function traceTask<T extends TracedTask>(facts: { model?: string; spec?: SpecRecord; taskIndex: number }, run: () => Promise<T>): Promise<T> {
  const otel = await openTelemetry();
  if (otel === undefined) return run();
  // A run-supplied inline spec counts under its kind in metrics (see ../telemetry.ts).
  const spec = facts.spec === undefined ? undefined : facts.spec.kind === "inline" ? "inline" : facts.spec.name;
  const span = startSpan(otel, "invoke_agent Reflexion", {
    attributes: defined({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "Reflexion",
      "gen_ai.request.model": facts.model,
      "trustworthy.spec.name": facts.spec?.name,
      "trustworthy.task": facts.taskIndex,
    }),
  });
  let out: T;
  try {
    out = await withSpan(otel, span, run);
  } catch (error) {
    endSpan(otel, span, {}, error);
    throw error;
  }
  const parent = span === undefined ? otel.context.active() : otel.trace.setSpan(otel.context.active(), span);
  out.steps.forEach((step, i) => {
    const round = startSpan(otel, "reflexion round", { attributes: { "trustworthy.round": step.iteration, "trustworthy.score": step.score } }, parent);
    endSpan(otel, round, defined({ "trustworthy.valid": spec !== undefined ? out.passed[i] : undefined }));
  });
  const { outcome } = out;
  recordMetric(otel, "reflexionRounds", outcome.iterations, { spec, model: facts.model, outcome: outcome.stopReason });
  endSpan(
    otel,
    span,
    defined({
      "trustworthy.stop_reason": outcome.stopReason,
      "trustworthy.rounds": outcome.iterations,
      "trustworthy.best_score": outcome.bestScore ?? undefined,
      "trustworthy.valid": outcome.valid ?? undefined,
      "gen_ai.usage.input_tokens": outcome.usage.inputTokens,
      "gen_ai.usage.output_tokens": outcome.usage.outputTokens,
    }),
  );
  return out;
}
