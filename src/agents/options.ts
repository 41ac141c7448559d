/** Checks of the agent middleware's options, made when the middleware is built, so a mistake fails before any run. */
import { ConfigurationError } from "../errors.js";

/** Most attempts either middleware allows (as the validation graph and guardedTool). */
export const MAX_ATTEMPTS_LIMIT = 10;

/** `maxAttempts` as given, or the default; an integer from 1 to 10. */
export function attemptsOption(value: unknown, fallback: number): number {
  return countOption("maxAttempts", value, fallback, 1, MAX_ATTEMPTS_LIMIT);
}

/** A count option as given, or the default; an integer from `min` to `max`. */
export function countOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  const count = value ?? fallback;
  if (typeof count !== "number" || !Number.isInteger(count) || count < min || count > max) {
    throw new ConfigurationError(`${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(count)}.`);
  }
  return count;
}

/** Facts a spec's code rules read (their third argument): a value, or computed from the run, e.g. `(run) => run.context` (what `agent.invoke(input, { context })` was given). */
export type RuleContextOption = unknown | ((run: { context: unknown }) => unknown);

/** The rules' context for a run with this context. */
export function ruleContextFor(option: RuleContextOption, context: unknown): unknown {
  return typeof option === "function" ? (option as (run: { context: unknown }) => unknown)({ context }) : option;
}
