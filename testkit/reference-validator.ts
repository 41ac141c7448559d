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
import "@hyperjump/json-schema/formats";

setShouldValidateFormat(true);

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
 * Compile a schema in the reference validator; returns a function judging one
 * instance (true: valid). Without `$schema` the schema is read as draft-07,
 * as the package reads it. Call `release` when done with the schema.
 */
export async function referenceValidator(schema: Record<string, unknown>): Promise<{ judge: (instance: unknown) => boolean; release: () => void }> {
  const copy = structuredClone(schema);
  const given = typeof copy.$schema === "string" ? copy.$schema : "";
  const dialect = DIALECTS.find(([pattern]) => pattern.test(given))?.[1] ?? DIALECTS[2][1];
  if (given !== "") copy.$schema = dialect;
  // Registered under its own address: an `$id` of its own is kept, resolved against it.
  const retrieval = `https://reference.invalid/corpus/${next++}/schema.json`;
  const idKey = dialect.includes("draft-04") ? "id" : "$id";
  const id = typeof copy[idKey] === "string" ? (copy[idKey] as string) : "";
  let address = retrieval;
  try {
    if (id !== "") address = new URL(id, retrieval).href.replace(/#.*$/, "");
  } catch {
    // An $id that is no URI reference: the reference validator will refuse the schema.
  }
  registerSchema(copy as never, retrieval, dialect);
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
