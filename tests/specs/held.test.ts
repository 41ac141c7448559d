/**
 * The code-defined specs a graph holds for its runs in progress (src/specs/held.ts): a run's spec is
 * found by the name and fingerprint it recorded, whatever else comes and goes, and one nothing holds
 * any more is forgotten.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { SpecError } from "../../src/errors.js";
import { HeldSpecs } from "../../src/specs/held.js";
import { builtinSpecs, type SpecRecord } from "../../src/specs/registry.js";
import { defineSpec, type Spec } from "../../src/specs/spec.js";

/** A code-defined spec whose rule caps `n` at `max`. */
function capped(name: string, max: number): Spec {
  return defineSpec({
    name,
    description: "",
    schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
    rules: [{ id: "max", description: `n <= ${max}`, inputs: { n: "integer" }, check: (v) => (v.n <= max ? null : `n is ${v.n}; it must be <= ${max}`) }],
  });
}

/** The message of the SpecError `fn` throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SpecError);
    return (error as Error).message;
  }
  throw new Error("expected a SpecError, but nothing was thrown");
}

describe("HeldSpecs", () => {
  it("finds a run's code-defined spec by the name and fingerprint it recorded, among many others", () => {
    const specs = new HeldSpecs();
    const many = Array.from({ length: 100 }, (_, i) => capped(`capped-${i}`, i));
    const records = many.map((spec) => specs.record(spec));
    expect(records[0]).toMatchObject({ kind: "code", name: "capped-0" });
    expect(records.map((record) => specs.find(record))).toEqual(many);
    expect(specs.find(records[0])).toBe(many[0]);
  });

  it("does not take a spec of the same name with other rules for the one a run recorded", () => {
    const specs = new HeldSpecs();
    const kept = capped("limit", 3);
    specs.record(kept);
    const other = new HeldSpecs().record(capped("limit", 4));
    expect(refusal(() => specs.find(other))).toMatch(/"limit" with different schema or rules/);
    expect(specs.find(specs.record(capped("limit", 3)))).toBe(kept);
  });

  it("always knows the builder's own spec; built-in and run-time specs are found from their records", () => {
    const own = capped("own", 1);
    const specs = new HeldSpecs({ own });
    // A record made elsewhere (a run started before, in another holder) finds the builder's own spec.
    expect(specs.find(new HeldSpecs().record(own))).toBe(own);
    expect(specs.find(specs.record("api-request"))).toBe(builtinSpecs.get("api-request"));
    const inline = specs.record({ name: "flag", schema: { type: "object", required: ["ok"] } });
    expect(inline).toMatchObject({ kind: "inline", name: "flag" });
    expect(specs.find(inline).name).toBe("flag");
  });

  it("refuses a run-time spec over the limits it was built with", () => {
    const specs = new HeldSpecs({ specLimits: { maxChars: 50 } });
    expect(refusal(() => specs.record(JSON.stringify({ name: "wide", schema: { type: "object", description: "x".repeat(60) } })))).toMatch(/maxChars/);
  });

  it("forgets a spec that nothing holds any more", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const specs = new HeldSpecs();
    const kept = capped("kept", 1);
    const keptRecord = specs.record(kept);
    // Made and dropped in a function of its own, so that only the holder still refers to it.
    const droppedRecord = ((): SpecRecord => specs.record(capped("dropped", 2)))();
    // A WeakRef keeps its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(specs.find(keptRecord)).toBe(kept);
    expect(refusal(() => specs.find(droppedRecord))).toMatch(/started with the code-defined spec "dropped".*this graph knows "kept"\)/);
  });
});
