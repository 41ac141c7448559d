/**
 * How many of a JSONSchemaBench folder's schemas go to OpenAI with `strict: true`: each schema defined as a
 * run-time spec (the ones the package refuses are not counted), then asked for in json_schema mode as the
 * package builds that request (src/validation/output-mode.ts), beside the rule used before the strict form
 * (strict only when the schema already fit strict mode as written). Used by the sample's test and by the
 * corpus benchmark.
 */
import { MODEL_PROVIDERS, type ModelProvider } from "../src/providers/index.js";
import { jsonSchemaRequest } from "../src/validation/output-mode.js";
import { corpusFiles, corpusSource, defineIn, readCorpusEntry } from "./conformance.js";

export interface StrictShare {
  /** Schemas accepted as run-time specs. */
  accepted: number;
  /** Of those, sent strict by the rule before the strict form. */
  before: number;
  /** Of those, sent strict now. */
  after: number;
  bySource: Array<{ source: string; accepted: number; before: number; after: number }>;
  /** Why the others were not strict, each reason with its count (names and numbers of the schema left out). */
  notStrict: Record<string, number>;
  /**
   * Per provider, what its "auto" request sends: how many schemas go in a mode where the provider holds the answer to the
   * schema while it decodes (strict, or constrained decoding), before this package's strict forms and preflights and now,
   * and how many requests the preflight saves (a strict request past a documented limit, refused with a 400 before);
   * and how many go whole: enforced with no keyword that constrains an answer left out.
   */
  providers: Record<ModelProvider, { before: number; after: number; saved: number; whole: number }>;
}

/**
 * Keywords that constrain an answer (the validation and applicator keywords of JSON Schema's drafts, `format`
 * included, which the validator asserts): a request that leaves none of them out is "whole". Annotations
 * (`default`, `examples`, `$comment`, …) and keywords JSON Schema does not define leave no answer out.
 */
const CONSTRAINING = new Set(
  (
    "type enum const multipleOf maximum exclusiveMaximum minimum exclusiveMinimum maxLength minLength pattern format " +
    "maxItems minItems uniqueItems maxContains minContains contains items prefixItems additionalItems unevaluatedItems " +
    "maxProperties minProperties required dependentRequired dependencies properties patternProperties additionalProperties " +
    "propertyNames unevaluatedProperties dependentSchemas allOf anyOf oneOf not if then else $ref $dynamicRef $recursiveRef $defs definitions"
  ).split(" "),
);

/** Whether a request's dropped list leaves out nothing that constrains an answer (a list cut short counts as leaving something out). */
function nothingConstrainingDropped(dropped: readonly string[] | undefined): boolean {
  return (dropped ?? []).every((entry) => !entry.startsWith("…") && !CONSTRAINING.has(entry.slice(entry.lastIndexOf(": ") + 2)));
}

/** A reason for not sending strict that is a documented limit (the provider would have refused the request with a 400). */
const PAST_A_LIMIT = /strict limit|does not take recursive/;

/**
 * What "auto" sends a provider for a spec: whether the provider enforces the schema (before and now) and whether the
 * preflight kept a refused request from being sent. Before: OpenAI strict only for a schema that fit as written;
 * Anthropic's forced tool never strict; Ollama's `format` and Gemini's `responseSchema` constrain decoding to the
 * schema as sent, then as now.
 */
function enforced(
  provider: ModelProvider,
  spec: Parameters<typeof jsonSchemaRequest>[0],
  fitBefore: boolean,
): { before: boolean; after: boolean; saved: boolean; whole: boolean } {
  const row = MODEL_PROVIDERS[provider];
  const request = { name: "output", description: spec.description, schema: spec.schema };
  if (row.auto === "tool") {
    const tool = row.tool?.(request);
    const after = tool?.strict === true;
    return {
      before: false,
      after,
      saved: tool?.notStrict !== undefined && PAST_A_LIMIT.test(tool.notStrict),
      whole: after && nothingConstrainingDropped(tool?.dropped),
    };
  }
  const sent = row.modes.json_schema!(request);
  const whole = sent.preflight === undefined && nothingConstrainingDropped(sent.dropped);
  if (row.strictLimits === undefined) return { before: true, after: sent.preflight === undefined, saved: false, whole };
  const reason = sent.notStrict ?? sent.preflight;
  return { before: fitBefore, after: sent.strict === true, saved: reason !== undefined && PAST_A_LIMIT.test(reason), whole: whole && sent.strict === true };
}

/** Measure every `every`-th schema of `dir`. */
export function strictShare(dir: string, every = 1): StrictShare {
  const providers = Object.fromEntries(Object.keys(MODEL_PROVIDERS).map((p) => [p, { before: 0, after: 0, saved: 0, whole: 0 }])) as StrictShare["providers"];
  const share: StrictShare = { accepted: 0, before: 0, after: 0, bySource: [], notStrict: {}, providers };
  const sources = new Map<string, StrictShare["bySource"][number]>();
  for (const file of corpusFiles(dir).filter((_, i) => i % every === 0)) {
    const entry = readCorpusEntry(dir, file);
    let spec;
    try {
      spec = defineIn("run-time", entry.schema);
    } catch {
      continue;
    }
    const source = sources.get(entry.source) ?? { source: corpusSource(file), accepted: 0, before: 0, after: 0 };
    sources.set(entry.source, source);
    const { $schema: _ignored, ...schema } = spec.schema;
    const before = fitAsWritten(schema) ? 1 : 0;
    const request = jsonSchemaRequest(spec);
    const after = request.strict === true ? 1 : 0;
    share.accepted++;
    source.accepted++;
    for (const provider of Object.keys(MODEL_PROVIDERS) as ModelProvider[]) {
      const sent = enforced(provider, spec, before === 1);
      providers[provider].before += sent.before ? 1 : 0;
      providers[provider].after += sent.after ? 1 : 0;
      providers[provider].saved += sent.saved ? 1 : 0;
      providers[provider].whole += sent.whole ? 1 : 0;
    }
    share.before += before;
    source.before += before;
    share.after += after;
    source.after += after;
    if (request.notStrict !== undefined) {
      const reason = request.notStrict
        .replace(/"[^"]*"/g, '"…"')
        .replace(/\/\S*/g, "/…")
        .replace(/\d[\d,]*/g, "N");
      share.notStrict[reason] = (share.notStrict[reason] ?? 0) + 1;
    }
  }
  share.bySource = [...sources.values()].sort((a, b) => a.source.localeCompare(b.source));
  return share;
}

/** The keywords the rule before the strict form let through. */
const KEYWORDS_BEFORE = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "description",
  "title",
  "anyOf",
  "$defs",
  "definitions",
  "$ref",
  "$schema",
]);

/** The rule before the strict form: strict only when the schema fit as written (known keywords, every object closed with all its fields required). */
function fitAsWritten(schema: unknown): boolean {
  if (schema === null || typeof schema !== "object") return typeof schema !== "boolean";
  if (Array.isArray(schema)) return schema.every(fitAsWritten);
  const s = schema as Record<string, unknown>;
  for (const key of Object.keys(s)) if (!KEYWORDS_BEFORE.has(key)) return false;
  if (s.type === "object" || s.properties !== undefined) {
    const names = Object.keys((s.properties as object | undefined) ?? {});
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    if (s.additionalProperties !== false || !names.every((n) => required.has(n))) return false;
  }
  for (const key of ["properties", "$defs", "definitions"]) {
    const map = s[key];
    if (map && typeof map === "object" && !Object.values(map).every(fitAsWritten)) return false;
  }
  return ["items", "anyOf"].every((key) => s[key] === undefined || fitAsWritten(s[key]));
}
