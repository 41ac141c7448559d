/**
 * The validator's messages, rendered: each problem the judging found (an ajv
 * error, a rule's outcome, a zod issue) as a sentence naming the field by
 * path, the value found and what is required, bounded, and the list capped so
 * that hostile output cannot flood the next prompt. Pure: it judges nothing
 * and calls nothing back; the judging (./validate.ts) and the partial checks
 * of a stream call it.
 */
import type { ErrorObject } from "ajv";
import type { PatternBudgetSpent } from "./ajv.js";
import { zodCheckKey } from "./zod.js";
import { childPath, pathOf, pointerToPath } from "../json/paths.js";
import { bound, describeValue } from "../shared/text.js";

/** Limits of the validator's report: how many errors, and how long each may be. */
export interface ValidationLimits {
  /** Most messages reported; the rest are summarised as "…and N more". */
  maxErrors: number;
  /** Longest echo of a value inside a message. */
  maxValueChars: number;
}

export const DEFAULT_VALIDATION_LIMITS: ValidationLimits = { maxErrors: 20, maxValueChars: 60 };

/** A rule's outcome as messages: null or [] is none; anything but a string or a list of strings is a problem, never a pass. */
export function ruleOutcomeMessages(outcome: unknown, id?: string): string[] {
  if (outcome === null || (Array.isArray(outcome) && outcome.length === 0)) return [];
  if (typeof outcome === "string") return [boundMessage(outcome)];
  if (Array.isArray(outcome) && outcome.every((m) => typeof m === "string")) return outcome.map(boundMessage);
  return [
    `rule ${JSON.stringify(id ?? "?")} could not be checked: it returned ${outcome === undefined ? "undefined" : typeof outcome}, not null (satisfied) or the problem(s)`,
  ];
}

/**
 * ajv's errors as messages, each naming the field by path, the value found and
 * what is required. `schema` is the schema the errors' `schemaPath`s start
 * from (for the note on which `if` made a constraint apply).
 */
export function schemaErrorMessages(
  errors: readonly ErrorObject[],
  schema: unknown,
  maxValueChars: number = DEFAULT_VALIDATION_LIMITS.maxValueChars,
): string[] {
  const messages: string[] = [];
  for (const error of errors) {
    const message = describeSchemaError(error, maxValueChars);
    if (message !== null) messages.push(boundMessage(message + conditionNote(error, schema)));
  }
  return messages;
}

export function patternBudgetMessage(spent: PatternBudgetSpent): string {
  return `${spent.message}, so its pattern checks could not all run and the value is not accepted; shorten the strings`;
}

type ZodIssueLike = { code?: string; path: PropertyKey[]; message: string; format?: unknown; pattern?: unknown };

/**
 * zod's issues as messages. With the schema failed, ajv has already described the structure: zod adds
 * its refinements and the checks the JSON Schema could not carry (`zodOnly`, keyed by zodCheckKey).
 */
export function zodIssueMessages(
  issues: ReadonlyArray<ZodIssueLike>,
  value: unknown,
  schemaPassed: boolean,
  limits?: Partial<ValidationLimits>,
  zodOnly?: ReadonlySet<string>,
): string[] {
  const maxValueChars = limits?.maxValueChars ?? DEFAULT_VALIDATION_LIMITS.maxValueChars;
  const messages: string[] = [];
  for (const issue of issues) {
    const format = issue.code === "invalid_format";
    if (!schemaPassed && issue.code !== "custom" && !(format && zodOnly?.has(zodCheckKey(issue)))) continue;
    // A format check's message names the zod check it came from (the JSON Schema may not carry it).
    const named = format && typeof issue.format === "string" ? { ...issue, message: `${issue.message} (zod check ${issue.format})` } : issue;
    messages.push(boundMessage(describeIssue(named, value, maxValueChars)));
  }
  if (schemaPassed && messages.length === 0) messages.push("the value does not pass the spec's zod schema");
  return messages;
}

/**
 * Another schema library's issues as messages (a spec from Valibot, ArkType, Effect …, see ./standard.ts).
 * The JSON Schema was derived from the library's schema, so a field the validator already described
 * (`reported`, messages that start with its path) is not described twice; the rest is what only the library says.
 */
export function standardIssueMessages(
  issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>,
  value: unknown,
  reported: readonly string[],
  library: string,
  limits?: Partial<ValidationLimits>,
): string[] {
  const maxValueChars = limits?.maxValueChars ?? DEFAULT_VALIDATION_LIMITS.maxValueChars;
  const messages: string[] = [];
  for (const issue of issues) {
    const at = pathOf(issue.path) || "the value";
    if (reported.some((message) => message.startsWith(`${at} `))) continue;
    messages.push(boundMessage(describeIssue(issue, value, maxValueChars)));
  }
  if (reported.length === 0 && messages.length === 0) messages.push(`the value does not pass the spec's ${library} schema`);
  return messages;
}

/** Messages, deduplicated and capped at `maxErrors` (plus one "…and N more" line). */
export function capMessages(messages: readonly string[], limits?: Partial<ValidationLimits>): { errors: string[]; problemCount: number } {
  const unique = [...new Set(messages)];
  const maxErrors = limits?.maxErrors ?? DEFAULT_VALIDATION_LIMITS.maxErrors;
  const problemCount = unique.length;
  const hidden = problemCount - maxErrors;
  const errors = hidden > 0 ? [...unique.slice(0, maxErrors), `…and ${hidden} more problem${hidden === 1 ? "" : "s"}`] : unique;
  return { errors, problemCount };
}

/** A zod (or other schema library's) issue in the package's form: the field by path, the value found, what is required. */
function describeIssue(issue: { path: PropertyKey[]; message: string }, document: unknown, maxValueChars: number): string {
  let found: unknown = document;
  for (const key of issue.path) {
    found = found !== null && typeof found === "object" && Object.hasOwn(found, key as string) ? (found as Record<PropertyKey, unknown>)[key] : undefined;
  }
  const at = pathOf(issue.path) || "the value";
  return `${at} is ${describeValue(found, maxValueChars)}; ${issue.message}`;
}

const MAX_MESSAGE_CHARS = 300;

export function boundMessage(message: string): string {
  return bound(message, MAX_MESSAGE_CHARS);
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (Number.isInteger(value)) return "integer";
  return typeof value;
}

function article(type: string): string {
  if (type === "null") return "null";
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * For an error inside an `if`/`then`/`else`, say which condition made the
 * constraint apply: the field's own schema may allow the value.
 */
function conditionNote(error: ErrorObject, root: unknown): string {
  if (!error.schemaPath.includes("/then") && !error.schemaPath.includes("/else")) return "";
  const parts = error.schemaPath
    .replace(/^#/, "")
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  for (let i = parts.length - 1; i >= 0; i--) {
    if (parts[i] !== "then" && parts[i] !== "else") continue;
    let parent: unknown = root;
    for (const key of parts.slice(0, i)) {
      parent = parent !== null && typeof parent === "object" && Object.hasOwn(parent, key) ? (parent as Record<string, unknown>)[key] : undefined;
    }
    if (parent === null || typeof parent !== "object" || !Object.hasOwn(parent, "if")) continue;
    const condition = JSON.stringify((parent as { if: unknown }).if) ?? "";
    const shown = condition.length > 100 ? `${condition.slice(0, 100)}…` : condition;
    return parts[i] === "then"
      ? ` (this applies because the "if" condition ${shown} holds)`
      : ` (this applies because the "if" condition ${shown} does not hold)`;
  }
  return "";
}

/** Where a `$data` reference points, as a readable path, for "must be < 10 (the value of health_check.interval_seconds)". */
function dataReference(error: ErrorObject): string | undefined {
  const schema = error.schema as { $data?: unknown } | undefined;
  if (!schema || typeof schema !== "object" || typeof schema.$data !== "string") return undefined;
  const ref = schema.$data;
  const m = /^(\d+)(.*)$/.exec(ref);
  let target: string;
  if (m) {
    const up = Number(m[1]);
    const parts = error.instancePath.split("/").slice(1);
    target = "/" + [...parts.slice(0, Math.max(0, parts.length - up)), ...m[2].split("/").slice(1)].join("/");
  } else target = ref;
  return pointerToPath(target) || "the root";
}

function describeSchemaError(error: ErrorObject, maxValueChars: number): string | null {
  const path = pointerToPath(error.instancePath);
  const at = path === "" ? "the value" : path;
  const found = `${at} is ${describeValue(error.data, maxValueChars)}`;
  const p = error.params as Record<string, any>;
  if (error.propertyName !== undefined && error.keyword !== "propertyNames") return describeFieldNameError(error, at, maxValueChars);
  switch (error.keyword) {
    case "required":
      return `${childPath(path, String(p.missingProperty))} is missing; it is required`;
    case "type": {
      const expected = String(p.type).split(",").map(article).join(" or ");
      const shown = describeValue(error.data, maxValueChars);
      if (typeof error.data === "number" && !Number.isFinite(error.data)) {
        return `${at} is ${shown} (a number out of range, e.g. 1e400 or NaN); it must be a finite ${String(p.type).split(",").join(" or ")}`;
      }
      const kind = error.data === null || typeof error.data === "object" ? "" : ` (${typeName(error.data)})`;
      return `${at} is ${shown}${kind}; it must be ${expected}`;
    }
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum": {
      const ref = dataReference(error);
      if (ref === undefined) return `${found}; it must be ${p.comparison} ${p.limit}`;
      if (typeof p.limit !== "number")
        return `${found}; it must be ${p.comparison} the value of ${ref}, which is ${describeValue(p.limit, maxValueChars)}, not a number`;
      return `${found}; it must be ${p.comparison} ${p.limit} (the value of ${ref})`;
    }
    case "multipleOf":
      return `${found}; it must be a multiple of ${p.multipleOf}`;
    case "minLength":
    case "maxLength":
      return `${found}; it must be ${error.keyword === "minLength" ? "at least" : "at most"} ${p.limit} characters long`;
    case "minItems":
    case "maxItems":
      return `${found}; it must have ${error.keyword === "minItems" ? "at least" : "at most"} ${p.limit} items`;
    case "minProperties":
    case "maxProperties":
      return `${found}; it must have ${error.keyword === "minProperties" ? "at least" : "at most"} ${p.limit} fields`;
    case "uniqueItems":
      return `${at} has duplicate items at [${Math.min(p.i, p.j)}] and [${Math.max(p.i, p.j)}]; items must be unique`;
    case "pattern":
      return `${found}; it must match the pattern ${p.pattern}`;
    case "format":
      return `${found}; it must be a valid ${p.format}`;
    case "enum":
      return `${found}; it must be one of ${(p.allowedValues as unknown[])
        .slice(0, 20)
        .map((v) => JSON.stringify(v))
        .join(", ")}`;
    case "const":
      return `${found}; it must be ${JSON.stringify(p.allowedValue)}`;
    case "additionalProperties":
      return `${at === "the value" ? "the object" : at} has an unexpected field ${JSON.stringify(String(p.additionalProperty).slice(0, 40))}; remove it`;
    case "propertyNames":
      return null; // ajv adds this after the errors about the field name itself, which already say what is wrong
    case "dependentRequired":
    case "dependencies":
      return `${childPath(path, String(p.missingProperty))} is missing; it is required when ${childPath(path, String(p.property))} is present`;
    case "if":
      return null; // ajv adds this after the failing `then`/`else` errors, which already say what is wrong
    default:
      return `${found}; it ${error.message ?? "is invalid"}`;
  }
}

/** An error about a field's name (from `propertyNames`), not about its value. */
function describeFieldNameError(error: ErrorObject, at: string, maxValueChars: number): string {
  const owner = at === "the value" ? "the object" : at;
  const name = describeValue(error.propertyName, Math.min(maxValueChars, 40));
  const p = error.params as Record<string, any>;
  let requirement: string;
  switch (error.keyword) {
    case "pattern":
      requirement = `field names must match the pattern ${p.pattern}`;
      break;
    case "minLength":
    case "maxLength":
      requirement = `field names must be ${error.keyword === "minLength" ? "at least" : "at most"} ${p.limit} characters long`;
      break;
    case "enum":
      requirement = `field names must be one of ${(p.allowedValues as unknown[])
        .slice(0, 20)
        .map((v) => JSON.stringify(v))
        .join(", ")}`;
      break;
    case "const":
      requirement = `the only field name allowed is ${JSON.stringify(p.allowedValue)}`;
      break;
    case "format":
      requirement = `field names must be a valid ${p.format}`;
      break;
    default:
      requirement = `field names ${error.message ?? "are restricted"}`;
  }
  return `${owner} has a field named ${name}; ${requirement} (rename or remove it)`;
}
