/**
 * The strict form of a spec's JSON Schema for a provider's strict structured outputs (`strict: true`), and the way back
 * from an answer written under it. Strict mode holds the model to the schema while it decodes, but takes only
 * a subset of JSON Schema: every object closed, a documented list of keywords (the provider's dialect, in its row),
 * for some providers every property required, and limits on the schema's size. So the spec's schema is rewritten:
 *
 * - where the dialect wants every property required (`allRequired`), an optional property becomes required and,
 *   unless the spec already allows `null` there, nullable: a `null` the model writes there means "left out" (an
 *   introduced null); elsewhere an optional property stays optional;
 * - every object is closed (`additionalProperties: false`): a property the spec lists only in `required`
 *   becomes a property of any value; what else an open object with properties of its own allowed, the
 *   model can no longer write;
 * - a map (an open object with no property of its own: `additionalProperties` a schema, `true` or absent,
 *   or `patternProperties`) is asked for as an array of entries `[{"key": …, "value": …}]`, each value in
 *   the strict form of the map's value schema (any value where more than one schema may apply), and read
 *   back as the object; a key written twice is refused, never merged;
 * - keywords the dialect does not take (`allOf`, `not`, `if`/`then`/`else`, `dependentRequired`,
 *   `patternProperties`, `minLength` …) are left out and listed, and `oneOf` is sent as `anyOf`;
 * - a root that is not one object (an array, a string, a union, a map) is asked for as `{"value": …}`, and a
 *   root that is only a `$ref` to a definition is that definition.
 *
 * This changes only what the model may write: the answer is mapped back (unwrapped, each introduced null
 * removed, a null the spec allows kept, each map read from its entries) and judged whole against the real spec
 * by the check step, so nothing the strict form leaves out can make an invalid answer pass. Where no strict form
 * exists (a `$ref` strict mode cannot follow, a schema that states nothing strict mode can hold, a map that may
 * also be an array; a schema past one of the provider's documented limits, checked before the call with the
 * limits in the provider's row), the request is sent without strict, saying why. Pure: no provider package, no graph.
 */
import { pathOf } from "../json/paths.js";
import type { JsonSchema } from "../specs/spec.js";
import type { SchemaProfile } from "./schema-subset.js";

/**
 * A provider's documented limits for a strict schema (its row in ./index.ts gives the numbers and their
 * source). A schema past one is refused with a 400, so it is checked before the call.
 */
export interface StrictLimits {
  /** Whose limits, as messages name them ("X's strict limit of …"). */
  provider: string;
  /** Object properties in all. */
  properties: number;
  /** Levels of objects within objects. */
  nesting: number;
  /** Enum values in all. */
  enumValues: number;
  /** Characters of property names, definition names, enum values and consts. */
  chars: number;
  /** A single string enum of more than `largeEnumValues` values may have at most `largeEnumChars` characters. */
  largeEnumValues: number;
  largeEnumChars: number;
}

/**
 * A provider's strict mode, as the transform writes for it (its row in ./index.ts declares it): the keywords it takes
 * beside the structure this module writes itself (type, properties, required, additionalProperties, items, anyOf,
 * $ref, $defs/definitions), and whether it wants every property required.
 */
export interface StrictDialect {
  /** Each keyword strict mode takes, with the values it takes; any other is left out and listed. */
  keywords: Readonly<Record<string, (value: unknown) => boolean>>;
  /** Every property must be required: an optional one is sent required and nullable, its introduced null meaning "left out". */
  allRequired: boolean;
}

/** What this module writes itself: a schema profile's other keywords are the dialect's. */
const STRUCTURE = new Set(["type", "properties", "required", "additionalProperties", "items", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions"]);

/**
 * The dialect of a provider whose strict mode takes the subset a schema profile names (./schema-subset.ts): its keywords,
 * each with the values the profile takes. `allOf` is never kept: each of its branches closed, they would contradict
 * one another (`allOf: [{"properties": {"a": …}}, {"properties": {"b": …}}]` closed admits only `{}`).
 */
export function strictDialectOf(profile: SchemaProfile, allRequired: boolean): StrictDialect {
  const keywords = [...profile.keep].filter((key) => !STRUCTURE.has(key));
  return { keywords: Object.fromEntries(keywords.map((key) => [key, profile.values?.[key] ?? (() => true)])), allRequired };
}

/** Keywords whose absence is no loss: annotations, and what this module rewrites. */
const SILENT = new Set(["$schema", "$id", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly", "required"]);

/** Most dropped keywords listed; the rest are counted. */
const MAX_LISTED = 20;

/** Per strict object schema: the properties whose null means "left out" (introduced by the transform). */
type IntroducedNulls = WeakMap<object, ReadonlySet<string>>;

/** The strict array schemas that carry a map as its entries (read back as the object). */
type EntryArrays = WeakSet<object>;

/** The strict form of a schema: what is sent, what was left out, and how an answer is mapped back. */
export type StrictForm =
  | {
      strict: true;
      schema: JsonSchema;
      dropped: string[];
      nulls: IntroducedNulls;
      maps: EntryArrays;
      /** The spec's root is not an object (or is a union): the strict form asks for `{"value": …}`, unwrapped before judging. */
      wrapped: boolean;
      /** Whether an answer may differ from the spec's own shape (a wrapped root, introduced nulls, a map's entries) until it is mapped back. */
      reshapes: boolean;
    }
  | { strict: false; reason: string };

/** The one property of the object a root that is not an object is wrapped in. */
const WRAPPER_KEY = "value";

const forms = new WeakMap<StrictDialect, WeakMap<JsonSchema, StrictForm>>();

/**
 * The strict form of a spec's schema in a provider's dialect (computed once per schema object and dialect), or why
 * there is none. The provider's size limits are not checked here (its row does, before the call): how an answer maps
 * back does not depend on them.
 */
export function strictForm(schema: JsonSchema, dialect: StrictDialect): StrictForm {
  let byDialect = forms.get(dialect);
  if (byDialect === undefined) {
    byDialect = new WeakMap();
    forms.set(dialect, byDialect);
  }
  let form = byDialect.get(schema);
  if (form === undefined) {
    form = buildForm(schema, dialect);
    byDialect.set(schema, form);
  }
  return form;
}

class NoStrictForm extends Error {}

function buildForm(spec: JsonSchema, dialect: StrictDialect): StrictForm {
  const given = withoutKey(spec, "$schema");
  const walk = new Transform(given, dialect);
  // A root that only refers to a definition (`{"$ref": "#/definitions/Main", "definitions": …}`) is that definition.
  const target = typeof given.$ref === "string" ? walk.resolve(given.$ref) : given;
  const root = isPlainObject(target) ? { ...withoutKey(given, "$ref"), ...target } : given;
  // A map at the root is an array of entries, and strict mode asks for an object at the root.
  const wrapped = !isObjectSchema(root) || isMap(root);
  let schema: JsonSchema;
  try {
    if (wrapped) {
      const inner = walk.node(withoutKey(withoutKey(root, "$defs"), "definitions"), "");
      if (isAnyValue(inner))
        return { strict: false, reason: "the schema states nothing strict mode can hold (its constraints are all keywords strict mode does not take)" };
      // "#" would name the wrapper, not the spec's root.
      if (walk.refersToRoot)
        return { strict: false, reason: 'the schema\'s root is not an object and refers to itself ("$ref": "#"), which a wrapped root cannot carry' };
      schema = { type: "object", properties: { [WRAPPER_KEY]: inner }, required: [WRAPPER_KEY], additionalProperties: false, ...walk.definitions(root) };
    } else schema = walk.node(root, "", true);
    walk.checkEntriesUnambiguous(schema);
  } catch (error) {
    if (error instanceof NoStrictForm) return { strict: false, reason: error.message };
    throw error;
  }
  const listed = walk.dropped.length > MAX_LISTED ? [...walk.dropped.slice(0, MAX_LISTED), `… and ${walk.dropped.length - MAX_LISTED} more`] : walk.dropped;
  return { strict: true, schema, dropped: listed, nulls: walk.nulls, maps: walk.maps, wrapped, reshapes: wrapped || walk.introducedAny || walk.mapsAny };
}

class Transform {
  readonly dropped: string[] = [];
  readonly nulls: IntroducedNulls = new WeakMap();
  readonly maps: EntryArrays = new WeakSet();
  /** Whether a `$ref` names the root ("#"). */
  refersToRoot = false;
  /** Whether some property's null was introduced. */
  introducedAny = false;
  /** Whether some map is asked for as entries. */
  mapsAny = false;
  constructor(
    private readonly root: JsonSchema,
    private readonly dialect: StrictDialect,
  ) {}

  /** One subschema, rewritten; `top`: the root (its $defs are kept). */
  node(given: unknown, path: string, top = false): JsonSchema {
    if (given === true) return anyValue();
    if (given === false || given === null || typeof given !== "object" || Array.isArray(given))
      throw new NoStrictForm(`${path || "/"} admits no value, which strict mode cannot say`);
    const s = given as JsonSchema;
    const out: JsonSchema = {};
    const drop = (key: string) => {
      if (!SILENT.has(key)) this.dropped.push(`${path || "/"}: ${key}`);
    };
    if (typeof s.$ref === "string") {
      const ref = s.$ref;
      if (!this.refFollowed(ref)) throw new NoStrictForm(`${path || "/"} refers to ${JSON.stringify(ref)}; strict mode follows only "#" and "#/$defs/…"`);
      out.$ref = ref;
      if (ref === "#") this.refersToRoot = true;
      if (typeof s.description === "string") out.description = s.description;
      for (const key of Object.keys(s)) if (key !== "$ref" && key !== "description") drop(key);
      return out;
    }
    const types = typesOf(s);
    // An object schema (a type, or properties without one) that is a map.
    const map = (types?.includes("object") === true || (types === undefined && s.properties !== undefined)) && isMap(s);
    for (const [key, value] of Object.entries(s)) {
      if (key === "type" || key === "properties" || key === "items" || key === "anyOf" || key === "oneOf") continue;
      // A map's value schema and its bounds are carried by its entries.
      if (map && (key === "additionalProperties" || key === "patternProperties" || key === "minProperties" || key === "maxProperties")) continue;
      if ((key === "$defs" || key === "definitions") && top && isPlainObject(value)) continue;
      // Every object is closed: listed only where the spec allowed extra properties beside its own (a map is carried as entries).
      if (key === "additionalProperties" && value === false) continue;
      if (Object.hasOwn(this.dialect.keywords, key) && this.dialect.keywords[key](value)) out[key] = value;
      else drop(key);
    }
    if (top) Object.assign(out, this.definitions(s));
    const union = s.anyOf ?? s.oneOf;
    if (union !== undefined && (types !== undefined || s.properties !== undefined)) {
      // A union beside the schema's own structure only adds constraints (`anyOf: [{required: [a]}, …]`): left to the validator.
      for (const key of ["anyOf", "oneOf"]) if (s[key] !== undefined) drop(key);
    } else if (union !== undefined) {
      if (s.anyOf !== undefined && s.oneOf !== undefined) drop("oneOf");
      if (!Array.isArray(union) || union.length === 0) throw new NoStrictForm(`${path || "/"} has an empty union`);
      out.anyOf = union.map((branch, i) => this.node(branch, `${path}/anyOf/${i}`));
      return out;
    }
    if (types === undefined && out.enum === undefined && out.const === undefined && s.properties === undefined) {
      // No type: any value. Strict mode needs a type, so the value's kinds are spelt out; the keywords that
      // only constrain some kinds are left to the validator.
      for (const key of Object.keys(out)) {
        if (key === "description" || key === "title" || key === "$defs" || key === "definitions") continue;
        delete out[key];
        drop(key);
      }
      return { ...out, ...anyValue() };
    }
    if (map) return this.map(s, out, types ?? ["object"], path);
    if (types !== undefined) out.type = types.length === 1 ? types[0] : types;
    if (types?.includes("object") || (types === undefined && s.properties !== undefined)) this.object(s, out, path);
    if (types?.includes("array")) {
      if (isPlainObject(s.items) || typeof s.items === "boolean") out.items = this.node(s.items, `${path}/items`);
      else {
        if (s.items !== undefined) drop("items");
        out.items = anyValue();
      }
    } else if (s.items !== undefined) drop("items");
    return out;
  }

  /**
   * A map as an array of its entries, each `{"key": …, "value": …}` with the value in the strict form of the
   * map's value schema; `minProperties`/`maxProperties` as the array's bounds where the dialect takes them (exact: a
   * key written twice is refused when the answer is read back), else left out and listed. Another type beside "object" is a branch of its own, except
   * "array", which an array of entries could not be told from.
   */
  private map(s: JsonSchema, out: JsonSchema, types: string[], path: string): JsonSchema {
    const at = path || "/";
    if (out.enum !== undefined || out.const !== undefined) throw new NoStrictForm(`${at} is a map with enum or const, which an array of entries cannot carry`);
    if (types.includes("array")) throw new NoStrictForm(`${at} may be a map or an array, which strict mode's array of entries could not tell apart`);
    const value = this.node(mapValueSchema(s), `${path}/additionalProperties`);
    const entries: JsonSchema = {
      type: "array",
      items: { type: "object", properties: { key: { type: "string" }, value }, required: ["key", "value"], additionalProperties: false },
    };
    for (const [from, to] of [
      ["minProperties", "minItems"],
      ["maxProperties", "maxItems"],
    ]) {
      if (s[from] === undefined) continue;
      if (Object.hasOwn(this.dialect.keywords, to) && this.dialect.keywords[to](s[from])) entries[to] = s[from];
      else this.dropped.push(`${at}: ${from}`);
    }
    this.mapsAny = true;
    const others = types.filter((t) => t !== "object");
    const annotations = Object.fromEntries(Object.entries(out).filter(([key]) => key === "description" || key === "title"));
    if (others.length === 0) {
      for (const key of Object.keys(out)) if (!Object.hasOwn(annotations, key)) this.dropped.push(`${at}: ${key}`);
      const whole = { ...annotations, ...entries };
      this.maps.add(whole);
      return whole;
    }
    this.maps.add(entries);
    const rest = Object.fromEntries(Object.entries(out).filter(([key]) => !Object.hasOwn(annotations, key)));
    return { ...annotations, anyOf: [entries, { ...rest, type: others.length === 1 ? others[0] : others }] };
  }

  /** A map is read back from an array only where no other branch of the same union may be an array. */
  checkEntriesUnambiguous(schema: JsonSchema): void {
    const seen = new Set<object>();
    const visit = (node: unknown, path: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => visit(item, `${path}/${i}`));
      if (!isPlainObject(node) || seen.has(node)) return;
      seen.add(node);
      if (Array.isArray(node.anyOf)) {
        const branches = unionBranches(node, (ref) => followRef(schema, ref));
        if (branches.some((b) => this.maps.has(b)) && branches.filter((b) => typesOf(b)?.includes("array")).length > 1)
          throw new NoStrictForm(`${path || "/"} may be a map or an array, which strict mode's array of entries could not tell apart`);
      }
      for (const [key, value] of Object.entries(node)) if (key !== "enum" && key !== "const") visit(value, `${path}/${key}`);
    };
    visit(schema, "");
  }

  /** The root's definitions, each rewritten (strict mode follows `$ref`s into them, recursion included). */
  definitions(s: JsonSchema): JsonSchema {
    const out: JsonSchema = {};
    for (const key of ["$defs", "definitions"]) {
      const defs = s[key];
      if (isPlainObject(defs)) out[key] = mapEntries(defs, (name, def) => this.node(def, `/${key}/${name}`));
    }
    return out;
  }

  /** An object schema closed; where the dialect wants every property required, the optional ones nullable unless the spec allows null. */
  private object(s: JsonSchema, out: JsonSchema, path: string): void {
    const given = isPlainObject(s.properties) ? s.properties : {};
    const required = new Set(Array.isArray(s.required) ? s.required.filter((n): n is string => typeof n === "string") : []);
    const introduced = new Set<string>();
    const properties: Array<[string, JsonSchema]> = [];
    for (const [name, sub] of Object.entries(given)) {
      let strict = this.node(sub, `${path}/properties/${name}`);
      if (!required.has(name) && this.dialect.allRequired) {
        // Optional: the model must be able to write null. Where the spec allows null there, a null is the spec's
        // own value and stays; elsewhere it stands for "left out" and is removed before judging.
        if (!admitsNull(strict)) strict = nullable(strict);
        if (!this.allowsNull(sub, 0)) introduced.add(name);
      }
      properties.push([name, strict]);
    }
    // Named only in `required`: a property of any value, so the closed object can still have it.
    for (const name of required) if (!Object.hasOwn(given, name)) properties.push([name, anyValue()]);
    out.properties = Object.fromEntries(properties);
    out.required = properties.map(([name]) => name).filter((name) => this.dialect.allRequired || required.has(name));
    out.additionalProperties = false;
    if (!out.type) out.type = "object";
    if (introduced.size > 0) {
      this.nulls.set(out, introduced);
      this.introducedAny = true;
    }
  }

  /** Whether the spec's subschema admits null (unsure is no: a null there is then removed, and the field judged as left out). */
  private allowsNull(s: unknown, hops: number): boolean {
    if (s === true) return true;
    if (!isPlainObject(s) || hops > 16) return false;
    if (typeof s.$ref === "string") return this.allowsNull(this.resolve(s.$ref), hops + 1);
    if (Array.isArray(s.enum) && !s.enum.includes(null)) return false;
    if (Object.hasOwn(s, "const") && s.const !== null) return false;
    if (s.not !== undefined) return false;
    if (Array.isArray(s.allOf) && !s.allOf.every((b) => this.allowsNull(b, hops + 1))) return false;
    for (const key of ["anyOf", "oneOf"]) {
      const union = s[key];
      if (Array.isArray(union) && !union.some((b) => this.allowsNull(b, hops + 1))) return false;
    }
    const types = typesOf(s);
    return types === undefined || types.includes("null");
  }

  private refFollowed(ref: string): boolean {
    return ref === "#" || this.resolve(ref) !== undefined;
  }

  /** What a `$ref` strict mode follows names, in the spec's schema. */
  resolve(ref: string): unknown {
    return followRef(this.root, ref);
  }
}

/** What a `$ref` strict mode follows names: the root ("#"), or one entry of the root's $defs/definitions; undefined for any other. */
function followRef(root: JsonSchema, ref: string): unknown {
  if (ref === "#") return root;
  const match = /^#\/(\$defs|definitions)\/([^/~]+)$/.exec(ref);
  if (match === null) return undefined;
  const defs = root[match[1]];
  return isPlainObject(defs) && Object.hasOwn(defs, match[2]) ? defs[match[2]] : undefined;
}

/** Whether an object schema is a map or a free-form object: open (extra properties or pattern properties allowed), with no property of its own. */
function isMap(s: JsonSchema): boolean {
  const open = s.additionalProperties !== false || s.patternProperties !== undefined;
  const named = (isPlainObject(s.properties) && Object.keys(s.properties).length > 0) || (Array.isArray(s.required) && s.required.length > 0);
  return open && !named;
}

/**
 * The schema every value of a map meets: `additionalProperties` (any value when absent), or the one schema of
 * `patternProperties` when it is the only one that may apply; where several may (a key matching two patterns
 * meets both), any value: the validator judges the rest.
 */
function mapValueSchema(s: JsonSchema): unknown {
  const applies = isPlainObject(s.patternProperties) ? Object.values(s.patternProperties) : [];
  if (s.additionalProperties !== false) applies.push(s.additionalProperties ?? true);
  const distinct = new Set(applies.map((v) => JSON.stringify(v)));
  return distinct.size === 1 ? applies[0] : true;
}

/** A union's branches, each `$ref` followed and each nested union flattened (bounded). */
function unionBranches(s: JsonSchema, follow: (ref: string) => unknown): JsonSchema[] {
  const out: JsonSchema[] = [];
  const add = (branch: unknown, hops: number): void => {
    let b = branch;
    for (let i = 0; isPlainObject(b) && typeof b.$ref === "string" && i <= 16; i++) b = follow(b.$ref);
    if (!isPlainObject(b) || typeof b.$ref === "string" || hops > 16) return;
    if (Array.isArray(b.anyOf)) for (const inner of b.anyOf) add(inner, hops + 1);
    else out.push(b);
  };
  for (const branch of s.anyOf as unknown[]) add(branch, 0);
  return out;
}

/** Any JSON value, as strict mode can say it: the scalars, null, and (one level down) closed empty objects and arrays of scalars. */
function anyValue(): JsonSchema {
  const scalar = [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }];
  return { anyOf: [...scalar, { type: "object", properties: {}, required: [], additionalProperties: false }, { type: "array", items: { anyOf: scalar } }] };
}

/** Whether a strict subschema admits null (a `$ref` is not followed: unsure is no, and the caller adds null). */
function admitsNull(s: JsonSchema): boolean {
  if (typesOf(s)?.includes("null")) return true;
  if (Array.isArray(s.enum)) return s.enum.includes(null);
  if (Object.hasOwn(s, "const")) return s.const === null;
  return Array.isArray(s.anyOf) && s.anyOf.some((branch) => isPlainObject(branch) && admitsNull(branch));
}

/** A strict subschema that also admits null. */
function nullable(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: "null" }] };
  return { anyOf: [schema, { type: "null" }] };
}

function typesOf(s: JsonSchema): string[] | undefined {
  if (typeof s.type === "string") return [s.type];
  if (Array.isArray(s.type)) return s.type.filter((t): t is string => typeof t === "string");
  return undefined;
}

/** Whether a root schema is one object schema (not a union, not another type). */
function isObjectSchema(s: JsonSchema): boolean {
  const types = typesOf(s);
  return types !== undefined ? types.length === 1 && types[0] === "object" : s.properties !== undefined;
}

/** Whether a strict subschema is the "any value" this module writes for a schema it could not carry. */
function isAnyValue(s: JsonSchema): boolean {
  return JSON.stringify(s.anyOf) === JSON.stringify(anyValue().anyOf);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A map's entries, each rewritten (own entries only: a property may be named anything, "__proto__" included). */
function mapEntries(map: Record<string, unknown>, f: (name: string, value: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(map).map(([name, value]) => [name, f(name, value)]));
}

function withoutKey(s: JsonSchema, key: string): JsonSchema {
  return Object.fromEntries(Object.entries(s).filter(([k]) => k !== key));
}

/** Which of a provider's documented limits a strict schema passes, in words; undefined when it fits them all. */
export function strictLimitProblem(schema: JsonSchema, L: StrictLimits): string | undefined {
  let properties = 0;
  let enumValues = 0;
  let chars = 0;
  let deepest = 0;
  let largeEnum: string | undefined;
  const visit = (node: unknown, level: number, path: string): void => {
    if (Array.isArray(node)) return node.forEach((item, i) => visit(item, level, `${path}/${i}`));
    if (!isPlainObject(node)) return;
    const isObject = isPlainObject(node.properties);
    const here = isObject ? level + 1 : level;
    deepest = Math.max(deepest, here);
    if (isObject) {
      const names = Object.keys(node.properties as object);
      properties += names.length;
      for (const name of names) chars += name.length;
    }
    if (Array.isArray(node.enum)) {
      enumValues += node.enum.length;
      let enumChars = 0;
      for (const value of node.enum) enumChars += typeof value === "string" ? value.length : JSON.stringify(value).length;
      chars += enumChars;
      if (node.enum.length > L.largeEnumValues && enumChars > L.largeEnumChars && node.enum.every((v) => typeof v === "string"))
        largeEnum ??= `${path || "/"} has ${node.enum.length} enum values of ${enumChars.toLocaleString("en-US")} characters in all, over ${L.provider}'s strict limit of ${L.largeEnumChars.toLocaleString("en-US")} characters for an enum of more than ${L.largeEnumValues} values`;
    }
    if (typeof node.const === "string") chars += node.const.length;
    for (const key of ["$defs", "definitions"]) {
      if (!isPlainObject(node[key])) continue;
      for (const [name, def] of Object.entries(node[key] as object)) {
        chars += name.length;
        visit(def, 0, `${path}/${key}/${name}`);
      }
    }
    if (isObject) for (const [name, sub] of Object.entries(node.properties as object)) visit(sub, here, `${path}/properties/${name}`);
    visit(node.items, here, `${path}/items`);
    visit(node.anyOf, here, `${path}/anyOf`);
  };
  visit(schema, 0, "");
  const n = (x: number) => x.toLocaleString("en-US");
  if (properties > L.properties) return `the schema has ${n(properties)} properties, over ${L.provider}'s strict limit of ${n(L.properties)}`;
  if (deepest > L.nesting) return `the schema nests objects ${deepest} levels deep, over ${L.provider}'s strict limit of ${L.nesting}`;
  if (enumValues > L.enumValues) return `the schema has ${n(enumValues)} enum values, over ${L.provider}'s strict limit of ${n(L.enumValues)}`;
  if (chars > L.chars)
    return `the schema's property names, definition names, enum values and consts come to ${n(chars)} characters, over ${L.provider}'s strict limit of ${n(L.chars)}`;
  return largeEnum;
}

/**
 * An answer written under the strict form, mapped back: unwrapped when the strict form wrapped the root (an answer
 * that is not exactly the wrapper is refused, `problem`),
 * each null the transform introduced (an optional property the spec does not let be null) removed, in
 * place, and each map's array of entries read as the object. A null the spec allows stays; where the
 * answer's shape does not say which union branch it took, nothing is changed there (the check step then
 * judges the value as written). A key written twice among a map's entries is never merged: the answer is
 * refused (`problem`). A key of any name is an own field of the object built (`__proto__` included, never
 * a prototype), and the check step reads the mapped value as its reader reads text, so it refuses what the
 * reader would. Returns the value and what was changed (JSON pointers into the value judged). Bounded by
 * the reader's nesting limit.
 */
export function mapBackStrictAnswer(answer: unknown, form: Extract<StrictForm, { strict: true }>): { value: unknown; changes: string[]; problem?: string } {
  const changes: string[] = [];
  let problem: string | undefined;
  const root = form.schema;
  let value = answer;
  let start: JsonSchema = root;
  if (form.wrapped) {
    // Asked for as the wrapper and nothing else: any other shape is refused, never judged as it came (it could be an object the spec takes).
    const wrapperProblem = notTheWrapper(answer);
    if (wrapperProblem !== undefined) return { value, changes, problem: wrapperProblem };
    value = (answer as Record<string, unknown>)[WRAPPER_KEY];
    start = (root.properties as Record<string, JsonSchema>)[WRAPPER_KEY];
    changes.push(`the answer unwrapped from {"${WRAPPER_KEY}": …}`);
  }
  const follow = (ref: string) => followRef(root, ref);
  const resolve = (s: JsonSchema): JsonSchema | undefined => {
    for (let hops = 0; typeof s.$ref === "string"; hops++) {
      const next = follow(s.$ref);
      if (!isPlainObject(next) || hops > 16) return undefined;
      s = next;
    }
    return s;
  };
  /** The value mapped back (a map's entries: a new object; anything else changed in place). */
  const walk = (v: unknown, given: JsonSchema, path: string, steps: Array<string | number>): unknown => {
    const s = resolve(given);
    if (s === undefined || v === null || typeof v !== "object" || problem !== undefined) return v;
    if (Array.isArray(s.anyOf)) {
      const fits = unionBranches(s, follow).filter((b) => shapeFits(v, b));
      return fits.length === 1 ? walk(v, fits[0], path, steps) : v;
    }
    if (Array.isArray(v)) {
      if (form.maps.has(s)) return entriesRead(v, s, path, steps);
      if (isPlainObject(s.items)) v.forEach((item, i) => (v[i] = walk(item, s.items as JsonSchema, `${path}/${i}`, [...steps, i])));
      return v;
    }
    if (!isPlainObject(s.properties)) return v;
    const introduced = form.nulls.get(s);
    const record = v as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const at = `${path}/${pointerStep(key)}`;
      if (record[key] === null && introduced?.has(key)) {
        delete record[key];
        changes.push(`${at}: null removed (the field left out)`);
      } else if (Object.hasOwn(s.properties, key)) {
        const mapped = walk(record[key], s.properties[key] as JsonSchema, at, [...steps, key]);
        if (mapped !== record[key]) defineField(record, key, mapped);
      }
    }
    return v;
  };
  /** A map's entries as the object; the array as it is when one is not an entry, or a key is written twice. */
  const entriesRead = (entries: unknown[], s: JsonSchema, path: string, steps: Array<string | number>): unknown => {
    const item = s.items as JsonSchema;
    const valueSchema = (item.properties as Record<string, JsonSchema>).value;
    const keys = new Set<string>();
    for (const entry of entries) {
      if (!isPlainObject(entry) || !shapeFits(entry, item) || typeof entry.key !== "string") return entries;
      if (keys.has(entry.key)) {
        const where = pathOf(steps);
        problem = `The answer names the key ${JSON.stringify(entry.key.length > 40 ? `${entry.key.slice(0, 40)}…` : entry.key)} twice among the entries of ${where === "" ? "the top-level map" : where}; each key may appear only once.`;
        return entries;
      }
      keys.add(entry.key);
    }
    changes.push(`${path || "/"}: entries [ … ] read as an object`);
    const object: Record<string, unknown> = {};
    for (const entry of entries as Array<{ key: string; value: unknown }>)
      defineField(object, entry.key, walk(entry.value, valueSchema, `${path}/${pointerStep(entry.key)}`, [...steps, entry.key]));
    return object;
  };
  value = walk(value, start, "", []);
  return problem === undefined ? { value, changes } : { value, changes, problem };
}

/** A key as one step of a JSON pointer. */
function pointerStep(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** Set an own, enumerable data field as JSON.parse does: whatever its name ("__proto__" included), never a setter or the prototype. */
function defineField(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * Whether a container value has the shape of a strict branch: an array for an array; for an object, an object with only
 * the branch's keys and every one it requires (in a dialect that wants every property required: exactly its keys).
 */
function shapeFits(v: object, s: JsonSchema): boolean {
  const types = typesOf(s) ?? [];
  if (Array.isArray(v)) return types.includes("array");
  if (!types.includes("object") || !isPlainObject(s.properties)) return false;
  const properties = s.properties;
  const required = Array.isArray(s.required) ? (s.required as string[]) : [];
  return Object.keys(v).every((k) => Object.hasOwn(properties, k)) && required.every((k) => Object.hasOwn(v, k));
}

/** Why an answer asked for as `{"value": …}` is not that (undefined: it is): the one field, and no other. */
function notTheWrapper(answer: unknown): string | undefined {
  const asked = `The answer was asked for as {"${WRAPPER_KEY}": …}, one object whose only field "${WRAPPER_KEY}" holds the value`;
  if (!isPlainObject(answer)) return `${asked}, and it is not an object.`;
  if (!Object.hasOwn(answer, WRAPPER_KEY)) return `${asked}, and it has no field "${WRAPPER_KEY}".`;
  const others = Object.keys(answer).filter((key) => key !== WRAPPER_KEY);
  if (others.length === 0) return undefined;
  const named = others.slice(0, 5).map((key) => JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key));
  return `${asked}, and it has other fields beside it (${named.join(", ")}${others.length > 5 ? ` and ${others.length - 5} more` : ""}).`;
}
