/**
 * A tool call's arguments, judged by the check step (../specs/check.ts) as
 * exactly one JSON value: text must be one JSON value and nothing else (no
 * prose, no fence), and an object is read as JSON data (a fresh, bounded
 * copy). Pure: no model, no graph. The value handed to the tool's function is
 * the spec's output (a zod spec's transforms and defaults applied).
 */
import { checkGiven, checkGivenSync, type CheckLimits } from "../specs/check.js";
import type { Spec } from "../specs/spec.js";

/** Size, depth and message limits for a tool call's arguments (the check step's limits). */
export type ArgumentLimits = CheckLimits;

type CheckedArguments = { valid: true; value: unknown } | { valid: false; errors: string[] };

export async function checkToolArguments(spec: Spec, args: unknown, limits: Partial<ArgumentLimits> = {}, context?: unknown): Promise<CheckedArguments> {
  const verdict = await checkGiven(spec, args, { limits, what: "the arguments", context });
  return verdict.valid ? { valid: true, value: verdict.value } : { valid: false, errors: verdict.errors };
}

/** The same verdict, synchronously (for counting calls made alongside the one being decided). */
export function toolArgumentsPass(spec: Spec, args: unknown, limits: Partial<ArgumentLimits> = {}, context?: unknown): boolean {
  return checkGivenSync(spec, args, { limits, context }).valid;
}
