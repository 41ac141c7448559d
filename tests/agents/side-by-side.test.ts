/**
 * The side-by-side of bench/agents.ts, run here on the same scripted
 * conversation with the same simulated model: what each setup did with
 * multi-defect answers (and with an answer whose only defect is a cross-field
 * rule), asserted run by run. And docs/agents-benchmark.md holds the figures
 * of exactly this run (only the date may differ), so the page cannot drift
 * from what the code does.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { OUTPUT_FILE, renderMarkdown, runBenchmark, type ContenderId, type RunRecord, type SideBySide } from "../../bench/agents.js";

let results: SideBySide;
beforeAll(async () => {
  results = await runBenchmark();
});

const runsOf = (records: RunRecord[], id: ContenderId) => records.filter((r) => r.contender === id);

describe("createAgent structured answers side by side (simulated model)", () => {
  it("runs the evaluation's hard deployment-config requests: 3-4 defects each, and one request whose only defect is a cross-field rule", () => {
    expect(results.multi.requests.length).toBeGreaterThanOrEqual(3);
    for (const r of runsOf(results.multi.records, "validated-response")) expect(r.defects).toBeGreaterThanOrEqual(3);
    expect(results.ruleOnly.requests.length).toBeGreaterThanOrEqual(1);
  });

  it("validatedResponseMiddleware: every retry names every defect, one retry suffices, and only valid values are returned", () => {
    for (const records of [results.multi.records, results.ruleOnly.records]) {
      for (const run of runsOf(records, "validated-response")) {
        expect(run.result).toBe("valid");
        expect(run.calls).toBe(2);
        expect(run.retries).toEqual([{ present: run.defects, named: run.defects }]);
      }
    }
  });

  it("toolStrategy with its own error handling: each retry names at most one defect, and the answer is returned with its rule defects", () => {
    for (const run of runsOf(results.multi.records, "tool-strategy")) {
      expect(run.retries.length).toBeGreaterThan(0);
      for (const retry of run.retries) expect(retry.named).toBeLessThanOrEqual(1);
      expect(run.calls).toBeGreaterThan(2);
      expect(run.result).toBe("invalid");
    }
    for (const run of runsOf(results.ruleOnly.records, "tool-strategy")) expect(run).toMatchObject({ calls: 1, result: "invalid" });
  });

  it("a plain responseFormat with native structured output: no retry; a schema failure throws, a rule failure is returned", () => {
    for (const run of runsOf(results.multi.records, "response-format")) {
      expect(run).toMatchObject({ calls: 1, result: "threw" });
      expect(run.error).toMatch(/^StructuredOutputParsingError/);
    }
    for (const run of runsOf(results.ruleOnly.records, "response-format")) expect(run).toMatchObject({ calls: 1, result: "invalid" });
  });

  it(`${OUTPUT_FILE} holds this run's figures`, () => {
    const page = readFileSync(OUTPUT_FILE, "utf8");
    const date = /on (\d{4}-\d{2}-\d{2})\./.exec(page)?.[1];
    expect(date).toBeDefined();
    expect(page).toBe(renderMarkdown(results, new Date(`${date}T00:00:00Z`)));
  });
});
