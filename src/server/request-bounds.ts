/**
 * The bounds of a request body on the LangGraph server, checked at the door
 * (./http.ts) before any route reads the body: one user's request cannot hurt
 * the others. The server keeps what a request carries (a run's input, context,
 * config and metadata; a thread's metadata; an assistant's settings; a store
 * value) in its state, which it writes with recursive serializers: a value
 * nested thousands of levels deep overflows their stack, which failed the
 * thread's runs list for good and stopped the dev server's state file from
 * being written again (every user's later data lost at a restart).
 *
 * Every top-level field of a JSON body is a part (`input`, `context`, …; each
 * item of a batch is a body). Every field of a part (`context.ruleContext`;
 * `config.configurable.<key>`) nests at most REQUEST_LIMITS.maxDepth levels,
 * and a part is at most its REQUEST_LIMITS.partChars characters of JSON. A
 * run's `ruleContext` is held to the validation graph's own bounds
 * (RULE_CONTEXT_LIMITS), which the graph checks again when it reads its
 * settings. Pure functions of the parsed body; sizes count characters of JSON
 * text as `JSON.stringify` writes it.
 */
import { DEFAULT_JSON_LIMITS } from "../json/parse.js";
import { childPath } from "../json/paths.js";
import { MAX_TASKS } from "../reflexion/configuration.js";
import { MAX_REQUEST_CHARS } from "../settings.js";
import { RULE_CONTEXT_LIMITS } from "../validation/configuration.js";
import type { Refusal } from "./state-writes.js";

/** The largest graph input: Reflexion's MAX_TASKS tasks of MAX_REQUEST_CHARS each, with room for the JSON around them. */
const INPUT_CHARS = MAX_TASKS * (MAX_REQUEST_CHARS + 10) + 1_000;
/** A run's settings: a ruleContext at its limit (100,000 characters), an inline spec and a system prompt (20,000 each), small scalars. */
const SETTINGS_CHARS = 200_000;
/** A resume value: any answer (the JSON readers' size) with room for its wrappers (`{"value": …}`). */
const COMMAND_CHARS = DEFAULT_JSON_LIMITS.maxChars + 1_000;

export const REQUEST_LIMITS = Object.freeze({
  /**
   * Deepest nesting of one field of a part: the JSON readers' 64 levels
   * (DEFAULT_JSON_LIMITS), with room for the wrappers a value is sent in
   * (a resume's `{"value": …}`, a protocol command's list of responses).
   */
  maxDepth: DEFAULT_JSON_LIMITS.maxDepth + 4,
  /** Largest part, in characters of JSON, by the part's name. */
  partChars: Object.freeze({
    /** A run's input, a state write's values, a new thread's supersteps. */
    input: INPUT_CHARS,
    values: INPUT_CHARS,
    supersteps: INPUT_CHARS,
    /** A run's or an assistant's settings (`context`, or `config` with its `configurable`). */
    context: SETTINGS_CHARS,
    config: SETTINGS_CHARS,
    /** A run's command (a resume), a protocol command's params. */
    command: COMMAND_CHARS,
    params: COMMAND_CHARS,
    /** A store item's value (a Reflexion memory is a few thousand characters). */
    value: DEFAULT_JSON_LIMITS.maxChars,
    /** A thread's, run's or assistant's metadata: labels, searched on every listing. */
    metadata: 100_000,
  } as Readonly<Record<string, number>>),
  /** Any other part (ids, filters, options, a checkpoint reference): small. */
  otherPartChars: 100_000,
});

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The fields of a part, each with its path: a part's own keys (config's `configurable` one level further), or the part itself. */
function fieldsOf(name: string, part: unknown, path: string): Array<[string, unknown]> {
  if (!isObject(part)) return [[path, part]];
  return Object.entries(part).flatMap(([key, value]): Array<[string, unknown]> => {
    const field = childPath(path, key);
    return name === "config" && key === "configurable" && isObject(value) ? Object.entries(value).map(([k, v]) => [childPath(field, k), v]) : [[field, value]];
  });
}

const isRuleContext = (field: string) => /(^|\.)(context|config\.configurable)\.ruleContext$/.test(field);

/**
 * Whether a parsed JSON value nests deeper than `maxDepth` levels (the value
 * itself is level 1). An explicit stack, as the value may be nested far deeper
 * than the call stack allows; it stops at the first container past the bound.
 */
function nestsDeeper(value: unknown, maxDepth: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > maxDepth) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** What a refusal leaves as it was; a refused resume leaves its run paused. */
const unchanged = (field: string) =>
  /^(\[\d+\]\.)?(command|params)\b/.test(field)
    ? "Nothing was stored or resumed: a paused run is still paused; answer again with a smaller value."
    : "Nothing was stored.";

function tooDeep(field: string, value: unknown, maxDepth: number): Refusal | undefined {
  if (!nestsDeeper(value, maxDepth)) return undefined;
  return {
    status: 422,
    body: { error: "UnprocessableEntity", message: `${field} nests deeper than ${maxDepth} levels, the limit for this field. ${unchanged(field)}` },
  };
}

/** The length of a value as JSON text; only for values already held to the depth bound (JSON.stringify is recursive). */
const charsOf = (value: unknown) => JSON.stringify(value)?.length ?? 0;

function tooLarge(field: string, chars: number, maxChars: number): Refusal | undefined {
  if (chars <= maxChars) return undefined;
  return {
    status: 413,
    body: { error: "PayloadTooLarge", message: `${field} is ${chars} characters of JSON, over the limit of ${maxChars} for this field. ${unchanged(field)}` },
  };
}

/** The refusal of one body (an object; anything else is left to the route's own validator), or undefined. */
function bodyRefusal(body: unknown, prefix: string): Refusal | undefined {
  if (!isObject(body)) return undefined;
  for (const [name, part] of Object.entries(body)) {
    const path = childPath(prefix, name);
    for (const [field, value] of fieldsOf(name, part, path)) {
      const ruleContext = isRuleContext(field);
      const refusal =
        tooDeep(field, value, ruleContext ? RULE_CONTEXT_LIMITS.maxDepth : REQUEST_LIMITS.maxDepth) ??
        (ruleContext ? tooLarge(field, charsOf(value), RULE_CONTEXT_LIMITS.maxChars) : undefined);
      if (refusal) return refusal;
    }
    const maxChars = Object.hasOwn(REQUEST_LIMITS.partChars, name) ? REQUEST_LIMITS.partChars[name] : REQUEST_LIMITS.otherPartChars;
    const refusal = tooLarge(path, charsOf(part), maxChars);
    if (refusal) return refusal;
  }
  return undefined;
}

/**
 * The refusal of a parsed JSON request body that passes a bound (413 for a
 * size, 422 for a depth, each naming the field and its limit), or undefined.
 * A list (`POST /runs/batch`) is checked item by item.
 */
export function requestBoundsRefusal(body: unknown): Refusal | undefined {
  if (!Array.isArray(body)) return bodyRefusal(body, "");
  for (let i = 0; i < body.length; i++) {
    const refusal = Array.isArray(body[i]) ? tooDeep(`[${i}]`, body[i], REQUEST_LIMITS.maxDepth) : bodyRefusal(body[i], `[${i}]`);
    if (refusal) return refusal;
  }
  return undefined;
}
