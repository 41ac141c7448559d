/**
 * A second, spec-compliant validator to judge the package against:
 * `@hyperjump/json-schema` (drafts 04 to 2020-12, formats asserted as the
 * package asserts them). It shares nothing with the package's validator
 * (ajv), so a value both judge alike is judged as the standard says.
 */
import "@hyperjump/json-schema/draft-04";
import "@hyperjump/json-schema/draft-06";
import "@hyperjump/json-schema/draft-07";
import "@hyperjump/json-schema/draft-2019-09";
import { registerSchema, setShouldValidateFormat, unregisterSchema, validate } from "@hyperjump/json-schema/draft-2020-12";
import { addKeyword, getKeyword, setFormatHandler } from "@hyperjump/json-schema/experimental";
import "@hyperjump/json-schema/formats";
import * as Instance from "@hyperjump/json-schema/instance/experimental";
import { subschemas } from "../src/specs/limits.js";

setShouldValidateFormat(true);

// The package asserts every format it knows in every dialect (src/specs/formats.ts; a draft may add formats of
// its own, and `uuid` or `duration` in a draft-07 schema is meant as written). The reference's older dialects
// know only their draft's list, so each is given the later drafts' formats it lacks, through its public hook.
const LATEST_FORMATS = (getKeyword("https://json-schema.org/keyword/format") as unknown as { formats: Record<string, string> }).formats;
for (const draft of ["draft-04", "draft-06", "draft-07"]) {
  const keyword = `https://json-schema.org/keyword/${draft}/format`;
  const known = (getKeyword(keyword) as unknown as { formats: Record<string, string> }).formats;
  for (const [name, uri] of Object.entries(LATEST_FORMATS)) if (!Object.hasOwn(known, name)) setFormatHandler(keyword, name, uri);
}

// The reference's multipleOf compares a floating-point remainder within a tolerance (it refuses -1001 as a
// multiple of 0.01); the standard means exact arithmetic, so it is decided here on the decimals as written.
const MULTIPLE_OF = "https://json-schema.org/keyword/multipleOf";
addKeyword({
  ...getKeyword<number>(MULTIPLE_OF),
  interpret: (divisor: number, instance: never) => Instance.typeOf(instance) !== "number" || isDecimalMultiple(Instance.value(instance) as number, divisor),
} as never);

/** A finite number as an integer times a power of ten, from its shortest round-trip decimal form. */
function decimal(n: number): { digits: bigint; exponent: number } {
  const [mantissa, e = "0"] = String(n).toLowerCase().split("e");
  const [whole, fraction = ""] = mantissa.split(".");
  return { digits: BigInt(`${whole}${fraction}`), exponent: Number(e) - fraction.length };
}

/** Whether `value` is an integer multiple of `divisor`, exactly, on their decimal forms. */
export function isDecimalMultiple(value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false;
  const v = decimal(value);
  const d = decimal(divisor);
  const e = Math.min(v.exponent, d.exponent);
  const scaled = (x: { digits: bigint; exponent: number }) => x.digits * 10n ** BigInt(x.exponent - e);
  return scaled(v) % scaled(d) === 0n;
}

/** Each dialect's identifier as the reference knows it, by the draft a `$schema` names. */
const DIALECTS: Array<[RegExp, string]> = [
  [/draft-04/, "http://json-schema.org/draft-04/schema"],
  [/draft-06/, "http://json-schema.org/draft-06/schema"],
  [/draft-07/, "http://json-schema.org/draft-07/schema"],
  [/2019-09/, "https://json-schema.org/draft/2019-09/schema"],
  [/2020-12/, "https://json-schema.org/draft/2020-12/schema"],
];

let next = 0;

/**
 * Up to draft-07 a `$ref` replaces the keywords beside it, yet a pointer such as "#/definitions/x" still names
 * a place in the document (as the package and most validators read it; function-calling schemas are written so:
 * `{"$ref": "#/definitions/Tool", "definitions": {…}}`). The reference drops the siblings before resolving the
 * pointer; with the `$ref` moved into an `allOf` beside the definitions, the meaning is the same and it resolves.
 */
function refBesideDefinitions(root: Record<string, unknown>, idKey: string): Record<string, unknown> {
  if (typeof root.$ref !== "string" || root.definitions === undefined || Object.hasOwn(root, idKey)) return root;
  const out: Record<string, unknown> = { definitions: root.definitions, allOf: [{ $ref: root.$ref }] };
  if (root.$schema !== undefined) out.$schema = root.$schema;
  return out;
}

/**
 * Up to draft-07 a subschema's `"id": "<the resource's own URI>#name"` names a location in the same resource
 * (a plain-name fragment: an anchor). The reference reads such an id as a second resource at that URI, which
 * replaces the first; written as the equivalent `"#name"`, it reads it as the anchor it is.
 */
function relativeAnchors(root: Record<string, unknown>, idKey: string, base: string): void {
  for (const { schema, path } of subschemas(root)) {
    const id = path === "#" ? undefined : schema[idKey];
    if (typeof id === "string" && id.startsWith(`${base}#`) && /^#[A-Za-z][\w.:-]*$/.test(id.slice(base.length))) schema[idKey] = id.slice(base.length);
  }
}

/**
 * Compile a schema in the reference validator; returns a function judging one
 * instance (true: valid). Without `$schema` the schema is read as draft-07,
 * as the package reads it. Call `release` when done with the schema.
 */
export async function referenceValidator(schema: Record<string, unknown>): Promise<{ judge: (instance: unknown) => boolean; release: () => void }> {
  const copy = structuredClone(schema);
  const given = typeof copy.$schema === "string" ? copy.$schema : "";
  const dialect = DIALECTS.find(([pattern]) => pattern.test(given))?.[1] ?? DIALECTS[2][1];
  if (given !== "") copy.$schema = dialect;
  // Registered under its own `$id` when that is an absolute http(s) URI (its references may name it), else under an address of its own.
  const idKey = dialect.includes("draft-04") ? "id" : "$id";
  const id = typeof copy[idKey] === "string" ? (copy[idKey] as string).replace(/#.*$/, "") : "";
  if (id !== "") relativeAnchors(copy, idKey, id);
  const compiled = /draft-0[467]/.test(dialect) ? refBesideDefinitions(copy, idKey) : copy;
  const retrieval = /^https?:\/\/[^#]+$/.test(id) ? id : `https://reference.invalid/corpus/${next++}/schema.json`;
  const address = retrieval;
  registerSchema(compiled as never, retrieval, dialect);
  const release = () => {
    try {
      unregisterSchema(retrieval);
    } catch {
      // already gone
    }
  };
  try {
    const validator = await validate(address);
    return { judge: (instance) => validator(instance as never).valid, release };
  } catch (error) {
    release();
    throw error;
  }
}
