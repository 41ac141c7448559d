/**
 * Corrections: a retry that asks the model for only what changes in its last
 * answer, as a JSON Patch (RFC 6902), instead of the whole answer again. Here
 * is what is pure about it: when a retry may ask for corrections, and how a
 * correction is read and applied to the last answer's value. The patched
 * value is then judged whole by the check step, as any answer is (the graph
 * does that); nothing here decides a verdict.
 *
 * JSON Patch rather than JSON Merge Patch (RFC 7386): a Patch path is a JSON
 * Pointer, the same path the validator's errors name (`services[3].port` is
 * `/services/3/port`), so one array element is corrected in place; a Merge
 * Patch cannot address an array element (the whole array is sent again, which
 * for an answer whose bulk is a list costs about what the whole answer does)
 * and cannot set a field to null (null means "remove"). Measured on the
 * simulated model's answers in `npm run bench -- --only corrections`.
 *
 * Applied with fast-json-patch (validating every operation, never mutating
 * the value it is given, prototype changes refused): an operation at a path
 * the answer does not have, a failed `test`, or an unknown operation is an
 * error, never a silent no-op. Before the library sees an operation, its
 * `path` and `from` are resolved here on the answer as the operations before
 * it left it, through its own fields only (a path naming `constructor` or
 * `toString` on an answer without such a field names nothing) and RFC 6901's
 * array indices (`0` or digits without a leading zero; `-`, the end of an
 * array, only where RFC 6902 adds: the path of `add` and of `move`); any
 * other pointer sets the correction aside with the reason, never a throw.
 */
import jsonPatch from "fast-json-patch";
import { extractJson, type JsonLimits } from "../json/parse.js";
import { pointerToPath } from "../json/paths.js";
import { quote } from "../shared/text.js";
import type { RetryWith } from "../settings.js";

/** How a retry asks for the fix: the whole answer again, only the corrections, or corrections where they are much smaller. */
export type RetryForm = "answer" | "corrections";

/** Longest answer (as the JSON a correction prompt shows it) that a retry asks corrections of; a longer one is asked for whole. */
export const MAX_CORRECTABLE_CHARS = 40_000;

/**
 * What one correction costs, in characters, for the "auto" setting's estimate: an operation with its
 * path and a short value (`{"op": "replace", "path": "/services/3/port", "value": 8080}` is 56).
 */
const CHARS_PER_CORRECTION = 120;

/** The last answer as a retry may quote it: its value, its errors, and whether a correction of it could be asked. */
interface CorrectableAnswer {
  /** The value read from the last answer; undefined when it was not JSON. */
  value: unknown;
  errors: readonly string[];
  /** The last answer was whole and read as written: not cut at the output limit, not stopped while streaming, not a correction that failed. */
  whole: boolean;
}

/**
 * The form of the next retry. "corrections" asks for them whenever the last answer is a JSON object or
 * array that was read whole and fits MAX_CORRECTABLE_CHARS; "auto" only when, in addition, its errors
 * are few for its size (each correction, at CHARS_PER_CORRECTION, under a third of the answer); anything
 * else asks for the whole answer.
 */
export function retryFormFor(setting: RetryWith, last: CorrectableAnswer): RetryForm {
  if (setting === "answer" || !last.whole || last.value === null || typeof last.value !== "object") return "answer";
  const size = shownValue(last.value).length;
  if (size > MAX_CORRECTABLE_CHARS) return "answer";
  if (setting === "auto" && Math.max(1, last.errors.length) * CHARS_PER_CORRECTION * 3 > size) return "answer";
  return "corrections";
}

/** The last answer's value as a correction prompt shows it (and as a corrected answer is recorded): compact JSON, the fewest input tokens. */
export function shownValue(value: unknown): string {
  return JSON.stringify(value);
}

type CorrectionResult =
  /** `repairs`: syntax slips repaired in the correction's text (the model's reader). */
  | { ok: true; value: unknown; operations: number; repairs?: string[] }
  /** `outside`: an operation named a path the answer does not have (or could not have). */
  | { ok: false; problem: string; outside?: boolean };

/**
 * The operations accepted: RFC 6902's, but `copy`, which can double the answer with each operation (a correction
 * never needs one: an `add` carries the value).
 */
const OPERATIONS = new Set(["add", "remove", "replace", "move", "test"]);
/** Most operations in one correction: far more than a retry's errors (at most 20 are listed) call for. */
export const MAX_CORRECTION_OPERATIONS = 1_000;
const OUTSIDE = new Set(["OPERATION_PATH_UNRESOLVABLE", "OPERATION_PATH_CANNOT_ADD", "OPERATION_VALUE_OUT_OF_BOUNDS", "OPERATION_FROM_UNRESOLVABLE"]);

/**
 * A correction, read from a model's answer (with the model's reader: a fence or a syntax slip is
 * fine) and applied to `base`: the corrected value, or why it cannot be used. The answer is a JSON
 * Patch array, or an object with one field holding it, `{"patch": [...]}` (what a provider's JSON mode, which wants
 * an object, gives).
 */
export function applyCorrection(text: string, base: unknown, options: { limits?: Partial<JsonLimits>; repair?: boolean } = {}): CorrectionResult {
  const read = extractJson(text, options.limits, { repair: options.repair });
  if (!read.ok) return { ok: false, problem: `the correction is not JSON: ${read.error}` };
  const wrapped = read.value !== null && typeof read.value === "object" && !Array.isArray(read.value) ? (read.value as Record<string, unknown>) : undefined;
  // An object with one field holding the array: what a provider's JSON mode (which wants an object) gets back.
  const only = wrapped !== undefined && Object.keys(wrapped).length === 1 ? Object.values(wrapped)[0] : undefined;
  const operations = Array.isArray(only) ? only : read.value;
  if (!Array.isArray(operations)) {
    return { ok: false, problem: 'the correction is not a JSON Patch: it must be an array of operations, each {"op", "path", …}' };
  }
  if (operations.length === 0) return { ok: false, problem: "the correction is an empty JSON Patch: it changes nothing" };
  if (operations.length > MAX_CORRECTION_OPERATIONS) {
    return { ok: false, problem: `the correction has ${operations.length} operations, over the limit of ${MAX_CORRECTION_OPERATIONS}` };
  }
  for (const [i, operation] of operations.entries()) {
    const problem = operationProblem(operation);
    if (problem !== undefined) return { ok: false, problem: `operation ${i + 1} of the correction ${problem}` };
  }
  // One copy of the answer, changed in place operation by operation (never the value given).
  let document: unknown = jsonPatch.deepClone(base);
  for (const [i, operation] of (operations as PatchOperation[]).entries()) {
    const which = `operation ${i + 1} of the correction (${describeOperation(operation)})`;
    const place = placeProblem(document, operation);
    if (place !== undefined) return { ok: false, ...place, problem: `${which} ${place.problem}` };
    try {
      document = jsonPatch.applyOperation(document, operation as jsonPatch.Operation, true, true, true, i).newDocument;
    } catch (error) {
      const name = (error as { name?: unknown }).name;
      if (typeof name === "string" && OUTSIDE.has(name)) return { ok: false, outside: true, problem: `${which} ${NOT_IN_ANSWER}` };
      if (name === "TEST_OPERATION_FAILED") return { ok: false, problem: `${which} tests a value your previous answer does not have` };
      return { ok: false, problem: `${which} could not be applied (${quote(String((error as Error)?.message ?? error).split("\n")[0], 160)})` };
    }
  }
  return { ok: true, value: document, operations: operations.length, ...(read.repairs !== undefined ? { repairs: read.repairs } : {}) };
}

const NOT_IN_ANSWER = "names a path your previous answer does not have";
/** RFC 6901's array index: 0, or digits without a leading zero. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/** Why an operation's `from` or `path` names no place it may use in the answer as it is now, or undefined. */
function placeProblem(document: unknown, operation: PatchOperation): { problem: string; outside?: boolean } | undefined {
  if (operation.op === "move") {
    const from = pointerProblem(document, operation.from!, false);
    if (from !== undefined) return { ...from, problem: `(from ${operation.from}) ${from.problem}` };
  }
  // RFC 6902: add and move put a value at their path (a new field, or an array position up to its end); the others need one there.
  return pointerProblem(document, operation.path, operation.op === "add" || operation.op === "move");
}

/**
 * Why a JSON Pointer (RFC 6901) does not resolve in `document` through own fields and array indices, or
 * undefined. `adds`: the pointer's last step may name a new field, an array position up to the array's
 * length, or `-` (its end).
 */
function pointerProblem(document: unknown, pointer: string, adds: boolean): { problem: string; outside?: boolean } | undefined {
  if (pointer === "") return undefined;
  const steps = pointer.slice(1).split("/");
  let at = document;
  for (let i = 0; i < steps.length; i++) {
    if (/~(?![01])/.test(steps[i])) return { problem: `is not a JSON Pointer: in ${quote(pointer, 80)}, "~" must be followed by 0 or 1 (RFC 6901)` };
    const step = steps[i].replace(/~1/g, "/").replace(/~0/g, "~");
    const last = i === steps.length - 1;
    if (at === null || typeof at !== "object") return { outside: true, problem: NOT_IN_ANSWER };
    if (Array.isArray(at)) {
      if (step === "-" && last && adds) return undefined;
      if (!ARRAY_INDEX.test(step)) {
        return {
          outside: true,
          problem: `${NOT_IN_ANSWER}: ${quote(step, 40)} is not an array index (0, or digits without a leading zero${adds && last ? ', or "-" for the end' : ""})`,
        };
      }
      const index = Number(step);
      if (index > at.length || (index === at.length && !(last && adds))) return { outside: true, problem: NOT_IN_ANSWER };
      at = at[index];
    } else {
      if (last && adds) return step === "__proto__" ? { problem: 'adds a field named "__proto__", which an answer may not have' } : undefined;
      if (!Object.hasOwn(at, step)) return { outside: true, problem: NOT_IN_ANSWER };
      at = (at as Record<string, unknown>)[step];
    }
  }
  return undefined;
}

interface PatchOperation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** What is wrong with one operation's form, or undefined when it is an RFC 6902 operation. */
function operationProblem(operation: unknown): string | undefined {
  if (operation === null || typeof operation !== "object" || Array.isArray(operation)) return 'is not an object {"op", "path", …}';
  const { op, path, from } = operation as Record<string, unknown>;
  if (typeof op !== "string" || !OPERATIONS.has(op))
    return `has ${typeof op === "string" ? `op ${quote(op, 40)}` : "no op"}; it must be one of ${[...OPERATIONS].join(", ")}`;
  if (typeof path !== "string" || (path !== "" && !path.startsWith("/")))
    return 'has no path: a JSON Pointer such as /services/3/port ("" for the whole answer)';
  if (op === "move" && (typeof from !== "string" || (from !== "" && !from.startsWith("/")))) return "(move) has no from: a JSON Pointer";
  // RFC 6902 4.4: a value cannot be moved into one of its own children.
  if (op === "move" && (from === "" || (path as string).startsWith(`${from as string}/`))) return `(move ${path}) moves a value into itself`;
  if ((op === "add" || op === "replace" || op === "test") && !Object.hasOwn(operation, "value")) return `(${op} ${path}) has no value`;
  return undefined;
}

function describeOperation(operation: PatchOperation): string {
  const where = operation.path === "" ? "the whole answer" : `${operation.path}, i.e. ${pointerToPath(operation.path)}`;
  return `${operation.op} ${where}`;
}
