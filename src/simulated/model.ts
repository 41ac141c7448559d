/**
 * The built-in simulated chat model: `LLM_MODEL=simulated` (or a run's model
 * name `simulated`), and the evaluation's model. It is not a language model: it
 * follows fixed, seeded rules (SIMULATION_RULES below), so what it shows is how
 * the graphs behave under those rules, not how a real LLM behaves. Its first
 * answer to a request is a built-in spec's example (or, for any other spec or
 * a tool, a value drawn from its JSON Schema: ./sample.ts) with seeded
 * defects; a retry fixes exactly the defects its feedback names.
 *
 * `simulatedModelSource({ seed })` is a ModelSource factory (src/models.ts)
 * that gives each role (generate, actor, evaluator, reflector, reviewer) a
 * model that plays it. The role can also be read from the prompt.
 */
import jsonPatch from "fast-json-patch";
import { PROMPT_HEADINGS } from "../feedback.js";
import { MODEL_PROVIDERS, DEFAULT_PROVIDER } from "../providers/index.js";
import { builtinSpecs } from "../specs/registry.js";
import { AIMessage, type BaseMessage, type ToolMessage } from "@langchain/core/messages";
import { seededRandom as random } from "./random.js";
import { leavesOf, sampleValue, schemaAt } from "./sample.js";
import { ScriptedChatModel, type BoundTool, type ScriptedCallOptions, type ScriptedReply } from "./scripted-model.js";

/** The variables that configure the default provider, as the fallback notice names them. */
const DEFAULT_PROVIDER_VARIABLES = [...MODEL_PROVIDERS[DEFAULT_PROVIDER].env.apiKey, MODEL_PROVIDERS[DEFAULT_PROVIDER].env.baseUrl].join(" or ");

/** How many constraints a request's first answer typically breaks. */
export type Difficulty = "easy" | "medium" | "hard";

/** A request the model knows in advance: its spec and difficulty (the evaluation suite's entries). */
interface SimulatedRequest {
  request: string;
  spec: string;
  difficulty: Difficulty;
}

// ---------------------------------------------------------------------------
// Defects: ways to break a spec's example, and what fixing them means

const DELETE = Symbol("delete");
type Patch = [path: string[], value: unknown][];

export interface Defect {
  id: string;
  /** What the defect is, in the words of a reviewer. */
  kind: "missing field" | "wrong type" | "out of range" | "pattern" | "enum" | "cross-field rule" | "unexpected field" | "format" | "duplicate items";
  /** The field as feedback names it, e.g. `resources.cpu_limit` or `headers["Content-Type"]`. */
  label: string;
  description: string;
  /** Fields the defect writes or a rule it breaks reads; two defects of one answer never share one. */
  touches: string[];
  /** How a feedback text names this defect. */
  mentions: RegExp[];
  broken: Patch;
  /** The corrected values (default: the example's values at the broken paths). */
  fixed?: Patch;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A field path named as the subject of a sentence ("x is …", "x has …", "x: …"), not inside another name. */
function named(label: string): RegExp {
  return new RegExp(`(?<![\\w.\\["])${escape(label)}(?=\\s+(?:is|has|does|contains|must)\\b|:)`);
}

/** A field path named anywhere a message reads its value (`x is …`, `x: …`, `x=…`): the fields a broken rule reads. */
function read(label: string): RegExp {
  return new RegExp(`(?<![\\w.\\["])${escape(label)}(?=\\s+(?:is|has|does|contains|must)\\b|:|=)`);
}

/** A field path as zod's readable errors name it (`✖ … → at resources.cpu_limit`), as LangChain checks a tool's arguments. */
function pointedAt(label: string): RegExp {
  return new RegExp(`→ at ${escape(label)}(?![\\w.\\[])`);
}

function defect(d: Omit<Defect, "mentions"> & { mentions?: RegExp[] }): Defect {
  return { ...d, mentions: d.mentions ?? [named(d.label), pointedAt(d.label)] };
}

const p = (dotted: string): string[] => dotted.split(".");

export const DEFECTS: Record<string, Defect[]> = {
  "deployment-config": [
    defect({
      id: "bad-service-name",
      kind: "pattern",
      label: "service_name",
      description: "must be lower-case letters, digits and dashes, starting with a letter",
      touches: ["service_name"],
      broken: [[p("service_name"), "Checkout_Service"]],
    }),
    defect({
      id: "replicas-string",
      kind: "wrong type",
      label: "replicas",
      description: "must be an integer, not a string",
      touches: ["replicas"],
      broken: [[p("replicas"), "8"]],
    }),
    defect({
      id: "replicas-need-cpu",
      kind: "cross-field rule",
      label: "resources.cpu_limit",
      description: "replicas > 5 requires cpu_limit >= 1.0",
      touches: ["replicas", "resources.cpu_limit"],
      broken: [
        [p("replicas"), 8],
        [p("resources.cpu_limit"), 0.5],
      ],
      fixed: [
        [p("replicas"), 8],
        [p("resources.cpu_limit"), 1.0],
      ],
    }),
    defect({
      id: "cpu-string",
      kind: "wrong type",
      label: "resources.cpu_limit",
      description: "must be a number, not a string",
      touches: ["resources.cpu_limit"],
      broken: [[p("resources.cpu_limit"), "1"]],
    }),
    defect({
      id: "memory-too-low",
      kind: "out of range",
      label: "resources.memory_limit_mb",
      description: "must be at least 128",
      touches: ["resources.memory_limit_mb"],
      broken: [[p("resources.memory_limit_mb"), 64]],
    }),
    defect({
      id: "missing-health-path",
      kind: "missing field",
      label: "health_check.path",
      description: "is required",
      touches: ["health_check.path"],
      broken: [[p("health_check.path"), DELETE]],
    }),
    defect({
      id: "timeout-not-below-interval",
      kind: "cross-field rule",
      label: "health_check.timeout_seconds",
      description: "must be less than health_check.interval_seconds",
      touches: ["health_check.timeout_seconds", "health_check.interval_seconds"],
      broken: [[p("health_check.timeout_seconds"), 30]],
      fixed: [[p("health_check.timeout_seconds"), 5]],
    }),
    defect({
      id: "interval-too-short",
      kind: "out of range",
      label: "health_check.interval_seconds",
      description: "must be at least 5",
      touches: ["health_check.interval_seconds", "health_check.timeout_seconds"],
      broken: [[p("health_check.interval_seconds"), 1]],
    }),
  ],
  "api-request": [
    defect({
      id: "method-lowercase",
      kind: "enum",
      label: "method",
      description: "must be an upper-case HTTP method",
      touches: ["method"],
      broken: [[p("method"), "post"]],
    }),
    defect({
      id: "http-url",
      kind: "pattern",
      label: "url",
      description: "must be an https:// URL",
      touches: ["url"],
      broken: [[p("url"), "http://api.example.com/v1/orders"]],
    }),
    defect({
      id: "missing-content-type",
      kind: "cross-field rule",
      label: 'headers["Content-Type"]',
      description: "a POST needs Content-Type: application/json",
      touches: ["method", "body", "headers.Content-Type"],
      broken: [[["headers", "Content-Type"], DELETE]],
    }),
    defect({
      id: "missing-idempotency-key",
      kind: "cross-field rule",
      label: 'headers["Idempotency-Key"]',
      description: "a retried POST needs an Idempotency-Key header",
      touches: ["method", "retries", "headers.Idempotency-Key"],
      broken: [[["headers", "Idempotency-Key"], DELETE]],
    }),
    defect({
      id: "retry-budget",
      kind: "cross-field rule",
      label: "timeout_ms",
      description: "timeout_ms * (retries + 1) must not exceed 120000",
      touches: ["timeout_ms", "retries"],
      broken: [[p("timeout_ms"), 60000]],
      fixed: [[p("timeout_ms"), 30000]],
    }),
    defect({
      id: "timeout-string",
      kind: "wrong type",
      label: "timeout_ms",
      description: "must be an integer, not a string",
      touches: ["timeout_ms"],
      broken: [[p("timeout_ms"), "5000"]],
    }),
    defect({
      id: "too-many-retries",
      kind: "out of range",
      label: "retries",
      description: "must be at most 5",
      touches: ["retries"],
      broken: [[p("retries"), 7]],
    }),
    defect({
      id: "null-body",
      kind: "cross-field rule",
      label: "body",
      description: "a POST needs an object body",
      touches: ["method", "body"],
      broken: [[p("body"), null]],
    }),
    defect({
      id: "extra-auth-token",
      kind: "unexpected field",
      label: "auth_token",
      description: "is not an allowed field",
      touches: ["auth_token"],
      broken: [[p("auth_token"), "secret"]],
      mentions: [/\bauth_token\b/],
    }),
  ],
  "db-query": [
    defect({
      id: "table-uppercase",
      kind: "pattern",
      label: "table",
      description: "must be a lower-case identifier",
      touches: ["table"],
      broken: [[p("table"), "Orders"]],
    }),
    defect({
      id: "order-by-not-selected",
      kind: "cross-field rule",
      label: "order_by.column",
      description: "must be one of the selected columns",
      touches: ["order_by.column", "columns"],
      broken: [[p("order_by.column"), "updated_at"]],
    }),
    defect({
      id: "limit-too-high",
      kind: "out of range",
      label: "limit",
      description: "must be at most 1000",
      touches: ["limit"],
      broken: [[p("limit"), 5000]],
    }),
    defect({
      id: "in-needs-list",
      kind: "cross-field rule",
      label: "filters[0].value",
      description: 'op "in" needs a list of values',
      touches: ["filters"],
      broken: [[["filters", "0", "value"], "paid"]],
    }),
    defect({
      id: "direction-uppercase",
      kind: "enum",
      label: "order_by.direction",
      description: 'must be "asc" or "desc"',
      touches: ["order_by.direction"],
      broken: [[p("order_by.direction"), "DESC"]],
    }),
    defect({
      id: "offset-string",
      kind: "wrong type",
      label: "offset",
      description: "must be an integer, not a string",
      touches: ["offset"],
      broken: [[p("offset"), "100"]],
    }),
    defect({
      id: "duplicate-columns",
      kind: "duplicate items",
      label: "columns",
      description: "must not repeat a column",
      touches: ["columns"],
      broken: [[p("columns"), ["id", "customer_id", "total", "created_at", "id"]]],
    }),
    defect({
      id: "pagination-window",
      kind: "cross-field rule",
      label: "limit + offset",
      description: "must be at most 10000",
      touches: ["limit", "offset"],
      broken: [[p("offset"), 9990]],
      mentions: [/limit \+ offset\b/],
    }),
    defect({
      id: "missing-order-by",
      kind: "cross-field rule",
      label: "order_by",
      description: "offset > 0 needs order_by",
      touches: ["order_by", "order_by.column", "order_by.direction", "offset"],
      broken: [[p("order_by"), DELETE]],
    }),
  ],
  "signup-form": [
    defect({
      id: "password-mismatch",
      kind: "cross-field rule",
      label: "confirm_password",
      description: "must equal password",
      touches: ["confirm_password", "password"],
      broken: [[p("confirm_password"), "correct-horse-battery!"]],
    }),
    defect({
      id: "country-lowercase",
      kind: "pattern",
      label: "country",
      description: "must be two upper-case letters",
      touches: ["country"],
      broken: [[p("country"), "gb"]],
    }),
    defect({
      id: "terms-not-accepted",
      kind: "enum",
      label: "accept_terms",
      description: "must be true",
      touches: ["accept_terms"],
      broken: [[p("accept_terms"), false]],
    }),
    defect({
      id: "minor-without-consent",
      kind: "cross-field rule",
      label: "parental_consent",
      description: "under 18 requires parental_consent = true",
      touches: ["age", "parental_consent"],
      broken: [[p("age"), 16]],
      fixed: [
        [p("age"), 16],
        [p("parental_consent"), true],
      ],
    }),
    defect({
      id: "short-password",
      kind: "out of range",
      label: "password",
      description: "must be at least 12 characters",
      touches: ["password", "confirm_password"],
      broken: [
        [p("password"), "hunter2"],
        [p("confirm_password"), "hunter2"],
      ],
    }),
    defect({
      id: "password-contains-email",
      kind: "cross-field rule",
      label: "password",
      description: "must not contain the e-mail's name",
      touches: ["password", "confirm_password", "email"],
      broken: [
        [p("password"), "ada-secret-pass-1"],
        [p("confirm_password"), "ada-secret-pass-1"],
      ],
    }),
    defect({
      id: "age-string",
      kind: "wrong type",
      label: "age",
      description: "must be an integer, not a string",
      touches: ["age"],
      broken: [[p("age"), "36"]],
    }),
    defect({
      id: "bad-email",
      kind: "format",
      label: "email",
      description: "must be a valid e-mail address",
      touches: ["email"],
      broken: [[p("email"), "ada.example.com"]],
    }),
    defect({
      id: "extra-username",
      kind: "unexpected field",
      label: "username",
      description: "is not an allowed field",
      touches: ["username"],
      broken: [[p("username"), "ada"]],
      mentions: [/\busername\b/],
    }),
  ],
};

/** How many defects a first answer has, by difficulty (seeded choice between the two). */
const DEFECTS_BY_DIFFICULTY: Record<Difficulty, [number, number]> = { easy: [0, 1], medium: [1, 2], hard: [3, 4] };

export const DEFAULT_MISS_RATE = 0.6;

export const SIMULATION_RULES = [
  "It is not a language model; it follows fixed rules with a seeded random generator, so a seed always gives the same numbers.",
  "As a generator, its first answer to a request is the spec's example with seeded defects: 0-1 for an easy request, 1-2 for a medium one, 3-4 for a hard one " +
    "(the suite marks each request; a request it does not list counts as medium), chosen from a per-spec catalogue (wrong type, missing field, out of range, pattern, enum, format, unexpected field, broken cross-field rule; " +
    "two defects of one answer never touch the same field).",
  "On a retry it fixes exactly the defects that its feedback names (a defect is named when the feedback mentions its field path as the subject of a sentence, " +
    "e.g. `resources.cpu_limit is 0.5; …` or `- resources.cpu_limit: …`, or as zod's errors point at it, `→ at resources.cpu_limit`), keeps the others, and never introduces new ones.",
  "As a reviewer (the self-review strategy) it misses each defect present in the answer with the miss rate (default 0.6) and names the others; " +
    'if it names none it replies "APPROVED".',
  "As a Reflexion evaluator it repeats the validator errors in its prompt and scores the response (max(1, 6 − errors)/10); with no errors it gives 9.5/10; " +
    'without a validator section it judges like the reviewer. It always ends with "Final score: N/10". As a reflector it repeats the evaluation\'s problem lines.',
  "Which spec a request is for: the suite's entry, else the spec the system prompt describes, else the request's own words (deploy → deployment-config, sign up or register → signup-form, " +
    "an HTTP method, a URL or an API request → api-request, a query, table, rows or columns → db-query). For a request none of these identify " +
    "it answers with a message saying so (not JSON), and as a reviewer or evaluator it says it cannot judge (Final score: 0/10).",
  "For a spec that is not built in, it answers from the JSON Schema in its prompt: the spec's example if it has one, else a value drawn from the schema with the seed " +
    "(types, bounds, enums, patterns, the standard formats), except that a number the request gives a field by name (with 8 replicas: a numeric field `replicas`) is taken when the field's type and bounds admit it; its first answer breaks 1-2 fields (a required field left out, or a value of the wrong type). " +
    'A retry fixes the named defects as above and draws again every other field its feedback names (a field a broken rule reads, e.g. `code is "X"; percent=50 requires …`).',
  "Given tools (bindTools), it calls each tool once, with arguments from the built-in spec the request names when its example has the tool's fields, else drawn from the tool's schema " +
    "(first answer with defects, as above); a call whose result is an error is made again with the named defects fixed, from the built-in spec that result says the arguments must match when it names one (a guard holds a tool to a spec its own schema does not show) (up to 3 failed calls of a tool in a turn, then it says the tool did not run); then it gives the structured answer " +
    '(a tool whose name starts with "extract-") with the arguments of the call that ran when they are for the same spec; with nothing left to call it replies with the last tool\'s result.',
  "Asked for corrections only (a retry whose prompt asks for a JSON Patch), it answers with the JSON Patch from its previous answer to the answer a whole retry would give, so it fixes exactly what that retry fixes. " +
    "At its bad-correction rate (default 0) the correction is a bad one, chosen with the seed: a `test` of a value the answer does not have (it does not apply), the first operation at a misspelt path (outside the answer), " +
    "or operations that break other fields and fix none (the answer gets worse).",
  "At its slip rate (default 0) a whole answer has one syntax slip, chosen with the seed: a trailing comma, a // comment after its opening brace, an unquoted or single-quoted first key, or a Python literal (True, False, None).",
  "Token usage is characters ÷ 4 for prompt and answer; there is no latency unless one is configured, so latency figures are the harness's own processing time.",
  'For escalation, two generators by model name: "large" is the generator above; "small" is the same except that it never fixes a broken cross-field rule, even when its feedback names it (it fixes the other defects named).',
];

/** What the simulated "small" model never fixes (SIMULATED_TIERS). */
export const SMALL_MODEL_NEVER_FIXES: readonly Defect["kind"][] = ["cross-field rule"];

// ---------------------------------------------------------------------------
// Seeded randomness

function hash(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const s = `${part}\u0000`;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  }
  return h >>> 0;
}

// ---------------------------------------------------------------------------
// Building answers

function getAt(value: unknown, path: string[]): { present: boolean; value?: unknown } {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return { present: false };
    current = (current as Record<string, unknown>)[key];
  }
  return { present: true, value: current };
}

function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let current: Record<string, unknown> = target;
  for (const key of path.slice(0, -1)) {
    if (current[key] === null || typeof current[key] !== "object") current[key] = {};
    current = current[key] as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (value === DELETE) delete current[last];
  else current[last] = structuredClone(value);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether an answer shows the defect: every broken value is there (a deleted field is absent). */
export function exhibits(defect: Defect, answer: unknown): boolean {
  return defect.broken.every(([path, value]) => {
    const found = getAt(answer, path);
    return value === DELETE ? !found.present : found.present && sameJson(found.value, value);
  });
}

function fixedPatch(defect: Defect, example: unknown): Patch {
  if (defect.fixed) return defect.fixed;
  return defect.broken.map(([path]) => {
    const found = getAt(example, path);
    return [path, found.present ? found.value : DELETE];
  });
}

/** The spec's example with the planned defects: those in `remaining` broken, the others corrected. */
export function buildAnswer(specName: string, planned: readonly Defect[], remaining: ReadonlySet<string>): Record<string, unknown> {
  return applyDefects(builtinSpecs.get(specName)?.example, planned, remaining);
}

/** A valid value with the planned defects: those in `remaining` broken, the others corrected. */
function applyDefects(base: unknown, planned: readonly Defect[], remaining: ReadonlySet<string>): Record<string, unknown> {
  const answer = structuredClone(base) as Record<string, unknown>;
  for (const d of planned) for (const [path, value] of remaining.has(d.id) ? d.broken : fixedPatch(d, base)) setAt(answer, path, value);
  return answer;
}

/**
 * Seeded defects for a value drawn from a schema (no catalogue knows it): a required field left out,
 * or a field of the wrong type, on distinct fields.
 */
function schemaDefects(base: unknown, schema: unknown, requestText: string, difficulty: Difficulty, seed: number, defects?: number): Defect[] {
  const r = random(hash(seed, "plan-schema", JSON.stringify(schema), requestText));
  const [low, high] = DEFECTS_BY_DIFFICULTY[difficulty];
  const drawn = r() < 0.5 ? low : high;
  const count = defects ?? drawn;
  const leaves = leavesOf(base, schema).filter((leaf) => leaf.value !== null);
  for (let i = leaves.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [leaves[i], leaves[j]] = [leaves[j], leaves[i]];
  }
  return leaves.slice(0, count).map((leaf): Defect => {
    const id = `${leaf.required && r() < 0.5 ? "missing" : "type"}:${leaf.label}`;
    if (id.startsWith("missing"))
      return defect({ id, kind: "missing field", label: leaf.label, description: "is required", touches: [leaf.label], broken: [[leaf.path, DELETE]] });
    const wrong = typeof leaf.value === "string" ? 42 : JSON.stringify(leaf.value);
    return defect({
      id,
      kind: "wrong type",
      label: leaf.label,
      description: `must be ${typeof leaf.value}`,
      touches: [leaf.label],
      broken: [[leaf.path, wrong]],
    });
  });
}

/** The defects of a request's first answer: seeded by (seed, request), their number by difficulty. */
export function planDefects(specName: string, requestText: string, difficulty: Difficulty, seed: number): Defect[] {
  const r = random(hash(seed, "plan", specName, requestText));
  const [low, high] = DEFECTS_BY_DIFFICULTY[difficulty];
  const count = r() < 0.5 ? low : high;
  const catalogue = [...(DEFECTS[specName] ?? [])];
  for (let i = catalogue.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [catalogue[i], catalogue[j]] = [catalogue[j], catalogue[i]];
  }
  const chosen: Defect[] = [];
  const touched = new Set<string>();
  for (const d of catalogue) {
    if (chosen.length >= count) break;
    if (d.touches.some((t) => touched.has(t))) continue;
    chosen.push(d);
    for (const t of d.touches) touched.add(t);
  }
  return chosen;
}

// ---------------------------------------------------------------------------
// Reading prompts

/** The text after `heading\n` up to the next blank line (or the end). */
function section(text: string, heading: string): { body: string; end: number } | undefined {
  const start = text.indexOf(`${heading}\n`);
  if (start < 0) return undefined;
  const from = start + heading.length + 1;
  const stop = text.indexOf("\n\n", from);
  const end = stop < 0 ? text.length : stop;
  return { body: text.slice(from, end), end };
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text.trim());
  } catch {
    return undefined;
  }
}

const bySpecDescription = new Map([...builtinSpecs.values()].map((s) => [s.description, s.name]));

/** The built-in spec a request's own words point to, first match in this order (SIMULATION_RULES says which words). */
const SPEC_WORDS: ReadonlyArray<[spec: string, words: RegExp]> = [
  ["deployment-config", /\bdeploy/i],
  ["signup-form", /\bsign[- ]?up\b|\bregist(?:er|ration)\b/i],
  ["api-request", /\b(?:GET|POST|PUT|PATCH|DELETE|HEAD)\b|\bhttps?:\/\/|\bapi[- ]request\b/i],
  ["db-query", /\b(?:quer(?:y|ies)|table|rows?|columns?)\b/i],
];

function specNamedBy(requestText: string): string | undefined {
  return SPEC_WORDS.find(([spec, words]) => builtinSpecs.has(spec) && words.test(requestText))?.[0];
}

const BUILTIN_NAMES = [...builtinSpecs.keys()].join(", ");

/** The reply to a request the rules give no answer for: says what the model is and why, and is not JSON. */
function cannotAnswer(why: string): string {
  return (
    `This reply comes from the built-in simulated model (model name "simulated"), not from a language model. It only writes JSON for a spec: a built-in spec's example ` +
    `(${BUILTIN_NAMES}) or a value drawn from the spec's JSON Schema, with seeded defects, and ${why}. For a real answer, configure a model provider (${DEFAULT_PROVIDER_VARIABLES}) and a model name.`
  );
}

interface RequestContext {
  /** The built-in spec the request is for, when it is one. */
  specName: string | undefined;
  /** The JSON Schema answers are drawn from, when the spec is not built in. */
  schema?: unknown;
  /** The valid value answers start from (a spec's example, or a value drawn from its schema); undefined when the rules have no answer. */
  base: unknown;
  /** Why there is no answer, for the reply that says so. */
  unknownBecause?: string;
  requestText: string;
  planned: Defect[];
}

export type SimulatedRole = "generator" | "reviewer" | "evaluator" | "reflector";

export interface SimulatedModelOptions {
  seed: number;
  /** Probability that the reviewer misses a defect (self-review strategy). */
  missRate?: number;
  /** Requests the model knows (spec and difficulty), e.g. the evaluation suite; any other request counts as medium. */
  suite?: readonly SimulatedRequest[];
  /** Simulated latency per call, ms (default 0). */
  latencyMs?: number;
  /** A line put before every free-text answer (evaluations, reflections, reviews), so that records say where they came from. */
  label?: string;
  /** Defect kinds the generator never fixes, even when its feedback names them (the "small" model of SIMULATED_TIERS). */
  neverFixes?: readonly Defect["kind"][];
  /** How many defects a first answer drawn from a schema (or a spec's example) has, instead of the count by difficulty. */
  defects?: number;
  /** Probability that a correction (an answer to a request for corrections only) is a bad one (default 0): see BAD_CORRECTIONS. */
  badCorrectionRate?: number;
  /** Probability that a whole answer has a syntax slip (default 0): see SYNTAX_SLIPS. */
  slipRate?: number;
}

/** The bad corrections the generator writes at its badCorrectionRate, one of them chosen with the seed. */
const BAD_CORRECTIONS = ["not-applicable", "wrong-path", "worse"] as const;
type BadCorrection = (typeof BAD_CORRECTIONS)[number];

/** The syntax slips the generator makes at its slipRate, one of them chosen with the seed. */
const SYNTAX_SLIPS = ["trailing-comma", "comment", "unquoted-key", "single-quotes", "python-literal"] as const;
type SyntaxSlip = (typeof SYNTAX_SLIPS)[number];

/** The rules above as a chat model; the scripting mechanics (usage, latency, errors) are ScriptedChatModel's. */
export class SimulatedChatModel extends ScriptedChatModel {
  private readonly seed: number;
  private readonly missRate: number;
  private readonly requests: Map<string, SimulatedRequest>;
  private readonly label: string;
  private readonly neverFixes: ReadonlySet<Defect["kind"]>;
  private readonly defects?: number;
  private readonly badCorrectionRate: number;
  private readonly slipRate: number;

  constructor(
    options: SimulatedModelOptions,
    private readonly role?: SimulatedRole,
  ) {
    // No recording: an evaluation makes thousands of calls and reads none back.
    super({ record: false, latencyMs: options.latencyMs });
    this.seed = options.seed;
    this.missRate = options.missRate ?? DEFAULT_MISS_RATE;
    this.requests = new Map((options.suite ?? []).map((r) => [r.request, r]));
    this.label = options.label ? `${options.label}\n` : "";
    this.neverFixes = new Set(options.neverFixes ?? []);
    this.defects = options.defects;
    this.badCorrectionRate = options.badCorrectionRate ?? 0;
    this.slipRate = options.slipRate ?? 0;
  }

  override _llmType(): string {
    return "simulated";
  }

  protected override answer(messages: BaseMessage[], _call: number, options?: ScriptedCallOptions): ScriptedReply {
    if (options?.tools !== undefined && options.tools.length > 0) return this.toolTurn(messages, options.tools, options.tool_choice);
    const system = systemText(messages);
    const prompt = messages
      .filter((m) => m.getType() !== "system")
      .map((m) => String(m.content))
      .join("\n\n");
    return this.respond(this.role ?? detectRole(system), system, prompt);
  }

  /** Which request a prompt is about: its spec (or schema), difficulty and planned defects. */
  private requestContext(system: string, prompt: string): RequestContext {
    const requestText = section(prompt, PROMPT_HEADINGS.request)?.body ?? section(prompt, "Task:")?.body ?? "";
    const known = this.requests.get(requestText);
    if (known) return this.builtinContext(known.spec, requestText, known.difficulty);
    const described = /You write JSON objects of this kind: (.*)/.exec(system)?.[1]?.trim();
    if (described !== undefined) {
      const specName = bySpecDescription.get(described);
      if (specName !== undefined) return this.builtinContext(specName, requestText);
      const schema = parseJson(section(system, "JSON Schema:")?.body);
      if (schema !== null && typeof schema === "object")
        return this.schemaContext(schema, requestText, parseJson(section(system, "Example of a valid object:")?.body));
      return { specName, base: undefined, unknownBecause: "this run's spec has no JSON Schema in its prompt", requestText, planned: [] };
    }
    const specName = specNamedBy(requestText);
    if (specName !== undefined) return this.builtinContext(specName, requestText);
    return { specName, base: undefined, unknownBecause: "this request does not say which of them it is for", requestText, planned: [] };
  }

  private builtinContext(specName: string, requestText: string, difficulty: Difficulty = "medium"): RequestContext {
    return { specName, base: builtinSpecs.get(specName)?.example, requestText, planned: planDefects(specName, requestText, difficulty, this.seed) };
  }

  /** Answers drawn from a schema (seeded by the schema and the request), or built on the spec's example when it has one. */
  private schemaContext(schema: unknown, requestText: string, example?: unknown): RequestContext {
    const base = example ?? withAskedNumbers(sampleValue(schema, random(hash(this.seed, "sample", JSON.stringify(schema), requestText))), schema, requestText);
    return { specName: undefined, schema, base, requestText, planned: schemaDefects(base, schema, requestText, "medium", this.seed, this.defects) };
  }

  /**
   * A turn of an agent with tools: the failed call its result names is made again with the errors fixed; then each tool
   * not yet run is called; then the structured answer (LangChain's "extract-" tool) is given: the arguments of the
   * last call that ran when they fit it, else a value of its own; with nothing left to call, a text reply.
   */
  private toolTurn(messages: BaseMessage[], tools: readonly BoundTool[], toolChoice: unknown): AIMessage {
    const start = messages.findLastIndex((m) => m.getType() === "human");
    const requestText = start < 0 ? "" : (section(messages[start].text, PROMPT_HEADINGS.request)?.body ?? messages[start].text);
    const system = systemText(messages);
    const turn = messages.slice(start + 1);
    const calls = turn.flatMap((m) => (AIMessage.isInstance(m) ? (m.tool_calls ?? []) : []));
    const results = turn.filter((m): m is ToolMessage => m.getType() === "tool");
    const call = (tool: BoundTool, args: unknown) =>
      new AIMessage({
        content: "",
        tool_calls: [
          {
            type: "tool_call",
            id: `call_${hash(messages.length, tool.function.name, JSON.stringify(args)).toString(16)}`,
            name: tool.function.name,
            // Arguments are an object, whatever a schema of another kind draws.
            args: args !== null && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
          },
        ],
      });
    const byName = (name: string | undefined) => tools.find((t) => t.function.name === name);

    const last = messages.at(-1);
    if (last !== undefined && last.getType() === "tool" && (last as ToolMessage).status === "error") {
      const failed = last as ToolMessage;
      const made = calls.findLast((c) => c.id === failed.tool_call_id && c.name === failed.name) ?? calls.findLast((c) => c.name === failed.name);
      const tool = byName(failed.name);
      const failures = results.filter((r) => r.name === failed.name && r.status === "error").length;
      if (tool && made && failures < MAX_FAILED_CALLS && !/\brefused\b/.test(failed.text))
        return call(tool, this.writeAnswer(this.toolContext(tool, requestText, system, failed.text), JSON.stringify(made.args), failed.text));
      return new AIMessage(`${this.label}${failed.name ?? "The tool"} did not run: ${failed.text}`);
    }

    const forced = typeof toolChoice === "string" ? byName(toolChoice) : byName((toolChoice as { function?: { name?: string } } | undefined)?.function?.name);
    const ran = (tool: BoundTool) => results.some((r) => r.name === tool.function.name && r.status !== "error");
    const answerTool = tools.find((t) => t.function.name.startsWith("extract-"));
    const pending = forced ?? tools.find((t) => t !== answerTool && !ran(t));
    if (pending) {
      // A retry prompt (the validation graph's "tool" output mode) carries the previous answer and its errors.
      const prompt = start < 0 ? "" : messages[start].text;
      const previous = turn.length === 0 ? section(prompt, PROMPT_HEADINGS.previousAnswer) : undefined;
      return call(pending, this.writeAnswer(this.toolContext(pending, requestText, system), previous?.body, previous ? prompt.slice(previous.end) : ""));
    }
    if (answerTool) {
      const context = this.toolContext(answerTool, requestText, system);
      const done = calls.findLast((c) => c.name !== answerTool.function.name && results.some((r) => r.tool_call_id === c.id && r.status !== "error"));
      const doneTool = byName(done?.name);
      const same = doneTool !== undefined && context.specName !== undefined && this.toolContext(doneTool, requestText, system).specName === context.specName;
      return call(answerTool, same ? done!.args : this.writeAnswer(context, undefined, ""));
    }
    const result = results.at(-1);
    return new AIMessage(`${this.label}${result ? `${result.name ?? "The tool"} answered: ${result.text}` : "Nothing to do."}`);
  }

  /**
   * What a tool's arguments are drawn from: the built-in spec a failed call's result says they must match (a guard
   * holds the tool to a spec its own schema does not show), else the built-in spec the request names when its
   * example fits the tool's parameters, else the parameters' schema.
   */
  private toolContext(tool: BoundTool, requestText: string, system: string, failure = ""): RequestContext {
    const governing = /\bdo not match the (\S+) spec\b/.exec(failure)?.[1];
    if (governing !== undefined && builtinSpecs.has(governing)) return this.builtinContext(governing, requestText);
    const schema = tool.function.parameters ?? {};
    const described = /You write JSON objects of this kind: (.*)/.exec(system)?.[1]?.trim();
    const specName = (described !== undefined ? bySpecDescription.get(described) : undefined) ?? specNamedBy(requestText);
    const example = specName === undefined ? undefined : builtinSpecs.get(specName)?.example;
    if (specName !== undefined && fitsFields(example, schema)) return this.builtinContext(specName, requestText);
    return this.schemaContext(schema, requestText);
  }

  private respond(role: SimulatedRole, system: string, prompt: string): string {
    const ctx = this.requestContext(system, prompt);
    switch (role) {
      case "generator": {
        if (ctx.base === undefined) return cannotAnswer(ctx.unknownBecause ?? "");
        const previous = section(prompt, PROMPT_HEADINGS.previousAnswer) ?? section(prompt, "Your previous response:");
        const answer = this.writeAnswer(ctx, previous?.body, previous ? prompt.slice(previous.end) : "");
        if (previous !== undefined && prompt.includes(PROMPT_HEADINGS.corrections)) return this.writeCorrection(ctx, previous.body, answer);
        return this.slipped(ctx, previous?.body ?? "", JSON.stringify(answer));
      }
      case "reviewer": {
        if (ctx.base === undefined) return `${this.label}${cannotAnswer(`cannot review an answer when ${ctx.unknownBecause ?? ""}`)}`;
        const answer = parseJson(section(prompt, "JSON to review:")?.body);
        const named = this.reviewAnswer(ctx, answer);
        return `${this.label}${
          named.length === 0
            ? "APPROVED. The JSON looks good: it satisfies every constraint and rule."
            : `Problems found:\n${named.map((d) => `- ${d.label}: ${d.description}`).join("\n")}`
        }`;
      }
      case "evaluator":
        return `${this.label}${this.evaluate(ctx, prompt)}`;
      case "reflector": {
        const evaluation = prompt.slice(prompt.indexOf("Evaluation:"));
        const lines = evaluation.split("\n").filter((l) => l.startsWith("- "));
        return `${this.label}${lines.length === 0 ? "Nothing to change." : `Next time, fix:\n${lines.join("\n")}`}`;
      }
    }
  }

  private evaluate(ctx: RequestContext, prompt: string): string {
    const errors = section(prompt, "Validator errors (deterministic, certainly correct):")?.body;
    if (errors !== undefined) {
      const lines = errors.split("\n").filter((l) => l.startsWith("- "));
      return `The response does not meet the spec. The validator reports:\n${lines.join("\n")}\nFinal score: ${Math.max(1, 6 - lines.length)}/10`;
    }
    if (prompt.includes("passes the deterministic validator")) return "The response meets every constraint and rule. Final score: 9.5/10";
    if (ctx.base === undefined) return `${cannotAnswer(`cannot judge a response when ${ctx.unknownBecause ?? ""}`)}\nFinal score: 0/10`;
    const named = this.reviewAnswer(ctx, parseJson(section(prompt, "Response:")?.body));
    return named.length === 0
      ? "Looks good. Final score: 9.5/10"
      : `Problems:\n${named.map((d) => `- ${d.label}: ${d.description}`).join("\n")}\nFinal score: 6/10`;
  }

  /**
   * An answer: the first (every planned defect broken), or a retry of `previous` that fixes the defects `feedback`
   * names. An answer drawn from a schema also draws again any other field the feedback names (a rule the schema
   * cannot say broke there).
   */
  private writeAnswer(ctx: RequestContext, previous: string | undefined, feedback: string): Record<string, unknown> {
    const remaining = new Set(ctx.planned.map((d) => d.id));
    const answer = parseJson(previous);
    if (previous !== undefined) {
      for (const d of ctx.planned) {
        if (answer !== undefined && !exhibits(d, answer)) remaining.delete(d.id);
        else if (!this.neverFixes.has(d.kind) && d.mentions.some((re) => re.test(feedback))) remaining.delete(d.id);
      }
    }
    if (ctx.specName !== undefined || answer === null || typeof answer !== "object" || Array.isArray(answer))
      return applyDefects(ctx.base, ctx.planned, remaining);
    const next = structuredClone(answer) as Record<string, unknown>;
    for (const d of ctx.planned) if (!remaining.has(d.id) && exhibits(d, next)) for (const [path, value] of fixedPatch(d, ctx.base)) setAt(next, path, value);
    const planned = new Set(ctx.planned.map((d) => d.label));
    for (const leaf of leavesOf(next, ctx.schema)) {
      if (planned.has(leaf.label) || !(read(leaf.label).test(feedback) || pointedAt(leaf.label).test(feedback))) continue;
      setAt(
        next,
        leaf.path,
        sampleValue(schemaAt(ctx.schema, leaf.path), random(hash(this.seed, "again", ctx.requestText, previous ?? "", leaf.label)), ctx.schema),
      );
    }
    return next;
  }

  /**
   * A correction: the JSON Patch from the previous answer to the answer a whole retry would give (so it
   * fixes exactly what that retry fixes), or, at the badCorrectionRate, a bad one (BAD_CORRECTIONS): a
   * `test` of a value the answer does not have, the right operations at a misspelt path, or operations
   * that break other fields and fix none.
   */
  private writeCorrection(ctx: RequestContext, previousText: string, answer: Record<string, unknown>): string {
    const previous = parseJson(previousText);
    if (previous === null || typeof previous !== "object") return JSON.stringify(answer);
    const operations: Array<{ op: string; path: string; value?: unknown }> = jsonPatch.compare(previous as object, answer);
    const r = random(hash(this.seed, "correction", ctx.requestText, previousText));
    if (operations.length === 0 || r() >= this.badCorrectionRate) return JSON.stringify(operations);
    const bad = BAD_CORRECTIONS[Math.floor(r() * BAD_CORRECTIONS.length)];
    if (bad === "not-applicable") return JSON.stringify([{ op: "test", path: operations[0].path, value: "not what the answer has" }, ...operations]);
    if (bad === "wrong-path") return JSON.stringify(operations.map((o, i) => (i === 0 ? { ...o, op: "replace", path: `${o.path}_` } : o)));
    // Worse: each operation lands on another field, written with a value of the wrong kind.
    const leaves = leavesOf(previous, ctx.schema).filter((leaf) => !operations.some((o) => o.path === pointer(leaf.path)));
    const worse = operations.map((_, i) => {
      const leaf = leaves[Math.floor(r() * leaves.length)] ?? leaves[i % Math.max(1, leaves.length)];
      return leaf === undefined ? { op: "remove", path: operations[i].path } : { op: "replace", path: pointer(leaf.path), value: [leaf.value] };
    });
    return JSON.stringify([...worse, { op: "add", path: "/unexpected_field", value: true }]);
  }

  /** A whole answer's text, with a syntax slip (SYNTAX_SLIPS) at the slipRate, seeded by the request and the previous answer. */
  private slipped(ctx: RequestContext, previousText: string, text: string): string {
    if (this.slipRate <= 0) return text;
    const r = random(hash(this.seed, "slip", ctx.requestText, previousText));
    if (r() >= this.slipRate || !text.startsWith("{") || text === "{}") return text;
    const slip = SYNTAX_SLIPS[Math.floor(r() * SYNTAX_SLIPS.length)];
    switch (slip) {
      case "trailing-comma":
        return `${text.slice(0, -1)},}`;
      case "comment":
        return `{// ${ctx.requestText.split("\n")[0].slice(0, 60)}\n${text.slice(1)}`;
      case "unquoted-key":
        return text.replace(/^\{"([A-Za-z_$][\w$]*)":/, "{$1:");
      case "single-quotes":
        return text.replace(/^\{"([A-Za-z_$][\w$]*)":/, "{'$1':");
      case "python-literal":
        return /:(true|false|null)([,}\]])/.test(text)
          ? text.replace(/:(true|false|null)([,}\]])/, (_, v: string, end: string) => `:${PYTHON_LITERALS[v]}${end}`)
          : `${text.slice(0, -1)},}`;
    }
  }

  /** The defects present in `answer` that the reviewer names (each missed with the miss rate, seeded by request, answer and defect). */
  private reviewAnswer(ctx: RequestContext, answer: unknown): Defect[] {
    if (answer === undefined) return [];
    const text = JSON.stringify(answer);
    return ctx.planned.filter((d) => exhibits(d, answer) && random(hash(this.seed, "review", ctx.requestText, text, d.id))() >= this.missRate);
  }
}

const PYTHON_LITERALS: Record<string, string> = { true: "True", false: "False", null: "None" };

/** A JSON Pointer from a path's keys. */
function pointer(path: readonly string[]): string {
  return path.map((key) => `/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/** Failed calls of one tool in a turn after which the model stops calling it and says so (a tool that always fails cannot loop it). */
const MAX_FAILED_CALLS = 3;

/**
 * A drawn value with the numbers the request gives its fields by name ("with 8 replicas": a numeric field named
 * `replicas`), where the field's schema admits the number (its type and bounds); every other field as drawn.
 */
function withAskedNumbers(value: unknown, schema: unknown, requestText: string): unknown {
  if (value === null || typeof value !== "object") return value;
  const asked = new Map<string, number>();
  for (const [, number, word] of requestText.matchAll(/(?<![\w.])(\d+(?:\.\d+)?)\s+([A-Za-z][A-Za-z_-]*)/g))
    asked.set(word.toLowerCase().replace(/-/g, "_"), Number(number));
  if (asked.size === 0) return value;
  const out = structuredClone(value) as Record<string, unknown>;
  for (const leaf of leavesOf(out, schema)) {
    const number = asked.get(String(leaf.path.at(-1)).toLowerCase());
    if (number === undefined || typeof leaf.value !== "number") continue;
    const at = schemaAt(schema, leaf.path) as { type?: unknown; minimum?: unknown; maximum?: unknown } | undefined;
    const fits =
      (at?.type !== "integer" || Number.isInteger(number)) &&
      (typeof at?.minimum !== "number" || number >= at.minimum) &&
      (typeof at?.maximum !== "number" || number <= at.maximum);
    if (fits) setAt(out, leaf.path, number);
  }
  return out;
}

/** The system messages' text. */
function systemText(messages: readonly BaseMessage[]): string {
  return messages
    .filter((m) => m.getType() === "system")
    .map((m) => String(m.content))
    .join("\n");
}

/** Whether a value has the fields a schema names: no field it does not list, every field it requires. */
function fitsFields(value: unknown, schema: Record<string, unknown>): boolean {
  if (value === null || typeof value !== "object") return false;
  const properties = schema.properties as Record<string, unknown> | undefined;
  if (!properties) return false;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return Object.keys(value).every((k) => Object.hasOwn(properties, k)) && required.every((k) => Object.hasOwn(value, k));
}

/** The role a prompt asks for, when the model was not built for one role. */
function detectRole(system: string): SimulatedRole {
  if (/strict, fair evaluator/.test(system)) return "evaluator";
  if (/You reflect on an attempt/.test(system)) return "reflector";
  if (/You review JSON objects/.test(system)) return "reviewer";
  return "generator";
}

const ROLE_OF: Record<string, SimulatedRole> = {
  generate: "generator",
  actor: "generator",
  evaluator: "evaluator",
  reflector: "reflector",
  reviewer: "reviewer",
};

/**
 * The simulated models an escalation asks for by name: "small" never fixes a broken cross-field rule,
 * "large" fixes every defect its feedback names.
 */
export const SIMULATED_TIERS = { small: "small", large: "large" } as const;

/** A ModelSource factory for escalation: the generator named "small" or "large" (any other name is the large one). */
export function tieredModelSource(options: SimulatedModelOptions): (request: { role: string; model?: string; temperature?: number }) => SimulatedChatModel {
  const small = simulatedModelSource({ ...options, neverFixes: SMALL_MODEL_NEVER_FIXES });
  const large = simulatedModelSource(options);
  return (request) => (request.model === SIMULATED_TIERS.small ? small(request) : large(request));
}

/** A ModelSource factory (src/models.ts): one simulated model per role. */
export function simulatedModelSource(options: SimulatedModelOptions): (request: { role: string; model?: string; temperature?: number }) => SimulatedChatModel {
  const models = new Map<SimulatedRole, SimulatedChatModel>();
  return (request) => {
    const role = ROLE_OF[request.role] ?? "generator";
    let model = models.get(role);
    if (!model) models.set(role, (model = new SimulatedChatModel(options, role)));
    return model;
  };
}
