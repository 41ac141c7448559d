/**
 * A spec says what "valid" means: a JSON Schema (compiled once, with ajv) plus
 * cross-field business rules that JSON Schema cannot express. The validator
 * and the prompt are both generated from it, so they cannot drift apart.
 */
import type { ValidateFunction } from "ajv";
import { SpecError } from "../errors.js";
import { checkSchema, compileSchema } from "./ajv.js";
import { checkRuntimeSpecLimits, checkSpecSafety } from "./limits.js";

/** JSON types a rule's inputs can require before the rule runs. */
export type FieldType = "string" | "number" | "integer" | "boolean" | "object" | "array";

export type JsonSchema = Record<string, unknown>;

/**
 * A cross-field rule. It runs only when every input field is present and of
 * its declared type, so it still reports on an object that fails the schema
 * elsewhere. `check` returns null when satisfied, else the exact problem(s).
 */
export interface BusinessRule {
  /** Stable identifier, e.g. "replicas-need-cpu". */
  id: string;
  /** The rule in words, for the prompt. */
  description: string;
  /** Dotted paths of the fields the rule reads, with the type each must have. */
  inputs: Record<string, FieldType>;
  check(values: Record<string, any>, document: unknown): string | string[] | null;
}

export interface SpecDefinition {
  name: string;
  description: string;
  schema: JsonSchema;
  rules?: BusinessRule[];
  /** One valid example, shown to the model and used in tests. */
  example?: unknown;
}

export interface Spec {
  readonly name: string;
  readonly description: string;
  readonly schema: JsonSchema;
  readonly rules: readonly BusinessRule[];
  readonly example?: unknown;
  /** The schema's verdict (ajv, stops at the first error): true only for a value that passes. */
  readonly checkSchema: ValidateFunction;
  /** The schema's explanation (ajv, all errors with the offending values), compiled on first use. */
  readonly validateSchema: ValidateFunction;
  /** Whether the spec came from run-time JSON (its patterns run on RE2, and its cost is bounded). */
  readonly untrusted: boolean;
  /** For a run-time spec: the most subschemas that can apply to one value of an answer. */
  readonly applicationsPerValue?: number;
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/i;

/** Make a spec; the schema is compiled here, once. Throws SpecError when it does not compile. */
export function defineSpec(definition: SpecDefinition, options: { untrusted?: boolean } = {}): Spec {
  const problems: string[] = [];
  if (typeof definition.name !== "string" || !NAME.test(definition.name)) {
    problems.push(`spec name must be 1-64 letters, digits, ".", "_" or "-"; got ${JSON.stringify(definition.name)}`);
  }
  if (typeof definition.description !== "string") problems.push("spec description must be a string");
  if (definition.schema === null || typeof definition.schema !== "object" || Array.isArray(definition.schema)) {
    problems.push("spec schema must be a JSON Schema object");
  }
  const ids = new Set<string>();
  for (const rule of definition.rules ?? []) {
    if (ids.has(rule.id)) problems.push(`two rules share the id "${rule.id}"`);
    ids.add(rule.id);
  }
  if (problems.length > 0) throw new SpecError(problems.map((p) => `Spec ${JSON.stringify(definition.name)}: ${p}`));

  const untrusted = options.untrusted ?? false;
  const schema = definition.schema;
  let verdict: ValidateFunction;
  let applicationsPerValue: number | undefined;
  try {
    checkSpecSafety(schema);
    if (untrusted) applicationsPerValue = checkRuntimeSpecLimits(schema);
    checkSchema(schema);
    verdict = compileSchema(schema, { untrusted, allErrors: false });
  } catch (error) {
    const reason = (error as Error).message;
    if (error instanceof SpecError) throw new SpecError(`Spec ${JSON.stringify(definition.name)} is refused: ${reason}`);
    const hint = /regexp|Perl syntax/i.test(reason)
      ? " (patterns in specs supplied at run time run on RE2, a linear-time engine: lookaround and backreferences are not supported)"
      : "";
    throw new SpecError(`Spec ${JSON.stringify(definition.name)} is not a valid JSON Schema: ${reason}${hint}`);
  }
  return Object.freeze({
    name: definition.name,
    description: definition.description,
    schema: definition.schema,
    rules: Object.freeze([...(definition.rules ?? [])]),
    example: definition.example,
    checkSchema: verdict,
    validateSchema: lazyExplanation(schema, untrusted),
    untrusted,
    applicationsPerValue,
  });
}

/** The all-errors validator, compiled the first time a value fails (most specs meet far more valid answers than invalid ones). */
function lazyExplanation(schema: JsonSchema, untrusted: boolean): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const explain = ((value: unknown) => {
    compiled ??= compileSchema(schema, { untrusted, allErrors: true });
    const ok = compiled(value);
    explain.errors = compiled.errors;
    return ok;
  }) as ValidateFunction;
  return explain;
}
