/**
 * The validator: the specification, executed. A pure, synchronous function of
 * (spec, value) with no model or graph dependency. It reports every problem,
 * each naming the field by path, the value found and what is required, in a
 * stable order, bounded so that hostile output cannot flood the next prompt.
 */
import type { ErrorObject } from "ajv";
import { PATTERN_CHARS_PER_VALIDATION, PATTERN_STEPS_PER_VALIDATION, patternBudget, PatternBudgetSpent } from "./ajv.js";
import { RUNTIME_SPEC_LIMITS } from "./limits.js";
import type { BusinessRule, FieldType, Spec } from "./spec.js";
import { zodCheckKey } from "./zod.js";
import { childPath, pathOf, pointerToPath } from "../shared/paths.js";
import { readOnlyCopy } from "../shared/json-data.js";
import { bound, describeThrown, describeValue } from "../shared/text.js";

/** Limits of the validator's report: how many errors, and how long each may be. */
export interface ValidationLimits {
  /** Most messages reported; the rest are summarised as "…and N more". */
  maxErrors: number;
  /** Longest echo of a value inside a message. */
  maxValueChars: number;
}

/** Largest answer (in JSON values) whose schema errors are all listed. */
export const EXPLAINED_VALUES = 10_000;

/** How many JSON values `value` holds, counting stops just past `max`. */
function countValues(value: unknown, max: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= max) {
    const v = stack.pop();
    count++;
    if (v !== null && typeof v === "object") {
      if (Array.isArray(v)) for (let i = 0; i < v.length && stack.length <= max; i++) stack.push(v[i]);
      else for (const key in v) if (Object.hasOwn(v, key)) stack.push((v as Record<string, unknown>)[key]);
    }
  }
  return count;
}

export const DEFAULT_VALIDATION_LIMITS: ValidationLimits = { maxErrors: 20, maxValueChars: 60 };

/** The validator's report on one value: valid or not, the errors, and the value as the spec's output. */
export interface ValidationReport<T = unknown> {
  /** True only when every check ran to completion and passed (see ./check.ts). */
  valid: boolean;
  /** When valid: the value to use (a zod spec's output, with its transforms and defaults; else the value itself), plain JSON data. */
  value?: T;
  /** Messages, capped at `maxErrors` (plus one "…and N more" line when cut). */
  errors: string[];
  /** How many problems were found in all, before the cap. */
  problemCount: number;
}

/**
 * The schema's and the rules' judgement of a value: the messages (none when
 * both pass) and whether the schema itself passed. It may throw (a spent
 * pattern budget, a rule's bug, ajv itself): the check step (./check.ts) is
 * the only caller, and turns anything that did not run to completion into an
 * invalid verdict.
 */
export function judgeSchemaAndRules(spec: Spec, value: unknown, limits?: Partial<ValidationLimits>, context?: unknown): Judgement {
  const messages: string[] = [];
  const pending: PendingRule[] = [];
  if (spec.untrusted) {
    // A run-time spec's cost is bounded per value; the answer's size bounds the rest.
    const maxValues = Math.floor((spec.limits ?? RUNTIME_SPEC_LIMITS).maxApplicationsPerAnswer / Math.max(1, spec.applicationsPerValue ?? 1));
    const values = countValues(value, maxValues);
    if (values > maxValues) {
      messages.push(
        `the value has more than ${maxValues} JSON values, more than this spec (supplied at run time) may check in one answer (its limit maxApplicationsPerAnswer); send a smaller value`,
      );
      return { messages, schemaPassed: false, pending };
    }
  }
  const maxValueChars = limits?.maxValueChars ?? DEFAULT_VALIDATION_LIMITS.maxValueChars;
  patternBudget.used = 0;
  patternBudget.steps = 0;
  let verdict: unknown;
  try {
    verdict = spec.checkSchema(value);
  } catch (error) {
    if (!(error instanceof PatternBudgetSpent)) throw error;
    // The patterns could not all be read: the schema did not pass, whatever the checks before said.
    messages.push(patternBudgetMessage(error));
    verdict = "spent";
  }
  if (verdict === false) {
    // Every error of a large answer would cost more than it tells: past EXPLAINED_VALUES values,
    // the first error is reported (with a note), so the cost stays that of reading the answer once.
    const explained =
      patternBudget.used <= PATTERN_CHARS_PER_VALIDATION / 2 &&
      patternBudget.steps <= PATTERN_STEPS_PER_VALIDATION / 2 &&
      countValues(value, EXPLAINED_VALUES) <= EXPLAINED_VALUES;
    let errors = spec.checkSchema.errors ?? [];
    if (explained) {
      try {
        spec.validateSchema(value);
        errors = spec.validateSchema.errors ?? errors;
      } catch (error) {
        if (!(error instanceof PatternBudgetSpent)) throw error;
        messages.push(patternBudgetMessage(error));
      }
    }
    messages.push(...schemaErrorMessages(errors, spec.schema, maxValueChars));
    if (messages.length === 0) messages.push("the value does not match the schema");
    if (!explained) messages.push("the value is large, so only its first schema error is listed; there may be more");
  } else if (verdict !== true && verdict !== "spent") {
    // Only a compiled check that returns exactly true passes. defineSpec refuses what makes ajv
    // return anything else (`$async`), so this is a spec built around it: never a pass.
    if (verdict instanceof Promise) verdict.catch(() => undefined);
    messages.push(
      `the spec ${JSON.stringify(spec.name)} could not give a verdict (its schema check returned ${verdict instanceof Promise ? "a Promise" : typeof verdict}); the value is not accepted`,
    );
  }
  const rules = preparedRules(spec);
  // Rules read a frozen copy of the value and of the run's context: a rule that writes to either
  // changes neither the value kept nor a later verdict (nor the next caller's context).
  const document = rules.length > 0 ? readOnlyCopy(value) : value;
  const ruleContext = rules.length > 0 ? readOnlyCopy(context) : context;
  for (let i = 0; i < rules.length; i++) {
    const outcome = runRule(rules[i], document, ruleContext);
    if (outcome === null) continue;
    if (outcome instanceof Promise) pending.push({ id: rules[i].rule.id, outcome });
    else messages.push(...ruleOutcomeMessages(outcome));
  }
  return { messages, schemaPassed: verdict === true, pending };
}

/** An asynchronous rule still running: its outcome is judged by the check step once it settles (or its deadline passes). */
interface PendingRule {
  id: string;
  outcome: Promise<unknown>;
}

export interface Judgement {
  messages: string[];
  schemaPassed: boolean;
  pending: PendingRule[];
}

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

/** What one of the spec's rules says about a value: its messages, none when it is satisfied or its inputs are absent. */
export function ruleMessages(spec: Spec, index: number, value: unknown, context?: unknown): string[] {
  const outcome = runRule(preparedRules(spec)[index], readOnlyCopy(value), readOnlyCopy(context));
  // An asynchronous rule is judged only by the check step, which can wait for it.
  if (outcome === null || outcome instanceof Promise) return [];
  return (typeof outcome === "string" ? [outcome] : outcome).map((message) => boundMessage(String(message)));
}

function patternBudgetMessage(spent: PatternBudgetSpent): string {
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
 * Another schema library's issues as messages, each naming the field, the value found and the library's words.
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

/**
 * A rule with its inputs resolved once, not on every validation: paths split
 * into segments, a type test per input, and one values object of a fixed
 * shape that is refilled for each check (rules are synchronous and must not
 * keep it).
 */
interface PreparedRule {
  rule: BusinessRule;
  /** Fills `values` from the document; false when an input is absent or of the wrong type. */
  read: (document: unknown, values: Record<string, unknown>) => boolean;
  values: Record<string, unknown>;
}

const prepared = new WeakMap<Spec, PreparedRule[]>();

// One-entry cache in front of the WeakMap: a process usually validates against one spec at a time.
let lastSpec: Spec | undefined;
let lastRules: PreparedRule[] = [];

function preparedRules(spec: Spec): PreparedRule[] {
  if (spec === lastSpec) return lastRules;
  let rules = prepared.get(spec);
  if (rules === undefined) {
    rules = spec.rules.map((rule) => {
      const values: Record<string, unknown> = {};
      for (const path of Object.keys(rule.inputs)) values[path] = undefined;
      return { rule, read: compileInputReader(rule.inputs), values };
    });
    prepared.set(spec, rules);
  }
  lastSpec = spec;
  lastRules = rules;
  return rules;
}

/**
 * Run a rule only when all its inputs are present and well-typed. Only null
 * (or an empty list) means satisfied: anything else a rule returns or throws
 * is a problem reported as such, never a pass.
 */
function runRule(prepared: PreparedRule, document: unknown, context: unknown): string | string[] | null | Promise<unknown> {
  const values = prepared.values;
  if (!prepared.read(document, values)) return null;
  const id = JSON.stringify(prepared.rule.id);
  let outcome: unknown;
  try {
    // A copy: an asynchronous rule may still hold its values when the next validation refills the prepared object.
    outcome = prepared.rule.check({ ...values }, document, context);
  } catch (error) {
    // A rule that throws is a bug in the spec; never let it pass the value as valid.
    return `rule ${id} could not be checked: ${describeThrown(error, 120)}`;
  }
  if (outcome instanceof Promise) {
    // Observed at once, so a rejection never goes unhandled whoever waits for it.
    outcome.catch(() => undefined);
    return outcome;
  }
  const messages = ruleOutcomeMessages(outcome, prepared.rule.id);
  return messages.length === 0 ? null : messages;
}

const TYPE_TESTS: Record<FieldType, (v: string) => string> = {
  integer: (v) => `Number.isInteger(${v})`,
  number: (v) => `(typeof ${v} === "number" && Number.isFinite(${v}))`,
  string: (v) => `typeof ${v} === "string"`,
  boolean: (v) => `typeof ${v} === "boolean"`,
  array: (v) => `Array.isArray(${v})`,
  object: (v) => `(${v} !== null && typeof ${v} === "object" && !Array.isArray(${v}))`,
};

/**
 * Straight-line code that reads a rule's inputs (own properties of plain
 * objects along each dotted path) and tests their types, as ajv does for
 * schemas. Paths and types come from code-defined rules; every key is
 * embedded with JSON.stringify.
 */
function compileInputReader(inputs: Record<string, FieldType>): PreparedRule["read"] {
  const isObject = (v: string) => `(${v} !== null && typeof ${v} === "object" && !Array.isArray(${v}))`;
  const lines: string[] = [];
  let n = 0;
  Object.entries(inputs).forEach(([path, type]) => {
    let current = "document";
    for (const key of path.split(".")) {
      const next = `v${n++}`;
      const k = JSON.stringify(key);
      lines.push(`if (!${isObject(current)} || !Object.hasOwn(${current}, ${k})) return false;`, `const ${next} = ${current}[${k}];`);
      current = next;
    }
    if (!(type in TYPE_TESTS)) throw new Error(`unknown input type ${JSON.stringify(type)} for ${JSON.stringify(path)}`);
    lines.push(`if (!${TYPE_TESTS[type](current)}) return false;`, `values[${JSON.stringify(path)}] = ${current};`);
  });
  lines.push("return true;");
  return new Function("document", "values", lines.join("\n")) as PreparedRule["read"];
}

/** A zod issue in the package's form: the field by path, the value found, what is required. */
function describeIssue(issue: { path: PropertyKey[]; message: string }, document: unknown, maxValueChars: number): string {
  let found: unknown = document;
  for (const key of issue.path) {
    found = found !== null && typeof found === "object" && Object.hasOwn(found, key as string) ? (found as Record<PropertyKey, unknown>)[key] : undefined;
  }
  const at = pathOf(issue.path) || "the value";
  return `${at} is ${describeValue(found, maxValueChars)}; ${issue.message}`;
}

const MAX_MESSAGE_CHARS = 300;

function boundMessage(message: string): string {
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
