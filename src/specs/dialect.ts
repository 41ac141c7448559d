/**
 * The JSON Schema dialects a spec may declare with `$schema`, and what sets
 * them apart where the package itself must know (not only ajv).
 */
import { SpecError } from "../errors.js";

export type Dialect = "draft-04" | "draft-06" | "draft-07" | "2019-09" | "2020-12";

const DIALECTS: Record<string, Dialect> = {
  "http://json-schema.org/draft-04/schema": "draft-04",
  "http://json-schema.org/draft-06/schema": "draft-06",
  "http://json-schema.org/draft-07/schema": "draft-07",
  "https://json-schema.org/draft/2019-09/schema": "2019-09",
  "https://json-schema.org/draft/2020-12/schema": "2020-12",
};

/** The dialect a schema declares with `$schema` (draft-07 when it declares none). */
export function dialectOf(schema: Record<string, unknown>): Dialect {
  const declared = schema.$schema;
  if (declared === undefined) return "draft-07";
  if (typeof declared !== "string") throw new SpecError(`"$schema" must be a string; got ${JSON.stringify(declared)?.slice(0, 60)}.`);
  const key = declared.replace(/#$/, "").replace(/^https:\/\/json-schema\.org\/(draft-0[467])\//, "http://json-schema.org/$1/");
  const dialect = DIALECTS[key];
  if (dialect) return dialect;
  throw new SpecError(
    `Unsupported "$schema" ${JSON.stringify(declared.slice(0, 100))}: use draft-07 (http://json-schema.org/draft-07/schema#, or no "$schema"), ` +
      "draft-04 (http://json-schema.org/draft-04/schema#), draft-06 (http://json-schema.org/draft-06/schema#), " +
      "2019-09 (https://json-schema.org/draft/2019-09/schema) or 2020-12 (https://json-schema.org/draft/2020-12/schema).",
  );
}

/** The schema with its `$schema` spelt as ajv knows its dialect (`https://json-schema.org/draft-07/schema` is read as the `http` URI). */
export function withCanonicalSchemaUri<T extends Record<string, unknown>>(schema: T, dialect: Dialect): T {
  if (schema.$schema === undefined) return schema;
  const uri = Object.keys(DIALECTS).find((key) => DIALECTS[key] === dialect)!;
  return schema.$schema === uri ? schema : { ...schema, $schema: uri };
}

/** Up to draft-07, "$ref" replaces its siblings: the keywords beside it are ignored. */
export function refReplacesSiblings(dialect: Dialect): boolean {
  return dialect === "draft-04" || dialect === "draft-06" || dialect === "draft-07";
}
