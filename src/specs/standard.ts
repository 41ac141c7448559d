/**
 * Specs from any Standard Schema library that can give a JSON Schema (Valibot, ArkType, Effect Schema …).
 * Standard Schema (standardschema.dev) gives `~standard.validate` and the types; its JSON Schema companion
 * gives `~standard.jsonSchema.input({ target })` where the library implements it (ArkType, Effect 4's
 * `Schema.toStandardJSONSchemaV1`, Valibot's `toStandardJsonSchema` from `@valibot/to-json-schema`, zod/mini).
 * A Valibot or Effect schema passed bare carries no converter: it is refused, saying how to wrap it.
 *
 * The JSON Schema serves the prompt and the validator's exact messages; what it cannot say (a refinement,
 * a check with no keyword) is judged by the library's own `~standard.validate`, which the check step runs
 * last on every value, as it runs a zod schema. A schema that cannot be converted is refused, naming the
 * library and why: never read as a JSON Schema that checks less than it says.
 */
import { SpecError } from "../errors.js";

/**
 * The Standard Schema interface (`@standard-schema/spec` 1.x, which asks to be copied rather than depended on),
 * written out in one declaration: `SpecOutput` reads a schema's output type from `~standard.types`, as the
 * spec's `StandardSchemaV1.InferOutput` does.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) =>
      | { readonly value: Output; readonly issues?: undefined }
      | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined }> }
      | Promise<
          | { readonly value: Output; readonly issues?: undefined }
          | {
              readonly issues: ReadonlyArray<{
                readonly message: string;
                readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
              }>;
            }
        >;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** The JSON Schema companion's converter, where a library implements it (Standard JSON Schema). */
interface StandardJsonSchemaConverter {
  input(options: { target: string; libraryOptions?: Record<string, unknown> }): Record<string, unknown>;
}

/** A library's name as its users know it, by its Standard Schema vendor. */
const LIBRARY_NAMES: Record<string, string> = { valibot: "Valibot", arktype: "ArkType", effect: "Effect Schema", zod: "zod" };

/** The name of the library a Standard Schema comes from, for messages. */
export function libraryName(vendor: string): string {
  return Object.hasOwn(LIBRARY_NAMES, vendor) ? LIBRARY_NAMES[vendor] : `the Standard Schema library ${JSON.stringify(vendor.slice(0, 40))}`;
}

/**
 * Whether a value is a Standard Schema: an object or a function with `~standard` of version 1, a vendor and a
 * `validate` function. Reading `~standard` runs a getter where a library defines one (Valibot's is one). On a
 * plain object only an enumerable `~standard` counts: zod's z.toJSONSchema() output, a JSON Schema, carries a
 * non-enumerable one, and is read as the JSON Schema it is.
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
  try {
    const proto = Object.getPrototypeOf(value);
    const plain = !Array.isArray(value) && (proto === Object.prototype || proto === null);
    if (plain ? Object.getOwnPropertyDescriptor(value, "~standard")?.enumerable !== true : !("~standard" in value)) return false;
    const props = (value as { "~standard"?: unknown })["~standard"];
    if (props === null || typeof props !== "object") return false;
    const { version, vendor, validate } = props as { version?: unknown; vendor?: unknown; validate?: unknown };
    return version === 1 && typeof vendor === "string" && typeof validate === "function";
  } catch {
    return false;
  }
}

/**
 * The JSON Schema of a Standard Schema (draft-07, what ajv's default dialect and most providers read), of its
 * input: what the model writes. Throws SpecError naming the library when it has none.
 */
export function standardToJsonSchema(schema: StandardSchemaV1, name: string): Record<string, unknown> {
  const props = schema["~standard"];
  const library = libraryName(props.vendor);
  const refuse = (why: string): never => {
    throw new SpecError(`Spec ${JSON.stringify(name)}: its ${library} schema has no JSON Schema form here: ${why}`);
  };
  if (props.vendor === "arktype" && typeof (schema as { toJsonSchema?: unknown }).toJsonSchema === "function") return arkTypeToJsonSchema(schema, refuse);
  const converter = (props as { jsonSchema?: unknown }).jsonSchema;
  if (converter !== null && typeof converter === "object" && typeof (converter as StandardJsonSchemaConverter).input === "function") {
    const valibot = props.vendor === "valibot";
    try {
      return (converter as StandardJsonSchemaConverter).input({ target: "draft-07", ...(valibot && { libraryOptions: VALIBOT_OPTIONS }) });
    } catch (error) {
      if (valibot)
        return refuse(`${messageOf(error).replace(/\.$/, "")}; use JSON types (v.string(), v.number(), v.object() …), and put other checks in v.check()`);
      return refuse(`${library} could not convert it (${messageOf(error)}); use JSON types, and put other checks in the library's refinements`);
    }
  }
  if (props.vendor === "valibot") return refuse(`a Valibot schema gives its JSON Schema through Standard JSON Schema: pass it wrapped, ${VALIBOT_WRAP}`);
  if (props.vendor === "zod")
    return refuse(
      "it is a zod schema of another API than zod 4's classic one (zod 3, or zod/mini); write it with zod 4's classic API (import { z } from \"zod\")",
    );
  if (props.vendor === "effect") {
    return refuse(
      "an Effect schema gives its JSON Schema through Standard JSON Schema: pass Schema.toStandardJSONSchemaV1(Schema.toStandardSchemaV1(schema)) (Effect 4), or its JSONSchema.make(schema) as a JSON Schema",
    );
  }
  return refuse("the library implements Standard Schema but not Standard JSON Schema (`~standard.jsonSchema`); pass the schema's JSON Schema instead");
}

/** How a Valibot schema is given as a spec: the Standard JSON Schema wrap of Valibot's own converter. */
export const VALIBOT_WRAP = 'import { toStandardJsonSchema } from "@valibot/to-json-schema"; toStandardJsonSchema(schema)';

/**
 * `@valibot/to-json-schema`'s conversion config, passed as Standard JSON Schema `libraryOptions` (its
 * `toStandardJsonSchema` spreads them over its own `{ typeMode, target }`). Under its defaults (errorMode
 * "throw") an action with no keyword (v.check(), a transform) throws, as a schema with no JSON form
 * (v.date(), v.map()) does. Here the schema is still refused, and such an action keeps the part JSON Schema
 * can say: Valibot's own validate, which the check step runs last on every value, judges the rest.
 */
const VALIBOT_OPTIONS = {
  typeMode: "input",
  errorMode: "throw",
  overrideAction: ({ jsonSchema, errors }: { jsonSchema: Record<string, unknown>; errors?: unknown[] }) => (errors ? jsonSchema : undefined),
};

/** ArkType's fallback context: the part of a node JSON Schema can say (`base`). */
type ArkFallbackContext = { base?: Record<string, unknown> };

/**
 * ArkType's own `.toJsonSchema()`, of its input side. Its Standard JSON Schema converter never throws: a type
 * with no JSON form (a Date, a bigint, a symbol, a class instance) becomes `{}` there, a spec no answer could
 * pass. Here such a type is refused; what only has no keyword (a `.narrow()` predicate, a pattern
 * intersection) keeps the part JSON Schema can say, and ArkType's own validate judges the rest.
 */
function arkTypeToJsonSchema(schema: StandardSchemaV1, refuse: (why: string) => never): Record<string, unknown> {
  type ArkType = { toJsonSchema(options: Record<string, unknown>): Record<string, unknown>; in?: ArkType };
  const ark = schema as unknown as ArkType;
  const keep = (ctx: ArkFallbackContext) => ctx.base;
  try {
    return (ark.in ?? ark).toJsonSchema({
      target: "draft-07",
      fallback: {
        predicate: keep,
        patternIntersection: keep,
        arrayObject: keep,
        // draft-07 tuples keep their prefix in items (ArkType's own Standard JSON Schema fallback does the same)
        arrayPostfix: ({ base }: ArkFallbackContext) => {
          const { items, additionalItems: _rest, ...rest } = base ?? {};
          return Array.isArray(items) ? { ...rest, items } : rest;
        },
        defaultValue: () => undefined,
      },
    });
  } catch (error) {
    return refuse(`ArkType could not convert it (${messageOf(error)}); use JSON types (string, number, boolean, null, arrays and objects)`);
  }
}

function messageOf(error: unknown): string {
  return String((error as Error)?.message ?? error)
    .replace(/\s+/g, " ")
    .slice(0, 200);
}

/** A library's verdict on a value, in the shape the check step reads (as zod's outcome). */
export type StandardOutcome =
  { success: true; data: unknown } | { success: false; error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> } } | { failed: string };

/** A Standard Schema's result, read fail-closed: anything but a value or a list of issues could not be judged. */
export function standardOutcome(result: unknown): StandardOutcome {
  if (result === null || typeof result !== "object") return { failed: `its validate returned ${result === null ? "null" : typeof result}, not a result` };
  const { issues, value } = result as { issues?: unknown; value?: unknown };
  if (issues === undefined) return "value" in result ? { success: true, data: value } : { failed: "its validate returned neither a value nor issues" };
  if (!Array.isArray(issues)) return { failed: "its validate returned issues that are not a list" };
  if (issues.length === 0) return { failed: "its validate returned an empty list of issues" };
  return {
    success: false,
    error: {
      issues: issues.map((issue: { message?: unknown; path?: unknown }) => ({
        message: typeof issue?.message === "string" ? issue.message : "invalid",
        path: Array.isArray(issue?.path)
          ? issue.path.map((step: unknown) => (step !== null && typeof step === "object" ? (step as { key: PropertyKey }).key : (step as PropertyKey)))
          : [],
      })),
    },
  };
}

/** The library's validate, synchronously: a Promise is observed (never left to reject unobserved) and the value not judged. */
export function runStandardSync(schema: StandardSchemaV1, value: unknown): StandardOutcome {
  const result = schema["~standard"].validate(value);
  if (result instanceof Promise) {
    result.catch(() => undefined);
    return { failed: "its validate returned a Promise, which only the asynchronous check step (checkValue, checkText, and every graph) can wait for" };
  }
  return standardOutcome(result);
}
