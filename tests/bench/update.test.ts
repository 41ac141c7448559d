/** `npm run bench -- --only ID --update`: one benchmark's section and summary rows regenerated in place, the rest of the report as it was. */
import { describe, expect, it } from "vitest";
import type { BenchResult } from "../../bench/common.js";
import { parseBenchArgs, updateReport } from "../../bench/run.js";

const REPORT = [
  "# Benchmarks",
  "",
  "## Summary",
  "",
  "| benchmark | figure | value | reference | ratio (value ÷ reference) |",
  "| --- | --- | --- | --- | --- |",
  "| Speed | old speed | 1 µs | ref: 1 µs | 1.00× |",
  "| Streaming | old figure | 2 µs | ref: 1 µs | 2.00× |",
  "| Memory | memory figure | 3 µs | ref: 1 µs | 3.00× |",
  "",
  "| benchmark | target | result | detail |",
  "| --- | --- | --- | --- |",
  "| Speed | fast | met | yes |",
  "| Streaming | old target | not met | no |",
  "",
  "## 1. Speed",
  "",
  "speed text",
  "",
  "## Streaming",
  "",
  "old streaming text",
  "",
  "## 2. Memory",
  "",
  "memory text",
  "",
].join("\n");

const result: BenchResult = {
  id: "streaming",
  title: "Streaming",
  rows: [],
  comparisons: [{ label: "new figure", value: 1.2, reference: 1, unit: "µs", referenceLabel: "ref", ratios: [1.1, 1.2, 1.3], ratio: 1.2 }],
  targets: [{ description: "new target", met: true, detail: "held" }],
  checks: [],
  markdown: "## Streaming\n\nnew streaming text",
};

describe("a benchmark's section regenerated on its own", () => {
  it("replaces its section and summary rows where they were, marks them, and leaves every other line as it was", () => {
    const updated = updateReport(REPORT, [result], { streaming: { before: [1, 2, 3], after: [1, 2, 3] } }, "2026-12-02T00:00:00.000Z");
    const lines = updated.split("\n");
    expect(lines).toContain("| Streaming | new figure | 1.20 µs | ref: 1.00 µs | 1.20× (1.10×–1.30×, 3 reps) (section regenerated on its own) |");
    expect(lines.indexOf("| Streaming | new target | met | held (section regenerated on its own) |")).toBe(lines.indexOf("| Speed | fast | met | yes |") + 1);
    expect(updated).not.toContain("old figure");
    expect(updated).not.toContain("old target");
    expect(updated).not.toContain("old streaming text");
    expect(updated).toMatch(
      /## Streaming\n\n\*This section was regenerated on its own by `npm run bench -- --only streaming --update` \(.*, 2026-12-02T00:00:00.000Z\); the other sections are from the full run above\.\*\n/,
    );
    expect(updated).toContain("new streaming text\n\n## 2. Memory\n\nmemory text");
    // Every line of the other sections and rows is still there, in order.
    const others = REPORT.split("\n").filter((line) => line !== "" && !/Streaming|old streaming text/.test(line));
    expect(lines.filter((line) => others.includes(line))).toEqual(others);
    expect(lines.indexOf("| Streaming | new figure | 1.20 µs | ref: 1.00 µs | 1.20× (1.10×–1.30×, 3 reps) (section regenerated on its own) |")).toBe(
      lines.indexOf("| Speed | old speed | 1 µs | ref: 1 µs | 1.00× |") + 1,
    );
  });

  it("--update needs --only, and writes to BENCHMARKS.md unless told otherwise", () => {
    expect(() => parseBenchArgs(["--update"])).toThrow(/--update needs --only/);
    expect(parseBenchArgs(["--only", "streaming", "--update"])).toEqual({ quick: false, out: "BENCHMARKS.md", only: ["streaming"], update: true });
  });
});
