/**
 * The cost limits on specs, and the operator's ways to change them: the RUNTIME_SPEC_LIMITS setting
 * (server configuration, or a builder's `env`), the `specLimits` option of resolveSpec and of the graph builders, and
 * defineSpec's `limits` (a code-defined spec has only the compiled-size bound).
 */
import { describe, expect, it } from "vitest";
import { ConfigurationError, SpecError } from "../../src/errors.js";
import { readEnvironment, readSpecLimits } from "../../src/environment.js";
import { checkValueSync } from "../../src/specs/check.js";
import { CODE_SPEC_LIMITS, RUNTIME_SPEC_LIMITS } from "../../src/specs/limits.js";
import { resolveSpec, runtimeSpecLimits } from "../../src/specs/registry.js";
import { defineSpec } from "../../src/specs/spec.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

/** A spec nobody else resolves (the inline cache never answers for it). */
const fresh = (schema: Record<string, unknown>) => ({ ...schema, $comment: `limits ${Math.random()}` });

function refusal(run: () => unknown): SpecError {
  try {
    run();
  } catch (error) {
    if (error instanceof SpecError) return error;
    throw error;
  }
  throw new Error("accepted; it must be refused");
}

const wide = (fields: number) => ({ type: "object", properties: Object.fromEntries(Array.from({ length: fields }, (_, i) => [`f${i}`, { type: "integer" }])) });

describe("run-time spec limits", () => {
  it("bound cost, not features: 500 fields, 40 anyOf branches and 20 patterns on one string are accepted by default", () => {
    const spec = resolveSpec(
      fresh({
        type: "object",
        properties: { ...wide(500).properties, pick: { anyOf: Array.from({ length: 40 }, (_, i) => ({ const: i })) } },
        patternProperties: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`^p${i}`, { type: "string", pattern: `^[a-z]*${i % 3}?$` }])),
      }),
    );
    expect(spec.applicationsPerValue).toBeLessThanOrEqual(RUNTIME_SPEC_LIMITS.maxApplicationsPerValue);
    expect(spec.compiledChars).toBeGreaterThan(0);
    expect(checkValueSync(spec, { f0: 1, pick: 39 }).valid).toBe(true);
    expect(checkValueSync(spec, { f0: 1, pick: 40 }).valid).toBe(false);
  });

  it("a limit passed is refused with a SpecError naming it and how to raise it", () => {
    const tight = { maxCompiledChars: 2_000 };
    const message = refusal(() => resolveSpec(fresh(wide(200)), { specLimits: tight })).message;
    expect(message).toMatch(
      /over the limit maxCompiledChars \(2000\); raise it with the "maxCompiledChars" of RUNTIME_SPEC_LIMITS \(server configuration\) or of the specLimits option/,
    );
    expect(refusal(() => resolveSpec(JSON.stringify(fresh(wide(50))), { specLimits: { maxChars: 100 } })).message).toMatch(
      /over the limit maxChars \(100\); raise it/,
    );
    expect(refusal(() => resolveSpec(fresh({ type: "string", pattern: "a".repeat(50) }), { specLimits: { maxPatternChars: 10 } })).message).toMatch(
      /over the limit maxPatternChars \(10\)/,
    );
    const branches = fresh({ anyOf: Array.from({ length: 8 }, (_, i) => ({ const: i })) });
    expect(refusal(() => resolveSpec(branches, { specLimits: { maxApplicationsPerValue: 4 } })).message).toMatch(/the limit maxApplicationsPerValue/);
    // The same text under the default limits is another spec: accepted.
    expect(resolveSpec(branches).applicationsPerValue).toBe(9);
  });

  it("a looser limit accepts what the default refuses, and bounds the answer by it", () => {
    const deep = Array.from({ length: RUNTIME_SPEC_LIMITS.maxDepth + 4 }).reduce<Record<string, unknown>>(
      (inner) => ({ type: "object", properties: { a: inner } }),
      { type: "string" },
    );
    expect(refusal(() => resolveSpec(fresh(deep))).message).toMatch(/the limit maxDepth/);
    expect(resolveSpec(fresh(deep), { specLimits: { maxDepth: RUNTIME_SPEC_LIMITS.maxDepth + 10 } }).untrusted).toBe(true);
    const few = resolveSpec(fresh({ type: "array", items: { type: "integer" } }), { specLimits: { maxApplicationsPerAnswer: 10 } });
    expect(few.limits?.maxApplicationsPerAnswer).toBe(10);
    expect(checkValueSync(few, [1, 2, 3]).valid).toBe(true);
    expect(
      checkValueSync(
        few,
        Array.from({ length: 20 }, () => 1),
      ).errors[0],
    ).toMatch(/its limit maxApplicationsPerAnswer/);
  });

  it("limits given are checked: known names, positive integers", () => {
    expect(() => resolveSpec(fresh({ type: "string" }), { specLimits: { maxChar: 5 } as never })).toThrow(/no limit "maxChar"/);
    expect(() => resolveSpec(fresh({ type: "string" }), { specLimits: { maxChars: -1 } })).toThrow(/maxChars must be a positive integer/);
  });
});

describe("the operator's setting, RUNTIME_SPEC_LIMITS", () => {
  it("is read as a JSON object of limits, and refused readably when wrong", () => {
    expect(readSpecLimits({ RUNTIME_SPEC_LIMITS: '{"maxChars": 200000, "maxDepth": 8}' })).toEqual({ maxChars: 200_000, maxDepth: 8 });
    expect(readSpecLimits({})).toEqual({});
    expect(() => readSpecLimits({ RUNTIME_SPEC_LIMITS: "200000" })).toThrow(ConfigurationError);
    expect(() => readSpecLimits({ RUNTIME_SPEC_LIMITS: "{maxChars: 5}" })).toThrow(/must be a JSON object such as/);
    expect(() => readEnvironment({ RUNTIME_SPEC_LIMITS: '{"maxDepth": 0}' })).toThrow(/RUNTIME_SPEC_LIMITS: maxDepth must be a positive integer/);
  });

  it("applies to the specs a graph's runs supply, from the builder's env or else the process's; the builder's specLimits override it", async () => {
    const nested = fresh({
      type: "object",
      properties: { a: { type: "object", properties: { b: { type: "object", properties: { c: { type: "object" } } } } } },
    });
    const run = (graph: ReturnType<typeof buildValidationGraph>) =>
      graph.invoke({ request: "anything" }, { context: { spec: { name: "nested", schema: nested }, maxAttempts: 1 } });
    const tight = readEnvironment({ RUNTIME_SPEC_LIMITS: '{"maxDepth": 2}' });
    expect(tight.specLimits).toEqual({ maxDepth: 2 });
    await expect(run(buildValidationGraph({ model: scriptedModel(["{}"]), env: tight }))).rejects.toThrow(/nests deeper than 2 levels/);
    expect((await run(buildValidationGraph({ model: scriptedModel(["{}"]), env: tight, specLimits: { maxDepth: 10 } }))).success).toBe(true);
    expect((await run(buildValidationGraph({ model: scriptedModel(["{}"]) }))).success).toBe(true);
    const before = process.env.RUNTIME_SPEC_LIMITS;
    process.env.RUNTIME_SPEC_LIMITS = '{"maxDepth": 2}';
    try {
      await expect(run(buildValidationGraph({ model: scriptedModel(["{}"]) }))).rejects.toThrow(/nests deeper than 2 levels/);
      expect(() => guardedTool({ spec: { name: "nested", schema: nested }, name: "nested", func: () => "ran" })).toThrow(/nests deeper than 2 levels/);
      // The registry reads no environment: a direct resolve has the caller's limits, else the defaults.
      expect(runtimeSpecLimits()).toEqual(RUNTIME_SPEC_LIMITS);
      expect(resolveSpec(nested).untrusted).toBe(true);
      expect(refusal(() => resolveSpec(nested, { specLimits: { maxDepth: 2 } })).message).toMatch(/nests deeper than 2 levels/);
    } finally {
      if (before === undefined) delete process.env.RUNTIME_SPEC_LIMITS;
      else process.env.RUNTIME_SPEC_LIMITS = before;
    }
  });
});

describe("the builders' specLimits option", () => {
  it("bounds the specs a run supplies, and a run cannot change it", async () => {
    const graph = buildValidationGraph({ model: scriptedModel(['{"a": 1}']), specLimits: { maxChars: 60 } });
    const spec = { name: "small", schema: { type: "object", properties: { a: { type: "integer" }, b: { type: "string", maxLength: 40 } } } };
    await expect(graph.invoke({ request: "anything" }, { context: { spec } })).rejects.toThrow(/over the limit maxChars \(60\)/);
    await expect(graph.invoke({ request: "anything" }, { context: { spec, specLimits: { maxChars: 10_000 } } as never })).rejects.toThrow();
    const loose = buildValidationGraph({ model: scriptedModel(['{"a": 1}']), specLimits: { maxChars: 10_000 } });
    expect((await loose.invoke({ request: "anything" }, { context: { spec, maxAttempts: 1 } })).success).toBe(true);
  });
});

describe("code-defined specs", () => {
  it("have only the compiled-size bound, four times a run-time spec's by default, raised or lowered with defineSpec's limits", () => {
    expect(() => defineSpec({ name: "huge", schema: wide(30_000) })).toThrow(/30001 subschemas would compile to more than 4000000 characters of code/);
    expect(CODE_SPEC_LIMITS.maxCompiledChars).toBe(4 * RUNTIME_SPEC_LIMITS.maxCompiledChars);
    const deep = Array.from({ length: RUNTIME_SPEC_LIMITS.maxDepth + 4 }).reduce<Record<string, unknown>>(
      (inner) => ({ type: "object", properties: { a: inner } }),
      { type: "string" },
    );
    expect(defineSpec({ name: "deep", schema: deep }).untrusted).toBe(false);
    expect(() => defineSpec({ name: "wide", schema: wide(200) }, { limits: { maxCompiledChars: 2_000 } })).toThrow(
      /over the limit maxCompiledChars \(2000\); raise it with defineSpec's limits option/,
    );
  });
});
