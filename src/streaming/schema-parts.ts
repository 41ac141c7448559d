/**
 * The parts of a spec's JSON Schema that certainly apply to one value of an
 * answer, found by its path, and a validator for each part that judges one
 * closed value on its own, with the same ajv setup as the spec (so the
 * messages are the full check's, word for word).
 *
 * A part applies certainly when it is reached from the root through
 * `properties`, `additionalProperties` (no `patternProperties` beside it),
 * `items`/`prefixItems`/`additionalItems`, `allOf` and local `$ref`s. Nothing
 * under `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`,
 * `patternProperties` or `unevaluated*` is reached that way: whether such a
 * part applies can depend on what has not arrived. Those keywords are still
 * judged, whole, when the value that holds them closes.
 *
 * Each part is judged shallow: the subschemas of its members (which the
 * members' own parts judge when they close) are replaced by `true`, except
 * where a member's schema reads a sibling through `$data`, or the part
 * counts what its members evaluated (`unevaluated*`): then it is judged whole.
 */
import type { ErrorObject, ValidateFunction } from "ajv";
import { compileSchema, dialectOf, refReplacesSiblings, type Dialect } from "../specs/ajv.js";
import { subschemas } from "../specs/limits.js";
import type { Spec } from "../specs/spec.js";
import type { Step } from "./reader.js";

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => value !== null && typeof value === "object" && !Array.isArray(value);
const own = (node: Node, key: string): unknown => (Object.hasOwn(node, key) ? node[key] : undefined);

/** Keywords that set a base URI or an anchor, which could change where a `$ref` points. */
const SCOPE_KEYWORDS = ["$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$dynamicRef", "$recursiveRef"];
/** Most parts that can apply to one value; past it the rest are left to the full check. */
const MAX_PARTS_PER_VALUE = 64;
/** Most parts of one spec compiled for the partial checks; past it the rest are left to the full check. */
const MAX_COMPILED_PARTS = 256;

interface SpecParts {
  root: Node;
  dialect: Dialect;
  untrusted: boolean;
  /** Every $ref points into the root's definitions/$defs and no subschema sets a base URI or an anchor. */
  portableRefs: boolean;
  /** The schema uses `$data` somewhere. */
  usesData: boolean;
  values: Map<Node, ValidateFunction | null>;
  names: Map<Node, ValidateFunction | null>;
  compiled: number;
}

const cache = new WeakMap<Spec, SpecParts>();

function partsOf(spec: Spec): SpecParts {
  let parts = cache.get(spec);
  if (parts === undefined) {
    const root = spec.schema;
    let portableRefs = true;
    for (const { schema, path } of subschemas(root)) {
      for (const key of SCOPE_KEYWORDS) if (Object.hasOwn(schema, key) && !(key === "$id" && path === "#")) portableRefs = false;
      const ref = own(schema, "$ref");
      if (ref !== undefined && (typeof ref !== "string" || !/^#\/(definitions|\$defs)\//.test(ref))) portableRefs = false;
    }
    let dialect: Dialect = "draft-07";
    try {
      dialect = dialectOf(root);
    } catch {
      // defineSpec refused such a schema already; the default keeps this total.
    }
    parts = {
      root,
      dialect,
      untrusted: spec.untrusted,
      portableRefs,
      usesData: JSON.stringify(root).includes('"$data"'),
      values: new Map(),
      names: new Map(),
      compiled: 0,
    };
    cache.set(spec, parts);
  }
  return parts;
}

/** The parts that apply to the root. */
export function rootParts(spec: Spec): Node[] {
  return expand(partsOf(spec), [partsOf(spec).root]);
}

/** The parts that apply to a member (`step`: a field name or an index) of a value the `parts` apply to. */
export function memberParts(spec: Spec, parts: readonly Node[], step: Step): Node[] {
  const sp = partsOf(spec);
  const found: Node[] = [];
  for (const node of parts) {
    if (typeof step === "string") {
      if (step === "__proto__") continue; // read with care elsewhere; left to the full check here
      const properties = own(node, "properties");
      const declared = isNode(properties) && Object.hasOwn(properties, step);
      if (declared) {
        const child = properties[step];
        if (isNode(child)) found.push(child);
        continue;
      }
      const patterns = own(node, "patternProperties");
      if (isNode(patterns) && Object.keys(patterns).length > 0) continue; // which applies depends on matching: not followed
      const additional = own(node, "additionalProperties");
      if (isNode(additional)) found.push(additional);
    } else {
      const items = own(node, "items");
      if (sp.dialect === "2020-12") {
        const prefix = own(node, "prefixItems");
        if (Array.isArray(prefix) && step < prefix.length) {
          if (isNode(prefix[step])) found.push(prefix[step] as Node);
        } else if (isNode(items)) found.push(items);
      } else if (Array.isArray(items)) {
        if (step < items.length) {
          if (isNode(items[step])) found.push(items[step] as Node);
        } else {
          const additional = own(node, "additionalItems");
          if (isNode(additional)) found.push(additional);
        }
      } else if (isNode(items)) found.push(items);
    }
  }
  return expand(sp, found);
}

/** The parts and everything they bring in with `allOf` and local `$ref`s. */
function expand(sp: SpecParts, start: Node[]): Node[] {
  const out: Node[] = [];
  const seen = new Set<Node>();
  const stack = [...start].reverse();
  while (stack.length > 0 && out.length < MAX_PARTS_PER_VALUE) {
    const node = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    const ref = own(node, "$ref");
    // Up to draft-07 a "$ref" replaces its siblings: only its target applies.
    if (ref === undefined || !refReplacesSiblings(sp.dialect)) {
      out.push(node);
      const all = own(node, "allOf");
      if (Array.isArray(all)) for (let i = all.length - 1; i >= 0; i--) if (isNode(all[i])) stack.push(all[i] as Node);
    }
    if (typeof ref === "string") {
      const target = resolve(sp, ref);
      if (target !== undefined) stack.push(target);
    }
  }
  return out;
}

/** A local `$ref` ("#" or a JSON pointer from the root); undefined for anything else, or when a base URI or an anchor could move it. */
function resolve(sp: SpecParts, ref: string): Node | undefined {
  if (!ref.startsWith("#") || hasScopes(sp)) return undefined;
  let node: unknown = sp.root;
  const pointer = ref.slice(1);
  if (pointer !== "") {
    if (!pointer.startsWith("/")) return undefined;
    for (const raw of pointer.slice(1).split("/")) {
      let key: string;
      try {
        key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      } catch {
        return undefined;
      }
      if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
      node = (node as Record<string, unknown>)[key];
    }
  }
  return isNode(node) ? node : undefined;
}

const scoped = new WeakMap<SpecParts, boolean>();

/** Whether a subschema below the root sets a base URI or an anchor. */
function hasScopes(sp: SpecParts): boolean {
  let result = scoped.get(sp);
  if (result === undefined) {
    result = false;
    for (const { schema, path } of subschemas(sp.root)) {
      for (const key of SCOPE_KEYWORDS) if (Object.hasOwn(schema, key) && !(key === "$id" && path === "#")) result = true;
    }
    scoped.set(sp, result);
  }
  return result;
}

/** An ajv error, at its place in the whole answer. */
type PlacedError = ErrorObject;

/**
 * Judge a closed value with one part: its errors, placed at the value's path,
 * and the schema their `schemaPath`s are relative to (for the messages). Null
 * when this part cannot be judged on its own (then the full check judges it).
 */
export function judgePart(spec: Spec, part: Node, value: unknown, pointer: string): { errors: PlacedError[]; schema: Node } | null {
  const sp = partsOf(spec);
  const compiled = validatorFor(sp, sp.values, part, () => shallow(sp, part));
  if (compiled === null) return null;
  return run(compiled, value, pointer);
}

/**
 * The names of an object's members against one part, as each member arrives:
 * `additionalProperties: false` and `propertyNames` need only the name.
 */
export function judgeName(spec: Spec, part: Node, name: string, pointer: string): { errors: PlacedError[]; schema: Node } | null {
  if (own(part, "additionalProperties") !== false && own(part, "propertyNames") === undefined) return null;
  if (own(part, "unevaluatedProperties") !== undefined) return null;
  const sp = partsOf(spec);
  const compiled = validatorFor(sp, sp.names, part, () => namesOnly(part));
  if (compiled === null) return null;
  const holder: Record<string, unknown> = {};
  Object.defineProperty(holder, name, { value: null, writable: true, enumerable: true, configurable: true });
  return run(compiled, holder, pointer);
}

function run(compiled: { validate: ValidateFunction; schema: Node }, value: unknown, pointer: string): { errors: PlacedError[]; schema: Node } {
  const validate = compiled.validate;
  if (validate(value) === true) return { errors: [], schema: compiled.schema };
  const errors = (validate.errors ?? []).map((error) => ({ ...error, instancePath: pointer + error.instancePath }));
  return { errors, schema: compiled.schema };
}

const schemas = new WeakMap<ValidateFunction, Node>();

function validatorFor(
  sp: SpecParts,
  store: Map<Node, ValidateFunction | null>,
  part: Node,
  build: () => Node | null,
): { validate: ValidateFunction; schema: Node } | null {
  let validate = store.get(part);
  if (validate === undefined) {
    validate = null;
    const schema = sp.compiled < MAX_COMPILED_PARTS ? build() : null;
    if (schema !== null) {
      const ready = withContext(sp, schema);
      if (ready !== null) {
        try {
          validate = compileSchema(ready, { untrusted: sp.untrusted, allErrors: true });
          schemas.set(validate, ready);
          sp.compiled++;
        } catch {
          validate = null; // a part ajv will not compile alone is left to the full check
        }
      }
    }
    store.set(part, validate);
  }
  return validate === null ? null : { validate, schema: schemas.get(validate)! };
}

/** A part with its members' subschemas replaced by `true` (they are judged when the members close). */
function shallow(sp: SpecParts, part: Node): Node | null {
  if (own(part, "unevaluatedProperties") !== undefined || own(part, "unevaluatedItems") !== undefined) return { ...part };
  const out: Node = {};
  const keep = (child: unknown) => isNode(child) && sp.usesData && JSON.stringify(child).includes('"$data"');
  const patterns = own(part, "patternProperties");
  const patternsApply = isNode(patterns) && Object.keys(patterns).length > 0;
  for (const key of Object.keys(part)) {
    const value = part[key];
    switch (key) {
      case "allOf":
      case "$ref":
        // Judged as parts of their own (expand).
        continue;
      case "properties":
        if (isNode(value)) {
          const members: Node = {};
          for (const name of Object.keys(value)) {
            const child = keep(value[name]) ? value[name] : true;
            if (name === "__proto__") Object.defineProperty(members, name, { value: child, writable: true, enumerable: true, configurable: true });
            else members[name] = child;
          }
          out[key] = members;
          continue;
        }
        break;
      case "additionalProperties":
        if (isNode(value) && !patternsApply && !keep(value)) {
          out[key] = true;
          continue;
        }
        break;
      case "items":
      case "prefixItems":
        if (Array.isArray(value)) {
          out[key] = value.map((child) => (keep(child) ? child : true));
          continue;
        }
        if (isNode(value) && !keep(value)) {
          out[key] = true;
          continue;
        }
        break;
      case "additionalItems":
        if (isNode(value) && !keep(value)) {
          out[key] = true;
          continue;
        }
        break;
    }
    out[key] = value;
  }
  return out;
}

/** What a part says about names alone: which are allowed, and `propertyNames`. */
function namesOnly(part: Node): Node {
  const out: Node = {};
  const properties = own(part, "properties");
  if (own(part, "additionalProperties") === false) {
    const members: Node = {};
    if (isNode(properties)) {
      for (const name of Object.keys(properties)) Object.defineProperty(members, name, { value: true, writable: true, enumerable: true, configurable: true });
    }
    out.properties = members;
    const patterns = own(part, "patternProperties");
    if (isNode(patterns)) out.patternProperties = Object.fromEntries(Object.keys(patterns).map((p) => [p, true]));
    out.additionalProperties = false;
  }
  const names = own(part, "propertyNames");
  if (names !== undefined) out.propertyNames = names;
  return out;
}

/**
 * The part as a schema of its own: the root's dialect, and the root's
 * definitions when it refers to them. Null when it cannot stand alone with the
 * same meaning (a reference it cannot carry, a `$data` pointer that leaves it).
 */
function withContext(sp: SpecParts, schema: Node): Node | null {
  const out: Node = { ...schema };
  const text = JSON.stringify(schema);
  if (text.includes('"$ref"')) {
    if (!sp.portableRefs) return null;
    for (const key of ["definitions", "$defs"]) {
      if (!Object.hasOwn(sp.root, key)) continue;
      if (Object.hasOwn(out, key) && out[key] !== sp.root[key]) return null;
      out[key] = sp.root[key];
    }
  }
  if (Object.hasOwn(sp.root, "$schema")) out.$schema = sp.root.$schema;
  else delete out.$schema;
  delete out.$id;
  if (sp.usesData) {
    // A referenced schema's $data could point anywhere; one in the part itself must stay inside its value.
    if (text.includes('"$ref"')) return null;
    if (text.includes('"$data"') && !dataStaysInside(schema, 0)) return null;
  }
  return out;
}

/** Whether every `$data` pointer in `schema` (applied at instance depth `depth` below the part's value) stays inside that value. */
function dataStaysInside(schema: unknown, depth: number): boolean {
  if (Array.isArray(schema)) return schema.every((s) => dataStaysInside(s, depth));
  if (!isNode(schema)) return true;
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    if (isNode(value) && Object.keys(value).length === 1 && typeof value.$data === "string") {
      const m = /^(\d+)(.*)$/.exec(value.$data);
      if (!m || Number(m[1]) > depth || m[2].startsWith("#")) return false;
      continue;
    }
    if (key === "properties" || key === "patternProperties" || key === "dependentSchemas" || key === "dependencies") {
      if (isNode(value)) {
        const deeper = key === "properties" || key === "patternProperties" ? depth + 1 : depth;
        for (const name of Object.keys(value)) if (!dataStaysInside(value[name], deeper)) return false;
      }
      continue;
    }
    if (["items", "prefixItems", "additionalItems", "additionalProperties", "contains", "unevaluatedItems", "unevaluatedProperties"].includes(key)) {
      if (!dataStaysInside(value, depth + 1)) return false;
      continue;
    }
    if (key === "propertyNames" && JSON.stringify(value).includes('"$data"')) return false;
    if (["allOf", "anyOf", "oneOf", "not", "if", "then", "else"].includes(key)) {
      if (!dataStaysInside(value, depth)) return false;
      continue;
    }
    if (key === "definitions" || key === "$defs") {
      if (JSON.stringify(value).includes('"$data"')) return false;
    }
  }
  return true;
}

/** A value's path as the JSON pointer ajv reports. */
export function pointerOf(path: readonly Step[]): string {
  let out = "";
  for (const step of path) {
    const text = String(step);
    out += "/" + (text.includes("~") || text.includes("/") ? text.replace(/~/g, "~0").replace(/\//g, "~1") : text);
  }
  return out;
}
