/** The Reflexion loop's decisions, as pure functions: when a task stops and which response is best. */

/** A task stops early once a step's score is strictly above this (and its response passes the gate). */
export const EARLY_STOP_SCORE = 0.9;

export type TaskStop = "early_stop" | "max_loops";

/** Whether the task ends after this iteration, and why; null to go on refining. */
export function taskStop(score: number, passed: boolean, iteration: number, maxLoops: number): TaskStop | null {
  if (passed && score > EARLY_STOP_SCORE) return "early_stop";
  if (iteration + 1 >= maxLoops) return "max_loops";
  return null;
}

/**
 * Index of the best step: the highest score among the steps that pass the
 * gate (all pass without a spec); only when none passes, the highest score of
 * all. The earliest wins a tie. -1 for no steps.
 */
export function pickBest(scores: readonly number[], passed: readonly boolean[]): number {
  let best = -1;
  for (let i = 0; i < scores.length; i++) {
    if (best === -1) {
      best = i;
      continue;
    }
    const a = passed[i] ? 1 : 0;
    const b = passed[best] ? 1 : 0;
    if (a > b || (a === b && scores[i] > scores[best])) best = i;
  }
  return best;
}
