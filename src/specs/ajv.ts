/**
 * How a spec's JSON Schema becomes a validator. Every spec is compiled in an
 * ajv instance of its own, so the compiled code (and anything the schema
 * registered, such as an `$id`) is freed with the spec. The dialect follows
 * the schema's `$schema` (draft-07 when absent; draft-04, draft-06, 2019-09,
 * 2020-12); any other `$schema` is refused. Each dialect keeps its own
 * meaning: up to draft-07 a `$ref` replaces the keywords beside it, draft-04
 * names a schema with `id` and makes `exclusiveMaximum` a boolean, and a
 * keyword a dialect does not define yet is ignored there. Built-in specs are
 * trusted code and use JavaScript's RegExp; specs supplied at run time are
 * not, so their `pattern`s run on RE2 (linear time), translated to keep
 * ECMA-262's meaning (regex.ts), and a pattern RE2 cannot run is refused.
 */
import { Ajv, type Options, type ValidateFunction } from "ajv";
import Ajv2019Module from "ajv/dist/2019.js";
import Ajv2020Module from "ajv/dist/2020.js";
import draft06MetaSchema from "ajv/dist/refs/json-schema-draft-06.json" with { type: "json" };
import AjvDraft04Module from "ajv-draft-04";
import { RE2JS } from "re2js";
import { SpecError } from "../errors.js";
import { dialectOf, refReplacesSiblings, withCanonicalSchemaUri, type Dialect } from "./dialect.js";
import { correctKeywords, readByAjvAlone, registrable, schemaForAjv } from "./ajv-gaps.js";
import { addStandardFormats, refuseUnjudgedFormats, unknownFormatsOf } from "./formats.js";
import { type IgnoredKeyword, unknownKeywords } from "./keywords.js";
import { linearOnBacktracking, NeedsBacktracking, re2Pattern } from "./regex.js";

export { dialectOf, refReplacesSiblings, type Dialect } from "./dialect.js";

// ajv's dialect builds are CommonJS; under NodeNext their default export is the module object.
const cjs = <T>(module: unknown): T => ((module as { default?: unknown }).default ?? module) as T;
type AjvClass = new (options: Options) => Ajv;
const Ajv2019 = cjs<AjvClass>(Ajv2019Module);
const Ajv2020 = cjs<AjvClass>(Ajv2020Module);
const AjvDraft04 = cjs<AjvClass>(AjvDraft04Module);

// ajv-draft-04 is ajv's own class for draft-04; draft-06 is draft-07's class with draft-06's meta-schema.
const CLASSES: Record<Dialect, AjvClass> = {
  "draft-04": AjvDraft04,
  "draft-06": Ajv as unknown as AjvClass,
  "draft-07": Ajv as unknown as AjvClass,
  "2019-09": Ajv2019,
  "2020-12": Ajv2020,
};

/** Keywords the dialect's ajv class knows but the dialect does not define yet (they came later): ignored there, as unknown keywords are. */
const LATER_KEYWORDS: Partial<Record<Dialect, string[]>> = {
  "draft-04": ["const", "contains", "propertyNames", "if", "then", "else"],
  "draft-06": ["if", "then", "else"],
};

/** An ajv instance of the dialect's class, which knows the dialect's meta-schema. */
function newAjv(dialect: Dialect, options: Options): Ajv {
  const ajv = new CLASSES[dialect](options);
  // With $data on, the meta-schema must allow {"$data": …} where a keyword's value goes, as ajv's own dialects do.
  if (dialect === "draft-06") ajv.addMetaSchema(ajv.$dataMetaSchema(draft06MetaSchema, ["/properties"]));
  return ajv;
}

/**
 * Characters of an answer that patterns of run-time specs may read in one
 * validation. RE2 runs in linear time, but slowly (about a microsecond a
 * character on a busy core), so the total is bounded too: past it, the
 * pattern check throws PatternBudgetSpent. It never answers "no match", which
 * under `not`, `if` or `propertyNames` would turn into a pass; the check
 * step makes the verdict invalid and says why.
 */
export const PATTERN_CHARS_PER_VALIDATION = 250_000;
/**
 * Steps every pattern that runs on RE2 may take in one validation, in any spec: each character read costs
 * the pattern's weight (regex.ts: the positions of its program, which RE2 may all follow at once), so
 * `[ \t]{1000}x` reads at most 5,000 characters where `^[a-z]+$` reads over a million. Under half a second
 * at the slowest step measured (about 90 ns, every position live); past it, PatternBudgetSpent, as for the
 * characters.
 */
export const PATTERN_STEPS_PER_VALIDATION = 5_000_000;
export const patternBudget = { used: 0, steps: 0 };

/** Thrown by a pattern check once the validation's pattern budget is spent; its message says which bound. */
export class PatternBudgetSpent extends Error {
  override readonly name = "PatternBudgetSpent";
}

type PatternEngine = { test: (s: string) => boolean; toString: () => string };

/**
 * A pattern compiled for RE2, whose tests count against the validation's budget: steps always, and
 * characters for a run-time spec. ajv shares compiled patterns across schemas keyed by `toString()`,
 * so each needs its own key (as a RegExp's "/source/flags" is).
 */
function onRe2(pattern: { source: string; weight: number }, key: string, countChars: boolean): PatternEngine {
  const compiled = RE2JS.compile(pattern.source);
  const weight = Math.max(1, pattern.weight);
  const test = (s: string) => {
    patternBudget.steps += s.length * weight;
    if (countChars) patternBudget.used += s.length;
    if (patternBudget.used > PATTERN_CHARS_PER_VALIDATION)
      throw new PatternBudgetSpent(`the value's strings hold more than ${PATTERN_CHARS_PER_VALIDATION} characters for the spec's patterns to read`);
    if (patternBudget.steps > PATTERN_STEPS_PER_VALIDATION)
      throw new PatternBudgetSpent(
        `the spec's patterns would take more than ${PATTERN_STEPS_PER_VALIDATION} steps on the value's strings (a step per character read and position of a pattern: one with a count of 1,000 takes 1,000 a character)`,
      );
    return compiled.matcher(s).find();
  };
  return { test, toString: () => key };
}

/**
 * ajv's regExp hook of run-time specs: RE2, so no pattern can backtrack for minutes, after translating the
 * pattern so RE2 gives it the meaning ECMA-262 does.
 */
function re2Engine(pattern: string, flags: string): PatternEngine {
  return onRe2(re2Pattern(pattern), `re2:/${pattern}/${flags}`, true);
}
re2Engine.code = 'require("re2js").RE2JS';

/**
 * The regExp hook of code-defined specs: RE2 too wherever RE2 can give a pattern its ECMA-262 meaning, so a
 * pattern with nested quantifiers (`^(?:[a-z]+-?)+[a-z]$`) cannot backtrack for minutes on a model's answer;
 * a pattern that needs backtracking (lookaround, backreferences) runs on JavaScript's RegExp, as written. A
 * code-defined spec is the developer's own, so only RE2's steps are counted (not the characters): RE2's time
 * grows linearly with the text, times the pattern's weight. A pattern whose shape and weight keep RegExp
 * within a bound on any answer (`^[a-z][a-z0-9-]*$`: see linearOnBacktracking) runs on RegExp, several times
 * faster per call than RE2's matcher. One RE2 cannot hold (a count over 1,000 that RegExp cannot run within
 * that bound either, as `\s{5000}x`) is refused with the spec.
 */
function linearWhereExpressible(pattern: string, flags: string): PatternEngine {
  if (linearOnBacktracking(pattern, flags)) return new RegExp(pattern, flags);
  let translated: { source: string; weight: number };
  try {
    translated = re2Pattern(pattern);
  } catch (error) {
    if (!(error instanceof NeedsBacktracking)) throw error;
    return new RegExp(pattern, flags);
  }
  return onRe2(translated, `re2-code:/${pattern}/${flags}`, false);
}
linearWhereExpressible.code = 'require("re2js").RE2JS';

const baseOptions: Options = {
  allErrors: true,
  $data: true,
  verbose: true, // errors carry the offending value and the keyword's schema, for exact messages
  ownProperties: true, // `required` and `properties` see the value's own fields, never Object.prototype's
  strict: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
  allowMatchingProperties: true, // a field named in "properties" that a "patternProperties" key also matches meets both, as the standard says
  logger: false,
};

/** One instance per dialect that only checks schemas against the meta-schema (compiled once), never compiles a spec. */
const checkers = new Map<Dialect, Ajv>();

function checker(dialect: Dialect): Ajv {
  let ajv = checkers.get(dialect);
  if (ajv === undefined) {
    ajv = newAjv(dialect, { ...baseOptions, allErrors: true });
    checkers.set(dialect, ajv);
  }
  return ajv;
}

/** Check a schema against its dialect's meta-schema; throws when it does not conform. */
export function checkSchema(schema: Record<string, unknown>): void {
  const dialect = dialectOf(schema);
  const meta = checker(dialect);
  if (!meta.validateSchema(withCanonicalSchemaUri(schema, dialect))) {
    throw new Error(`the schema does not conform to JSON Schema ${dialect}: ${meta.errorsText(meta.errors, { dataVar: "schema" })}`);
  }
}

/**
 * Compile a checked schema in an ajv instance of its own: the verdict (stops
 * at the first error, so its cost is that of reading the answer once) or the
 * explanation (every error, with the offending values, for the messages).
 */
export function compileSchema(
  schema: Record<string, unknown>,
  options: { untrusted: boolean; allErrors: boolean; maxCompiledChars?: number; onCompiled?: (chars: number) => void },
): ValidateFunction {
  const dialect = dialectOf(schema);
  // The size of the generated code bounds the time and memory compiling takes: counted per function as ajv makes it, stopped past the bound.
  let compiledChars = 0;
  const max = options.maxCompiledChars ?? Number.POSITIVE_INFINITY;
  const measure = (code: string) => {
    compiledChars += code.length;
    if (compiledChars > max) throw new CompiledTooLarge(max);
    return code;
  };
  const ajv = newAjv(dialect, {
    ...baseOptions,
    allErrors: options.allErrors,
    verbose: true,
    validateSchema: false,
    // ajv's option for the standard's meaning of "$ref" up to draft-07 (by default it applies the siblings too).
    ignoreKeywordsWithRef: refReplacesSiblings(dialect),
    code: { process: measure, regExp: options.untrusted ? re2Engine : linearWhereExpressible },
  });
  addStandardFormats(ajv, dialect); // formats (and draft-07's content keywords) judged as the standard says (formats.ts)
  for (const name of new Set(unknownFormatsOf(schema).map((i) => i.format!))) ajv.addFormat(name, true); // an unknown format is an annotation
  replaceUniqueItems(ajv);
  correctKeywords(ajv, dialect, schema);
  for (const keyword of LATER_KEYWORDS[dialect] ?? []) ajv.removeKeyword(keyword);
  // Unknown keywords are annotations (keywords.ts): ajv is told to ignore them, or they are removed (ajv-gaps.ts).
  for (const keyword of new Set(ignoredKeywordsOf(schema).flatMap((i) => (i.format === undefined ? [i.keyword] : [])))) {
    if (registrable(keyword) && !readByAjvAlone(keyword, dialect)) ajv.addKeyword({ keyword });
  }
  // Where ajv would misjudge the schema, it compiles a rewrite of it or the spec is refused (ajv-gaps.ts).
  const compiled = withCanonicalSchemaUri(schemaForAjv(schema, dialect), dialect);
  refuseUnjudgedFormats(schema, dialect);
  const validate = ajv.compile(compiled);
  options.onCompiled?.(compiledChars);
  return validate;
}

/** Thrown while compiling once the generated code passes its bound (the caller names the limit and how to raise it). */
export class CompiledTooLarge extends Error {
  override readonly name = "CompiledTooLarge";
  constructor(readonly limit: number) {
    super(`the compiled validator would be over ${limit} characters of code`);
  }
}

const ignored = new WeakMap<Record<string, unknown>, readonly IgnoredKeyword[]>();

/**
 * The keywords of a schema its dialect does not define, which validation
 * ignores (as the standard says), each with where it is. Throws SpecError for
 * a likely misspelling of a validating keyword or a constraint-like one.
 */
export function ignoredKeywordsOf(schema: Record<string, unknown>): readonly IgnoredKeyword[] {
  let found = ignored.get(schema);
  if (found === undefined) {
    const dialect = dialectOf(schema);
    found = Object.freeze([...unknownKeywords(schema, (keyword) => defines(dialect, keyword)), ...unknownFormatsOf(schema)]);
    ignored.set(schema, found);
  }
  return found;
}

/** Whether the dialect defines a keyword: its ajv class knows it, and it is neither one ajv alone reads nor one that came later. */
function defines(dialect: Dialect, keyword: string): boolean {
  return Object.hasOwn(checker(dialect).RULES.keywords, keyword) && !readByAjvAlone(keyword, dialect) && !(LATER_KEYWORDS[dialect] ?? []).includes(keyword);
}

/**
 * `uniqueItems`, checked in linear time by a canonical key per item. ajv's own
 * check compares every pair of items when they are objects or untyped (minutes
 * on a long answer), and on scalar items keys a plain object by the item, which
 * misses duplicates of "__proto__".
 */
function replaceUniqueItems(ajv: Ajv): void {
  ajv.removeKeyword("uniqueItems");
  const validate = function uniqueItems(unique: unknown, data: unknown[]): boolean {
    if (unique !== true) return true;
    const seen = new Map<string, number>();
    for (let i = 0; i < data.length; i++) {
      const key = canonicalKey(data[i]);
      const j = seen.get(key);
      if (j !== undefined) {
        validate.errors = [{ keyword: "uniqueItems", params: { i, j }, message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)` }];
        return false;
      }
      seen.set(key, i);
    }
    return true;
  } as ((unique: unknown, data: unknown[]) => boolean) & { errors?: Array<Record<string, unknown>> };
  ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", $data: true, errors: true, validate } as never);
}

/** The same key for JSON values ajv deems equal: object keys in sorted order. */
function canonicalKey(value: unknown): string {
  if (value === null || typeof value !== "object") return typeof value === "string" ? `s${value}` : `v${JSON.stringify(value)}`;
  if (Array.isArray(value)) return `[${value.map(canonicalKey).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalKey((value as Record<string, unknown>)[k])}`).join(",")}}`;
}
