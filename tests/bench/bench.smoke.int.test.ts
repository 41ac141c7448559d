/**
 * Smoke test of the benchmarks: each runs in quick mode (tiny sizes) in this
 * process and its results are well formed and its checks hold. Integration:
 * it starts the scripted HTTP server and the article's Python validator. No
 * timing assertions: targets are goals reported in BENCHMARKS.md, not tests.
 */
import { describe, expect, it } from "vitest";
import { median, RATIO_DEFINITION, type BenchResult } from "../../bench/common.js";
import * as history from "../../bench/checkpoint-bytes.js";
import * as concurrency from "../../bench/concurrency.js";
import * as overhead from "../../bench/graph-overhead.js";
import * as memory from "../../bench/memory-scale.js";
import * as prompt from "../../bench/prompt-growth.js";
import { renderReport } from "../../bench/run.js";
import * as soak from "../../bench/soak.js";
import * as validator from "../../bench/validator-speed.js";
import * as patterns from "../../bench/pattern-cost.js";

const quick = { quick: true };
const results: BenchResult[] = [];

function expectWellFormed(r: BenchResult): void {
  results.push(r);
  expect(r.markdown).toContain("## ");
  expect(r.rows.length).toBeGreaterThan(0);
  for (const row of r.rows) {
    expect(Number.isFinite(row.value), `${r.id}: ${row.label}`).toBe(true);
    expect(row.value, `${r.id}: ${row.label}`).toBeGreaterThan(0);
  }
  expect(r.comparisons.length).toBeGreaterThan(0);
  for (const c of r.comparisons) {
    for (const v of [c.value, c.reference, c.ratio, ...c.ratios]) {
      expect(Number.isFinite(v), `${r.id}: ${c.label}`).toBe(true);
      expect(v, `${r.id}: ${c.label}`).toBeGreaterThan(0);
    }
    // One definition: the median of the per-repetition ratios (value ÷ reference); with one repetition, the quotient of the two numbers shown.
    expect(c.ratios.length).toBeGreaterThan(0);
    expect(c.ratio).toBeCloseTo(median(c.ratios), 9);
    if (c.ratios.length === 1) expect(c.ratio).toBeCloseTo(c.value / c.reference, 9);
  }
  for (const check of r.checks) expect(check.ok, `${r.id}: ${check.description} (${check.detail ?? ""})`).toBe(true);
  for (const t of r.targets) expect(t.met === null || typeof t.met === "boolean").toBe(true);
}

/** A comparison's value and reference are figures of the same run (its rows). */
function expectFromRows(r: BenchResult, label: string, valueRow: string, referenceRow: string): void {
  const c = r.comparisons.find((x) => x.label === label);
  expect(c, label).toBeDefined();
  expect(c!.value).toBe(r.rows.find((x) => x.label === valueRow)?.value);
  expect(c!.reference).toBe(r.rows.find((x) => x.label === referenceRow)?.value);
}

describe("benchmarks in quick mode", () => {
  it("validator speed: the hand-written checker agrees with the validator on every input", async () => {
    const r = await validator.run(quick);
    expectWellFormed(r);
    const agreement = r.checks.find((c) => c.description.startsWith("hand-written checker and checkValueSync give the same verdict"));
    expect(agreement?.ok).toBe(true);
    expectFromRows(r, "validator (schema + rules), valid inputs", "validator (schema + rules), valid", "hand-written checker, valid");
    const python = r.comparisons.find((c) => c.label.includes("article's validate_config vs the validator, valid"));
    if (python) {
      expect(python.value).toBe(r.rows.find((x) => x.label === "Python validate_config as written, valid")?.value);
      expect(python.reference).toBe(r.rows.find((x) => x.label === "validator (schema + rules), valid")?.value);
    } else expect(r.notRun?.[0]).toMatch(/^not run: python3\/jsonschema not available/);
    // Python is the figure and the validator the reference, so these ratios read value ÷ reference like every other.
    for (const c of r.comparisons.filter((x) => x.label.includes("Python") || x.label.includes("validate_config")))
      expect(c.referenceLabel).toBe("validator (schema + rules)");
    // Measured together: one ratio per interleaved round.
    expect(Math.min(...r.comparisons.map((c) => c.ratios.length))).toBeGreaterThan(1);
  }, 120_000); // 16 s measured with the machine's load average near 19

  it("validator speed: a missing python3 is reported, not a failure", async () => {
    const r = await validator.run({ quick: true, python: "python3-that-does-not-exist" });
    expectWellFormed(r);
    expect(r.notRun?.[0]).toMatch(/^not run: python3\/jsonschema not available/);
    expect(r.targets.filter((t) => t.description.includes("Python")).every((t) => t.met === null)).toBe(true);
    expect(r.markdown).toContain("not run: python3/jsonschema not available");
  });

  it("pattern cost: the worst cases within the bounds, each in a Node process of its own, end as the bounds say", async () => {
    const r = await patterns.run(quick);
    expectWellFormed(r); // its checks: accepted, judged, refused past the budget, $data and a{1001} refused
    expect(r.comparisons).toHaveLength(5);
  }, 300_000);

  it("framework overhead: the graphs against their floors, a profile over HTTP, the RunTree watch", async () => {
    const r = await overhead.run(quick);
    expectWellFormed(r);
    expectFromRows(
      r,
      "package graph vs its framework floor, in-process model: CPU per attempt",
      "package validation graph (`buildValidationGraph`), per attempt",
      "minimal two-node LangGraph graph, same calls, per attempt",
    );
    expectFromRows(
      r,
      "Reflexion graph vs its minimal LangGraph floor, in-process model: CPU per model call",
      "Reflexion graph, per model call",
      "minimal LangGraph graph with the same model calls, per model call",
    );
    // No ratio against a loop whose model call costs nothing.
    expect(r.comparisons.some((c) => c.referenceLabel.includes("plain"))).toBe(false);
    expect(r.markdown).toContain("Top functions by self time");
    expect(r.markdown).toContain("a langsmith `RunTree` per runnable call, tracing off");
    const runTree = r.targets.find((t) => t.description.includes("RunTree"));
    expect(typeof runTree?.met).toBe("boolean");
  }, 120_000);

  it("prompt growth: sizes per attempt over a run that uses every attempt", async () => {
    const r = await prompt.run(quick);
    expectWellFormed(r);
    expect(r.rows.filter((x) => x.unit === "chars")).toHaveLength(5);
    expect(r.rows.filter((x) => x.unit === "tokens")).toHaveLength(5);
  });

  it("concurrency: real ChatOpenAI against the scripted server, both in this process", async () => {
    // Few runs and a latency wide enough that every run's request is on the wire before the first answer
    // comes back (a check of the benchmark's), even on a busy machine where the runs' own CPU work stretches
    // out: the five runs need about 50 ms of CPU to send their first requests, a tenth of the latency.
    const r = await concurrency.run({ ...quick, inProcess: true, runs: 5, latencyMs: 500 });
    expect(r.markdown).toContain("server and clients in one process");
    expectWellFormed(r);
    expectFromRows(
      r,
      "package graph vs its framework floor: CPU per attempt, 5 at once",
      "package-graph CPU µs/attempt at 5",
      "langgraph-floor CPU µs/attempt at 5",
    );
    expect(r.comparisons.find((c) => c.label.startsWith("raw floor: wall time"))?.reference).toBe(r.rows.find((x) => x.label === "ideal wall time")?.value);
    // Interleaved: every client once per cycle, so each pair has one ratio per cycle.
    expect(Object.values(r.interleaved.blocks).every((b) => b.length === r.interleaved.orders.length)).toBe(true);

    // The phase with 10% of model calls failing: every run is counted once, by how it ended, and none is lost.
    const f = r.faults;
    expect(r.markdown).toContain(`### ${f.label}`);
    expect(f.label).toBe("With 10% of model calls failing (503)");
    expect(f.runs).toBe(5);
    for (const n of [f.valid, f.explicitFailure, f.providerError, f.lost, f.validAfterTwoAttempts, f.faultsInjected, f.faultsInTimedRuns]) {
      expect(Number.isInteger(n) && n >= 0).toBe(true);
    }
    expect(f.valid + f.explicitFailure + f.providerError + f.lost).toBe(f.runs);
    expect(f.lost).toBe(0);
    expect(f.validAfterTwoAttempts).toBe(f.valid);
    expect(f.faultsInjected).toBeGreaterThan(0);
    expect(f.faultsInjected).toBe(Math.floor(f.serverRequests / f.failEvery));
    expect(f.faultsInTimedRuns).toBeLessThanOrEqual(f.faultsInjected);
    expect(Object.values(f.endings).reduce((a, b) => a + b, 0)).toBe(f.runs - f.valid);
    expect(r.checks.find((c) => c.description.includes("every run ended, none lost"))?.ok).toBe(true);
  }, 600_000); // 39 s measured on a quiet machine: eight clients, each waiting out the latency in every block

  it("memory at scale: index vs scan, same answers", async () => {
    const r = await memory.run(quick);
    expectWellFormed(r);
    // The scan is the figure and the index the reference: the ratio reads value ÷ reference, above 1 where the index is faster.
    const search = r.comparisons.find((c) => c.label === "search at 1,000 entries: scanRelevantMemories vs LongTermMemory.search");
    expect(search?.referenceLabel).toBe("LongTermMemory.search");
    expect(search!.ratios.length).toBeGreaterThan(1);
    expect(search!.ratio).toBeGreaterThan(1);
  });

  it("attempt history in checkpoints: every variant reads back today's state; the one-query saver agrees with the base walk", async () => {
    const r = await history.run(quick);
    expectWellFormed(r);
    // Bytes are counts of one run: one repetition, the quotient of the two numbers shown.
    const bytes = r.comparisons.find((c) => c.label.startsWith("memory bytes per run, (a) today"));
    expect(bytes?.referenceLabel).toMatch(/floor/);
    if (r.notRun?.length) expect(r.notRun[0]).toMatch(/^PostgreSQL half: not reachable/);
    else
      expect(r.checks.map((c) => c.description)).toContain(
        "postgres: the one-query saver's getDeltaChannelHistory equals the base class's walk at every checkpoint of (c)'s threads",
      );
  }, 300_000); // 40 s measured with the machine's load average near 15, 74 s near 28

  it("soak: the graph over HTTP for seconds, sampled with its runs settled; no timer of theirs left", async () => {
    // Seconds rather than minutes: the server and the client each start in a process of their own, as in the benchmark.
    const r = await soak.run({ ...quick, durationMs: 6_000, sampleMs: 1_000, warmupMs: 2_000 });
    expectWellFormed(r);
    const s = r.soak;
    expect(s.samples.length).toBeGreaterThanOrEqual(3);
    expect(s.end.runs).toBe(s.runs);
    expect(s.samples.map((x) => x.runs)).toEqual([...s.samples.map((x) => x.runs)].sort((a, b) => a - b));
    for (const look of [...s.samples, s.end]) {
      expect(look.refTimers).toBe(s.baseline.refTimers);
      expect(look.packageTimers).toBe(0);
    }
    expect(Number.isFinite(r.heapSlopeKbPer1000)).toBe(true);
    expect(r.markdown).toContain("KB per 1,000 runs");
  }, 120_000); // 13 s measured with the load average near 14

  it("the report carries the machine, the Node version and every section", () => {
    const report = renderReport(results, quick, Date.now());
    expect(report).toContain("# Benchmarks");
    expect(report).toContain(process.version);
    expect(report).toMatch(/cores/);
    expect(report).toContain(RATIO_DEFINITION);
    for (const r of results) expect(report).toContain(r.markdown.split("\n")[0]);
  });
});
