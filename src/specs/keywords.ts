/**
 * Keywords a schema uses that its dialect does not define. The standard says
 * they are annotations: ignored when validating. So they are, and each is
 * listed on the spec (`spec.ignoredKeywords`) for its author to see, with two
 * exceptions, refused because ignoring them would silently drop a constraint
 * the author meant: a likely misspelling of a validating keyword
 * (`minLenght`, `additonalProperties`, `oneof`), and a custom keyword that
 * reads as a constraint (`min`, `max`, `errorMessage`). Vendor extensions
 * (`x-…`) and keywords set aside with a leading underscore (`_format`, the
 * usual way to switch a keyword off while keeping it) are always ignored.
 */
import { SpecError } from "../errors.js";
import { subschemas } from "./limits.js";

type Node = Record<string, unknown>;

/** A keyword of a spec's schema that the standard ignores (an annotation or an unknown keyword), listed on the spec. */
export interface IgnoredKeyword {
  keyword: string;
  /** Where it is, as a JSON pointer into the schema ("#/properties/name"). */
  at: string;
  /** For `format`: the format's name, one the standard does not define (an annotation, as an unknown keyword is). */
  format?: string;
}

/** The keywords that constrain a value, as every dialect names them: what a misspelling is measured against. */
const VALIDATING = [
  "$ref",
  "type",
  "enum",
  "const",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "format",
  "items",
  "additionalItems",
  "prefixItems",
  "maxItems",
  "minItems",
  "uniqueItems",
  "contains",
  "maxContains",
  "minContains",
  "maxProperties",
  "minProperties",
  "required",
  "properties",
  "patternProperties",
  "additionalProperties",
  "dependencies",
  "dependentRequired",
  "dependentSchemas",
  "propertyNames",
  "if",
  "then",
  "else",
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "unevaluatedItems",
  "unevaluatedProperties",
  "definitions",
  "$defs",
];

/** Custom keywords that read as constraints, and the standard's keywords that say what they seem to mean. */
const CONSTRAINT_LIKE: Record<string, string[]> = {
  min: ["minimum", "minLength", "minItems"],
  max: ["maximum", "maxLength", "maxItems"],
  minValue: ["minimum"],
  maxValue: ["maximum"],
  minSize: ["minLength", "minItems"],
  maxSize: ["maxLength", "maxItems"],
  minLen: ["minLength"],
  maxLen: ["maxLength"],
  length: ["minLength", "maxLength"],
  regex: ["pattern"],
  regexp: ["pattern"],
  unique: ["uniqueItems"],
  errorMessage: [],
  errorMessages: [],
};

/** Edit distance with adjacent transpositions (optimal string alignment), on short keyword names. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The validating keyword an unknown one is likely a misspelling of: the same
 * but for case or a missing "$", or (for keywords long enough that a near
 * miss is rarely a word of its own) one or two letters off.
 */
function likelyMeant(keyword: string, known: (keyword: string) => boolean): string | undefined {
  if (keyword.length > 40) return undefined;
  const candidates = VALIDATING.filter(known);
  const lower = keyword.toLowerCase();
  const exact = candidates.find((k) => k.toLowerCase() === lower || k === `$${keyword}`);
  if (exact) return exact;
  let best: { keyword: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const allowed = candidate.length >= 9 ? 2 : candidate.length >= 5 ? 1 : 0;
    if (allowed === 0 || Math.abs(candidate.length - keyword.length) > allowed) continue;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { keyword: candidate, distance };
  }
  return best?.keyword;
}

const quote = (s: string) => JSON.stringify(s.slice(0, 60));
const at = (path: string) => path.slice(0, 200);

/**
 * Every keyword of `schema` that `known` does not know, in the order met.
 * Throws SpecError, naming the keyword, where it is and the likely intended
 * one, for a likely misspelling or a constraint-like custom keyword. Also
 * refuses a `$ref` into an ignored keyword's value: nothing there is a schema
 * the package reads.
 */
export function unknownKeywords(schema: Node, known: (keyword: string) => boolean): IgnoredKeyword[] {
  const found: IgnoredKeyword[] = [];
  const schemas = new Set<Node>();
  for (const { schema: node, path } of subschemas(schema)) {
    schemas.add(node);
    for (const keyword of Object.keys(node)) {
      if (known(keyword)) continue;
      if (!keyword.startsWith("x-") && !keyword.startsWith("_")) refuseMeant(keyword, path, known);
      found.push({ keyword, at: path });
    }
  }
  if (found.length > 0) refuseRefsIntoIgnored(schema, schemas, found);
  return found;
}

function refuseMeant(keyword: string, path: string, known: (keyword: string) => boolean): void {
  const keep = `or rename it ${quote(`x-${keyword}`)} to keep it as a note the validator ignores`;
  if (Object.hasOwn(CONSTRAINT_LIKE, keyword)) {
    const meant = CONSTRAINT_LIKE[keyword].filter(known);
    const instead = meant.length > 0 ? `use ${meant.map(quote).join(" or ")} instead, ` : "this package writes every error message itself: remove it, ";
    throw new SpecError(
      `${quote(keyword)} at ${at(path)} is not a JSON Schema keyword, so the constraint it seems to state would not be checked; ${instead}${keep}.`,
    );
  }
  const meant = likelyMeant(keyword, known);
  if (meant !== undefined) {
    throw new SpecError(
      `unknown keyword ${quote(keyword)} at ${at(path)}: did you mean ${quote(meant)}? A keyword the standard does not define is ignored, so this constraint would not be checked; correct it, ${keep}.`,
    );
  }
}

/** A local `$ref` must land on a schema the package reads, not inside an ignored keyword's value. */
function refuseRefsIntoIgnored(root: Node, schemas: Set<Node>, ignored: IgnoredKeyword[]): void {
  for (const { schema: node, path } of subschemas(root)) {
    const ref = Object.hasOwn(node, "$ref") ? node.$ref : undefined;
    if (typeof ref !== "string" || !ref.startsWith("#/")) continue;
    let target: unknown = root;
    let through: string | undefined;
    for (const raw of ref.slice(2).split("/")) {
      let key: string;
      try {
        key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      } catch {
        break;
      }
      if (through === undefined && schemas.has(target as Node) && ignored.some((i) => i.keyword === key)) through = key;
      target = target !== null && typeof target === "object" && Object.hasOwn(target, key) ? (target as Node)[key] : undefined;
    }
    if (through !== undefined && !schemas.has(target as Node)) {
      throw new SpecError(
        `"$ref" ${quote(ref)} at ${at(path)} points into ${quote(through)}, which is not a JSON Schema keyword, so the validator does not read what is there as a schema; move it under "definitions" (or "$defs") and refer to it there.`,
      );
    }
  }
}
