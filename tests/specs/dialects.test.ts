/**
 * Each JSON Schema dialect with its own meaning, for code-defined and run-time specs alike, and the
 * partial checks of validated streaming agreeing with the check step on each.
 */
import { describe, expect, it } from "vitest";
import { checkTextSync, validateAgainstSpec } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type JsonSchema, type Spec } from "../../src/specs/spec.js";
import { PartialCheck } from "../../src/streaming/partial-check.js";

const S2019 = "https://json-schema.org/draft/2019-09/schema";
const S2020 = "https://json-schema.org/draft/2020-12/schema";

/** The same schema as a code-defined spec and as a run-time spec. */
const bothKinds = (schema: unknown): Spec[] => [
  defineSpec({ name: "dialect", description: "", schema: schema as JsonSchema }),
  resolveSpec({ name: "dialect", schema: schema as JsonSchema }),
];

/** The errors of the check step, and of the partial checks fed the same answer a character at a time. */
function errorsBothWays(spec: Spec, value: unknown): { full: string[]; partial: string[] } {
  const text = JSON.stringify(value);
  const check = new PartialCheck(spec);
  for (const char of text) check.write(char);
  check.end();
  return { full: checkTextSync(spec, text, "model", { limits: { maxErrors: 100 } }).errors, partial: [...check.errors] };
}

describe('draft-07: "$ref" replaces the keywords beside it', () => {
  // The shape of real schemas (e.g. the Schema Store's): a closed object beside a $ref to where its fields are declared.
  const schema = {
    definitions: { library: { type: "object", properties: { version: { type: "string" } } } },
    type: "object",
    properties: { lib: { $ref: "#/definitions/library", additionalProperties: false, required: ["missing"] } },
  };

  it("a value its $ref target accepts is valid, whatever the siblings say; the target is still applied", () => {
    for (const spec of bothKinds(schema)) {
      expect(validateAgainstSpec(spec, { lib: { version: "1.0", other: 1 } }).valid).toBe(true);
      expect(validateAgainstSpec(spec, { lib: { version: 1 } }).errors).toEqual(["lib.version is 1 (integer); it must be a string"]);
    }
  });

  it("the partial checks agree: no error from a sibling of $ref", () => {
    for (const spec of bothKinds(schema)) {
      expect(errorsBothWays(spec, { lib: { version: "1.0", other: 1 } })).toEqual({ full: [], partial: [] });
      const { full, partial } = errorsBothWays(spec, { lib: { version: 1 } });
      expect(partial).toEqual(full);
    }
  });

  it("2019-09 and 2020-12 apply the siblings, as those dialects say", () => {
    for (const $schema of [S2019, S2020]) {
      const later = { $schema, $defs: { library: schema.definitions.library }, properties: { lib: { $ref: "#/$defs/library", required: ["name"] } } };
      for (const spec of bothKinds(later)) {
        expect(validateAgainstSpec(spec, { lib: { version: "1.0" } }).errors).toEqual(["lib.name is missing; it is required"]);
        expect(errorsBothWays(spec, { lib: { version: "1.0" } }).partial).toEqual(["lib.name is missing; it is required"]);
      }
    }
  });
});
