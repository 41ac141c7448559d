/**
 * The check step: the one place a verdict is made. The validation graph's
 * validate and review steps, guarded tools, the Reflexion gate, the agent
 * middleware, the command line, the evaluation and the benchmarks all call it.
 *
 * Its contract:
 *   - `valid` is true only when every check ran to completion and passed: the
 *     input was read whole, the value is plain JSON data, the schema check
 *     returned exactly `true`, every rule returned null, and a zod spec's
 *     parse (another library's validate) succeeded with an output that is
 *     itself plain JSON data.
 *   - Anything that did not run to completion is invalid, with a message
 *     saying why: a spent budget (size, depth, the patterns' characters), an
 *     exception, a timeout, a non-boolean or asynchronous result, a value that
 *     is not JSON data (a cycle, a BigInt, a function, NaN).
 *   - It never throws and never returns a value that was not judged: the
 *     value returned is the very one judged, as every checkpoint gives it
 *     back (each -0 is 0; a number written with more digits than it holds,
 *     such as 1e-400, is refused), deep-frozen: the value a check owns (the
 *     reader's fresh value, or one bounded copy of a given value) is the one
 *     the rules read, so a check makes no other copy.
 *
 * Text comes in through one of two readers, named for what they read:
 * "model" (the tolerant extractor for a model's answer: a fence or prose
 * around one JSON object) and "exact" (a person's answer, a tool call's
 * arguments: the whole text must be exactly one JSON value).
 */
import { extractJson, parseExactJson, unkeptValueProblem, type ExtractResult, type JsonLimits } from "../json/parse.js";
import { freezeOwned, readOnlyCopy, toJsonData, type JsonDataResult } from "../json/data.js";
import { describeThrown } from "../shared/text.js";
import { resolveSpec, type SpecLike, type SpecRef } from "./registry.js";
import type { Spec } from "./spec.js";
import { judgeSchemaAndRules, refusedReport, settleRule, verdictOf, type Judgement, type Settled, type ValidationLimits, type Verdict } from "./validate.js";

export type { Verdict };
import { runStandardSync, standardOutcome, type StandardOutcome } from "./standard.js";
import { runZodSync, type ZodOutcome } from "./zod.js";

/** Limits of one check: the JSON reader's (size, depth) and the validator's (errors reported, their length). */
export interface CheckLimits extends JsonLimits, ValidationLimits {}

/** How text is read: a model's answer (tolerant of prose and fences) or exactly one JSON value (a person, a tool call). */
type Reader = Parameters<typeof checkText>[2];

/** Options of checkText and checkValue: limits, the facts code rules read, and a deadline for async rules. */
export interface CheckOptions<C = unknown> {
  limits?: Partial<CheckLimits>;
  /** The run's context, handed to the spec's code rules (their third argument). */
  context?: C;
  /** What the input is called in the readers' messages (default "the value"; a tool's are "the arguments"). */
  what?: string;
  /** Longest the asynchronous rules and a zod spec's asynchronous refinements may take, in ms (default 10 s); past it the value is invalid. */
  timeoutMs?: number;
  /** The model's reader repairs syntax slips (trailing commas, comments, single quotes, unquoted keys, Python literals) before judging (default true). The exact reader never does. */
  repair?: boolean;
  /**
   * The model's reader only: the answer was written under a provider's strict form of the schema, and this maps
   * the value read back to the spec's own shape before it is judged (it may change the fresh value in place).
   * The value judged, returned and kept is the mapped one; a person's answer and a tool's arguments are never mapped.
   * A changed value is read again as the reader reads text (what a checkpoint would not give back as written is
   * refused); a `problem` (a key written twice among a map's entries) refuses the answer as the reader would.
   */
  mapBack?: (value: unknown) => { value: unknown; changes: string[]; problem?: string };
}

/** How long asynchronous refinements of a zod spec may take, unless the caller says otherwise. */
const DEFAULT_CHECK_TIMEOUT_MS = 10_000;

/**
 * Read text with the named reader, then judge the value: the check step for an answer.
 *
 * @example
 * ```ts
 * import { checkText, resolveSpec } from "langgraph-trustworthy-output";
 *
 * const spec = resolveSpec("deployment-config");
 * const fromModel = await checkText(spec, 'Here you go: {"service_name": "api"}', "model"); // prose around one object is read
 * const fromPerson = await checkText(spec, '{"service_name": "api"} thanks', "exact"); // refused: exactly one JSON value
 * console.log(fromModel.errors, fromPerson.errors);
 * ```
 */
export async function checkText<T, C>(given: SpecLike<T, C>, text: unknown, read: "model" | "exact", options: CheckOptions<C> = {}): Promise<Verdict<T>> {
  let spec: Spec<T, C> | undefined;
  try {
    spec = specOf(given);
    const parsed = readText(text, read, options.limits, options.what, options.repair);
    if (!parsed.ok) return refusedReport([parsed.error]);
    const mapped = read === "model" && options.mapBack !== undefined ? options.mapBack(parsed.value) : undefined;
    const noted = {
      ...(parsed.repairs !== undefined ? { repairs: parsed.repairs } : {}),
      ...(mapped !== undefined && mapped.changes.length > 0 ? { mappedBack: mapped.changes } : {}),
    };
    // A mapped value holds objects the reader did not make (a map read from its entries): read as the reader reads.
    const problem = mapped === undefined ? undefined : (mapped.problem ?? (mapped.changes.length > 0 ? unkeptValueProblem(mapped.value) : undefined));
    if (problem !== undefined) return { ...refusedReport([problem]), ...noted };
    const verdict = await judge(spec, mapped !== undefined ? mapped.value : parsed.value, options, true);
    return { ...verdict, ...noted };
  } catch (error) {
    return refusedReport([couldNotJudge(spec, error)]);
  }
}

/**
 * Judge a value given as data (an object, not text): the check step for a value. The value is read
 * as plain JSON data (a bounded copy); on success `value` is the spec's output.
 *
 * @example
 * ```ts
 * import { checkValue, resolveSpec } from "langgraph-trustworthy-output";
 *
 * const verdict = await checkValue(resolveSpec("db-query"), { table: "users", columns: ["id"], limit: 10 });
 * if (!verdict.valid) console.error(verdict.errors);
 * ```
 */
export async function checkValue<T, C>(given: SpecLike<T, C>, value: unknown, options: CheckOptions<C> = {}): Promise<Verdict<T>> {
  let spec: Spec<T, C> | undefined;
  try {
    spec = specOf(given);
    return await judge(spec, value, options, false);
  } catch (error) {
    return refusedReport([couldNotJudge(spec, error)]);
  }
}

/**
 * An answer given either as text or as data (a person's answer, a tool
 * call's arguments): text is read exactly (one JSON value and nothing else),
 * anything else as JSON data.
 */
export async function checkGiven<T, C>(spec: SpecLike<T, C>, given: unknown, options: CheckOptions<C> = {}): Promise<Verdict<T>> {
  return typeof given === "string" ? checkText(spec, given, "exact", options) : checkValue(spec, given, options);
}

/** `checkGiven`, synchronously (see checkValueSync for the one difference). */
export function checkGivenSync<T, C>(spec: SpecLike<T, C>, given: unknown, options: Pick<CheckOptions<C>, "limits" | "what" | "context"> = {}): Verdict<T> {
  return typeof given === "string" ? checkTextSync(spec, given, "exact", options) : checkValueSync(spec, given, options);
}

/** A given answer as text, for a record: as given when it was text, else the JSON data that was read (the only form known to be safe to write out). */
export function givenAsText(given: unknown, verdict: Verdict): string {
  if (typeof given === "string") return given;
  return verdict.parsed !== undefined ? JSON.stringify(verdict.parsed) : "(not JSON data)";
}

/**
 * `checkValue`, synchronously, for callers that cannot wait (a benchmark, a
 * pure function of a spec and a value). Identical verdicts, except that a
 * zod spec with asynchronous refinements cannot be judged here: such a value
 * is invalid, with a message pointing to `checkValue`.
 *
 * @example
 * ```ts
 * import { checkValueSync } from "langgraph-trustworthy-output";
 *
 * const verdict = checkValueSync("deployment-config", { service_name: "api", replicas: 8 });
 * console.log(verdict.valid, verdict.errors); // false, every problem with its field path
 * ```
 */
export function checkValueSync<T, C>(given: SpecLike<T, C>, value: unknown, options: Pick<CheckOptions<C>, "limits" | "context"> = {}): Verdict<T> {
  let spec: Spec<T, C> | undefined;
  try {
    spec = specOf(given);
    const data = readData(value, options.limits);
    if (!data.ok) return refusedReport([data.error]);
    return { ...judgeSync(spec, data.value, options.limits, options.context), parsed: data.value };
  } catch (error) {
    return refusedReport([couldNotJudge(spec, error)]);
  }
}

/** `checkText`, synchronously (see checkValueSync for the one difference). */
export function checkTextSync<T, C>(
  given: SpecLike<T, C>,
  text: unknown,
  read: "model" | "exact",
  options: Pick<CheckOptions<C>, "limits" | "what" | "context" | "repair"> = {},
): Verdict<T> {
  let spec: Spec<T, C> | undefined;
  try {
    spec = specOf(given);
    const parsed = readText(text, read, options.limits, options.what, options.repair);
    if (!parsed.ok) return refusedReport([parsed.error]);
    const data = freezeOwned(parsed.value);
    return {
      ...judgeSync(spec, data, options.limits, options.context),
      parsed: data,
      ...(parsed.repairs === undefined ? {} : { repairs: parsed.repairs }),
    };
  } catch (error) {
    return refusedReport([couldNotJudge(spec, error)]);
  }
}

/** Read text as a model's answer or as exactly one JSON value. */
export function readText(text: unknown, read: Reader, limits?: Partial<JsonLimits>, what?: string, repair?: boolean): ExtractResult {
  return read === "model" ? extractJson(text, limits, { repair }) : parseExactJson(text, limits, what);
}

/** A value given as data, read as JSON data; reading it may not throw (a Proxy's traps can): that is a refusal too. */
function readData(value: unknown, limits: Partial<CheckLimits> | undefined, what?: string): JsonDataResult {
  try {
    return toJsonData(value, limits, what);
  } catch (error) {
    return { ok: false, error: `${what ?? "the value"} could not be read as JSON data (reading it threw: ${describeThrown(error, 120)})` };
  }
}

async function judge<T, C>(spec: Spec<T, C>, value: unknown, options: CheckOptions<C>, fromText: boolean): Promise<Verdict<T>> {
  const { limits } = options;
  // The one value judged, returned and kept, frozen so that rules read it as it is: parsed text, as its reader
  // made it (every number exactly as written, nothing a checkpoint would not give back as written), or else
  // a bounded copy of the value as a checkpoint keeps it.
  let data: unknown;
  if (fromText) data = freezeOwned(value);
  else {
    const copy = readData(value, limits, options.what);
    if (!copy.ok) return refusedReport([copy.error]);
    data = copy.value;
  }
  let structure: Judgement;
  try {
    structure = judgeSchemaAndRules(spec, data, limits, options.context);
  } catch (error) {
    return { ...refusedReport([couldNotJudge(spec, error)]), parsed: data };
  }
  const deadline = options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  // Asynchronous rules, and a zod spec's parse (a refinement may return a Promise without being declared
  // async; awaited here, its rejection is observed and judged), all settled under one deadline.
  const waits: Array<Promise<unknown>> = structure.pending.map((rule) => rule.outcome);
  const zodSchema = spec.zod;
  if (zodSchema !== undefined) waits.push(Promise.resolve().then(() => zodSchema.safeParseAsync(readOnlyCopy(data))));
  // Another library's validate, on a copy of its own (ArkType's morphs write to the value they are given; the value
  // kept is never the one handed over): it may return a Promise, awaited under the same deadline.
  const standardSchema = spec.standard;
  if (standardSchema !== undefined) waits.push(Promise.resolve().then(() => standardSchema["~standard"].validate(structuredClone(data))));
  const settled = await allWithDeadline(waits, deadline);
  structure.pending.forEach((rule, i) => settleRule(structure, rule, settled[i]));
  let zod: ZodOutcome | undefined;
  if (zodSchema !== undefined) {
    const outcome = settled[structure.pending.length];
    zod =
      "failed" in outcome
        ? { failed: outcome.failed.replace(/^it did not finish/, "its asynchronous refinements did not finish") }
        : (outcome.value as ZodOutcome);
  }
  let standard: StandardOutcome | undefined;
  if (standardSchema !== undefined) {
    const outcome = settled[settled.length - 1];
    standard = "failed" in outcome ? { failed: outcome.failed.replace(/^it did not finish/, "its validate did not finish") } : standardOutcome(outcome.value);
  }
  return { ...verdictOf<T>(spec, structure, zod, data, limits, standard), parsed: data };
}

function judgeSync<T, C>(spec: Spec<T, C>, data: unknown, limits?: Partial<CheckLimits>, context?: C): Verdict<T> {
  let structure: Judgement;
  try {
    structure = judgeSchemaAndRules(spec, data, limits, context);
  } catch (error) {
    return refusedReport([couldNotJudge(spec, error)]);
  }
  for (const rule of structure.pending) {
    settleRule(structure, rule, {
      failed: "it is asynchronous, and only the asynchronous check step (checkValue, checkText, and every graph) can wait for it",
    });
  }
  let zod: ZodOutcome | undefined;
  if (spec.zod !== undefined) {
    if (spec.zodAsync)
      zod = { failed: "it has asynchronous refinements, which only the asynchronous check step (checkValue, checkText, and every graph) can run" };
    else {
      try {
        zod = runZodSync(spec.zod, readOnlyCopy(data));
      } catch (error) {
        zod = { failed: describeThrown(error, 160) };
      }
    }
  }
  let standard: StandardOutcome | undefined;
  if (spec.standard !== undefined) {
    try {
      standard = runStandardSync(spec.standard, structuredClone(data));
    } catch (error) {
      standard = { failed: describeThrown(error, 160) };
    }
  }
  return verdictOf<T>(spec, structure, zod, data, limits, standard);
}

/** The spec a check was given: a Spec as it is, anything else (a zod schema, a built-in name, inline JSON) resolved as resolveSpec does. */
function specOf<T, C>(given: SpecLike<T, C>): Spec<T, C> {
  return resolveSpec(given as SpecRef) as Spec<T, C>;
}

function couldNotJudge(spec: Spec | undefined, error: unknown): string {
  if (spec === undefined) return `the spec given could not be used (${describeThrown(error, 300)}); the value is not accepted`;
  const reason = error instanceof RangeError ? "it is too large or too deeply nested for the validator" : describeThrown(error, 160);
  return `the spec ${JSON.stringify(spec.name)} could not judge the value (${reason}); the value is not accepted`;
}

/**
 * Promises settled under one deadline for all of them (N slow rules take the deadline once, not N
 * times): a rejection or a timeout is a failure to judge, never a pass. Every promise is observed,
 * so none is left to reject unobserved.
 */
async function allWithDeadline(promises: ReadonlyArray<Promise<unknown>>, ms: number): Promise<Settled[]> {
  const settled: Array<Settled | undefined> = new Array(promises.length);
  if (promises.length === 0) return [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  const all = Promise.all(
    promises.map((promise, i) =>
      promise.then(
        (value) => void (settled[i] = { value }),
        (error: unknown) => void (settled[i] = { failed: `it failed: ${describeThrown(error, 160)}` }),
      ),
    ),
  );
  try {
    await Promise.race([all, deadline]);
  } finally {
    clearTimeout(timer);
  }
  return Array.from(settled, (outcome) => outcome ?? { failed: `it did not finish within ${ms} ms` });
}
