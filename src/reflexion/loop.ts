/** The Reflexion loop's decisions, as pure functions: when a task stops, which response is best, what a finished task reports. */
import type { TokenUsage } from "../shared/usage.js";
import type { StepRecord } from "./memory.js";
import type { TaskOutcome } from "./state.js";

/** A task stops early once a step's score is strictly above this (and its response passes the gate). */
const EARLY_STOP_SCORE = 0.9;

type TaskStop = "early_stop" | "max_loops";

/** Whether the task ends after this iteration, and why; null to go on refining. */
export function taskStop(score: number, passed: boolean, iteration: number, maxLoops: number): TaskStop | null {
  if (passed && score > EARLY_STOP_SCORE) return "early_stop";
  if (iteration + 1 >= maxLoops) return "max_loops";
  return null;
}

/**
 * Index of the best step among those that pass the gate (all pass without a
 * spec): the highest score, the earliest on ties (the reference's strict
 * `score > best_score`). -1 when no step passes.
 */
function pickBest(scores: readonly number[], passed: readonly boolean[]): number {
  let best = -1;
  for (let i = 0; i < scores.length; i++) {
    if (passed[i] && (best === -1 || scores[i] > scores[best])) best = i;
  }
  return best;
}

/** Index of the highest-scored step whatever the gate said (earliest on ties); -1 for no steps. */
function bestScored(scores: readonly number[]): number {
  let best = -1;
  for (let i = 0; i < scores.length; i++) if (best === -1 || scores[i] > scores[best]) best = i;
  return best;
}

interface FinishedTask {
  task: string;
  steps: readonly StepRecord[];
  passed: readonly boolean[];
  usage: TokenUsage;
  /** The provider failure that ended the task, if any. */
  failure: string | null;
  /** Whether the run has a gate (a spec). */
  gated: boolean;
  maxLoops: number;
}

/**
 * What a finished task reports: its result (the best response that passes
 * the gate, or null when none does) and its outcome.
 */
export function closeTask(t: FinishedTask): { result: string | null; outcome: TaskOutcome } {
  const scores = t.steps.map((s) => s.score);
  const best = pickBest(scores, t.passed);
  const last = t.steps.length - 1;
  const stopReason: TaskOutcome["stopReason"] =
    t.failure !== null ? "error" : last >= 0 ? (taskStop(scores[last], t.passed[last], t.steps[last].iteration, t.maxLoops) ?? "max_loops") : "max_loops";
  // With a gate and nothing passing, the outcome still points at the best-scored (invalid) step, for whoever wants to look.
  const shown = best >= 0 ? best : t.gated ? bestScored(scores) : -1;
  return {
    result: best >= 0 ? t.steps[best].response : null,
    outcome: {
      task: t.task,
      stopReason,
      iterations: t.steps.length,
      bestIteration: shown >= 0 ? t.steps[shown].iteration : null,
      bestScore: shown >= 0 ? t.steps[shown].score : null,
      valid: t.gated && t.steps.length > 0 ? best >= 0 : null,
      usage: t.usage,
      error: t.failure,
    },
  };
}
