/**
 * The validator: the specification, executed. A pure, synchronous judging of
 * (spec, value) with no model or graph dependency: the schema, the rules, and
 * zod's outcome for a zod spec, made into one report. It finds every problem,
 * in a stable order; ./messages.ts renders each as a sentence. The check step
 * (./check.ts) reads the input and waits for what is asynchronous, and calls
 * only this module to judge.
 */
import { PATTERN_CHARS_PER_VALIDATION, PATTERN_STEPS_PER_VALIDATION, patternBudget, PatternBudgetSpent } from "./ajv.js";
import { RUNTIME_SPEC_LIMITS } from "./limits.js";
import {
  boundMessage,
  capMessages,
  DEFAULT_VALIDATION_LIMITS,
  patternBudgetMessage,
  ruleOutcomeMessages,
  schemaErrorMessages,
  standardIssueMessages,
  zodIssueMessages,
  type ValidationLimits,
} from "./messages.js";
import type { BusinessRule, FieldType, Spec } from "./spec.js";
import type { ZodOutcome } from "./zod.js";
import { libraryName, type StandardOutcome } from "./standard.js";
import type { JsonLimits } from "../json/parse.js";
import { readOnlyCopy, toJsonData } from "../json/data.js";
import { describeThrown } from "../shared/text.js";

export type { ValidationLimits } from "./messages.js";

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

/** The check step's verdict on one value: valid or not, the errors, the value as the spec's output, and the JSON value that was read. */
export interface Verdict<T = unknown> {
  /** True only when every check ran to completion and passed (see ./check.ts). */
  valid: boolean;
  /** When valid: the value to use (a zod spec's output, with its transforms and defaults; else the value itself), plain JSON data. */
  value?: T;
  /** Messages, capped at `maxErrors` (plus one "…and N more" line when cut). */
  errors: string[];
  /** How many problems were found in all, before the cap. */
  problemCount: number;
  /** The JSON value that was read, valid or not (absent when the input was not JSON). */
  parsed?: unknown;
  /** The syntax slips the model's reader repaired before the value was judged (absent when there were none). */
  repairs?: string[];
  /** What `mapBack` changed in the value read before it was judged (absent when nothing). */
  mappedBack?: string[];
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

/** How an asynchronous rule (or a zod spec's parse) settled: its value, or why it could not be judged. */
export type Settled = { value: unknown } | { failed: string };

/** A pending rule's outcome, judged into the judgement's messages: a failure to settle is a problem, never a pass. */
export function settleRule(judgement: Judgement, rule: PendingRule, outcome: Settled): void {
  judgement.messages.push(
    ...("failed" in outcome ? [`rule ${JSON.stringify(rule.id)} could not be checked: ${outcome.failed}`] : ruleOutcomeMessages(outcome.value, rule.id)),
  );
}

/** The report from the schema's and the rules' judgement, and zod's outcome for a zod spec (zod is the last judge). */
export function verdictOf<T>(
  spec: Spec,
  structure: Judgement,
  zod: ZodOutcome | undefined,
  data: unknown,
  limits?: Partial<ValidationLimits & JsonLimits>,
  standard?: StandardOutcome,
): Verdict<T> {
  const messages = structure.messages;
  let output: unknown = data;
  const library = zod ?? standard;
  if (library !== undefined) {
    const named = zod !== undefined ? "zod" : libraryName(spec.standard?.["~standard"].vendor ?? "");
    // The library is the last judge: its refinements are business rules, and nothing it refuses passes.
    if ("failed" in library) messages.push(`the spec ${JSON.stringify(spec.name)} could not check the value with its ${named} schema: ${library.failed}`);
    else if (!library.success)
      messages.push(
        ...(zod !== undefined
          ? zodIssueMessages(library.error.issues, data, structure.schemaPassed, limits, spec.zodOnly)
          : standardIssueMessages(library.error.issues, data, structure.messages, named, limits)),
      );
    else if (messages.length === 0) {
      // A transform's output is the result: it must be JSON data like any other.
      const copy = toJsonData(library.data, limits, "the output");
      if (copy.ok) output = copy.value;
      else
        messages.push(
          `the spec ${JSON.stringify(spec.name)} turned the value into something that is not JSON data (${copy.error}); a spec's output must be JSON data: change the transform`,
        );
    }
  }
  if (messages.length > 0) return refusedReport(messages, limits);
  return { valid: true, value: output as T, errors: [], problemCount: 0 };
}

/** An invalid report with these messages (capped); never empty. */
export function refusedReport<T>(messages: string[], limits?: Partial<ValidationLimits>): Verdict<T> {
  return { valid: false, ...capMessages(messages.length > 0 ? messages : ["the value could not be judged"], limits) };
}

/** What one of the spec's rules says about a value: its messages, none when it is satisfied or its inputs are absent. */
export function ruleMessages(spec: Spec, index: number, value: unknown, context?: unknown): string[] {
  const outcome = runRule(preparedRules(spec)[index], readOnlyCopy(value), readOnlyCopy(context));
  // An asynchronous rule is judged only by the check step, which can wait for it.
  if (outcome === null || outcome instanceof Promise) return [];
  return (typeof outcome === "string" ? [outcome] : outcome).map((message) => boundMessage(String(message)));
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
