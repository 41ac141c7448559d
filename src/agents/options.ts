/** Checks of the agent middleware's options, made when the middleware is built, so a mistake fails before any run. */
import { ConfigurationError } from "../errors.js";

/** Most attempts either middleware allows (as the validation graph and guardedTool). */
export const MAX_ATTEMPTS_LIMIT = 10;

/** `maxAttempts` as given, or the default; an integer from 1 to 10. */
export function attemptsOption(value: unknown, fallback: number): number {
  const attempts = value ?? fallback;
  if (typeof attempts !== "number" || !Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS_LIMIT) {
    throw new ConfigurationError(`maxAttempts must be an integer from 1 to ${MAX_ATTEMPTS_LIMIT}; got ${JSON.stringify(attempts)}.`);
  }
  return attempts;
}

/** Facts a spec's code rules read (their third argument): a value, or computed from the run, e.g. `(run) => run.context` (what `agent.invoke(input, { context })` was given). */
export type RuleContextOption = unknown | ((run: { context: unknown }) => unknown);

/** The rules' context for a run with this context. */
export function ruleContextFor(option: RuleContextOption, context: unknown): unknown {
  return typeof option === "function" ? (option as (run: { context: unknown }) => unknown)({ context }) : option;
}
