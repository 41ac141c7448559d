/**
 * What may stand where a JSON Schema goes. A spec is only what can be
 * recognised as one: a zod 4 schema or another Standard Schema library's
 * schema (taken whole, see standard.ts), a Spec from defineSpec, or a JSON
 * Schema, which is JSON data. Anything else is refused, never read as a JSON
 * Schema: another library's schema inside a JSON Schema, or in its JSON form
 * (Valibot's `v.object(…)` serialises to a plain object with `type: "object"`),
 * would otherwise be taken for a JSON Schema whose other fields are unknown
 * keywords, ignored, and so would check nothing of what it says. The walk
 * reads what JSON.stringify reads (own enumerable string keys) and refuses a
 * getter; it names the library where its shape tells it (reading a
 * `~standard` marker, whose getter may run, only for that name).
 */
import { SpecError } from "../errors.js";
import { SUBSCHEMA_KEYWORDS } from "./limits.js";
import { VALIBOT_WRAP } from "./standard.js";

/** What the refusal says is supported instead. */
const SUPPORTED =
  "a spec is a zod 4 schema, another Standard Schema library's schema passed whole (Valibot and Effect Schema wrapped for Standard JSON Schema, ArkType), or a JSON Schema, which is JSON data";

/** A Standard Schema vendor's name as its users know it, with what to pass instead where this form cannot be read. */
const VENDORS: Record<string, { name: string; instead?: string }> = {
  valibot: { name: "Valibot", instead: `pass the Valibot schema wrapped as the spec (not inside a JSON Schema, nor as JSON): ${VALIBOT_WRAP}` },
  arktype: { name: "ArkType", instead: "pass the ArkType type itself as the spec (not inside a JSON Schema, nor as JSON)" },
  effect: { name: "Effect Schema", instead: "pass Schema.toStandardJSONSchemaV1(Schema.toStandardSchemaV1(schema)) as the spec (Effect 4)" },
  zod: { name: "a zod schema of another API than zod 4's classic one (zod 3, zod/mini or zod/v4/core)", instead: "write it with zod 4's classic API" },
};

type Named = { library: string; instead?: string };

/** The schema library a value comes from, when its shape tells it; undefined for a value with no library marker. */
function foreignSchemaLibrary(value: unknown): Named | undefined {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return undefined;
  // The common case, a JSON Schema's own object: none of the fields a marker needs.
  if (isPlainObject(value) && !Object.hasOwn(value, "~standard") && !Object.hasOwn(value, "kind") && !Object.hasOwn(value, "ast")) return undefined;
  const vendor = standardVendor(value);
  if (vendor !== undefined) {
    const known = Object.hasOwn(VENDORS, vendor) ? VENDORS[vendor] : undefined;
    return known ? { library: known.name, instead: known.instead } : { library: `a Standard Schema library (vendor ${JSON.stringify(vendor.slice(0, 40))})` };
  }
  // Valibot before Standard Schema, and its JSON form: kind "schema", a string "expects", a boolean "async".
  if (dataField(value, "kind") === "schema" && typeof dataField(value, "expects") === "string" && typeof dataField(value, "async") === "boolean") {
    return { library: VENDORS.valibot.name, instead: VENDORS.valibot.instead };
  }
  // Effect Schema: a class whose static `ast` is a tagged node.
  const ast = dataField(value, "ast");
  if (ast !== null && typeof ast === "object" && typeof dataField(ast, "_tag") === "string")
    return { library: VENDORS.effect.name, instead: VENDORS.effect.instead };
  return undefined;
}

/**
 * `~standard.vendor`, the Standard Schema marker; its getter (Valibot's is one) is run only to read the library's
 * name. On a plain object only an enumerable field counts, as JSON reads it: zod's z.toJSONSchema() output, a
 * JSON Schema, carries a non-enumerable "~standard".
 */
function standardVendor(value: object): string | undefined {
  try {
    const present = isPlainObject(value) ? Object.getOwnPropertyDescriptor(value, "~standard")?.enumerable === true : "~standard" in value;
    if (!present) return undefined;
    const props = (value as { "~standard"?: unknown })["~standard"];
    const vendor = props !== null && typeof props === "object" ? (props as { vendor?: unknown }).vendor : undefined;
    return typeof vendor === "string" ? vendor : "unknown";
  } catch {
    return "unknown";
  }
}

/** An own data field's value (never a getter's; on a plain object, an enumerable one, as JSON reads it), else undefined. */
function dataField(value: object, name: string): unknown {
  try {
    const descriptor = Object.getOwnPropertyDescriptor(value, name);
    if (descriptor === undefined || !("value" in descriptor) || (isPlainObject(value) && !descriptor.enumerable)) return undefined;
    return descriptor.value;
  } catch {
    return undefined;
  }
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return !Array.isArray(value) && (proto === Object.prototype || proto === null);
}

/** Refuse a value named by its library; `what` says where it stood ("the spec", "the spec's schema"). */
function refuseForeign(named: Named, what: string, at = "#"): never {
  const where = at === "#" ? what : `${what} (at ${at.slice(0, 200)})`;
  throw new SpecError(
    `${where} is ${/^(a|an) /.test(named.library) ? named.library : `${/^[AEIOU]/.test(named.library) ? "an" : "a"} ${named.library} schema`}, which this package does not read in this form: ${SUPPORTED}. ` +
      `Read as a JSON Schema it would check nothing of what it says${named.instead ? `; ${named.instead}` : ""}.`,
  );
}

/**
 * Refuse what is not a JSON Schema: a value that is not JSON data (a function, a class instance, a getter), or
 * one carrying another schema library's marker at a place a subschema stands. `what` names it in the message.
 * Throws SpecError; returns nothing. One walk, linear in the value's size, with a stack of its own.
 */
export function refuseUnrecognisedSchema(value: unknown, what: string, wrapped = false): void {
  try {
    if (typeof value === "function")
      refuseForeign(foreignSchemaLibrary(value) ?? { library: "a function or a class (as ArkType and Effect schemas are)" }, what);
    walk(value, what, wrapped ? "wrapper" : "schema");
  } catch (error) {
    if (error instanceof SpecError) throw error;
    throw new SpecError(`${what} could not be read as JSON data (${String((error as Error)?.message ?? error).slice(0, 200)}); ${SUPPORTED}.`);
  }
}

/** What a value is in a schema: a subschema, a list or a map of subschemas, data (a const, an enum, a note), or an inline spec {name, description, schema}. */
type Role = "schema" | "list" | "map" | "data" | "wrapper";

interface Item {
  value: unknown;
  role: Role;
  key: string;
  parent: Item | undefined;
}

const SINGLE = new Set(SUBSCHEMA_KEYWORDS.single);
const LISTS = new Set(SUBSCHEMA_KEYWORDS.lists);
const MAPS = new Set(SUBSCHEMA_KEYWORDS.maps);

/** The role of a field of a container with role `role`. */
function roleOf(role: Role, key: string, value: unknown): Role {
  if (role === "list" || role === "map") return "schema";
  if (role === "data") return "data";
  if (role === "wrapper") return key === "schema" && !Array.isArray(value) ? "schema" : "data";
  if (Array.isArray(value)) return LISTS.has(key) ? "list" : "data";
  return SINGLE.has(key) ? "schema" : MAPS.has(key) ? "map" : "data";
}

/** An item's place as a JSON pointer into the schema, built only for a message. */
function pathOf(item: Item): string {
  const keys: string[] = [];
  for (let i: Item | undefined = item; i?.parent !== undefined; i = i.parent) keys.push(i.key.replace(/~/g, "~0").replace(/\//g, "~1"));
  return ["#", ...keys.reverse()].join("/").slice(0, 200);
}

function walk(root: unknown, what: string, role: Role): void {
  const seen = new Set<object>();
  const stack: Item[] = [{ value: root, role, key: "", parent: undefined }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    const value = item.value;
    if (value === null || value === undefined || typeof value === "string" || typeof value === "boolean") continue;
    if (typeof value === "number") {
      if (Number.isFinite(value)) continue;
      throw new SpecError(`${what} holds ${value} at ${pathOf(item)}, a number JSON has no form for.`);
    }
    if (typeof value !== "object") {
      const library = typeof value === "function" ? foreignSchemaLibrary(value) : undefined;
      if (library !== undefined) refuseForeign(library, what, pathOf(item));
      throw new SpecError(`${what} holds a ${typeof value} at ${pathOf(item)}, which JSON has no form for: a JSON Schema is JSON data.`);
    }
    // Markers only where a subschema stands: elsewhere ("properties", "const") a key is a field's name, "~standard" included.
    const library = item.role === "schema" || !isJsonData(value) ? foreignSchemaLibrary(value) : undefined;
    if (library !== undefined) refuseForeign(library, what, pathOf(item));
    if (seen.has(value)) continue; // shared (or cyclic) parts are read once; a cycle is refused where the schema is serialised
    seen.add(value);
    if (!isJsonData(value)) {
      const kind = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
      throw new SpecError(
        `${what} holds ${typeof kind === "string" && kind !== "" ? `an instance of ${kind.slice(0, 40)}` : "an object with a prototype"} at ${pathOf(item)}, not JSON data: a JSON Schema is plain objects, arrays, strings, numbers, booleans and null; ${SUPPORTED}.`,
      );
    }
    for (const key of Object.keys(value)) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key)!;
      const child: Item = { value: descriptor.value, role: "data", key, parent: item };
      if (!("value" in descriptor)) {
        // A getter: not JSON data; named by its library where the object holding it has one's marker.
        const holder = foreignSchemaLibrary(value);
        if (holder !== undefined) refuseForeign(holder, what, pathOf(item));
        throw new SpecError(`${what} has a field computed by a getter at ${pathOf(child)}, not JSON data.`);
      }
      child.role = roleOf(item.role, key, descriptor.value);
      // A function or class instance among an object's fields: the object is named when it is another library's schema.
      if (!isJsonData(descriptor.value)) {
        const holder = foreignSchemaLibrary(value);
        if (holder !== undefined) refuseForeign(holder, what, pathOf(item));
      }
      stack.push(child);
    }
  }
}

/** Whether a value is a JSON scalar or a plain container (its contents are read in turn). */
function isJsonData(value: unknown): boolean {
  if (value === null || value === undefined || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return Array.isArray(value) ? proto === Array.prototype : proto === Object.prototype || proto === null;
}
