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
