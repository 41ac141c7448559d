/**
 * The telemetry benchmark's arithmetic, on figures written here (nothing is timed): the median ratio's
 * bootstrap interval, the verdict against the 1 % limit (met, not met, cannot tell; the interval widened by
 * the A/A control's error), the rotation through every order of the set-ups, and how the reports print an
 * interval and an undecided target.
 */
import { describe, expect, it } from "vitest";
import { agreements, summaryRatios } from "../../bench/agreement.js";
import { fmtComparisonRatio, medianRatioInterval, targetLines, targetOutcome, verdictUnder, type RatioInterval } from "../../bench/common.js";
import { costOf, orders, targetVerdict } from "../../bench/telemetry.js";

/** Ratios spread evenly around `center`, ± `spread`, as values over a reference of 1,000. */
function around(center: number, spread: number, n: number): { values: number[]; references: number[] } {
  const values = Array.from({ length: n }, (_, i) => 1_000 * (center + spread * (2 * (i / (n - 1)) - 1)));
  return { values, references: values.map(() => 1_000) };
}

const interval = (low: number, high: number, median = (low + high) / 2): RatioInterval => ({ median, low, high, level: 0.95, q1: low, q3: high, n: 100 });

describe("the telemetry benchmark's figures", () => {
  it("the median per-cycle ratio's interval holds the median, narrows with more cycles, and is the same for the same figures", () => {
    const few = around(1.005, 0.05, 21);
    const many = around(1.005, 0.05, 2_001);
    const a = medianRatioInterval(few.values, few.references);
    const b = medianRatioInterval(many.values, many.references);
    expect(a.median).toBeCloseTo(1.005, 9);
    expect(a.low).toBeLessThanOrEqual(a.median);
    expect(a.high).toBeGreaterThanOrEqual(a.median);
    expect(b.high - b.low).toBeLessThan((a.high - a.low) / 5);
    expect(b.q1).toBeCloseTo(1.005 - 0.025, 3);
    expect(b.q3).toBeCloseTo(1.005 + 0.025, 3);
    expect(medianRatioInterval(few.values, few.references)).toEqual(a);
    expect(() => medianRatioInterval([1, 2], [1])).toThrow();
  });

  it("the verdict: met when the interval is at or under the limit, not met when over it, else it cannot tell", () => {
    expect(verdictUnder(1.01, { low: 0.995, high: 1.008 })).toBe("met");
    expect(verdictUnder(1.01, { low: 1.012, high: 1.03 })).toBe("not met");
    expect(verdictUnder(1.01, { low: 0.98, high: 1.04 })).toBe("cannot tell");
    const quiet = interval(0.998, 1.002);
    expect(targetVerdict(interval(1.001, 1.006), quiet, false)).toMatchObject({ met: true });
    expect(targetVerdict(interval(1.015, 1.025), quiet, false)).toMatchObject({ met: false });
    expect(targetVerdict(interval(0.99, 1.03), quiet, false)).toMatchObject({ met: null, undecided: true });
    // The A/A control's distance from 1 widens the interval on both sides: by 0.009 here, which takes it over the limit.
    expect(targetVerdict(interval(1.001, 1.006), interval(0.991, 1.004), false)).toMatchObject({ met: null, undecided: true });
    expect(targetVerdict(interval(1.02, 1.03), interval(0.991, 1.004), false)).toMatchObject({ met: false });
    expect(targetVerdict(interval(1.02, 1.03), interval(0.991, 1.004), false).detail).toContain("so 1.011–1.039");
    expect(targetVerdict(interval(1.001, 1.006), quiet, true)).toMatchObject({ met: null });
    expect(targetVerdict(interval(1.001, 1.006), quiet, true).undecided).toBeUndefined();
  });

  it("a set-up's cost: its median block, the median ratio, and the ratio of the total CPU (the mean)", () => {
    const cost = costOf("no SDK", [1_010, 1_020, 3_000], [1_000, 1_000, 1_000]);
    expect(cost.perRun).toBe(1_020);
    expect(cost.interval.median).toBeCloseTo(1.02, 9);
    expect(cost.totalRatio).toBeCloseTo(5_030 / 3_000, 9);
  });

  it("the cycles rotate through every order of the set-ups, each set-up in each place equally often", () => {
    const all = orders(["a", "b", "c"]);
    expect(all).toHaveLength(6);
    expect(new Set(all.map((o) => o.join(""))).size).toBe(6);
    for (const place of [0, 1, 2]) expect(all.map((o) => o[place]).sort()).toEqual(["a", "a", "b", "b", "c", "c"]);
  });

  it("the reports print an interval in place of the min–max, and a target the run cannot tell as such; an earlier run reads the interval back", () => {
    const c = { label: "CPU per run, no SDK", value: 1, reference: 1, unit: "µs", referenceLabel: "off", ratios: [1, 1.01, 1.02], ratio: 1.01 };
    const shown = fmtComparisonRatio({ ...c, interval: { low: 1.004, high: 1.016, level: 0.95 } });
    expect(shown).toBe("1.010× (1.004×–1.016×, 3 reps, 95 % CI)");
    const undecided = { description: "at most 1 %", met: null, undecided: true as const, detail: "1.01×" };
    expect(targetOutcome(undecided)).toBe("cannot tell at this noise");
    expect(targetOutcome({ ...undecided, undecided: undefined })).toBe("not measured");
    expect(targetLines([undecided])).toBe("- ⚪ cannot tell at this noise — at most 1 %: 1.01×");
    const summary = [
      "## Summary",
      "",
      "| benchmark | figure | value | reference | ratio |",
      "| --- | --- | --- | --- | --- |",
      `| T | CPU | 1 µs | off: 1 µs | ${shown} |`,
    ].join("\n");
    const [read] = summaryRatios(summary);
    expect(read).toMatchObject({ ratio: 1.01, spread: { min: 1.004, max: 1.016, reps: 3 } });
    expect(agreements([read], [read])[0].reproduced).toBe(true);
  });
});
