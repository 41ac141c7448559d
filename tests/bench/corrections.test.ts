/** The corrections benchmark in quick mode: well formed, its check holds, and it says its figures come from the simulated model. */
import { describe, expect, it } from "vitest";
import * as corrections from "../../bench/corrections.js";

describe("bench corrections (quick)", () => {
  it("reports each form's tokens and calls, the targets, and JSON Patch against JSON Merge Patch", async () => {
    const r = await corrections.run({ quick: true });
    expect(r.rows.length).toBeGreaterThan(0);
    for (const row of r.rows) expect(Number.isFinite(row.value) && row.value > 0, row.label).toBe(true);
    expect(r.comparisons.length).toBeGreaterThan(0);
    for (const c of r.comparisons) expect(c.value, c.label).toBeLessThan(c.reference);
    for (const check of r.checks) expect(check.ok, check.description).toBe(true);
    expect(r.targets.map((t) => typeof t.met === "boolean" || t.met === null)).toEqual(r.targets.map(() => true));
    expect(r.markdown).toContain("These figures come from the simulated model, not a language model");
    expect(r.markdown).toContain("| answer | defects | JSON Patch (chars) | JSON Merge Patch (chars) | Merge ÷ Patch |");
  }, 120_000);
});
