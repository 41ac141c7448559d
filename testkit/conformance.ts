/**
 * Real-world conformance: a JSONSchemaBench schema (github.com/guidance-ai/jsonschemabench,
 * folder maskbench/data) defined as a code-defined spec and as a run-time spec, its instances
 * (the corpus's own, values drawn for the schema, and mutations of the valid ones) judged by the
 * package's check step and by a second, spec-compliant validator (testkit/reference-validator.ts).
 * Used by the conformance test on the vendored sample and by the whole-corpus benchmark.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SpecError } from "../src/errors.js";
import { checkValue } from "../src/specs/check.js";
import type { RuntimeSpecLimits } from "../src/specs/limits.js";
import { resolveSpec } from "../src/specs/registry.js";
import { defineSpec, type Spec } from "../src/specs/spec.js";
import { sampleValue } from "../src/simulated/sample.js";
import { seededRandom } from "./random.js";
import { referenceValidator } from "./reference-validator.js";

export interface CorpusEntry {
  /** The file's name, e.g. "Kubernetes---job.json". */
  file: string;
  /** The corpus's source (its split), e.g. "Kubernetes", "BFCL_simple". */
  source: string;
  schema: unknown;
  /** The corpus's own instances, with its labels. */
  tests: Array<{ data: unknown; valid: boolean }>;
}

/** A file's source: the name before "---", else the name without its trailing number ("BFCL_java_12.json" → "BFCL_java"). */
export function corpusSource(file: string): string {
  const at = file.indexOf("---");
  return at >= 0 ? file.slice(0, at) : file.replace(/(_\d+)?\.json$/, "");
}

/** The corpus files in a folder, sorted by name. */
export function corpusFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort();
}

export function readCorpusEntry(dir: string, file: string): CorpusEntry {
  const parsed = JSON.parse(readFileSync(join(dir, file), "utf8")) as { schema?: unknown; tests?: Array<{ data: unknown; valid: boolean }> };
  return { file, source: corpusSource(file), schema: parsed.schema, tests: Array.isArray(parsed.tests) ? parsed.tests : [] };
}

export type Mode = "code-defined" | "run-time";
/** What judgeEntry is doing: which validator, at which step. */
export type Phase = string;
export const MODES: readonly Mode[] = ["code-defined", "run-time"];

export interface Instance {
  data: unknown;
  origin: "corpus" | "sample" | "mutation";
  /** The corpus's label, for its own instances. */
  label?: boolean;
}

export interface Finding {
  file: string;
  mode: Mode;
  instance: string;
  detail: string;
}

export interface SchemaOutcome {
  file: string;
  source: string;
  /** Per mode: accepted, or the refusal's class and message. */
  modes: Record<Mode, { accepted: true } | { accepted: false; refusalClass: string; message: string }>;
  /** Instances judged by both the package (in some mode) and the reference. */
  judged: number;
  /** The reference could not compile the schema (nothing compared). */
  referenceFailed?: string;
  falseApprovals: Finding[];
  falseRefusals: Finding[];
  throws: Finding[];
  /** The package and the reference agree, and the corpus's label says otherwise. */
  labelDisagreements: number;
  /** Judging never came back within the watchdog's time (bench/corpus.ts): what was running then. */
  hung?: Phase;
}

const MAX_INSTANCES = 24;

/** The corpus's instances, values drawn for the schema, and mutations of the valid-looking ones (deduplicated, at most `max`). */
export function instancesOf(entry: CorpusEntry, seed: number, max = MAX_INSTANCES): Instance[] {
  const out: Instance[] = [];
  const seen = new Set<string>();
  const push = (data: unknown, origin: Instance["origin"], label?: boolean) => {
    if (data === undefined || out.length >= max) return;
    const key = JSON.stringify(data);
    if (key === undefined || seen.has(key)) return;
    seen.add(key);
    out.push({ data: JSON.parse(key), origin, label });
  };
  for (const t of entry.tests) push(t.data, "corpus", t.valid);
  const random = seededRandom(seed);
  const samples: unknown[] = [];
  for (let i = 0; i < 3; i++) {
    try {
      const value = sampleValue(entry.schema, random);
      samples.push(value);
      push(value, "sample");
    } catch {
      // a schema the sampler cannot follow
    }
  }
  const bases = [...entry.tests.filter((t) => t.valid).map((t) => t.data), ...samples];
  for (const base of bases) for (const mutated of mutationsOf(base, random)) push(mutated, "mutation");
  return out;
}

/** Small changes to a value, at its top level and one level down: the slips a model makes. */
export function mutationsOf(value: unknown, random: () => number): unknown[] {
  const out: unknown[] = [];
  const scalarSlips = (v: unknown): unknown[] => {
    if (typeof v === "number") return [v + 0.5, -v - 1, v * 10 + 7, 0.07, Number.isInteger(v) ? String(v) : Math.round(v * 100) / 100 + 0.001];
    if (typeof v === "string") return ["", `${v}${v}!`, v.toUpperCase() === v ? v.toLowerCase() : v.toUpperCase(), 12];
    if (typeof v === "boolean") return [!v, String(v)];
    if (v === null) return [0, "null"];
    return [];
  };
  out.push(...scalarSlips(value));
  if (Array.isArray(value)) {
    out.push([], [...value, ...value], value.slice(1), [...value, null]);
    value.slice(0, 2).forEach((item, i) => {
      for (const slip of [...scalarSlips(item), ...mutationsOf1(item)]) out.push(value.map((x, j) => (j === i ? slip : x)));
    });
  } else if (value !== null && typeof value === "object") {
    out.push(...mutationsOf1(value));
    const keys = Object.keys(value);
    for (const key of keys.slice(0, 4)) {
      const field = (value as Record<string, unknown>)[key];
      const slips = [...scalarSlips(field), ...(field !== null && typeof field === "object" ? mutationsOf1(field) : [])];
      if (slips.length > 0) out.push({ ...value, [key]: slips[Math.floor(random() * slips.length)] });
    }
  }
  return out;
}

/** An object without each of its first fields, with an unknown field, with a field set to null; an array emptied. */
function mutationsOf1(value: unknown): unknown[] {
  if (Array.isArray(value)) return [[], [...value, ...value.slice(0, 1)]];
  if (value === null || typeof value !== "object") return [];
  const keys = Object.keys(value);
  const out: unknown[] = [{ ...value, unexpected_field: "x" }, {}];
  for (const key of keys.slice(0, 3)) {
    const { [key]: _dropped, ...rest } = value as Record<string, unknown>;
    out.push(rest, { ...value, [key]: null });
  }
  return out;
}

/** Define the schema as a spec in the mode, through the package's public API for it. */
export function defineIn(mode: Mode, schema: unknown, limits?: Partial<RuntimeSpecLimits>): Spec {
  if (mode === "code-defined") return defineSpec({ name: "corpus", schema: schema as Record<string, unknown> }, limits ? { limits } : {});
  // A run-time spec arrives as JSON text (a request, a file, Studio).
  return resolveSpec(JSON.stringify({ name: "corpus", schema }), limits ? { specLimits: limits } : undefined);
}

/** A refusal's class: what kind of thing was refused, without the schema's own names and numbers. */
export function refusalClass(message: string): string {
  const reason = message.replace(/^Spec "[^"]*" (is refused|is not a valid JSON Schema): /, "").replace(/^The inline spec /, "the inline spec ");
  for (const [name, pattern] of REFUSAL_CLASSES) if (pattern.test(reason)) return name;
  return `other: ${reason
    .replace(/"[^"]*"/g, '"…"')
    .replace(/#\/\S*/g, "#/…")
    .replace(/\d+/g, "N")
    .slice(0, 90)}`;
}

const REFUSAL_CLASSES: Array<[string, RegExp]> = [
  ["limit maxChars (size of the spec)", /over the limit maxChars/],
  ["limit maxCompiledChars (compiled validator size)", /over the limit maxCompiledChars/],
  ["limit maxDepth (nesting)", /the limit maxDepth/],
  ["limit maxPatternChars (one pattern's length)", /over the limit maxPatternChars/],
  ["limit maxApplicationsPerValue (subschemas per value)", /the limit maxApplicationsPerValue/],
  ["too intricate to bound (cost analysis)", /too intricate/],
  ["$ref cycle at one value", /cycle that never reaches/],
  ["unsupported $schema", /Unsupported "\$schema"|"\$schema" must be a string/],
  ["$async (no verdict)", /"\$async"/],
  [
    "$ref outside the spec (remote, anchor or unresolvable)",
    /can't resolve reference|only JSON pointers into the spec itself|points to nothing|no schema with key or ref/,
  ],
  ["$ref into an ignored keyword", /which is not a JSON Schema keyword, so the validator does not read/],
  ["likely misspelt keyword", /did you mean/],
  ["constraint-like custom keyword", /constraint it seems to state/],
  ["duplicate or reserved $id", /already exists|resolves to more than one schema/],
  ["format or content value not judged (idn-email, contentEncoding…)", /"format": .* is not supported|"contentEncoding"|"contentMediaType"/],
  ["pattern not ECMA-262, or not runnable on RE2 (lookaround, backreferences)", /regular expression|RE2|lookaround|backreference|Perl syntax/i],
  ["does not conform to its dialect's meta-schema", /does not conform to JSON Schema/],
  ["keyword ajv misjudges ($dynamicRef, $recursiveRef, unevaluatedItems with contains)", /\$dynamicRef|\$recursiveRef|unevaluatedItems/],
  ["ignored keyword ajv's strict mode refuses", /strict mode/],
];

/** What the package says of an instance in one mode: valid or not, or a throw. */
async function packageVerdict(spec: Spec, data: unknown): Promise<boolean | { threw: string }> {
  try {
    const verdict = await checkValue(spec, data);
    // The check step turns anything that did not run to completion into a refusal that says so: that is a throw too.
    const failed = verdict.errors.find((e) => /could not judge|could not be used|could not give a verdict/.test(e));
    if (failed !== undefined) return { threw: failed };
    return verdict.valid;
  } catch (error) {
    return { threw: String((error as Error)?.message ?? error) };
  }
}

/**
 * Define the entry's schema in both modes, judge its instances with the package (in each mode that
 * accepted it) and the reference validator, and say where they differ.
 */
export async function judgeEntry(
  entry: CorpusEntry,
  options: {
    seed?: number;
    limits?: Partial<RuntimeSpecLimits>;
    maxInstances?: number;
    /** Told which validator is about to run, so a watchdog can say which one never came back. */
    onPhase?: (phase: Phase, sofar: SchemaOutcome) => void;
  } = {},
): Promise<SchemaOutcome> {
  const outcome: SchemaOutcome = {
    file: entry.file,
    source: entry.source,
    modes: {} as SchemaOutcome["modes"],
    judged: 0,
    falseApprovals: [],
    falseRefusals: [],
    throws: [],
    labelDisagreements: 0,
  };
  const phase = (what: Phase) => options.onPhase?.(what, outcome);
  const specs: Array<[Mode, Spec]> = [];
  for (const mode of MODES) {
    try {
      phase(`the package defining the spec (${mode})`);
      specs.push([mode, defineIn(mode, entry.schema, options.limits)]);
      outcome.modes[mode] = { accepted: true };
    } catch (error) {
      if (!(error instanceof SpecError)) {
        outcome.throws.push({ file: entry.file, mode, instance: "(defining the spec)", detail: String((error as Error)?.stack ?? error).slice(0, 300) });
        outcome.modes[mode] = { accepted: false, refusalClass: "threw", message: String(error) };
      } else outcome.modes[mode] = { accepted: false, refusalClass: refusalClass(error.message), message: error.message };
    }
  }
  if (specs.length === 0) return outcome;
  let reference: Awaited<ReturnType<typeof referenceValidator>>;
  try {
    phase("the reference compiling the schema");
    reference = await referenceValidator(entry.schema as Record<string, unknown>);
  } catch (error) {
    outcome.referenceFailed = String((error as Error)?.message ?? error).slice(0, 200);
    return outcome;
  }
  try {
    for (const instance of instancesOf(entry, options.seed ?? 1, options.maxInstances)) {
      let expected: boolean;
      try {
        phase("the reference judging an instance");
        expected = reference.judge(instance.data);
      } catch {
        continue; // the reference could not judge this one
      }
      outcome.judged++;
      if (instance.label !== undefined && instance.label !== expected) outcome.labelDisagreements++;
      const text = JSON.stringify(instance.data).slice(0, 200);
      for (const [mode, spec] of specs) {
        phase(`the package judging an instance (${mode})`);
        const got = await packageVerdict(spec, instance.data);
        if (typeof got === "object") outcome.throws.push({ file: entry.file, mode, instance: text, detail: got.threw });
        else if (got && !expected)
          outcome.falseApprovals.push({ file: entry.file, mode, instance: text, detail: `${instance.origin}: the reference refuses it` });
        else if (!got && expected) {
          const verdict = await checkValue(spec, instance.data);
          outcome.falseRefusals.push({
            file: entry.file,
            mode,
            instance: text,
            detail: `${instance.origin}: ${verdict.errors.slice(0, 2).join("; ").slice(0, 200)}`,
          });
        }
      }
    }
  } finally {
    reference.release();
  }
  return outcome;
}
