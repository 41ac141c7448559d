/** The keywords a field's JSON Schema uses (what the validator checks before the schema library runs), for the support tables of docs/specs.md. */
import type { JsonSchema } from "../../src/specs/spec.js";

export function keywordsOf(schema: JsonSchema | undefined): string[] {
  if (schema === undefined) return [];
  const keys = new Set<string>();
  const visit = (s: unknown, depth: number) => {
    if (s === null || typeof s !== "object" || depth > 2) return;
    for (const [key, value] of Object.entries(s)) {
      if (["$schema", "title", "description", "$ref", "$defs", "definitions", "default"].includes(key)) continue;
      keys.add(key);
      if (["allOf", "anyOf", "oneOf"].includes(key) && Array.isArray(value)) value.forEach((part) => visit(part, depth + 1));
    }
  };
  visit(schema, 0);
  return [...keys];
}
