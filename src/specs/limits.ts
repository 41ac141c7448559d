/**
 * What a spec may contain and what it may cost. Every spec is refused when it
 * would change what "valid" means or how validation runs (`$async: true`
 * makes ajv return a Promise instead of a verdict). Every spec's compiled
 * validator is bounded in size, which bounds the time and memory compiling it
 * takes. Specs supplied at run time (by a request, a file, Studio) are also
 * bounded in what checking an answer can cost: their size, nesting, pattern
 * length, and how many subschemas can apply to one value of an answer (and so
 * to a whole answer). The defaults accept the large schemas found in the wild
 * (measured on the JSONSchemaBench corpus: `npm run bench -- --only corpus`);
 * an operator tightens or loosens them with RUNTIME_SPEC_LIMITS (server
 * configuration) or the `specLimits` option (builders, resolveSpec, defineSpec).
 */
import { SpecError } from "../errors.js";
import { isGeneralCategory, MAX_PROPERTY_TABLES, propertyKeysOf } from "./unicode-properties.js";

/** The cost bound every spec has, code-defined or supplied at run time. */
interface SpecCostLimits {
  /** Largest compiled validator, in characters of generated code: bounds compile time and memory. */
  maxCompiledChars: number;
}

/** The bounds on a spec supplied at run time. */
export interface RuntimeSpecLimits extends SpecCostLimits {
  /** Largest spec, as JSON text (it is part of every prompt too). */
  maxChars: number;
  /** Deepest nesting of subschemas. */
  maxDepth: number;
  /** Longest single pattern (RE2 compiles it into a program of its size). */
  maxPatternChars: number;
  /** Most subschemas that can apply to any one value of an answer (through combinators and $ref). */
  maxApplicationsPerValue: number;
  /** Most schema applications (values × subschemas per value) validating one answer may take; a larger answer is refused. */
  maxApplicationsPerAnswer: number;
}

/**
 * The defaults, measured on the JSONSchemaBench corpus (~11,300 real schemas): its largest schema is 510,000
 * characters, nests 13 levels, has a 1,239-character pattern, and lets at most 114 subschemas apply to one value
 * (among the schemas whose count is bounded at all); 99.9 % compile to at most ~1,230,000 characters of code. An
 * answer of up to 1 MB is read (src/json/parse.ts), and patterns read at most 250,000 of its characters.
 */
export const RUNTIME_SPEC_LIMITS: Readonly<RuntimeSpecLimits> = Object.freeze({
  maxChars: 1_000_000,
  maxCompiledChars: 1_000_000,
  maxDepth: 32,
  maxPatternChars: 2_000,
  maxApplicationsPerValue: 256,
  maxApplicationsPerAnswer: 500_000,
});

/** The cost bound of a code-defined spec (the developer's own, compiled once): four times a run-time spec's. */
export const CODE_SPEC_LIMITS: Readonly<SpecCostLimits> = Object.freeze({ maxCompiledChars: 4_000_000 });

/**
 * The fewest characters of code a subschema with a keyword compiles to (measured: 500-1,100 on the corpus's
 * large schemas). Code is counted as it is made, but the bulk of it comes in one piece, so a spec whose
 * subschemas alone would pass the bound is refused before compiling, without paying for it.
 */
const MIN_COMPILED_CHARS_PER_SUBSCHEMA = 200;

/** Refuse, before compiling it, a spec too large to compile within the bound whatever its subschemas hold. */
export function checkCompiledEstimate(schema: Record<string, unknown>, limits: SpecCostLimits, raise: string): void {
  let count = 0;
  for (const { schema: s } of subschemas(schema)) if (Object.keys(s).length > 0) count++;
  if (count * MIN_COMPILED_CHARS_PER_SUBSCHEMA > limits.maxCompiledChars) {
    throw new SpecError(
      `its ${count} subschemas would compile to more than ${limits.maxCompiledChars} characters of code, over the limit maxCompiledChars (${limits.maxCompiledChars}); ${raise}.`,
    );
  }
}

/** The names of the limits, for messages and the checks of an operator's settings. */
const SPEC_LIMIT_NAMES = Object.freeze(Object.keys(RUNTIME_SPEC_LIMITS) as Array<keyof RuntimeSpecLimits>);

/** Where a message about a run-time limit tells the reader to raise it. */
function howToRaise(limit: keyof RuntimeSpecLimits): string {
  return `raise it with the ${JSON.stringify(limit)} of RUNTIME_SPEC_LIMITS (server configuration) or of the specLimits option, or simplify the spec`;
}

/**
 * Limits given by an operator or a caller, checked: known names, positive
 * integers. Throws SpecError naming what is wrong. Unnamed limits keep the
 * defaults.
 */
export function checkedSpecLimits(given: unknown, where = "specLimits"): Partial<RuntimeSpecLimits> {
  if (given === undefined) return {};
  if (given === null || typeof given !== "object" || Array.isArray(given)) {
    throw new SpecError(`${where} must be an object of limits (${SPEC_LIMIT_NAMES.join(", ")}); got ${JSON.stringify(given)?.slice(0, 80)}.`);
  }
  const out: Partial<RuntimeSpecLimits> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!(SPEC_LIMIT_NAMES as readonly string[]).includes(name))
      throw new SpecError(`${where}: no limit ${JSON.stringify(name)}; the limits are ${SPEC_LIMIT_NAMES.join(", ")}.`);
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      throw new SpecError(`${where}: ${name} must be a positive integer; got ${JSON.stringify(value)?.slice(0, 40)}.`);
    }
    out[name as keyof RuntimeSpecLimits] = value;
  }
  return out;
}

/** Keywords whose value is one subschema. */
const SINGLE = [
  "additionalProperties",
  "additionalItems",
  "items",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
];
/** Keywords whose value is a list of subschemas. */
const LISTS = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/** Keywords whose value maps names to subschemas. */
const MAPS = ["properties", "patternProperties", "definitions", "$defs", "dependentSchemas", "dependencies"];
/** Where a schema holds subschemas, for code that walks or rebuilds one. */
export const SUBSCHEMA_KEYWORDS = Object.freeze({ single: SINGLE, lists: LISTS, maps: MAPS });

export interface Visit {
  schema: Record<string, unknown>;
  path: string;
  depth: number;
}

/** The schema objects directly under a schema (in its subschema keywords), each with its path. */
export function childSchemas(schema: Record<string, unknown>, path: string): Array<{ schema: Record<string, unknown>; path: string }> {
  const children: Array<{ schema: Record<string, unknown>; path: string }> = [];
  const push = (child: unknown, childPath: string) => {
    if (child !== null && typeof child === "object" && !Array.isArray(child)) children.push({ schema: child as Record<string, unknown>, path: childPath });
  };
  for (const key of SINGLE) if (Object.hasOwn(schema, key) && !Array.isArray(schema[key])) push(schema[key], `${path}/${key}`);
  for (const key of LISTS) {
    const list = Object.hasOwn(schema, key) ? schema[key] : undefined;
    if (Array.isArray(list)) list.forEach((child, i) => push(child, `${path}/${key}/${i}`));
  }
  for (const key of MAPS) {
    const map = Object.hasOwn(schema, key) ? schema[key] : undefined;
    if (map !== null && typeof map === "object" && !Array.isArray(map)) {
      for (const [name, child] of Object.entries(map)) push(child, `${path}/${key}/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`);
    }
  }
  return children;
}

/** Every schema object in a schema, with its JSON-pointer-like path and depth. */
export function* subschemas(root: unknown): Generator<Visit> {
  if (root === null || typeof root !== "object" || Array.isArray(root)) return;
  const stack: Visit[] = [{ schema: root as Record<string, unknown>, path: "#", depth: 0 }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    yield visit;
    for (const child of childSchemas(visit.schema, visit.path)) stack.push({ ...child, depth: visit.depth + 1 });
  }
}

/** Refuse what no spec may contain, trusted or not. */
export function checkSpecSafety(schema: Record<string, unknown>): void {
  for (const { schema: s, path } of subschemas(schema)) {
    if (Object.hasOwn(s, "pattern") && s.pattern !== null && typeof s.pattern === "object") {
      // ajv would compile the answer's string on every validation, unbounded, and read a pattern it cannot compile as a mismatch (a pass under "not").
      throw new SpecError(
        `"pattern" at ${path.slice(0, 200)} takes its pattern from the answer (${JSON.stringify(s.pattern).slice(0, 100)}), which no spec may do: a pattern is a program the validator runs, so it is written in the spec, where its syntax, length and cost are checked once when the spec is defined. Write the pattern itself, or compare the fields with "const" or "enum" and "$data".`,
      );
    }
    if (Object.hasOwn(s, "$async") && s.$async !== false) {
      throw new SpecError(
        `"$async" at ${path} is not allowed: it makes the validator return a Promise instead of a verdict, so no answer could be judged. Remove it.`,
      );
    }
  }
}

/**
 * Refuse a run-time spec beyond the limits, with a message naming the limit
 * and how to raise it. Returns the most subschemas that can apply to one
 * value, which bounds the work of validating an answer of N values.
 */
export function checkRuntimeSpecLimits(schema: Record<string, unknown>, limits: RuntimeSpecLimits = RUNTIME_SPEC_LIMITS): number {
  checkStructure(schema, limits);
  return checkValidationCost(schema, limits);
}

function checkStructure(schema: Record<string, unknown>, limits: RuntimeSpecLimits): void {
  const tables = new Set<string>(); // the Unicode property tables its patterns name, General_Category's aside
  for (const { schema: s, path, depth } of subschemas(schema)) {
    if (depth > limits.maxDepth)
      throw new SpecError(
        `the schema nests deeper than ${limits.maxDepth} levels (at ${path.slice(0, 200)}), the limit maxDepth for specs supplied at run time; ${howToRaise("maxDepth")}.`,
      );
    const own = (key: string) => (Object.hasOwn(s, key) ? s[key] : undefined);
    const found: string[] = [];
    if (typeof own("pattern") === "string") found.push(own("pattern") as string);
    const patternProperties = own("patternProperties");
    if (patternProperties !== null && typeof patternProperties === "object") found.push(...Object.keys(patternProperties));
    for (const pattern of found) {
      if (pattern.length > limits.maxPatternChars) {
        throw new SpecError(
          `a pattern at ${path.slice(0, 200)} is ${pattern.length} characters long, over the limit maxPatternChars (${limits.maxPatternChars}) for specs supplied at run time; ${howToRaise("maxPatternChars")}.`,
        );
      }
      for (const key of propertyKeysOf(pattern)) if (!isGeneralCategory(key)) tables.add(key);
      if (tables.size > MAX_PROPERTY_TABLES)
        throw new SpecError(
          `the patterns name more than ${MAX_PROPERTY_TABLES} Unicode properties other than General_Category (${[...tables].join(", ").slice(0, 300)}), which specs supplied at run time may not: this engine is asked for each property's code points, a pass over all of Unicode each; use fewer, or General_Category values (\\p{L}, \\p{Nd}…), which one pass gives all of.`,
        );
    }
    refTarget(schema, s, path);
  }
}

// ---------------------------------------------------------------------------
// The cost of validating one value: how many subschemas can apply to it.

/** How many distinct sets of subschemas the cost analysis follows before it gives up (its own cost is bounded too). */
const MAX_COST_STATES = 5_000;

/** Keywords that apply their subschemas at the same value as the schema itself. */
const SAME_LOCATION_SINGLE = ["not", "if", "then", "else"];
const SAME_LOCATION_LISTS = ["allOf", "anyOf", "oneOf"];

type Node = Record<string, unknown>;
type Bag = Map<Node, number>;

/** Refuse `$ref`s that are not JSON pointers into the spec itself, and resolve the ones that are. */
function refTarget(root: Node, node: Node, path: string): Node | undefined {
  for (const key of ["$dynamicRef", "$recursiveRef"]) {
    if (Object.hasOwn(node, key))
      throw new SpecError(
        `"${key}" at ${path.slice(0, 200)} is not supported in specs supplied at run time; use "$ref" with a JSON pointer such as "#/$defs/node".`,
      );
  }
  if (!Object.hasOwn(node, "$ref")) return undefined;
  const ref = node.$ref;
  if (typeof ref !== "string" || !(ref === "#" || ref.startsWith("#/"))) {
    throw new SpecError(
      `"$ref" ${JSON.stringify(String(ref).slice(0, 100))} at ${path.slice(0, 200)} is not supported in specs supplied at run time: only JSON pointers into the spec itself ("#", "#/$defs/name") are.`,
    );
  }
  const target = pointerTarget(root, ref);
  if (typeof target === "boolean") return undefined; // a boolean schema applies no subschema
  if (target === null || typeof target !== "object" || Array.isArray(target))
    throw new SpecError(`"$ref" ${JSON.stringify(ref.slice(0, 100))} at ${path.slice(0, 200)} points to nothing in the spec.`);
  return target as Node;
}

function add(bag: Bag, node: unknown, times: number): void {
  if (node !== null && typeof node === "object" && !Array.isArray(node)) bag.set(node as Node, (bag.get(node as Node) ?? 0) + times);
}

function own(node: Node, key: string): unknown {
  return Object.hasOwn(node, key) ? node[key] : undefined;
}

/**
 * Refuse a run-time spec under which one value of an answer could be checked
 * against too many subschemas or patterns. It follows every way a value can be
 * reached (each field name, each tuple position, any other field or item) to
 * the answer's greatest depth, counting the subschemas that apply there
 * through combinators and `$ref`s. A spec too intricate to bound is refused.
 */
function checkValidationCost(root: Node, limits: Pick<RuntimeSpecLimits, "maxApplicationsPerValue"> = RUNTIME_SPEC_LIMITS, maxAnswerDepth = 64): number {
  let worst = 1;
  const seen = new Set<string>();
  const ids = new Map<Node, number>();
  const id = (node: Node) => {
    let n = ids.get(node);
    if (n === undefined) ids.set(node, (n = ids.size));
    return n;
  };
  let states = 0;
  const stack: Array<{ bag: Bag; depth: number }> = [{ bag: new Map([[root, 1]]), depth: 0 }];
  while (stack.length > 0) {
    const { bag, depth } = stack.pop()!;
    if (++states > MAX_COST_STATES)
      throw new SpecError(
        `the schema is too intricate to bound how long validating an answer can take (more than ${MAX_COST_STATES} distinct sets of subschemas apply to the values of an answer; specs supplied at run time); simplify its combinators and $refs.`,
      );
    const applied = expand(root, bag, limits);
    let applications = 0;
    for (const times of applied.values()) applications += times;
    worst = Math.max(worst, applications);
    if (depth >= maxAnswerDepth) continue;
    for (const child of childBags(applied)) {
      if (child.size === 0) continue;
      const signature = [...child]
        .map(([node, times]) => `${id(node)}x${times}`)
        .sort()
        .join(",");
      if (seen.has(signature)) continue;
      seen.add(signature);
      stack.push({ bag: child, depth: depth + 1 });
    }
  }
  return worst;
}

/** The subschemas a schema applies at its own value: combinator branches and what its references point to (`targets`). */
function sameLocation(node: Node, targets: unknown[]): Node[] {
  const next: Bag = new Map();
  for (const key of SAME_LOCATION_SINGLE) add(next, own(node, key), 1);
  for (const key of SAME_LOCATION_LISTS) {
    const list = own(node, key);
    if (Array.isArray(list)) for (const branch of list) add(next, branch, 1);
  }
  for (const key of ["dependentSchemas", "dependencies"]) {
    const dependent = own(node, key);
    if (dependent !== null && typeof dependent === "object") for (const branch of Object.values(dependent)) add(next, branch, 1);
  }
  for (const target of targets) add(next, target, 1);
  return [...next.keys()];
}

/**
 * Refuse a `$ref` cycle that never moves into the value (`{"$ref": "#"}` at the root, two definitions that refer
 * to each other through `$ref`, `allOf` or `anyOf`): validating any value would recurse forever (the standard leaves
 * such a schema undefined), and ajv overflows the stack compiling or running it. Every spec, trusted or not. Refs
 * are followed where they are JSON pointers or anchors into the spec itself; others cannot loop here. Iterative.
 */
export function refuseRefCycles(root: Node): void {
  const paths = new Map<Node, string>();
  const anchors = new Map<string, Node>();
  for (const { schema, path } of subschemas(root)) {
    if (!paths.has(schema)) paths.set(schema, path);
    for (const key of ["$anchor", "$id", "id"]) {
      const name = own(schema, key);
      if (typeof name !== "string") continue;
      if (key === "$anchor") anchors.set(name, schema);
      else if (name.startsWith("#") && name.length > 1) anchors.set(name.slice(1), schema);
    }
  }
  const done = new Set<Node>();
  const onPath = new Set<Node>();
  for (const start of paths.keys()) {
    if (done.has(start)) continue;
    const stack: Array<{ node: Node; next: Node[]; i: number }> = [{ node: start, next: sameLocationLocal(root, start, anchors), i: 0 }];
    onPath.add(start);
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (top.i >= top.next.length) {
        stack.pop();
        onPath.delete(top.node);
        done.add(top.node);
        continue;
      }
      const child = top.next[top.i++];
      if (done.has(child)) continue;
      if (onPath.has(child)) {
        throw new SpecError(
          `the schema has a "$ref" cycle that never reaches into the value (through ${(paths.get(child) ?? "#").slice(0, 200)}), so validating any value would recurse forever; make the cycle pass through a field or an item (as "properties": {"child": {"$ref": "#"}} does), or remove it.`,
        );
      }
      onPath.add(child);
      stack.push({ node: child, next: sameLocationLocal(root, child, anchors), i: 0 });
    }
  }
}

/** The subschemas a schema applies at its own value, its references followed only where they point into the spec. */
function sameLocationLocal(root: Node, node: Node, anchors: Map<string, Node>): Node[] {
  const ref = own(node, "$ref");
  const target =
    typeof ref !== "string" || !ref.startsWith("#") ? undefined : ref.startsWith("#/") || ref === "#" ? pointerTarget(root, ref) : anchors.get(ref.slice(1));
  return sameLocation(node, [target, own(node, "$recursiveRef") === "#" ? root : undefined]);
}

/** What a JSON pointer into the spec ("#", "#/$defs/name") points to, or undefined. */
function pointerTarget(root: Node, ref: string): unknown {
  let target: unknown = root;
  for (const raw of ref === "#" ? [] : ref.slice(2).split("/")) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    } catch {
      return undefined;
    }
    target = target !== null && typeof target === "object" && Object.hasOwn(target, key) ? (target as Node)[key] : undefined;
  }
  return target;
}

/** The subschemas that apply at one value, given those that apply directly: combinator branches and $ref targets added, with multiplicity. */
function expand(root: Node, bag: Bag, limits: Pick<RuntimeSpecLimits, "maxApplicationsPerValue">): Bag {
  const applied: Bag = new Map();
  let total = 0;
  const stack: Array<[Node, number]> = [...bag];
  while (stack.length > 0) {
    const [node, times] = stack.pop()!;
    applied.set(node, (applied.get(node) ?? 0) + times);
    total += times;
    if (total > limits.maxApplicationsPerValue) {
      throw new SpecError(
        `more than ${limits.maxApplicationsPerValue} subschemas can apply to one value of an answer (through anyOf/oneOf/allOf/if/not and $ref), the limit maxApplicationsPerValue for specs supplied at run time; ${howToRaise("maxApplicationsPerValue")}.`,
      );
    }
    for (const child of sameLocation(node, [refTarget(root, node, "the schema")])) stack.push([child, times]);
  }
  return applied;
}

/** The sets of subschemas that can apply to one child value (one per field name, tuple position, and "any other"). */
function childBags(applied: Bag): Bag[] {
  const names = new Set<string>();
  let prefixLength = 0;
  for (const node of applied.keys()) {
    const properties = own(node, "properties");
    if (properties !== null && typeof properties === "object") for (const name of Object.keys(properties)) names.add(name);
    const prefix = Array.isArray(own(node, "prefixItems"))
      ? (own(node, "prefixItems") as unknown[])
      : Array.isArray(own(node, "items"))
        ? (own(node, "items") as unknown[])
        : [];
    prefixLength = Math.max(prefixLength, prefix.length);
  }
  const field = (name: string | undefined): Bag => {
    const bag: Bag = new Map();
    for (const [node, times] of applied) {
      const properties = own(node, "properties") as Node | undefined;
      const declared = name !== undefined && properties !== null && typeof properties === "object" && Object.hasOwn(properties, name);
      if (declared) add(bag, properties![name!], times);
      else add(bag, own(node, "additionalProperties"), times);
      const patternProperties = own(node, "patternProperties");
      if (patternProperties !== null && typeof patternProperties === "object") for (const child of Object.values(patternProperties)) add(bag, child, times);
      add(bag, own(node, "unevaluatedProperties"), times);
    }
    return bag;
  };
  const item = (index: number | undefined): Bag => {
    const bag: Bag = new Map();
    for (const [node, times] of applied) {
      const items = own(node, "items");
      const prefix = Array.isArray(own(node, "prefixItems")) ? (own(node, "prefixItems") as unknown[]) : Array.isArray(items) ? items : undefined;
      if (index !== undefined && prefix && index < prefix.length) add(bag, prefix[index], times);
      else if (Array.isArray(items)) add(bag, own(node, "additionalItems"), times);
      else add(bag, items, times);
      add(bag, own(node, "contains"), times);
      add(bag, own(node, "unevaluatedItems"), times);
    }
    return bag;
  };
  const keys: Bag = new Map();
  for (const [node, times] of applied) add(keys, own(node, "propertyNames"), times);
  return [...[...names].map((name) => field(name)), field(undefined), ...Array.from({ length: prefixLength }, (_, i) => item(i)), item(undefined), keys];
}
