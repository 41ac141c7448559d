/**
 * What a zod spec may be. A zod schema is code, but its size still decides
 * how long defining the spec and judging every answer take, and a schema too
 * deep for the converters fails with a bare "Maximum call stack" deep inside
 * them. So a zod schema is measured first, by a walk over its definition with
 * a stack of its own, and refused beyond the limits with a message that says
 * what to change. The walk also notes asynchronous refinements and
 * transforms: they can only be judged by the asynchronous check step.
 */
import * as core from "zod/v4/core";
import { SpecError } from "../errors.js";

export const ZOD_SPEC_LIMITS = Object.freeze({
  /** Most zod schemas in one spec (every nested one counted once). */
  maxSchemas: 5_000,
  /** Deepest nesting of zod schemas. */
  maxDepth: 64,
  /** Most options of one union (each is tried against a failing value). */
  maxBranches: 128,
});

export interface ZodShape {
  /** Whether a refinement, transform or custom check is an async function: the spec then needs the asynchronous check step. */
  async: boolean;
}

type Definition = Record<string, unknown>;

const isSchema = (value: unknown): value is { _zod: { def: Definition } } =>
  value !== null && typeof value === "object" && typeof (value as { _zod?: { def?: unknown } })._zod?.def === "object";

const isAsyncFunction = (value: unknown): boolean =>
  typeof value === "function" && (value.constructor?.name === "AsyncFunction" || value.constructor?.name === "AsyncGeneratorFunction");

/** Measure a zod schema; throws SpecError (naming the limit and what to change) beyond ZOD_SPEC_LIMITS. */
export function measureZodSchema(root: unknown, name: string, limits = ZOD_SPEC_LIMITS): ZodShape {
  const seen = new Set<object>();
  const stack: Array<{ schema: { _zod: { def: Definition } }; depth: number }> = [];
  let async = false;
  const refuse = (problem: string) => {
    throw new SpecError(`Spec ${JSON.stringify(name)} is refused: its zod schema ${problem}`);
  };
  const visit = (value: unknown, depth: number) => {
    if (!isSchema(value) || seen.has(value)) return;
    seen.add(value);
    if (seen.size > limits.maxSchemas) refuse(`has more than ${limits.maxSchemas} nested schemas; split it into smaller specs or move checks into .refine()`);
    if (depth > limits.maxDepth) refuse(`nests deeper than ${limits.maxDepth} levels; flatten it (a recursive structure can use z.lazy)`);
    stack.push({ schema: value, depth });
  };
  visit(root, 0);
  while (stack.length > 0) {
    const { schema, depth } = stack.pop()!;
    const def = schema._zod.def;
    if (def.type === "union" && Array.isArray(def.options) && def.options.length > limits.maxBranches) {
      refuse(`has a union of ${def.options.length} options; the limit is ${limits.maxBranches} (use z.enum or a discriminated field with fewer shapes)`);
    }
    for (const key of Object.keys(def)) {
      const value = def[key];
      if (isAsyncFunction(value)) async = true;
      if (key === "getter" && typeof value === "function") {
        // z.lazy: the schema it stands for (zod itself calls the getter the same way).
        visit(value(), depth + 1);
      } else if (key === "checks" && Array.isArray(value)) {
        for (const check of value) if (isSchema(check) && Object.values(check._zod.def).some(isAsyncFunction)) async = true;
      } else if (isSchema(value)) visit(value, depth + 1);
      else if (Array.isArray(value)) for (const item of value) visit(item, depth + 1);
      else if (value !== null && typeof value === "object" && key === "shape") for (const field of Object.values(value)) visit(field, depth + 1);
    }
  }
  return { async };
}

/** zod's verdict on a value: its output, its issues, or why it could not give one. */
export type ZodOutcome =
  | { success: true; data: unknown }
  | { success: false; error: { issues: ReadonlyArray<{ code?: string; path: PropertyKey[]; message: string }> } }
  | { failed: string };

interface ZodRunnable {
  _zod: { run(payload: { value: unknown; issues: unknown[] }, ctx: { async: boolean }): { value: unknown; issues: unknown[] } | Promise<unknown> };
}

/**
 * zod's parse, synchronously, for the synchronous check step. zod's own `safeParse` throws when a
 * refinement or transform returns a Promise and drops that Promise, so a rejection nobody observes
 * ends the process. Instead the schema runs as `safeParseAsync` runs it (zod core's `run` with
 * `async: true`), which hands such a Promise back: it is observed here and the value is not
 * judged (only the asynchronous check step can wait for it). Otherwise the outcome is exactly
 * `safeParse`'s (issues finalized by zod's own `finalizeIssue`). tests/specs/zod-sync.test.ts
 * fails if an upgrade changes this.
 */
export function runZodSync(schema: unknown, value: unknown): ZodOutcome {
  const result = (schema as ZodRunnable)._zod.run({ value, issues: [] }, { async: true });
  if (result instanceof Promise) {
    result.catch(() => undefined);
    return { failed: "a refinement or transform returned a Promise, which only the asynchronous check step (checkValue, checkText, and every graph) can wait for" };
  }
  if (result.issues.length === 0) return { success: true, data: result.value };
  const ctx = { async: true };
  const config = core.config();
  return { success: false, error: { issues: result.issues.map((issue) => core.util.finalizeIssue(issue as core.$ZodRawIssue, ctx, config)) } };
}
