/** `npm run bench -- --against FILE`: each summary ratio of this run against an earlier report's, reproduced when within its spread. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { agreements, agreementSection, summaryRatios } from "../../bench/agreement.js";
import { parseBenchArgs } from "../../bench/run.js";

const row = (benchmark: string, figure: string, ratio: string) => `| ${benchmark} | ${figure} | 1 µs | ref: 1 µs | ${ratio} |`;
const report = (source: string, rows: string[]) =>
  [
    "# Benchmarks",
    "",
    `| source | ${source} |`,
    "| date | 2026-12-01T10:00:00.000Z |",
    "",
    "## Summary",
    "",
    "| benchmark | figure | value | reference | ratio (value ÷ reference) |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
    "| benchmark | target | result | detail |",
    "| --- | --- | --- | --- |",
    "| A | a target | met | 1.00× (9.00×–9.50×, 3 reps) |",
    "",
    "## 1. A",
    "",
    row("A", "not in the summary", "5.00×"),
  ].join("\n");

describe("how far two benchmark runs agree", () => {
  it("reads each summary ratio with its spread, and only the summary's first table", () => {
    const ratios = summaryRatios(
      report("commit abc", [
        row("A", "speed", "3.35× (1.98×–4.11×, 15 reps)"),
        row("A", "big", "3,959× (2,347×–8,414×, 15 reps)"),
        row("B", "count", "0.52×"),
        row("C", "regenerated", "1.60× (0.83×–2.82×, 25 reps) (section regenerated on its own)"),
        row("D", "no ratio", "—"),
      ]),
    );
    expect(ratios).toEqual([
      { benchmark: "A", figure: "speed", ratio: 3.35, spread: { min: 1.98, max: 4.11, reps: 15 } },
      { benchmark: "A", figure: "big", ratio: 3959, spread: { min: 2347, max: 8414, reps: 15 } },
      { benchmark: "B", figure: "count", ratio: 0.52 },
      { benchmark: "C", figure: "regenerated", ratio: 1.6, spread: { min: 0.83, max: 2.82, reps: 25 } },
    ]);
  });

  it("a ratio is reproduced within the earlier spread; a one-repetition figure within 1 %; figures only one run has are left out", () => {
    const earlier = summaryRatios(
      report("commit abc", [
        row("A", "in", "2.00× (1.50×–2.50×, 9 reps)"),
        row("A", "out", "2.00× (1.50×–2.50×, 9 reps)"),
        row("B", "n", "0.50×"),
        row("B", "m", "0.50×"),
        row("Z", "gone", "1.00×"),
      ]),
    );
    const now = summaryRatios(
      report("commit def", [
        row("A", "in", "2.50× (2.00×–3.00×, 9 reps)"),
        row("A", "out", "2.60× (2.40×–2.80×, 9 reps)"),
        row("B", "n", "0.504×"),
        row("B", "m", "0.52×"),
        row("Y", "new", "1.00×"),
      ]),
    );
    expect(agreements(earlier, now).map((a) => [a.figure, a.reproduced])).toEqual([
      ["in", true],
      ["out", false],
      ["n", true],
      ["m", false],
    ]);
  });

  it("the section counts what was reproduced and names the earlier run", () => {
    const earlier = report("commit abc", [
      row("A", "in", "2.00× (1.50×–2.50×, 9 reps)"),
      row("A", "out", "2.00× (1.50×–2.50×, 9 reps)"),
      row("B", "n", "0.50×"),
    ]);
    const now = report("commit def", [row("A", "in", "1.60× (1.00×–2.00×, 9 reps)"), row("A", "out", "3.00× (2.90×–3.10×, 9 reps)"), row("B", "n", "0.50×")]);
    const section = agreementSection(earlier, "first.md", now);
    expect(section).toContain("`first.md` (commit abc, 2026-12-01T10:00:00.000Z)");
    expect(section).toContain("Reproduced: 1 of 2 ratios measured over repetitions, 1 of 1 figures with one repetition.");
    expect(section).toContain("| A | out | 2.00× (1.50×–2.50×) | 3.00× (2.90×–3.10×) | 1.50× | **no** |");
    expect(agreementSection(earlier, "first.md", report("x", [row("Q", "other", "1.00×")]))).toContain("no figure in common");
  });

  it("reads the report the repository keeps", () => {
    const kept = summaryRatios(readFileSync("BENCHMARKS.md", "utf8"));
    expect(kept.length).toBeGreaterThan(20);
    expect(kept.filter((r) => r.spread).length).toBeGreaterThan(10);
  });

  it("--against goes with a full or partial run, not with --update; a partial run is printed unless told where to write", () => {
    expect(parseBenchArgs(["--against", "old.md"])).toEqual({ quick: false, out: "BENCHMARKS.md", only: undefined, against: "old.md" });
    expect(() => parseBenchArgs(["--only", "validator", "--update", "--against", "old.md"])).toThrow(/does not go with --update/);
    expect(parseBenchArgs(["--only", "validator"])).toEqual({ quick: false, out: undefined, only: ["validator"] });
    expect(parseBenchArgs(["--only", "validator", "--update"])).toEqual({ quick: false, out: "BENCHMARKS.md", only: ["validator"], update: true });
  });
});
