/**
 * The evaluation's escalation and token-budget section, on the simulated "small" and "large" models: the
 * figures recompute from the records, escalation reaches the strong model's valid-output rate with fewer
 * strong-model tokens, and the budget is honoured exactly: each budgeted run makes precisely the calls of
 * the same run without a budget whose start (tokens spent + estimated input) fits, and not one more.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBudget, runLoops, type LoopRun } from "../../eval/loops.js";
import { formatCalls, formatPercent, formatTokens, LOOPS_HEADER, loopsTable } from "../../eval/report.js";
import { DEFAULT_LOOP_BUDGET, main, perSpec } from "../../eval/run.js";
import { buildAnswer, exhibits, planDefects, SMALL_MODEL_NEVER_FIXES, tieredModelSource } from "../../eval/simulated-model.js";
import { SUITE } from "../../eval/suite.js";
import { checkValueSync } from "../../src/specs/check.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { REPO_ROOT } from "../../testkit/dev-server.js";
import { generationSystemPrompt } from "../../src/validation/prompts.js";
import { firstAttemptPrompt, retryPrompt } from "../../src/protocol/feedback.js";

const SUITE_PART = perSpec(SUITE, 4);
const TIERS = { small: "small", large: "large" };
let loops: LoopRun;
/** The budget under test: tight enough to stop some of these requests. */
const BUDGET = 1_800;

beforeAll(async () => {
  loops = await runLoops({ model: tieredModelSource({ seed: 1 }), tiers: TIERS, suite: SUITE_PART, maxAttempts: 3, maxTokens: BUDGET });
});

const of = (config: string) => loops.summaries.find((s) => s.config === config)!;
const records = (config: string) => loops.records.filter((r) => r.config === config);

describe("the simulated small and large models", () => {
  it("small fixes what its feedback names, except broken cross-field rules; large fixes them too", async () => {
    const item = SUITE.find(
      (r) =>
        planDefects(r.spec, r.request, r.difficulty, 1).some((d) => d.kind === "cross-field rule") &&
        planDefects(r.spec, r.request, r.difficulty, 1).length >= 2,
    )!;
    const planned = planDefects(item.spec, item.request, item.difficulty, 1);
    const spec = builtinSpecs.get(item.spec)!;
    const first = buildAnswer(item.spec, planned, new Set(planned.map((d) => d.id)));
    const errors = checkValueSync(spec, first).errors;
    const messages = [new SystemMessage(generationSystemPrompt(spec)), new HumanMessage(retryPrompt(item.request, JSON.stringify(first), errors))];
    const small = JSON.parse(String((await tieredModelSource({ seed: 1 })({ model: "small", role: "generate" }).invoke(messages)).content));
    const large = JSON.parse(String((await tieredModelSource({ seed: 1 })({ model: "large", role: "generate" }).invoke(messages)).content));
    for (const d of planned) {
      expect(exhibits(d, small), `${d.id} (small)`).toBe(SMALL_MODEL_NEVER_FIXES.includes(d.kind));
      expect(exhibits(d, large), `${d.id} (large)`).toBe(false);
    }
    // The first answers are the same: the models differ only in what they fix.
    const firstOf = async (name: string) =>
      (await tieredModelSource({ seed: 1 })({ model: name, role: "generate" }).invoke([messages[0], new HumanMessage(firstAttemptPrompt(item.request))]))
        .content;
    expect(await firstOf("small")).toBe(await firstOf("large"));
  });
});

describe("escalation on the simulated models", () => {
  it("summaries recompute exactly from the records", () => {
    for (const s of loops.summaries) {
      const mine = records(s.config);
      const valid = mine.filter((r) => r.valid).length;
      expect(s.requests).toBe(SUITE_PART.length);
      expect(s.validRate).toBeCloseTo(valid / mine.length, 12);
      expect(s.meanCalls).toBeCloseTo(mine.reduce((t, r) => t + r.calls, 0) / mine.length, 12);
      expect(s.meanTokens).toBeCloseTo(mine.reduce((t, r) => t + r.totalTokens, 0) / mine.length, 12);
      expect(s.tokensPerValidOutput).toBeCloseTo(mine.reduce((t, r) => t + r.totalTokens, 0) / valid, 9);
      expect(s.callsPerValidOutput).toBeCloseTo(mine.reduce((t, r) => t + r.calls, 0) / valid, 9);
      expect(s.meanTokensSmall + s.meanTokensLarge).toBeCloseTo(s.meanTokens, 9);
      expect(s.budgetStops).toBe(mine.filter((r) => r.stopReason === "budget").length);
    }
  });

  it("the cheap model alone misses requests the escalation gets valid, with fewer strong-model tokens than the strong model alone", () => {
    expect(of("small").validRate).toBeLessThan(1);
    expect(of("large").validRate).toBe(1);
    expect(of("escalation").validRate).toBe(of("large").validRate);
    expect(of("escalation").meanTokensLarge).toBeLessThan(of("large").meanTokensLarge);
    expect(of("small").meanTokensLarge).toBe(0);
    expect(of("large").meanTokensSmall).toBe(0);
    // Every request the cheap model leaves invalid has a broken cross-field rule it was told about.
    for (const r of records("small").filter((r) => !r.valid)) {
      const item = SUITE_PART.find((i) => i.id === r.requestId)!;
      expect(
        planDefects(item.spec, item.request, item.difficulty, 1).some((d) => d.kind === "cross-field rule"),
        r.requestId,
      ).toBe(true);
    }
  });

  it("the budget is honoured exactly: each budgeted run makes precisely the calls whose start fits, and not one more", async () => {
    expect(of("escalation-budget").budgetStops).toBeGreaterThan(0);
    expect(of("escalation-budget").budgetStops).toBeLessThan(SUITE_PART.length);
    // The same escalation without a budget, replayed: the rule allows the calls before the first whose start passes the budget.
    const graph = buildValidationGraph({ model: tieredModelSource({ seed: 1 }) });
    for (const item of SUITE_PART) {
      const out = await graph.invoke(
        { request: item.request },
        { context: { spec: item.spec, maxAttempts: 3, models: [{ model: "small", attempts: 2 }, { model: "large" }] } },
      );
      expect(out.usage.calls).toBe(records("escalation").find((r) => r.requestId === item.id)!.calls);
      const starts = checkBudget(item, out.history, out.stopReason, BUDGET).startedAt;
      const allowed = starts.findIndex((s) => s > BUDGET);
      const expectedCalls = allowed === -1 ? starts.length : allowed;
      const budgeted = records("escalation-budget").find((r) => r.requestId === item.id)!;
      expect(budgeted.calls, item.id).toBe(expectedCalls);
      expect(budgeted.stopReason, item.id).toBe(allowed === -1 ? out.stopReason : "budget");
      expect(budgeted.budget!.startedAt).toEqual(starts.slice(0, expectedCalls));
    }
    const proof = loops.proof;
    expect(proof).toMatchObject({ limit: BUDGET, runs: SUITE_PART.length, callsPastBudget: 0, violations: 0 });
    expect(proof.worstStart).toBeLessThanOrEqual(1);
    expect(proof.closestStop!).toBeGreaterThan(1);
    expect(proof.callsChecked).toBe(records("escalation-budget").reduce((t, r) => t + r.calls, 0));
  });
});

describe("npm run eval reports it", () => {
  let dir: string;
  afterAll(() => dir && rmSync(dir, { recursive: true, force: true }));

  it("side by side in the markdown and the HTML report, with the budget rule as checked", async () => {
    dir = mkdtempSync(join(tmpdir(), "eval-loops-"));
    const { run, markdown, html } = await main(
      ["--per-spec", "2", "--strategies", "validation", "--no-retry-forms", "--out", join(dir, "report.html")],
      () => undefined,
    );
    expect(run.loops!.maxTokens).toBe(DEFAULT_LOOP_BUDGET);
    expect(markdown).toContain(`| ${LOOPS_HEADER.join(" | ")} |`);
    for (const s of run.loops!.summaries) {
      const row = markdown.split("\n").find((line) => line.startsWith(`| ${s.name} |`));
      expect(row, s.name).toBeDefined();
      const cells = row!
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim());
      expect(cells.slice(1, 4)).toEqual([formatPercent(s.validRate), formatCalls(s.meanCalls), formatTokens(s.meanTokens)]);
      expect(html).toContain(`<td>${s.name}</td><td>${formatPercent(s.validRate)}</td>`);
    }
    expect(markdown).toMatch(/calls made after the total passed the budget: 0; violations: 0\./);
    expect(markdown).toMatch(/simulated models, seeded rules/);
    expect(html).toContain("Escalation and token budgets");
    // The main table reports usage per valid output too.
    const validation = run.summaries[0];
    expect(validation.tokensPerValidOutput).toBeCloseTo(run.records.reduce((t, r) => t + r.totalTokens, 0) / run.records.filter((r) => r.valid).length, 9);
  });
});

describe("docs/configuration.md", () => {
  it("shows the figures of a fresh run of the whole suite (npm run eval's defaults)", async () => {
    const page = readFileSync(join(REPO_ROOT, "docs/configuration.md"), "utf8");
    const fresh = await runLoops({ model: tieredModelSource({ seed: 1 }), tiers: TIERS, suite: SUITE, maxAttempts: 3, maxTokens: DEFAULT_LOOP_BUDGET });
    const shown = /<!-- loops-table -->\n([\s\S]*?)\n<!-- \/loops-table -->/.exec(page)?.[1];
    expect(shown).toBe(loopsTable(fresh));
    const by = Object.fromEntries(fresh.summaries.map((s) => [s.config, s]));
    const ratio = (by.escalation.meanTokensSmall / (by.large.meanTokensLarge - by.escalation.meanTokensLarge)).toFixed(2);
    const words = (n: number) => Math.round(n).toLocaleString("en-US");
    expect(page).toContain(`with ${words(by.escalation.meanTokensLarge)} strong-model tokens per request instead of ${words(by.large.meanTokensLarge)}`);
    expect(page).toContain(`more than ${ratio}× a cheap-model token`);
    const p = fresh.proof;
    expect(p).toMatchObject({ violations: 0, callsPastBudget: 0 });
    expect(page).toContain(
      `each of the ${p.callsChecked} calls made started within the budget (at most ${formatPercent(p.worstStart)} of it), each of the ${p.stopsChecked} budget stops was owed (the next call would have reached at least ${formatPercent(p.closestStop!)} of it)`,
    );
  });
});
