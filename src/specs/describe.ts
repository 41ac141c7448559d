/**
 * The spec in words, for prompts: the JSON Schema itself, one line per
 * constrained field, and the business rules. Generated from the spec, so the
 * prompt and the validator cannot drift apart.
 */
import { childPath } from "../json/paths.js";
import type { JsonSchema, Spec } from "./spec.js";

export function describeSpec(spec: Spec): string {
  const fields: string[] = [];
  walk(spec.schema, "", fields, 0);
  const parts = [`JSON Schema:\n${JSON.stringify(spec.schema)}`];
  if (fields.length > 0) parts.push(`Field constraints:\n${fields.join("\n")}`);
  if (spec.rules.length > 0) parts.push(`Cross-field rules:\n${spec.rules.map((r) => `- ${r.description}`).join("\n")}`);
  if (spec.example !== undefined) parts.push(`Example of a valid object:\n${JSON.stringify(spec.example)}`);
  return parts.join("\n\n");
}

const MAX_FIELD_LINES = 80;
const MAX_DEPTH = 8;

function walk(schema: unknown, path: string, out: string[], depth: number): void {
  if (out.length >= MAX_FIELD_LINES || depth > MAX_DEPTH || schema === null || typeof schema !== "object") return;
  const s = schema as JsonSchema;
  const props = s.properties as Record<string, JsonSchema> | undefined;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  if (props && typeof props === "object") {
    for (const [key, child] of Object.entries(props)) {
      if (out.length >= MAX_FIELD_LINES) return;
      // Named as the validator's messages name it, so the prompt and the errors agree.
      const fieldPath = childPath(path, key);
      const line = constraints(child, required.has(key), fieldPath);
      if (line) out.push(`- ${fieldPath}: ${line}`);
      walk(child, fieldPath, out, depth + 1);
    }
    if (s.additionalProperties === false) out.push(`- ${path || "the object"}: no fields other than ${Object.keys(props).join(", ")}`);
  }
  if (s.items && typeof s.items === "object" && !Array.isArray(s.items) && out.length < MAX_FIELD_LINES) {
    const itemsPath = `${path}[]`;
    const line = constraints(s.items as JsonSchema, undefined, itemsPath);
    if (line) out.push(`- ${itemsPath}: ${line}`);
    walk(s.items, itemsPath, out, depth + 1);
  }
}

/** One field's constraints in words; `required` is undefined for array items. */
function constraints(schema: JsonSchema, required: boolean | undefined, path: string): string {
  if (schema === null || typeof schema !== "object") return "";
  const bits: string[] = [];
  if (schema.type) bits.push(Array.isArray(schema.type) ? schema.type.join(" or ") : String(schema.type));
  if (required !== undefined) bits.push(required ? "required" : "optional");
  const bound = (key: string, text: string) => {
    const v = schema[key];
    if (v !== undefined) bits.push(`${text} ${dataReference(v, path) ?? (typeof v === "object" ? JSON.stringify(v) : v)}`);
  };
  bound("minimum", ">=");
  bound("exclusiveMinimum", ">");
  bound("maximum", "<=");
  bound("exclusiveMaximum", "<");
  bound("minLength", "at least this many characters:");
  bound("maxLength", "at most this many characters:");
  bound("minItems", "at least this many items:");
  bound("maxItems", "at most this many items:");
  if (schema.uniqueItems === true) bits.push("items unique");
  if (typeof schema.pattern === "string") bits.push(`matches ${schema.pattern}`);
  if (typeof schema.format === "string") bits.push(`format ${schema.format}`);
  if (Array.isArray(schema.enum)) bits.push(`one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  if (schema.const !== undefined) bits.push(`exactly ${JSON.stringify(schema.const)}`);
  return bits.join(", ");
}

/** `{"$data": "1/interval"}` on field `a.timeout` reads as "the value of a.interval". */
function dataReference(value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== "object" || typeof (value as { $data?: unknown }).$data !== "string") return undefined;
  const ref = (value as { $data: string }).$data;
  const unescape = (p: string) => p.replace(/~1/g, "/").replace(/~0/g, "~");
  const relative = /^(\d+)((?:\/[^/]*)*)$/.exec(ref);
  let parts: string[];
  if (relative) {
    const here = path === "" ? [] : path.split(".");
    parts = [...here.slice(0, Math.max(0, here.length - Number(relative[1]))), ...relative[2].split("/").slice(1).map(unescape)];
  } else if (ref.startsWith("/")) parts = ref.split("/").slice(1).map(unescape);
  else return undefined;
  return `the value of ${parts.length > 0 ? parts.join(".") : "the whole object"}`;
}
