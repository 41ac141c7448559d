/**
 * The evaluation harness on the simulated model: the report's figures match
 * the run's own records, the HTML is self-contained, the article's claims
 * hold, and the simulation is coherent with the validator it is judged by.
 * The run covers the first three requests of each spec (a fixed seed), the
 * same code path as `npm run eval` on the whole suite, in a fraction of the time.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { generationSystemPrompt } from "../../src/validation/prompts.js";
import { firstAttemptPrompt, retryPrompt } from "../../src/protocol/feedback.js";
import { checkValueSync } from "../../src/specs/check.js";
import type { EvalCliResult } from "../../eval/run.js";
import { main, perSpec } from "../../eval/run.js";
import { formatCalls, formatMs, formatPercent, formatTokens, SUMMARY_HEADER } from "../../eval/report.js";
import { buildAnswer, DEFECTS, exhibits, planDefects, SimulatedChatModel, simulatedModelSource } from "../../eval/simulated-model.js";
import { firstErrorSpec, isApproval } from "../../eval/strategies.js";
import { SUITE } from "../../eval/suite.js";

const PER_SPEC = 3;
let dir: string;
let result: EvalCliResult;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "eval-test-"));
  result = await main(
    [
      "--seed",
      "1",
      "--per-spec",
      String(PER_SPEC),
      "--retry-requests",
      "1",
      "--retry-with",
      "corrections",
      "--out",
      join(dir, "report.html"),
      "--json",
      join(dir, "records.json"),
    ],
    () => undefined,
  );
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the suite", () => {
  it("has at least 40 requests across the 4 built-in specs, with hard ones", () => {
    expect(SUITE.length).toBeGreaterThanOrEqual(40);
    expect(new Set(SUITE.map((r) => r.spec))).toEqual(new Set(builtinSpecs.keys()));
    expect(new Set(SUITE.map((r) => r.id)).size).toBe(SUITE.length);
    expect(SUITE.filter((r) => r.difficulty === "hard").length).toBeGreaterThanOrEqual(8);
  });
});

describe("eval on the simulated model", () => {
  it("ends with the retry forms, whole answers beside the forms asked for, said to come from the simulated model", () => {
    const forms = result.run.retryForms!;
    expect(new Set(forms.rows.map((r) => r.form))).toEqual(new Set(["answer", "corrections"]));
    expect(forms.simulated).toBe(true);
    expect(result.markdown).toContain("These figures come from the simulated model, not a language model");
    expect(result.html).toContain("<h2>Retry forms: whole answers against corrections</h2>");
  });

  it("renders every section of the HTML report as HTML: tables as tables, no markdown left in a <pre>", () => {
    const { html } = result;
    expect(html).not.toContain("<pre");
    expect(html).not.toMatch(/\| --- \|/);
    expect(html).not.toContain("**");
    const retryForms = html.slice(html.indexOf("<h2>Retry forms"), html.indexOf("<h2>Strategies</h2>"));
    expect(retryForms.match(/<table/g)).toHaveLength(3);
    expect(retryForms).toContain("<th>retries' output tokens</th>");
    expect(retryForms).toContain("<strong>These figures come from the simulated model, not a language model</strong>");
  });

  it("keeps one record per request and strategy", () => {
    const { run } = result;
    const requests = perSpec(SUITE, PER_SPEC);
    expect(requests).toHaveLength(PER_SPEC * builtinSpecs.size);
    expect(run.records).toHaveLength(requests.length * run.strategies.length);
    expect(new Set(run.records.map((r) => r.requestId))).toEqual(new Set(requests.map((r) => r.id)));
    expect(run.strategies.map((s) => s.id)).toEqual(["validation", "first-error", "self-review", "reflexion"]);
    expect(run.records.every((r) => r.failure === undefined)).toBe(true);
  });

  it("summaries recompute exactly from the per-request records", () => {
    const { run } = result;
    for (const s of run.summaries) {
      const mine = run.records.filter((r) => r.strategy === s.strategy);
      const n = mine.length;
      expect(s.requests).toBe(n);
      expect(s.validRate).toBeCloseTo(mine.filter((r) => r.valid).length / n, 12);
      expect(s.claimedRate).toBeCloseTo(mine.filter((r) => r.claimedSuccess).length / n, 12);
      expect(s.falseApprovalRate).toBeCloseTo(mine.filter((r) => r.claimedSuccess && !r.valid).length / n, 12);
      expect(s.meanCalls).toBeCloseTo(mine.reduce((t, r) => t + r.calls, 0) / n, 12);
      expect(s.meanTokens).toBeCloseTo(mine.reduce((t, r) => t + r.totalTokens, 0) / n, 12);
      // a record's falseApproval flag is exactly "claimed and not valid"
      for (const r of mine) expect(r.falseApproval).toBe(r.claimedSuccess && !r.valid);
    }
  });

  it("the markdown table shows the recomputed figures", () => {
    const { run, markdown } = result;
    expect(markdown).toContain(`| ${SUMMARY_HEADER.join(" | ")} |`);
    expect(markdown).toContain("simulated model (seed 1) — not a real LLM");
    for (const s of run.summaries) {
      const mine = run.records.filter((r) => r.strategy === s.strategy);
      const valid = formatPercent(mine.filter((r) => r.valid).length / mine.length);
      const falseApprovals = formatPercent(mine.filter((r) => r.claimedSuccess && !r.valid).length / mine.length);
      const row = markdown.split("\n").find((line) => line.startsWith(`| ${s.name} |`));
      expect(row, s.name).toBeDefined();
      const cells = (row as string)
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim());
      expect(cells[1]).toBe(valid);
      expect(cells[3]).toBe(falseApprovals);
      expect(cells[5]).toBe(formatCalls(mine.reduce((t, r) => t + r.calls, 0) / mine.length));
      expect(cells[6]).toBe(formatTokens(mine.reduce((t, r) => t + r.totalTokens, 0) / mine.length));
      expect(cells[7]).toBe(formatMs(s.p50LatencyMs));
    }
  });

  it("the time column is named for what it is: the harness's own time, not a model latency", () => {
    const { markdown, html } = result;
    expect(SUMMARY_HEADER).toContain("harness time p50 ms (simulated model: no model latency)");
    expect(SUMMARY_HEADER.some((h) => /^latency/.test(h))).toBe(false);
    for (const text of [markdown, html])
      expect(text).toMatch(/the harness's own processing \(graph, prompts, validator\), not a model's latency, and not a speed result/);
    expect(html).toContain("<th>harness ms</th>");
  });

  it("the HTML report carries the figures, says which model produced them, and fetches nothing", () => {
    const html = readFileSync(result.htmlPath, "utf8");
    expect(html).toBe(result.html);
    expect(html).toContain("simulated model (seed 1) — not a real LLM");
    for (const s of result.run.summaries) {
      expect(html).toContain(formatPercent(s.validRate));
      expect(html).toContain(formatPercent(s.falseApprovalRate));
      expect(html).toContain(formatCalls(s.meanCalls));
    }
    expect(html).toContain("<svg");
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|\bhref=|url\(|@import/i);
    expect(html).toContain("How the simulated model behaves");
  });

  it("shows the claims the article makes, under the simulation's rules", () => {
    const by = Object.fromEntries(result.run.summaries.map((s) => [s.strategy, s]));
    // Deterministic checks never approve invalid output.
    expect(by.validation.falseApprovalRate).toBe(0);
    expect(by["first-error"].falseApprovalRate).toBe(0);
    expect(by.reflexion.falseApprovalRate).toBe(0);
    // Self-review approves output the validator rejects.
    expect(by["self-review"].falseApprovalRate).toBeGreaterThan(0);
    // All errors at once does better than the first error only, within the same attempt budget.
    expect(by.validation.validRate).toBe(1);
    expect(by.validation.validRate).toBeGreaterThan(by["first-error"].validRate);
  });
});

describe("the simulated model", () => {
  it("every defect, alone, is named by the validator's messages; fixing it makes the example valid again", () => {
    for (const [specName, defects] of Object.entries(DEFECTS)) {
      const spec = builtinSpecs.get(specName)!;
      for (const d of defects) {
        const broken = buildAnswer(specName, [d], new Set([d.id]));
        expect(exhibits(d, broken), `${specName}/${d.id} exhibited`).toBe(true);
        const report = checkValueSync(spec, broken);
        expect(report.valid, `${specName}/${d.id} invalid`).toBe(false);
        const feedback = report.errors.join("\n");
        expect(
          d.mentions.some((re) => re.test(feedback)),
          `${specName}/${d.id} named by: ${feedback}`,
        ).toBe(true);
        // the reviewer's wording names it too
        expect(
          d.mentions.some((re) => re.test(`- ${d.label}: ${d.description}`)),
          `${specName}/${d.id} reviewer line`,
        ).toBe(true);
        const fixed = buildAnswer(specName, [d], new Set());
        expect(checkValueSync(spec, fixed).errors, `${specName}/${d.id} fixed`).toEqual([]);
      }
    }
  });

  it("every first answer's validator errors name at least one of its defects", () => {
    for (const item of SUITE) {
      const planned = planDefects(item.spec, item.request, item.difficulty, 1);
      const answer = buildAnswer(item.spec, planned, new Set(planned.map((d) => d.id)));
      const report = checkValueSync(builtinSpecs.get(item.spec)!, answer);
      expect(report.valid, item.id).toBe(planned.length === 0);
      if (planned.length > 0)
        expect(
          planned.some((d) => d.mentions.some((re) => re.test(report.errors.join("\n")))),
          item.id,
        ).toBe(true);
    }
  });

  it("on a retry it fixes exactly the defects its feedback names", async () => {
    const item = SUITE.find((r) => r.difficulty === "hard" && planDefects(r.spec, r.request, r.difficulty, 1).length >= 3)!;
    const spec = builtinSpecs.get(item.spec)!;
    const planned = planDefects(item.spec, item.request, item.difficulty, 1);
    const model = new SimulatedChatModel({ seed: 1 });
    const system = new SystemMessage(generationSystemPrompt(spec));
    const first = String((await model.invoke([system, new HumanMessage(firstAttemptPrompt(item.request))])).content);
    expect(planned.every((d) => exhibits(d, JSON.parse(first)))).toBe(true);
    // Feed back only the first defect's reviewer line.
    const named = planned[0];
    const retry = String((await model.invoke([system, new HumanMessage(retryPrompt(item.request, first, [`${named.label}: ${named.description}`]))])).content);
    const after = JSON.parse(retry);
    expect(exhibits(named, after)).toBe(false);
    for (const d of planned.slice(1)) expect(exhibits(d, after), d.id).toBe(true);
  });

  it("is deterministic for a seed, and plays each role through the ModelSource factory", async () => {
    const a = simulatedModelSource({ seed: 3 })({ model: "m", role: "reviewer" });
    const b = simulatedModelSource({ seed: 3 })({ model: "m", role: "reviewer" });
    const item = SUITE.find((r) => r.difficulty === "hard")!;
    const planned = planDefects(item.spec, item.request, item.difficulty, 3);
    const answer = JSON.stringify(buildAnswer(item.spec, planned, new Set(planned.map((d) => d.id))));
    const prompt = [new HumanMessage(`Request:\n${item.request}\n\nJSON to review:\n${answer}`)];
    const ra = String((await a.invoke(prompt)).content);
    expect(String((await b.invoke(prompt)).content)).toBe(ra);
    expect(isApproval(ra) || ra.startsWith("Problems found:")).toBe(true);
    const evaluator = simulatedModelSource({ seed: 3 })({ model: "m", role: "evaluator" });
    const evaluation = String(
      (
        await evaluator.invoke([
          new HumanMessage(`Task:\n${item.request}\n\nResponse:\n${answer}\n\nValidator errors (deterministic, certainly correct):\n- x is 1; it must be 2`),
        ])
      ).content,
    );
    expect(evaluation).toMatch(/Final score: \d+(\.\d+)?\/10$/);
  });
});

describe("the first-error strategy's spec", () => {
  it("reports only the first schema error, and the rules only once the schema passes", () => {
    const spec = firstErrorSpec("deployment-config");
    const full = builtinSpecs.get("deployment-config")!;
    const several = {
      service_name: "Bad Name",
      replicas: "8",
      resources: { cpu_limit: 0.5, memory_limit_mb: 64 },
      health_check: { path: "/h", timeout_seconds: 30, interval_seconds: 10 },
    };
    expect(checkValueSync(full, several).errors.length).toBeGreaterThan(2);
    const first = checkValueSync(spec, several);
    expect(first.valid).toBe(false);
    expect(first.errors).toHaveLength(1);
    expect(first.errors[0]).toBe(checkValueSync(full, several).errors[0]);
    const rulesOnly = { ...(full.example as object), replicas: 8, health_check: { path: "/h", timeout_seconds: 30, interval_seconds: 10 } };
    expect(checkValueSync(spec, rulesOnly).errors).toEqual(checkValueSync(full, rulesOnly).errors);
    expect(checkValueSync(spec, full.example).valid).toBe(true);
  });
});
