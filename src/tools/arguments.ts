/**
 * A tool call's arguments, parsed and validated: the validation graph's
 * "parse, then validate" step applied to what a model passed to a tool. Pure:
 * no model, no graph. Whatever arrives (text, an object, something hostile),
 * the result is the validated JSON value or bounded messages, never a throw.
 */
import { DEFAULT_JSON_LIMITS, extractJson, type JsonLimits } from "../shared/json.js";
import type { Spec } from "../specs/spec.js";
import { validateAgainstSpec, type ValidationLimits } from "../specs/validate.js";

export type ArgumentLimits = JsonLimits & ValidationLimits;

export type CheckedArguments = { valid: true; value: unknown } | { valid: false; errors: string[] };

export function checkToolArguments(spec: Spec, args: unknown, limits: Partial<ArgumentLimits> = {}): CheckedArguments {
  const parsed = readToolArguments(args, limits);
  if (!parsed.ok) return { valid: false, errors: [parsed.error] };
  const report = validateAgainstSpec(spec, parsed.value, limits);
  return report.valid ? { valid: true, value: parsed.value } : { valid: false, errors: report.errors };
}

/**
 * Text goes through the package's JSON parser as a model's answer does. Any
 * other value is written out as JSON and read back with the same parser, so
 * the same size and depth limits apply, and what is validated (and handed to
 * the tool's function) is a fresh copy made of plain JSON data: no
 * prototypes, getters or shared references from the caller.
 */
function readToolArguments(args: unknown, limits: Partial<JsonLimits>): { ok: true; value: unknown } | { ok: false; error: string } {
  if (typeof args === "string") return extractJson(args, limits);
  const maxChars = limits.maxChars ?? DEFAULT_JSON_LIMITS.maxChars;
  let text: string | undefined;
  try {
    text = JSON.stringify(args);
  } catch (error) {
    // Cycles, BigInt, a throwing getter or nesting too deep for the stack.
    const reason = error instanceof RangeError ? "they nest too deeply" : String((error as Error)?.message ?? error).slice(0, 120);
    return { ok: false, error: `The arguments cannot be read as JSON (${reason}); call again with one JSON object.` };
  }
  if (text === undefined) return { ok: false, error: "The call had no arguments; call again with one JSON object." };
  if (text.length > maxChars) {
    return { ok: false, error: `The arguments are ${text.length} characters of JSON, over the limit of ${maxChars}; call again with the expected object only.` };
  }
  return extractJson(text, limits);
}
