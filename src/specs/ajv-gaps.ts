/**
 * Where ajv 8 misjudges a JSON Schema, and what is done about each case, so that
 * a spec's verdict is the standard's. Every case was found by running the
 * official JSON-Schema-Test-Suite (tests/specs/official-suite.test.ts), and
 * tests/specs/ajv-gaps.test.ts fails when an ajv upgrade closes one, so that
 * its workaround can go.
 *
 * Rewritten before compiling (same meaning, in a form ajv judges right):
 *   - a field named "__proto__" in `properties` or `dependencies`: ajv skips that name;
 *   - `type` beside a `$ref` up to draft-07: ajv applies it although `$ref` replaces its siblings;
 *   - `$ref` beside `$id` below the root: up to draft-07 the `$id` must not change
 *     where the `$ref` points (ajv let it); in 2019-09/2020-12 ajv recursed without end;
 *   - keywords the dialect does not define but ajv reads all the same (OpenAPI's
 *     `nullable`; `id`, which ajv refuses), and unknown keywords ajv cannot be told
 *     to ignore (names outside its keyword syntax): removed, so they are ignored.
 * Replaced by a corrected keyword:
 *   - `multipleOf`: ajv divides in floating point, so 0.07 is not a multiple of 0.01
 *     and 939.1800000000001 is (and 1e308 / 0.5 overflows); decided exactly instead;
 *   - `if` (2019-09, 2020-12): ajv counted what `if` evaluated even when `if` failed;
 *   - `unevaluatedItems`: ajv misread a count of evaluated items known only at run time;
 *   - `const`, `enum`: ajv's equality calls an object's "valueOf"/"toString", so an
 *     answer with a field of that name made validation throw.
 * Refused, with a SpecError naming the keyword, where it is and what to use instead:
 *   - `$dynamicRef`: resolved wrongly in some schemas, never finishing in others;
 *   - `unevaluatedItems` that sees a `contains`: ajv counts every item evaluated once `contains` applies;
 *   - `$recursiveRef` that ajv would send to the wrong schema.
 */
import { _, Name, str, type Ajv, type CodeKeywordDefinition, type KeywordCxt } from "ajv";
import { Type } from "ajv/dist/compile/util.js";
import { SpecError } from "../errors.js";
import { jsonEqual } from "../json/data.js";
import { refReplacesSiblings, type Dialect } from "./dialect.js";
import { childSchemas, SUBSCHEMA_KEYWORDS, subschemas, type Visit } from "./limits.js";

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => value !== null && typeof value === "object" && !Array.isArray(value);
const own = (node: Node, key: string): unknown => (Object.hasOwn(node, key) ? node[key] : undefined);
/** A subschema that accepts everything and evaluates nothing. */
const trivial = (schema: unknown): boolean => schema === true || (isNode(schema) && Object.keys(schema).length === 0);
const at = (path: string) => path.slice(0, 200);

const rewritten = new WeakMap<Node, Node>();

/**
 * The schema ajv should compile for `schema`: the same schema, or a rewritten
 * copy where ajv would misjudge the original. Throws SpecError where no
 * rewrite helps. The caller's schema is never changed.
 */
export function schemaForAjv(schema: Node, dialect: Dialect): Node {
  let result = rewritten.get(schema);
  if (result === undefined) {
    const visits = [...subschemas(schema)];
    refuseMisjudged(schema, visits);
    result = visits.some(({ schema: s, path }) => needsRewrite(s, path === "#", dialect)) ? rewrite(schema, true, dialect) : schema;
    rewritten.set(schema, result);
  }
  return result;
}

/** Replace the ajv keywords that misjudge `schema` with corrected ones. */
export function correctKeywords(ajv: Ajv, dialect: Dialect, schema: Node): void {
  const replace = (definition: CodeKeywordDefinition) => {
    ajv.removeKeyword(definition.keyword as string);
    ajv.addKeyword(definition);
  };
  replace(constKeyword);
  replace(enumKeyword);
  replace(multipleOfKeyword);
  // What subschemas evaluated matters only to unevaluatedProperties/unevaluatedItems (2019-09 and later).
  const nodes = [...subschemas(schema)].map(({ schema: s }) => s);
  const unevaluated = !refReplacesSiblings(dialect) && nodes.some((s) => Object.hasOwn(s, "unevaluatedProperties") || Object.hasOwn(s, "unevaluatedItems"));
  if (unevaluated) replace(unevaluatedItemsKeyword);
  // "if" alone is valid and never fails a value (ajv's strict mode refuses it): its own keyword reads it, for what it evaluated.
  if (unevaluated || nodes.some((s) => Object.hasOwn(s, "if") && !Object.hasOwn(s, "then") && !Object.hasOwn(s, "else"))) replace(ifKeyword(unevaluated));
}

// ---------------------------------------------------------------------------
// Refusals

function refuseMisjudged(root: Node, visits: Visit[]): void {
  for (const { schema, path } of visits) {
    if (Object.hasOwn(schema, "$dynamicRef")) {
      throw new SpecError(
        `"$dynamicRef" at ${at(path)} is not supported: the validator resolves it wrongly in some schemas and never finishes in others; use "$ref" with a JSON pointer such as "#/$defs/node".`,
      );
    }
  }
  const resources = resourceRoots(root);
  refuseRecursiveRefs(visits, resources);
  for (const { schema, path } of visits) {
    if (!Object.hasOwn(schema, "unevaluatedItems") || trivial(schema.unevaluatedItems)) continue;
    const reach = inPlace(schema, resources);
    const contains = visits.find(({ schema: s }) => (reach === "anything" || reach.has(s)) && Object.hasOwn(s, "contains") && !trivial(s.contains));
    if (contains) {
      throw new SpecError(
        `"unevaluatedItems" at ${at(path)} is not supported together with "contains" (at ${at(contains.path)}): the validator counts every item as evaluated once "contains" applies, so "unevaluatedItems" would let any item through. Say which items are allowed with "prefixItems" and "items" instead.`,
      );
    }
  }
}

/**
 * ajv resolves `$recursiveRef` to the schema it compiles as one function: right
 * for the root and for a resource with its own `$id` that only a `$ref` reaches
 * (one under `$defs`), wrong for a resource applied in place. And it follows an
 * outer `"$recursiveAnchor": true` even from a resource without one.
 */
function refuseRecursiveRefs(visits: Visit[], resources: Map<Node, Node>): void {
  const anchored = visits.filter(({ schema }) => own(schema, "$recursiveAnchor") === true);
  const pathOf = new Map(visits.map(({ schema, path }) => [schema, path]));
  for (const { schema, path } of visits) {
    if (!Object.hasOwn(schema, "$recursiveRef")) continue;
    const instead = `use "$ref" with a JSON pointer such as "#/$defs/node" instead`;
    if (schema.$recursiveRef !== "#") throw new SpecError(`"$recursiveRef" at ${at(path)} is not supported with any value but "#"; ${instead}.`);
    const target = resources.get(schema)!;
    const targetPath = pathOf.get(target) ?? "#";
    if (targetPath !== "#" && !/\/(\$defs|definitions)\/[^/]*$/.test(targetPath)) {
      throw new SpecError(
        `"$recursiveRef" at ${at(path)} refers to the schema resource at ${at(targetPath)} ("$id" below the root, applied in place), which the validator does not resolve it to; move that resource under "$defs" and "$ref" it, or ${instead}.`,
      );
    }
    const outer = anchored.find((visit) => visit.schema !== target);
    if (outer && own(target, "$recursiveAnchor") !== true) {
      throw new SpecError(
        `"$recursiveRef" at ${at(path)} refers to ${at(targetPath)}, which has no "$recursiveAnchor": true, while ${at(outer.path)} has one: the validator would follow that anchor, which the standard does not. Add "$recursiveAnchor": true to ${at(targetPath)}, or ${instead}.`,
      );
    }
  }
}

/** For every subschema, the root of the schema resource it is in: the nearest schema with an `$id`, itself included, or the root. */
function resourceRoots(root: Node): Map<Node, Node> {
  const roots = new Map<Node, Node>();
  const stack: Array<{ schema: Node; path: string; resource: Node }> = [{ schema: root, path: "#", resource: root }];
  while (stack.length > 0) {
    const { schema, path, resource } = stack.pop()!;
    const here = typeof own(schema, "$id") === "string" ? schema : resource;
    roots.set(schema, here);
    for (const child of childSchemas(schema, path)) stack.push({ ...child, resource: here });
  }
  return roots;
}

/**
 * The subschemas whose annotations (what they evaluated) reach `start`'s own
 * keywords: those applied to the same value through allOf/anyOf/oneOf,
 * if/then/else, dependentSchemas and `$ref` ("anything" when a `$ref` is not a
 * JSON pointer this can follow). `not` passes no annotations on.
 */
function inPlace(start: Node, resources: Map<Node, Node>): Set<Node> | "anything" {
  const reached = new Set<Node>();
  const stack = [start];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (reached.has(node)) continue;
    reached.add(node);
    const push = (child: unknown) => {
      if (isNode(child)) stack.push(child);
    };
    for (const key of ["if", "then", "else"]) push(own(node, key));
    for (const key of ["allOf", "anyOf", "oneOf"]) {
      const list = own(node, key);
      if (Array.isArray(list)) list.forEach(push);
    }
    for (const key of ["dependentSchemas", "dependencies"]) {
      const map = own(node, key);
      if (isNode(map)) Object.values(map).forEach(push);
    }
    if (Object.hasOwn(node, "$recursiveRef")) return "anything";
    if (!Object.hasOwn(node, "$ref")) continue;
    const ref = node.$ref;
    if (typeof ref !== "string" || !(ref === "#" || ref.startsWith("#/"))) return "anything";
    let target: unknown = resources.get(node) ?? start;
    for (const raw of ref === "#" ? [] : ref.slice(2).split("/")) {
      const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      target = target !== null && typeof target === "object" && Object.hasOwn(target, key) ? (target as Node)[key] : undefined;
    }
    push(target);
  }
  return reached;
}

// ---------------------------------------------------------------------------
// Rewrites

/** ajv skips a property of this name in `properties` and `dependencies`; a pattern reaches it. */
const PROTO = "__proto__";
const PROTO_PATTERN = "^__proto__$";

/** Keywords ajv reads although the dialect does not define them. */
export function readByAjvAlone(keyword: string, dialect: Dialect): boolean {
  return keyword === "nullable" || (keyword === "id" && dialect !== "draft-04");
}

/** Whether ajv can be told to ignore an unknown keyword of this name (it takes names of its own syntax only, and none of Object.prototype's). */
export function registrable(keyword: string): boolean {
  return /^[a-z_$][a-z0-9_$:-]*$/i.test(keyword) && !(keyword in Object.prototype);
}

/** The keyword that names a schema resource: draft-04's "id", "$id" since. */
const idKeyword = (dialect: Dialect) => (dialect === "draft-04" ? "id" : "$id");

/**
 * Up to draft-07 "$ref" replaces the keywords beside it. ajv's `ignoreKeywordsWithRef` skips them all but
 * "type", which it checks before it looks at "$ref" (`{"$ref": …, "type": "object"}` refused a string the
 * reference accepts); so "type" is removed there.
 */
const typeBesideRef = (schema: Node, dialect: Dialect) =>
  refReplacesSiblings(dialect) && typeof own(schema, "$ref") === "string" && Object.hasOwn(schema, "type");

/** Removed before compiling: what the dialect does not define and ajv would not ignore. */
const removedKeyword = (keyword: string, dialect: Dialect) => readByAjvAlone(keyword, dialect) || !registrable(keyword);

function needsRewrite(schema: Node, isRoot: boolean, dialect: Dialect): boolean {
  const properties = own(schema, "properties");
  const dependencies = own(schema, "dependencies");
  return (
    Object.keys(schema).some((key) => removedKeyword(key, dialect)) ||
    (isNode(properties) && Object.hasOwn(properties, PROTO)) ||
    (isNode(dependencies) && Object.hasOwn(dependencies, PROTO)) ||
    (!isRoot && typeof own(schema, idKeyword(dialect)) === "string" && Object.hasOwn(schema, "$ref")) ||
    typeBesideRef(schema, dialect) ||
    standardIgnores(schema, dialect).length > 0
  );
}

/**
 * Keywords the standard ignores where they stand, which ajv's strict mode refuses: "additionalItems"
 * beside a single "items" schema or none, "then" and "else" without "if". They are left out of what ajv compiles.
 */
function standardIgnores(schema: Node, dialect: Dialect): string[] {
  const ignored: string[] = [];
  if (dialect !== "2020-12" && Object.hasOwn(schema, "additionalItems") && !Array.isArray(own(schema, "items"))) ignored.push("additionalItems");
  if (!Object.hasOwn(schema, "if")) ignored.push(...["then", "else"].filter((key) => Object.hasOwn(schema, key)));
  return ignored;
}

/** An object with these own fields; `Object.fromEntries` defines "__proto__" as a field, where `obj[key] = …` would set the prototype. */
const withFields = (entries: Array<[string, unknown]>): Node => Object.fromEntries(entries);

/** A copy of the schema (and of the subschemas that change), in a form ajv judges right. */
function rewrite(node: Node, isRoot: boolean, dialect: Dialect): Node {
  const ignores = standardIgnores(node, dialect);
  let entries = Object.entries(node).filter(([key]) => !removedKeyword(key, dialect) && !ignores.includes(key));
  const get = (key: string) => entries.find(([k]) => k === key)?.[1];
  const set = (key: string, value: unknown) => {
    entries = entries.some(([k]) => k === key) ? entries.map(([k, v]) => [k, k === key ? value : v]) : [...entries, [key, value]];
  };
  const remove = (key: string) => {
    entries = entries.filter(([k]) => k !== key);
  };
  const addToAllOf = (schema: unknown) => {
    const list = get("allOf");
    set("allOf", [...(Array.isArray(list) ? list : []), schema]);
  };
  const child = (value: unknown) => (isNode(value) ? rewrite(value, false, dialect) : value);
  const { single, lists, maps } = SUBSCHEMA_KEYWORDS;

  for (const key of single) if (isNode(get(key))) set(key, child(get(key)));
  for (const key of lists) {
    const list = get(key);
    if (Array.isArray(list)) set(key, list.map(child));
  }
  for (const key of maps) {
    const map = get(key);
    if (isNode(map)) set(key, withFields(Object.entries(map).map(([name, value]) => [name, child(value)])));
  }

  const properties = get("properties");
  if (isNode(properties) && Object.hasOwn(properties, PROTO)) {
    set("properties", withFields(Object.entries(properties).filter(([name]) => name !== PROTO)));
    const patterns = get("patternProperties");
    const others = isNode(patterns) ? Object.entries(patterns).filter(([pattern]) => pattern !== PROTO_PATTERN) : [];
    const existing = isNode(patterns) ? own(patterns, PROTO_PATTERN) : undefined;
    const moved = properties[PROTO];
    set("patternProperties", withFields([...others, [PROTO_PATTERN, existing === undefined ? moved : { allOf: [existing, moved] }]]));
  }
  const dependencies = get("dependencies");
  if (isNode(dependencies) && Object.hasOwn(dependencies, PROTO)) {
    set("dependencies", withFields(Object.entries(dependencies).filter(([name]) => name !== PROTO)));
    const dependent = dependencies[PROTO];
    const then = Array.isArray(dependent) ? (dependent.length > 0 ? { required: dependent } : undefined) : dependent;
    if (then !== undefined) addToAllOf({ if: { required: [PROTO] }, then });
  }
  if (typeBesideRef(node, dialect)) remove("type"); // ignored beside "$ref", as every sibling is: ajv ignores the others itself
  if (!isRoot && typeof get(idKeyword(dialect)) === "string" && entries.some(([k]) => k === "$ref")) {
    if (refReplacesSiblings(dialect)) {
      remove(idKeyword(dialect)); // up to draft-07 every keyword beside "$ref" is ignored, so an id must not change where it points
    } else {
      const ref = get("$ref"); // the same reference, resolved against the same "$id", one level down
      remove("$ref");
      addToAllOf({ $ref: ref });
    }
  }
  return withFields(entries);
}

// ---------------------------------------------------------------------------
// Corrected keywords (ajv's own, with the one fix each needs)

function isOneOf(value: unknown, allowed: unknown[]): boolean {
  for (const candidate of allowed) if (jsonEqual(value, candidate)) return true;
  return false;
}

const constKeyword: CodeKeywordDefinition = {
  keyword: "const",
  $data: true,
  error: { message: "must be equal to constant", params: ({ schemaCode }) => _`{allowedValue: ${schemaCode}}` },
  code(cxt: KeywordCxt) {
    const { gen, data, $data, schemaCode, schema } = cxt;
    if ($data || (schema && typeof schema == "object")) cxt.fail$data(_`!${gen.scopeValue("func", { ref: jsonEqual })}(${data}, ${schemaCode})`);
    else cxt.fail(_`${schema} !== ${data}`);
  },
};

const enumKeyword: CodeKeywordDefinition = {
  keyword: "enum",
  schemaType: "array",
  $data: true,
  error: { message: "must be equal to one of the allowed values", params: ({ schemaCode }) => _`{allowedValues: ${schemaCode}}` },
  code(cxt: KeywordCxt) {
    const { gen, data, $data, schema, schemaCode } = cxt;
    if (!$data && schema.length === 0) throw new Error("enum must have non-empty array");
    cxt.fail$data(_`!${gen.scopeValue("func", { ref: isOneOf })}(${data}, ${schemaCode})`);
  },
};

/**
 * ajv's "if", with what `if` evaluated counted only when it holds, and `if` without `then` or `else`
 * read as the standard says: it never fails a value, and (where `annotate`: the schema has unevaluated
 * keywords) what it evaluated when it holds still counts.
 */
const ifKeyword = (annotate: boolean): CodeKeywordDefinition => ({
  keyword: "if",
  schemaType: ["object", "boolean"],
  trackErrors: true,
  before: "then",
  error: {
    message: ({ params }) => str`must match "${params.ifClause}" schema`,
    params: ({ params }) => _`{failingKeyword: ${params.ifClause}}`,
  },
  code(cxt: KeywordCxt) {
    const { gen, parentSchema } = cxt;
    const hasThen = parentSchema.then !== undefined && !trivial(parentSchema.then);
    const hasElse = parentSchema.else !== undefined && !trivial(parentSchema.else);
    const alone = parentSchema.then === undefined && parentSchema.else === undefined;
    if (!hasThen && !hasElse && !(alone && annotate)) return;
    const schValid = gen.name("_valid");
    const ifCxt = cxt.subschema({ keyword: "if", compositeRule: true, createErrors: false, allErrors: false }, schValid);
    // The fix: what `if` evaluated counts only when `if` holds (ajv's keyword merges it either way).
    cxt.mergeValidEvaluated(ifCxt, schValid);
    cxt.reset();
    if (!hasThen && !hasElse) return;
    const valid = gen.let("valid", true);
    if (hasThen && hasElse) {
      const ifClause = gen.let("ifClause");
      cxt.setParams({ ifClause });
      gen.if(schValid, clause("then", ifClause), clause("else", ifClause));
    } else if (hasThen) {
      gen.if(schValid, clause("then"));
    } else {
      gen.if(_`!${schValid}`, clause("else"));
    }
    cxt.pass(valid, () => cxt.error(true));

    function clause(keyword: "then" | "else", ifClause?: Name): () => void {
      return () => {
        const schCxt = cxt.subschema({ keyword }, schValid);
        gen.assign(valid, schValid);
        cxt.mergeValidEvaluated(schCxt, valid);
        if (ifClause) gen.assign(ifClause, _`${keyword}`);
        else cxt.setParams({ ifClause: keyword });
      };
    }
  },
});

const unevaluatedItemsKeyword: CodeKeywordDefinition = {
  keyword: "unevaluatedItems",
  type: "array",
  schemaType: ["boolean", "object"],
  error: {
    message: ({ params: { len } }) => str`must NOT have more than ${len} items`,
    params: ({ params: { len } }) => _`{limit: ${len}}`,
  },
  code(cxt: KeywordCxt) {
    const { gen, schema, data, it } = cxt;
    const items = it.items || 0;
    if (items === true) return;
    const len = gen.const("len", _`${data}.length`);
    // The fix: a count known only at run time is undefined when no item was evaluated and true when all were.
    const from = items instanceof Name ? gen.const("evaluatedItems", _`${items} === true ? ${len} : ${items} || 0`) : items;
    if (schema === false) {
      cxt.setParams({ len: from });
      cxt.fail(_`${len} > ${from}`);
    } else if (!trivial(schema)) {
      const valid = gen.var("valid", _`${len} <= ${from}`);
      gen.if(_`!${valid}`, () =>
        gen.forRange("i", from, len, (i) => {
          cxt.subschema({ keyword: "unevaluatedItems", dataProp: i, dataPropType: Type.Num }, valid);
          if (!it.allErrors) gen.if(_`!${valid}`, () => gen.break());
        }),
      );
      cxt.ok(valid);
    }
    it.items = true;
  },
};

/**
 * A finite number as an exact decimal, digits × 10^exponent, read from its
 * shortest round-trip form (String(n)): the decimal a JSON text wrote for it,
 * since JSON.parse of that text gives back this number.
 */
function decimalOf(n: number): { digits: bigint; exponent: number } {
  const [coefficient, exponent = "0"] = String(Math.abs(n)).split("e");
  const [whole, fraction = ""] = coefficient.split(".");
  return { digits: BigInt(whole + fraction), exponent: Number(exponent) - fraction.length };
}

/**
 * Whether `value` is an integer multiple of `divisor`, decided exactly on
 * their decimal forms (0.07 is a multiple of 0.01; 939.1800000000001 is not).
 * Not a number, infinite or a zero divisor: not a multiple.
 */
function isMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor === 0) return false;
  if (Number.isSafeInteger(value) && Number.isSafeInteger(divisor)) return value % divisor === 0;
  const v = decimalOf(value);
  const d = decimalOf(divisor);
  // v.digits × 10^v.exponent ÷ (d.digits × 10^d.exponent) is an integer; bring both to the smaller exponent.
  const shift = v.exponent - d.exponent;
  return shift >= 0 ? (v.digits * 10n ** BigInt(shift)) % d.digits === 0n : v.digits % (d.digits * 10n ** BigInt(-shift)) === 0n;
}

const multipleOfKeyword: CodeKeywordDefinition = {
  keyword: "multipleOf",
  type: "number",
  schemaType: "number",
  $data: true,
  error: { message: ({ schemaCode }) => str`must be multiple of ${schemaCode}`, params: ({ schemaCode }) => _`{multipleOf: ${schemaCode}}` },
  code(cxt: KeywordCxt) {
    const { gen, data, schemaCode } = cxt;
    cxt.fail$data(_`!${gen.scopeValue("func", { ref: isMultipleOf })}(${data}, ${schemaCode})`);
  },
};
