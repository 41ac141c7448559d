/**
 * The simulated model's defect catalogue: for each built-in spec, ways to break its example (a wrong type, a
 * missing field, a broken cross-field rule, …), how feedback names each one, and what fixing it means; and the
 * seeded plan of a request's first answer (which defects, how many by difficulty), for a spec of the catalogue
 * or for a value drawn from any JSON Schema. The model (./model.ts) answers with these; the evaluation and the
 * benchmarks plan and check the same defects (eval/simulated-model.ts re-exports them).
 */
import { builtinSpecs } from "../specs/registry.js";
import { hash, seededRandom as random } from "./random.js";
import { leavesOf } from "./sample.js";

/** How many constraints a request's first answer typically breaks. */
export type Difficulty = "easy" | "medium" | "hard";

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
export function read(label: string): RegExp {
  return new RegExp(`(?<![\\w.\\["])${escape(label)}(?=\\s+(?:is|has|does|contains|must)\\b|:|=)`);
}

/** A field path as zod's readable errors name it (`✖ … → at resources.cpu_limit`), as LangChain checks a tool's arguments. */
export function pointedAt(label: string): RegExp {
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

export function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
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

export function fixedPatch(defect: Defect, example: unknown): Patch {
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
export function applyDefects(base: unknown, planned: readonly Defect[], remaining: ReadonlySet<string>): Record<string, unknown> {
  const answer = structuredClone(base) as Record<string, unknown>;
  for (const d of planned) for (const [path, value] of remaining.has(d.id) ? d.broken : fixedPatch(d, base)) setAt(answer, path, value);
  return answer;
}

/**
 * Seeded defects for a value drawn from a schema (no catalogue knows it): a required field left out,
 * or a field of the wrong type, on distinct fields.
 */
export function schemaDefects(base: unknown, schema: unknown, requestText: string, difficulty: Difficulty, seed: number, defects?: number): Defect[] {
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
