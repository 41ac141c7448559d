/**
 * The evaluation's outputs: a markdown table (stdout) and a self-contained
 * HTML report (inline CSS and SVG charts; no scripts, fonts or images to
 * fetch, so it opens without a network).
 */
import type { EvalRecord, EvalRun, StrategySummary } from "./harness.js";
import type { LoopRun, LoopSummary } from "./loops.js";
import { renderRetryForms, RETRY_FORMS_TITLE, retryFormsBlocks, type RetryFormsResult } from "./retry-forms.js";
import { SIMULATION_RULES } from "./simulated-model.js";

export const formatPercent = (x: number): string => `${(x * 100).toFixed(1)}%`;
export const formatCalls = (x: number): string => x.toFixed(2);
export const formatTokens = (x: number): string => String(Math.round(x));
export const formatMs = (x: number): string => x.toFixed(1);
/** A per-valid-output figure: "—" when nothing was valid. */
export const formatPerValid = (x: number | null, format: (x: number) => string): string => (x === null ? "—" : format(x));

export function modelLine(run: EvalRun): string {
  return run.meta.simulated ? `simulated model (seed ${run.meta.seed}) — not a real LLM; reviewer miss rate ${run.meta.missRate}` : `${run.meta.model}`;
}

function summaryRow(s: StrategySummary): string[] {
  return [
    s.name,
    formatPercent(s.validRate),
    formatPercent(s.claimedRate),
    formatPercent(s.falseApprovalRate),
    formatPercent(s.falseAmongClaimed),
    formatCalls(s.meanCalls),
    formatTokens(s.meanTokens),
    formatMs(s.p50LatencyMs),
    formatPerValid(s.callsPerValidOutput, formatCalls),
    formatPerValid(s.tokensPerValidOutput, formatTokens),
    String(s.failures),
  ];
}

/**
 * The summary's columns for a run on the simulated model (the default). Its time column is the harness's
 * own wall time per request: the simulated model answers at once, so it is no model latency and no speed
 * result. `summaryHeader` gives a run's own columns.
 */
export const SUMMARY_HEADER = [
  "strategy",
  "valid output (validator)",
  "claimed success",
  "false approvals",
  "invalid among claimed",
  "model calls / request",
  "tokens / request",
  "harness time p50 ms (simulated model: no model latency)",
  "model calls / valid output",
  "tokens / valid output",
  "failures",
];
const TIME_COLUMN = SUMMARY_HEADER.indexOf("harness time p50 ms (simulated model: no model latency)");

/** The summary's columns for a run: with a real model the time column includes the model's calls. */
export function summaryHeader(run: EvalRun): string[] {
  return run.meta.simulated ? SUMMARY_HEADER : SUMMARY_HEADER.map((h, i) => (i === TIME_COLUMN ? "time p50 ms (model calls and harness)" : h));
}

/** What the time column measures, said under the summary. */
export function timeNote(run: EvalRun): string {
  return run.meta.simulated
    ? "Harness time: the wall time the harness took per request. The simulated model answers at once, so it is the harness's own processing (graph, prompts, validator), not a model's latency, and not a speed result."
    : "Time: the wall time per request, the model's calls included.";
}

function mdTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [line(header), `| ${header.map(() => "---").join(" | ")} |`, ...rows.map(line)].join("\n");
}

function breakdown(run: EvalRun, key: "spec" | "difficulty"): { values: string[]; rows: { strategy: string; rates: number[] }[] } {
  const values = [...new Set(run.records.map((r) => r[key]))];
  const rows = run.strategies.map((s) => ({
    strategy: s.name,
    rates: values.map((v) => {
      const mine = run.records.filter((r) => r.strategy === s.id && r[key] === v);
      return mine.length === 0 ? 0 : mine.filter((r) => r.valid).length / mine.length;
    }),
  }));
  return { values, rows };
}

// ---------------------------------------------------------------------------
// Escalation and token budgets

export const LOOPS_HEADER = [
  "configuration",
  "valid output (validator)",
  "model calls / request",
  "tokens / request",
  "cheap-model tokens / request",
  "strong-model tokens / request",
  "model calls / valid output",
  "tokens / valid output",
  "budget stops",
];

function loopRow(s: LoopSummary): string[] {
  return [
    s.name,
    formatPercent(s.validRate),
    formatCalls(s.meanCalls),
    formatTokens(s.meanTokens),
    formatTokens(s.meanTokensSmall),
    formatTokens(s.meanTokensLarge),
    formatPerValid(s.callsPerValidOutput, formatCalls),
    formatPerValid(s.tokensPerValidOutput, formatTokens),
    String(s.budgetStops),
  ];
}

/** The escalation section's table, as markdown. */
export function loopsTable(loops: LoopRun): string {
  return mdTable(LOOPS_HEADER, loops.summaries.map(loopRow));
}

/** What the escalation section says in words: the setting, the trade-off, and the budget rule as checked. */
export function loopNotes(loops: LoopRun, simulated: boolean): string[] {
  const by = Object.fromEntries(loops.summaries.map((s) => [s.config, s]));
  const { small, large, escalation } = by;
  const notes = [
    `Each configuration runs the validation graph on the same requests with at most ${loops.maxAttempts} attempts; the escalation uses the run setting models, ` +
      `and the budgeted one maxTokens ${loops.maxTokens}. Tokens are input + output over every attempt.`,
  ];
  if (simulated)
    notes.push(
      `The cheap model "${loops.tiers.small}" never fixes a broken cross-field rule; the strong model "${loops.tiers.large}" fixes every defect its feedback names (simulated models, seeded rules).`,
    );
  // Where escalation costs less than the strong model alone: the cheap tokens it adds against the strong tokens it saves.
  const saved = large.meanTokensLarge - escalation.meanTokensLarge;
  if (saved > 0 && escalation.meanTokensSmall > 0) {
    notes.push(
      `Escalation spends ${formatTokens(escalation.meanTokensSmall)} cheap-model and ${formatTokens(escalation.meanTokensLarge)} strong-model tokens per request against ${formatTokens(large.meanTokensLarge)} for the strong model alone: ` +
        `it costs less whenever a strong-model token costs more than ${(escalation.meanTokensSmall / saved).toFixed(2)}× a cheap-model token` +
        (escalation.validRate >= large.validRate
          ? ", at the same valid-output rate."
          : `, at a valid-output rate of ${formatPercent(escalation.validRate)} against ${formatPercent(large.validRate)}.`) +
        ` The cheap model alone reaches ${formatPercent(small.validRate)}.`,
    );
  }
  const p = loops.proof;
  notes.push(
    `Budget rule, checked on the records of the ${p.runs} budgeted runs: each of the ${p.callsChecked} calls made started within the budget (tokens spent + its input estimate, characters ÷ 4, ` +
      `at most ${formatPercent(p.worstStart)} of the budget); each of the ${p.stopsChecked} budget stops was owed (the next call would have reached ` +
      `${p.closestStop === null ? "—" : `at least ${formatPercent(p.closestStop)}`} of it); calls made after the total passed the budget: ${p.callsPastBudget}; violations: ${p.violations}.`,
  );
  return notes;
}

function loopsMarkdown(run: EvalRun): string[] {
  if (!run.loops) return [];
  return [
    "",
    "Escalation and token budgets (validation graph):",
    "",
    loopsTable(run.loops),
    "",
    ...loopNotes(run.loops, run.meta.simulated).flatMap((note) => [note, ""]),
  ].slice(0, -1);
}

function loopsHtml(run: EvalRun): string {
  if (!run.loops) return "";
  return `<h2>Escalation and token budgets</h2>
${htmlTable(LOOPS_HEADER, run.loops.summaries.map(loopRow), "summary")}
${loopNotes(run.loops, run.meta.simulated)
  .map((note) => `<p>${esc(note)}</p>`)
  .join("\n")}`;
}

export function renderMarkdown(run: EvalRun): string {
  const bySpec = breakdown(run, "spec");
  const byDifficulty = breakdown(run, "difficulty");
  return [
    `Model: ${modelLine(run)}`,
    `Requests: ${run.meta.requests} across ${bySpec.values.length} specs; at most ${run.meta.maxAttempts} attempts per request for every strategy.`,
    "",
    mdTable(summaryHeader(run), run.summaries.map(summaryRow)),
    "",
    timeNote(run),
    "",
    "Valid output by spec:",
    "",
    mdTable(
      ["strategy", ...bySpec.values],
      bySpec.rows.map((r) => [r.strategy, ...r.rates.map(formatPercent)]),
    ),
    "",
    "Valid output by difficulty:",
    "",
    mdTable(
      ["strategy", ...byDifficulty.values],
      byDifficulty.rows.map((r) => [r.strategy, ...r.rates.map(formatPercent)]),
    ),
    "",
    "Valid output: the deterministic validator accepts the strategy's final output. False approvals: the strategy claimed success and the validator rejects the output (share of all requests). " +
      "Per valid output: every call (token) spent on the requests, divided by the outputs the validator accepts.",
    ...loopsMarkdown(run),
    ...(run.retryForms ? ["", renderRetryForms(run.retryForms, "###")] : []),
  ].join("\n");
}

// ---------------------------------------------------------------------------
// HTML

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const COLORS = ["#2b6cb0", "#805ad5", "#c05621", "#2f855a"];

/** A horizontal bar chart as inline SVG. */
export function barChart(title: string, items: { label: string; value: number; display: string }[], max: number): string {
  const rowH = 28;
  const labelW = 290;
  const barW = 320;
  const width = labelW + barW + 90;
  const height = 30 + items.length * rowH;
  const scale = max > 0 ? barW / max : 0;
  const bars = items
    .map((item, i) => {
      const y = 24 + i * rowH;
      const w = Math.max(0, item.value * scale);
      return [
        `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end" class="label">${esc(item.label)}</text>`,
        `<rect x="${labelW}" y="${y + 2}" width="${w.toFixed(1)}" height="${rowH - 8}" fill="${COLORS[i % COLORS.length]}" rx="2"></rect>`,
        `<text x="${(labelW + w + 6).toFixed(1)}" y="${y + 15}" class="value">${esc(item.display)}</text>`,
      ].join("");
    })
    .join("\n");
  return `<figure><svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(title)}">
<text x="0" y="14" class="title">${esc(title)}</text>
${bars}
</svg></figure>`;
}

function htmlTable(header: string[], rows: string[][], className = ""): string {
  return `<table class="${className}"><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

/** A paragraph's markdown inline marks (**bold**, `code`) as HTML, the rest escaped. */
function inlineHtml(text: string): string {
  return esc(text)
    .replace(/\*\*(.+?)\*\*/g, "<strong>$1</strong>")
    .replace(/`([^`]+)`/g, "<code>$1</code>");
}

/** The retry-forms section as HTML: its paragraphs, and its tables as tables. */
function retryFormsHtml(result: RetryFormsResult): string {
  const blocks = retryFormsBlocks(result).map((block) =>
    "paragraph" in block ? `<p>${inlineHtml(block.paragraph)}</p>` : htmlTable(block.head, block.rows, "summary"),
  );
  return [`<h2>${esc(RETRY_FORMS_TITLE)}</h2>`, ...blocks].join("\n");
}

function recordRow(r: EvalRecord, names: Map<string, string>): string[] {
  return [
    r.requestId,
    r.spec,
    r.difficulty,
    names.get(r.strategy) ?? r.strategy,
    r.claimedSuccess ? "yes" : "no",
    r.valid ? "valid" : `invalid (${r.finalErrors.length} error${r.finalErrors.length === 1 ? "" : "s"})`,
    r.falseApproval ? "FALSE APPROVAL" : "",
    String(r.calls),
    String(r.totalTokens),
    formatMs(r.latencyMs),
    r.failure ? "failed" : "",
  ];
}

export function renderHtml(run: EvalRun): string {
  const names = new Map(run.strategies.map((s) => [s.id, s.name]));
  const items = (f: (s: StrategySummary) => number, display: (x: number) => string) =>
    run.summaries.map((s) => ({ label: s.name, value: f(s), display: display(f(s)) }));
  const maxOf = (f: (s: StrategySummary) => number) => Math.max(...run.summaries.map(f), 0) * 1.1 || 1;
  const bySpec = breakdown(run, "spec");
  const byDifficulty = breakdown(run, "difficulty");
  const charts = [
    barChart(
      "Valid output (deterministic validator)",
      items((s) => s.validRate, formatPercent),
      1,
    ),
    barChart(
      "False approvals (claimed success, invalid output)",
      items((s) => s.falseApprovalRate, formatPercent),
      1,
    ),
    barChart(
      "Model calls per request",
      items((s) => s.meanCalls, formatCalls),
      maxOf((s) => s.meanCalls),
    ),
    barChart(
      "Tokens per request",
      items((s) => s.meanTokens, formatTokens),
      maxOf((s) => s.meanTokens),
    ),
  ];
  const simulation = run.meta.simulated
    ? `<section><h2>How the simulated model behaves</h2><ul>${SIMULATION_RULES.map((r) => `<li>${esc(r)}</li>`).join("")}</ul></section>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Evaluation: validation loop vs alternatives</title>
<style>
body { font: 14px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1a202c; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
.model { padding: .6rem .9rem; border-left: 4px solid #c05621; background: #fffaf0; font-weight: 600; }
table { border-collapse: collapse; margin: .8rem 0; } th, td { border: 1px solid #cbd5e0; padding: .3rem .6rem; text-align: left; }
th { background: #edf2f7; } td:nth-child(n+2) { font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0; } svg .title { font-weight: 600; font-size: 13px; } svg .label, svg .value { font-size: 12px; fill: #2d3748; }
.records td, .records th { font-size: 12px; padding: .15rem .4rem; }
</style>
</head>
<body>
<h1>Evaluation: the validation loop against the alternatives</h1>
<p class="model">Numbers produced by: ${esc(modelLine(run))}</p>
<p>${run.meta.requests} requests across ${bySpec.values.length} specs, at most ${run.meta.maxAttempts} attempts per request for every strategy. Run on ${esc(run.meta.date)} in ${(run.meta.durationMs / 1000).toFixed(1)} s.
Validity is judged by the deterministic validator on each strategy's final output, whatever the strategy claimed.</p>
<h2>Summary</h2>
${htmlTable(summaryHeader(run), run.summaries.map(summaryRow), "summary")}
<p>${esc(timeNote(run))}</p>
<h2>Charts</h2>
${charts.join("\n")}
<h2>Valid output by spec</h2>
${htmlTable(
  ["strategy", ...bySpec.values],
  bySpec.rows.map((r) => [r.strategy, ...r.rates.map(formatPercent)]),
)}
<h2>Valid output by difficulty</h2>
${htmlTable(
  ["strategy", ...byDifficulty.values],
  byDifficulty.rows.map((r) => [r.strategy, ...r.rates.map(formatPercent)]),
)}
${loopsHtml(run)}
${run.retryForms ? retryFormsHtml(run.retryForms) : ""}
<h2>Strategies</h2>
<ul>${run.strategies.map((s) => `<li><strong>${esc(s.name)}</strong>: ${esc(s.description)}</li>`).join("")}</ul>
<p>False approvals: the strategy claimed success (valid, approved, or passed its gate) and the validator rejects the output; shown as a share of all requests and of the claimed successes.</p>
${simulation}
<h2>Every request</h2>
<details><summary>${run.records.length} records</summary>
${htmlTable(
  ["request", "spec", "difficulty", "strategy", "claimed", "validator", "", "calls", "tokens", run.meta.simulated ? "harness ms" : "ms", ""],
  run.records.map((r) => recordRow(r, names)),
  "records",
)}
</details>
</body>
</html>
`;
}
