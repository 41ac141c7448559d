import { describe, it, expect } from "vitest";
import { ConfigurationError, SpecError } from "../../src/errors.js";
import { deploymentConfigSpec } from "../../src/specs/builtin/deployment-config.js";
import { describeSpec } from "../../src/specs/describe.js";
import { builtinSpecs, DEFAULT_SPEC_NAME, MAX_INLINE_SPEC_CHARS, resolveSpec, type SpecRef } from "../../src/specs/registry.js";
import { defineSpec, isSpec, type BusinessRule } from "../../src/specs/spec.js";
import { checkValueSync } from "../../src/specs/check.js";

const BUILTIN_NAMES = ["deployment-config", "api-request", "db-query", "signup-form"];

/** The SpecError `fn` throws (fails the test when it throws anything else or nothing). */
function specError(fn: () => unknown): SpecError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SpecError);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe("SpecError");
    return error as SpecError;
  }
  throw new Error("expected a SpecError, but nothing was thrown");
}

/** A unique inline schema text, so that no test sees another test's cache entry. */
let counter = 0;
function unique(schema: Record<string, unknown>): Record<string, unknown> {
  return { ...schema, description: `test schema ${++counter}` };
}

describe("built-in specs by name", () => {
  it("has the four built-in specs, deployment-config first and default", () => {
    expect([...builtinSpecs.keys()]).toEqual(BUILTIN_NAMES);
    expect(DEFAULT_SPEC_NAME).toBe("deployment-config");
  });

  it.each(BUILTIN_NAMES)("resolves %s to the same compiled, trusted spec every time", (name) => {
    const spec = resolveSpec(name);
    expect(spec.name).toBe(name);
    expect(spec).toBe(builtinSpecs.get(name));
    expect(resolveSpec(`  ${name}\n`)).toBe(spec);
    expect(spec.untrusted).toBe(false);
    expect(isSpec(spec)).toBe(true);
    expect(Object.isFrozen(spec)).toBe(true);
  });

  it("passes a Spec through unchanged", () => {
    expect(resolveSpec(deploymentConfigSpec)).toBe(deploymentConfigSpec);
  });

  it("refuses an unknown name with a SpecError that lists the built-in names", () => {
    const error = specError(() => resolveSpec("deployment_config"));
    expect(error.message).toContain('Unknown spec "deployment_config"');
    for (const name of BUILTIN_NAMES) expect(error.message).toContain(name);
    expect(error.problems).toEqual([error.message]);
  });

  it("bounds the echo of a long unknown name", () => {
    const error = specError(() => resolveSpec("x".repeat(100_000)));
    expect(error.message.length).toBeLessThan(400);
  });

  it.each<[string, unknown, RegExp]>([
    ["null", null, /got null/],
    ["an array", [], /got an array/],
    ["a number", 42, /got number/],
    ["undefined", undefined, /got undefined/],
  ])("refuses %s", (_label, ref, message) => {
    expect(specError(() => resolveSpec(ref as SpecRef)).message).toMatch(message);
  });
});

describe("inline specs", () => {
  const healthSpec = {
    name: "health",
    description: "A health check with a cross-field rule and a conditional rule.",
    schema: {
      type: "object",
      required: ["interval", "timeout", "replicas", "cpu"],
      properties: {
        interval: { type: "integer", minimum: 1 },
        timeout: { type: "integer", minimum: 1, exclusiveMaximum: { $data: "1/interval" } },
        replicas: { type: "integer" },
        cpu: { type: "number" },
      },
      if: { properties: { replicas: { minimum: 6 } }, required: ["replicas"] },
      then: { properties: { cpu: { minimum: 1 } } },
    },
  };

  it("compiles JSON text and enforces a $data cross-field rule and an if/then rule with clear messages", () => {
    const spec = resolveSpec(JSON.stringify(healthSpec));
    expect(spec.name).toBe("health");
    expect(spec.description).toBe(healthSpec.description);
    expect(spec.untrusted).toBe(true);
    expect(spec.rules).toEqual([]);

    expect(checkValueSync(spec, { interval: 10, timeout: 9, replicas: 8, cpu: 1 }).valid).toBe(true);
    expect(checkValueSync(spec, { interval: 10, timeout: 9, replicas: 5, cpu: 0.5 }).valid).toBe(true);

    const report = checkValueSync(spec, { interval: 10, timeout: 10, replicas: 8, cpu: 0.5 });
    expect(report.errors).toEqual([
      'cpu is 0.5; it must be >= 1 (this applies because the "if" condition {"properties":{"replicas":{"minimum":6}},"required":["replicas"]} holds)',
      "timeout is 10; it must be < 10 (the value of interval)",
    ]);
  });

  it("names a nested $data target, and says when the target is not a number", () => {
    const spec = resolveSpec(
      unique({
        type: "object",
        properties: {
          health_check: {
            type: "object",
            properties: {
              interval_seconds: { type: "integer" },
              timeout_seconds: { type: "integer", exclusiveMaximum: { $data: "1/interval_seconds" } },
            },
          },
          max_replicas: { type: "integer" },
          replicas: { type: "integer", maximum: { $data: "/max_replicas" } },
        },
      }),
    );
    expect(checkValueSync(spec, { health_check: { interval_seconds: 5, timeout_seconds: 7 }, max_replicas: 3, replicas: 4 }).errors).toEqual([
      "health_check.timeout_seconds is 7; it must be < 5 (the value of health_check.interval_seconds)",
      "replicas is 4; it must be <= 3 (the value of max_replicas)",
    ]);
    expect(checkValueSync(spec, { health_check: { interval_seconds: "5", timeout_seconds: 7 } }).errors).toEqual([
      'health_check.interval_seconds is "5" (string); it must be an integer',
      'health_check.timeout_seconds is 7; it must be < the value of health_check.interval_seconds, which is "5", not a number',
    ]);
    expect(checkValueSync(spec, { health_check: { timeout_seconds: 7 } }).valid).toBe(true);
  });

  it("reports an else branch as applying when the condition does not hold", () => {
    const spec = resolveSpec(
      unique({
        type: "object",
        if: { properties: { kind: { const: "a" } } },
        then: { required: ["a"] },
        else: { required: ["b"] },
      }),
    );
    expect(checkValueSync(spec, { kind: "a" }).errors).toEqual([
      'a is missing; it is required (this applies because the "if" condition {"properties":{"kind":{"const":"a"}}} holds)',
    ]);
    expect(checkValueSync(spec, { kind: "z" }).errors).toEqual([
      'b is missing; it is required (this applies because the "if" condition {"properties":{"kind":{"const":"a"}}} does not hold)',
    ]);
  });

  it("accepts a bare JSON Schema object, and bare JSON Schema text", () => {
    const schema = unique({ type: "object", required: ["id"], properties: { id: { type: "integer" } } });
    const fromObject = resolveSpec(schema);
    expect(fromObject.name).toBe("inline");
    expect(fromObject.schema).toEqual(schema);
    expect(fromObject.untrusted).toBe(true);
    expect(checkValueSync(fromObject, {}).errors).toEqual(["id is missing; it is required"]);

    const fromText = resolveSpec(JSON.stringify(unique({ type: "array", items: { type: "string" }, maxItems: 2 })));
    expect(checkValueSync(fromText, ["a", "b", "c"]).errors).toEqual(["the value is an array of 3 items; it must have at most 2 items"]);
  });

  it("accepts an inline spec object with name, description and schema", () => {
    const spec = resolveSpec({ name: "my-spec", description: "Mine.", schema: unique({ type: "string", minLength: 2 }) });
    expect(spec.name).toBe("my-spec");
    expect(spec.description).toBe("Mine.");
    expect(checkValueSync(spec, "x").errors).toEqual(['the value is "x"; it must be at least 2 characters long']);
  });

  it("refuses JSON text that does not parse, with the parser's reason", () => {
    const error = specError(() => resolveSpec('{"type": "object",}'));
    expect(error.message).toMatch(/^The inline spec is not valid JSON: /);
    expect(error.message.length).toBeLessThan(300);
  });

  it("refuses a schema with an unknown type", () => {
    const error = specError(() => resolveSpec(JSON.stringify(unique({ type: "strnig" }))));
    expect(error.message).toMatch(/^Spec "inline" is not a valid JSON Schema: /);
    expect(error.message).toContain("type");
  });

  it("refuses a schema with an unknown keyword", () => {
    const error = specError(() => resolveSpec(JSON.stringify(unique({ type: "string", maxLenght: 3 }))));
    expect(error.message).toContain('unknown keyword "maxLenght" at #: did you mean "maxLength"?');
  });

  it("ignores an unknown format (an annotation, as the standard says) and lists it", () => {
    const spec = resolveSpec(unique({ type: "string", format: "telephone" }));
    expect(spec.ignoredKeywords).toContainEqual({ keyword: "format", at: "#", format: "telephone" });
    expect(checkValueSync(spec, "not a phone number").valid).toBe(true);
  });

  it("ignores keywords set aside with a leading underscore, and lists them", () => {
    const spec = resolveSpec(unique({ type: "string", _format: "email", _uniqueItems: true }));
    expect(spec.ignoredKeywords.map((k) => k.keyword)).toEqual(["_format", "_uniqueItems"]);
  });

  it("refuses a wrapped spec with a bad name or a schema that is not an object", () => {
    expect(specError(() => resolveSpec({ name: "has spaces", schema: unique({ type: "string" }) })).message).toContain("spec name must be");
    expect(specError(() => resolveSpec({ name: "x", schema: null } as unknown as SpecRef)).message).toContain("schema must be a JSON Schema object");
  });

  it("refuses JSON text that is not an object", () => {
    expect(specError(() => resolveSpec("[1, 2]")).message).toContain("Unknown spec");
  });

  it("refuses an inline spec over the size limit before parsing it", () => {
    const text = `{"type":"object","description":"${"x".repeat(MAX_INLINE_SPEC_CHARS)}"}`;
    expect(specError(() => resolveSpec(text)).message).toContain(`over the limit maxChars (${MAX_INLINE_SPEC_CHARS})`);
    const broken = `{"description": "${"x".repeat(MAX_INLINE_SPEC_CHARS)}`;
    expect(specError(() => resolveSpec(broken)).message).toContain("over the limit");
  });

  it("refuses a cyclic inline object", () => {
    const schema: Record<string, unknown> = { type: "object" };
    schema.self = schema;
    expect(specError(() => resolveSpec(schema)).message).toContain("cycle");
  });

  it("compiles two specs with the same $id independently", () => {
    const a = resolveSpec(unique({ $id: "https://example.com/same", type: "string" }));
    const b = resolveSpec(unique({ $id: "https://example.com/same", type: "number" }));
    expect(checkValueSync(a, "x").valid).toBe(true);
    expect(checkValueSync(b, 1).valid).toBe(true);
    expect(checkValueSync(b, "x").valid).toBe(false);
  });
});

describe("patterns in run-time specs run on RE2", () => {
  it("runs a catastrophic pattern in linear time", () => {
    const spec = resolveSpec(JSON.stringify(unique({ type: "string", pattern: "^(a+)+$" })));
    // A backtracking engine would take longer than the test's timeout on this (2^50 paths); RE2 answers at once.
    const input = `${"a".repeat(50)}!`;
    const report = checkValueSync(spec, input);
    expect(report.valid).toBe(false);
    expect(report.errors).toEqual([`the value is "${input}"; it must match the pattern ^(a+)+$`]);
    expect(checkValueSync(spec, "a".repeat(50)).valid).toBe(true);
  });

  it("runs a catastrophic pattern against a long input quickly too", () => {
    const spec = resolveSpec(unique({ type: "object", properties: { s: { type: "string", pattern: "^(a|aa)+$" } } }));
    const report = checkValueSync(spec, { s: `${"a".repeat(100_000)}b` });
    expect(report.valid).toBe(false);
  });

  it("gives every pattern its own matcher, within one spec and across specs", () => {
    const one = resolveSpec(
      unique({
        type: "object",
        properties: { a: { type: "string", pattern: "^a+$" }, b: { type: "string", pattern: "^b+$" } },
      }),
    );
    expect(checkValueSync(one, { a: "aaa", b: "bbb" }).errors).toEqual([]);
    expect(checkValueSync(one, { a: "bbb", b: "aaa" }).errors).toEqual([
      'a is "bbb"; it must match the pattern ^a+$',
      'b is "aaa"; it must match the pattern ^b+$',
    ]);
    const two = resolveSpec(unique({ type: "string", pattern: "^c+$" }));
    expect(checkValueSync(two, "ccc").valid).toBe(true);
    expect(checkValueSync(two, "aaa").valid).toBe(false);
  });

  it("applies RE2 to patternProperties and propertyNames too", () => {
    const spec = resolveSpec(
      unique({
        type: "object",
        patternProperties: { "^n_": { type: "number" } },
        propertyNames: { pattern: "^[a-z_]+$" },
      }),
    );
    expect(checkValueSync(spec, { n_x: 1, other: "y" }).valid).toBe(true);
    expect(checkValueSync(spec, { n_x: "1", Bad: 2 }).errors).toEqual([
      'the object has a field named "Bad"; field names must match the pattern ^[a-z_]+$ (rename or remove it)',
      'n_x is "1" (string); it must be a number',
    ]);
  });

  it.each([
    ["a lookahead", "^(?=x)x+$"],
    ["a negative lookahead", "^x(?!y)"],
    ["a lookbehind", "(?<=a)b"],
    ["a backreference", "^(a)\\1$"],
  ])("refuses %s, saying patterns run on RE2 in linear time", (_label, pattern) => {
    const error = specError(() => resolveSpec(unique({ type: "string", pattern })));
    expect(error.message).toContain("RE2");
    expect(error.message).toContain("linear-time");
    expect(error.message).toContain("lookaround and backreferences are not supported");
  });

  it("refuses lookaround in patternProperties", () => {
    const error = specError(() => resolveSpec(unique({ type: "object", patternProperties: { "^x(?!y)": { type: "string" } } })));
    expect(error.message).toContain("RE2");
  });

  it("refuses a pattern that is not a regular expression at all", () => {
    const error = specError(() => resolveSpec(unique({ type: "string", pattern: "[" })));
    expect(error.message).toMatch(/not a valid JSON Schema: .*not a valid ECMA-262 regular expression.*Unterminated character class/);
  });

  it("lets trusted, code-defined specs use JavaScript's RegExp", () => {
    const spec = defineSpec({ name: "trusted-lookahead", description: "d", schema: { type: "string", pattern: "^(?!admin$)[a-z]+$" } });
    expect(spec.untrusted).toBe(false);
    expect(checkValueSync(spec, "alice").valid).toBe(true);
    expect(checkValueSync(spec, "admin").valid).toBe(false);
  });
});

describe("the inline spec cache", () => {
  it("returns the same compiled Spec for the same text twice", () => {
    const text = JSON.stringify(unique({ type: "object", properties: { a: { type: "integer" } } }));
    const first = resolveSpec(text);
    expect(resolveSpec(text)).toBe(first);
    expect(resolveSpec(`  ${text}\n`)).toBe(first);
    expect(resolveSpec(JSON.parse(text))).toBe(first);
    expect(first.validateSchema).toBe(resolveSpec(text).validateSchema);
  });

  it("compiles different texts separately", () => {
    const a = resolveSpec(JSON.stringify(unique({ type: "integer" })));
    const b = resolveSpec(JSON.stringify(unique({ type: "integer" })));
    expect(a).not.toBe(b);
  });

  it("evicts the least recently used spec beyond 64 entries, and recompiles it on demand", () => {
    const keep = JSON.stringify(unique({ type: "string", pattern: "^k+$" }));
    const drop = JSON.stringify(unique({ type: "string", pattern: "^d+$" }));
    const kept = resolveSpec(keep);
    const dropped = resolveSpec(drop);
    for (let i = 0; i < 70; i++) {
      resolveSpec(keep); // recently used: stays
      resolveSpec(JSON.stringify(unique({ type: "string", maxLength: i + 1 })));
    }
    expect(resolveSpec(keep)).toBe(kept);
    const again = resolveSpec(drop);
    expect(again).not.toBe(dropped);
    expect(checkValueSync(again, "ddd").valid).toBe(true);
    expect(checkValueSync(again, "kkk").valid).toBe(false);
    expect(checkValueSync(dropped, "ddd").valid).toBe(true); // an evicted spec still in use keeps working
  });
});

describe("describeSpec", () => {
  const text = describeSpec(deploymentConfigSpec);

  it("mentions every field constraint of the deployment spec", () => {
    for (const line of [
      "- service_name: string, required, matches ^[a-z][a-z0-9-]*$",
      "- replicas: integer, required, >= 1, <= 20",
      "- resources: object, required",
      "- resources.cpu_limit: number, required, >= 0.1, <= 8",
      "- resources.memory_limit_mb: integer, required, >= 128, <= 16384",
      "- health_check: object, required",
      "- health_check.path: string, required, matches ^/",
      "- health_check.timeout_seconds: integer, required, >= 1",
      "- health_check.interval_seconds: integer, required, >= 5",
    ]) {
      expect(text).toContain(line);
    }
  });

  it("mentions both cross-field rules", () => {
    expect(text).toContain("Cross-field rules:\n");
    for (const rule of deploymentConfigSpec.rules) expect(text).toContain(`- ${rule.description}\n`);
    expect(deploymentConfigSpec.rules).toHaveLength(2);
  });

  it("includes the JSON Schema and the example verbatim", () => {
    expect(text).toContain(JSON.stringify(deploymentConfigSpec.schema));
    expect(text).toContain(`Example of a valid object:\n${JSON.stringify(deploymentConfigSpec.example)}`);
  });

  it("is deterministic", () => {
    expect(describeSpec(deploymentConfigSpec)).toBe(text);
  });

  it("describes every built-in spec's rules", () => {
    for (const spec of builtinSpecs.values()) {
      const described = describeSpec(spec);
      for (const rule of spec.rules) expect(described).toContain(`- ${rule.description}`);
    }
  });

  it("renders $data bounds, enums, formats and closed objects in words", () => {
    const spec = resolveSpec(
      unique({
        type: "object",
        additionalProperties: false,
        properties: {
          interval: { type: "integer" },
          timeout: { type: "integer", exclusiveMaximum: { $data: "1/interval" } },
          mode: { enum: ["a", "b"] },
          email: { type: "string", format: "email" },
          tags: { type: "array", items: { type: "string", maxLength: 5 }, uniqueItems: true },
        },
      }),
    );
    const described = describeSpec(spec);
    expect(described).toContain("- timeout: integer, optional, < the value of interval");
    expect(described).toContain('- mode: optional, one of "a", "b"');
    expect(described).toContain("- email: string, optional, format email");
    expect(described).toContain("- tags: array, optional, items unique");
    expect(described).toContain("- tags[]: string, at most this many characters: 5");
    expect(described).toContain("- the object: no fields other than interval, timeout, mode, email, tags");
  });

  it("caps the field lines of a huge schema", () => {
    const properties = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, { type: "integer" }]));
    // A trusted (code-defined) spec: run-time specs are limited to 200 subschemas.
    const described = describeSpec(defineSpec({ name: "huge", description: "d", schema: { type: "object", properties } }));
    const lines = described.split("\n").filter((l) => /^- f\d+:/.test(l));
    expect(lines.length).toBe(80);
  });
});

describe("defineSpec", () => {
  const rule = (id: string): BusinessRule => ({ id, description: "d", inputs: {}, check: () => null });

  it("rejects duplicate rule ids", () => {
    const error = specError(() => defineSpec({ name: "dupes", description: "d", schema: { type: "object" }, rules: [rule("a"), rule("b"), rule("a")] }));
    expect(error.message).toBe('Spec "dupes": two rules share the id "a"');
  });

  it.each(["", "has space", "-leading-dash", "x".repeat(65), "ünïcode", "a/b"])("rejects the name %j", (name) => {
    const error = specError(() => defineSpec({ name, description: "d", schema: { type: "object" } }));
    expect(error.message).toContain("spec name must be 1-64 letters, digits");
  });

  it("rejects a name that is not a string", () => {
    expect(specError(() => defineSpec({ name: 42 as unknown as string, description: "d", schema: {} })).message).toContain("got 42");
  });

  it.each(["a", "my.spec_1", "Deploy-2", "x".repeat(64)])("accepts the name %j", (name) => {
    expect(defineSpec({ name, description: "d", schema: { type: "object" } }).name).toBe(name);
  });

  it("lists every problem of a definition at once", () => {
    const error = specError(() =>
      defineSpec({ name: "bad name", description: 1 as unknown as string, schema: [] as unknown as Record<string, unknown>, rules: [rule("x"), rule("x")] }),
    );
    expect(error.problems).toHaveLength(4);
    expect(error.message.startsWith("Invalid configuration:\n- ")).toBe(true);
  });

  it("rejects a trusted schema that does not compile", () => {
    const error = specError(() => defineSpec({ name: "broken", description: "d", schema: { type: "object", properties: { a: { minimum: "1" } } } }));
    expect(error.message).toMatch(/^Spec "broken" is not a valid JSON Schema: /);
  });

  it("freezes the spec and its rules", () => {
    const spec = defineSpec({ name: "frozen", description: "d", schema: { type: "object" }, rules: [rule("r")] });
    expect(Object.isFrozen(spec)).toBe(true);
    expect(Object.isFrozen(spec.rules)).toBe(true);
    expect(spec.rules.map((r) => r.id)).toEqual(["r"]);
  });
});
