/**
 * Runs the benchmarks and writes BENCHMARKS.md.
 *
 *   npm run bench                      # full sizes, writes BENCHMARKS.md (15-25 minutes on two cores)
 *   npm run bench -- --quick           # tiny sizes, prints the report (writes only with --out)
 *   npm run bench -- --out FILE        # write the report to FILE
 *   npm run bench -- --only validator,memory   # some of them, printed (writes only with --out or --update)
 *   npm run bench -- --against OLD.md  # ends the report with how far this run agrees with an earlier one
 *   npm run bench -- --help            # the options; runs nothing
 *
 * Benchmarks: validator, patterns, overhead, prompt, concurrency, checkpoints, peers, calls, history, corrections, streaming, memory, corpus (when JSONSchemaBench is on disk), soak, threads. Targets are
 * goals, reported as met or not met; nothing here fails on a missed target.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import {
  fmt,
  fmtComparisonRatio,
  fmtLoad,
  machineInfo,
  RATIO_DEFINITION,
  table,
  targetOutcome,
  type BenchOptions,
  type BenchResult,
  runIfMain,
} from "./common.js";
import * as checkpoints from "./checkpoint-growth.js";
import * as history from "./checkpoint-bytes.js";
import * as calls from "./calls-tokens.js";
import * as corrections from "./corrections.js";
import * as concurrency from "./concurrency.js";
import * as corpus from "./corpus.js";
import { agreementSection } from "./agreement.js";
import * as overhead from "./graph-overhead.js";
import * as peers from "./peers.js";
import type { ConcurrencyResult } from "./concurrency.js";
import type { PeersResult } from "./peers.js";
import * as memory from "./memory-scale.js";
import * as prompt from "./prompt-growth.js";
import * as soak from "./soak.js";
import * as streaming from "./streaming.js";
import * as threads from "./threads.js";
import * as validator from "./validator-speed.js";
import * as patterns from "./pattern-cost.js";
import * as telemetry from "./telemetry.js";

export const BENCHMARKS: { id: string; run: (opts: BenchOptions) => Promise<BenchResult> }[] = [
  { id: "validator", run: validator.run },
  { id: "patterns", run: patterns.run },
  { id: "overhead", run: overhead.run },
  { id: "prompt", run: prompt.run },
  { id: "concurrency", run: concurrency.run },
  { id: "checkpoints", run: checkpoints.run },
  { id: "peers", run: peers.run },
  { id: "calls", run: calls.run },
  { id: "history", run: history.run },
  { id: "corrections", run: corrections.run },
  { id: "streaming", run: streaming.run },
  { id: "corpus", run: corpus.run },
  { id: "soak", run: soak.run },
  { id: "threads", run: threads.run },
  { id: "telemetry", run: telemetry.run },
  // Last: it leaves a large heap behind.
  { id: "memory", run: memory.run },
];

/** Sections in the order of the benchmarks' numbers (the run order differs: memory runs last). */
const SECTION_ORDER = [
  "validator",
  "patterns",
  "overhead",
  "concurrency",
  "memory",
  "prompt",
  "checkpoints",
  "peers",
  "calls",
  "history",
  "corrections",
  "streaming",
  "corpus",
  "soak",
  "threads",
  "telemetry",
];

/** The commit the figures were measured on, and whether code that runs in them had uncommitted changes. */
function sourceState(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const commit = git("rev-parse", "--short", "HEAD");
    const changed = git("status", "--porcelain", "--", "src", "bench", "testkit", "package-lock.json").split("\n").filter(Boolean).length;
    return changed === 0
      ? `commit ${commit}`
      : `commit ${commit}, with uncommitted changes in ${changed} file${changed === 1 ? "" : "s"} of src/, bench/, testkit/ or package-lock.json`;
  } catch {
    return "unknown (not a git checkout)";
  }
}

/** Each benchmark's load average before and after it ran, keyed by id (printed under its section's heading). */
export type SectionLoads = Record<string, { before: number[]; after: number[] }>;

/** The load average under a section's heading, so every table in it has the load it was measured under beside it. */
function withLoad(markdown: string, load: SectionLoads[string] | undefined): string {
  if (!load) return markdown;
  const [heading, ...rest] = markdown.split("\n");
  return [heading, "", `*Load average while this section ran (1 / 5 / 15 min): ${fmtLoad(load.before)} before, ${fmtLoad(load.after)} after.*`, ...rest].join(
    "\n",
  );
}

/** Cross-checks that need two benchmarks' results: the 1,000-at-once ratios of both methods, under section 3. */
function crossChecks(results: BenchResult[]): void {
  const concurrencyResult = results.find((r) => r.id === "concurrency") as ConcurrencyResult | undefined;
  const peersResult = results.find((r) => r.id === "peers") as PeersResult | undefined;
  if (!concurrencyResult?.interleaved || !peersResult?.repetitions) return;
  const marker = "### With ";
  const at = concurrencyResult.markdown.indexOf(marker);
  const agreement = peers.atOnceAgreement(peersResult, concurrencyResult.interleaved);
  concurrencyResult.markdown =
    at < 0
      ? `${concurrencyResult.markdown}\n\n${agreement}`
      : `${concurrencyResult.markdown.slice(0, at)}${agreement}\n\n${concurrencyResult.markdown.slice(at)}`;
}

/** A benchmark's rows in the summary's first table: each comparison beside its reference. */
function headlineRows(r: BenchResult): string[][] {
  return r.comparisons.map((c) => [r.title, c.label, `${fmt(c.value)} ${c.unit}`, `${c.referenceLabel}: ${fmt(c.reference)} ${c.unit}`, fmtComparisonRatio(c)]);
}

/** A benchmark's rows in the summary's table of targets. */
function targetRows(r: BenchResult): string[][] {
  return r.targets.map((t) => [r.title, t.description, targetOutcome(t), t.detail]);
}

/**
 * The report `existing` with these benchmarks' sections and summary rows in
 * place of their old ones (a section not there yet is added at the end),
 * each marked as regenerated on its own; every other section and row stays
 * as the full run wrote it.
 */
export function updateReport(existing: string, results: BenchResult[], loads: SectionLoads = {}, when = new Date().toISOString()): string {
  let text = existing;
  for (const r of results) {
    const [heading, ...rest] = withLoad(r.markdown, loads[r.id]).split("\n");
    const note = `*This section was regenerated on its own by \`npm run bench -- --only ${r.id} --update\` (${sourceState()}, ${when}); the other sections are from the full run above.*`;
    const section = [heading, "", note, ...rest].join("\n");
    const at = text.indexOf(`\n${heading}\n`);
    if (at < 0) text = `${text.trimEnd()}\n\n${section}\n`;
    else {
      const end = text.indexOf("\n## ", at + 1);
      text = `${text.slice(0, at + 1)}${section}\n${end < 0 ? "" : text.slice(end)}`;
    }
    const regenerated = (rows: string[][]) => rows.map((row) => [...row.slice(0, -1), `${row.at(-1)} (section regenerated on its own)`]);
    text = replaceSummaryRows(text, 0, r.title, regenerated(headlineRows(r)));
    text = replaceSummaryRows(text, 1, r.title, regenerated(targetRows(r)));
  }
  return text;
}

/** The summary's `which`-th table with the rows of `title` replaced by `rows` (where the first of them was, else at the table's end). */
function replaceSummaryRows(text: string, which: number, title: string, rows: string[][]): string {
  const lines = text.split("\n");
  const summary = lines.indexOf("## Summary");
  if (summary < 0) return text;
  const rendered = table(["", ""], rows).split("\n").slice(2);
  let seen = -1;
  for (let i = summary + 1; i < lines.length && !lines[i].startsWith("## "); i++) {
    if (!lines[i].startsWith("|") || lines[i - 1].startsWith("|")) continue;
    if (++seen !== which) continue;
    let end = i;
    while (end < lines.length && lines[end].startsWith("|")) end++;
    const body = lines.slice(i, end);
    const first = body.findIndex((line) => line.startsWith(`| ${title} |`));
    const kept = body.filter((line) => !line.startsWith(`| ${title} |`));
    kept.splice(first < 0 ? kept.length : first, 0, ...rendered);
    return [...lines.slice(0, i), ...kept, ...lines.slice(end)].join("\n");
  }
  return text;
}

export function renderReport(unordered: BenchResult[], opts: BenchOptions, started: number, loadAtStart?: readonly number[], loads: SectionLoads = {}): string {
  const m = machineInfo();
  const rank = (id: string) => (SECTION_ORDER.includes(id) ? SECTION_ORDER.indexOf(id) : SECTION_ORDER.length);
  const results = [...unordered].sort((a, b) => rank(a.id) - rank(b.id));
  const headline = results.flatMap(headlineRows);
  const targets = results.flatMap(targetRows);
  const failedChecks = results.flatMap((r) => r.checks.filter((c) => !c.ok).map((c) => `${r.title}: ${c.description}`));
  const notRun = results.flatMap((r) => (r.notRun ?? []).map((n) => `${r.title}: ${n}`));
  return [
    "# Benchmarks",
    "",
    "Generated by `npm run bench` (bench/run.ts). Every figure is measured next to its reference in the same run. " +
      `**One ratio definition throughout:** ${RATIO_DEFINITION}. A figure with one repetition (a count, a size) has one ratio, the quotient of the two numbers shown. ` +
      "Targets are goals, reported as met or not met.",
    "",
    table(
      ["", ""],
      [
        ["machine", `${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GB RAM`],
        ["system", m.platform],
        ["Node.js", m.node],
        ["source", sourceState()],
        ["date", m.date],
        ["mode", opts.quick ? "quick (tiny sizes: not representative)" : "full"],
        ["duration", `${Math.round((Date.now() - started) / 1000)} s`],
        ["load average (1 / 5 / 15 min)", `${loadAtStart ? `${fmtLoad(loadAtStart)} at the start, ` : ""}${fmtLoad(loadavg())} at the end (${m.cores} cores)`],
      ],
    ),
    "",
    "Other work may have been running on the machine at the same time (the load average is printed under every section's heading, and beside the interleaved measurements); " +
      "absolute times on a shared machine drift with its load, which is why the comparisons are ratios of variants measured side by side. " +
      "The per-attempt cost of the clients (sections 3 and 7) is measured interleaved in one process: every client once per cycle, in a random order, against the same scripted server; " +
      "CPU time per attempt (`process.cpuUsage()`) is the primary figure, wall time beside it. Each client in its own process is measured too, as a check, and the two methods are compared.",
    "",
    "LangChain `createAgent` side by side (this package's `validatedResponseMiddleware` middleware against `toolStrategy` and a plain `responseFormat`, on the simulated model): [docs/agents-benchmark.md](docs/agents-benchmark.md), written by `npx tsx bench/agents.ts`.",
    "",
    "## Summary",
    "",
    `Ratios: ${RATIO_DEFINITION}.`,
    "",
    table(["benchmark", "figure", "value", "reference", "ratio (value ÷ reference)"], headline),
    "",
    table(["benchmark", "target", "result", "detail"], targets),
    "",
    failedChecks.length > 0
      ? `**Correctness checks that failed:**\n${failedChecks.map((c) => `- ${c}`).join("\n")}`
      : "All correctness checks on the benchmarks' own inputs passed.",
    notRun.length > 0 ? `\nNot run:\n${notRun.map((n) => `- ${n}`).join("\n")}` : "",
    "",
    ...results.flatMap((r) => [withLoad(r.markdown, loads[r.id]), ""]),
  ].join("\n");
}

export interface RunBenchmarksOptions extends BenchOptions {
  /** Benchmark ids to run (default: all). */
  only?: readonly string[];
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
}

/**
 * Run the benchmarks in this process and render the report, without writing
 * anything: `runBenchmarks({ quick: true })` runs every benchmark at tiny sizes
 * (what the smoke test needs; the clients still get processes of their own).
 */
export async function runBenchmarks(options: RunBenchmarksOptions): Promise<{ results: BenchResult[]; report: string; loads: SectionLoads }> {
  const { only, log = (line: string) => process.stderr.write(`${line}\n`), ...opts } = options;
  const started = Date.now();
  const loadAtStart = loadavg();
  const results: BenchResult[] = [];
  const loads: SectionLoads = {};
  for (const b of BENCHMARKS) {
    if (only && !only.includes(b.id)) continue;
    const t0 = Date.now();
    log(`bench: ${b.id}…`);
    const before = loadavg();
    results.push(await b.run(opts));
    loads[b.id] = { before, after: loadavg() };
    log(`bench: ${b.id} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  crossChecks(results);
  return { results, report: renderReport(results, opts, started, loadAtStart, loads), loads };
}

const USAGE = `Usage: npm run bench -- [--quick] [--out FILE] [--only ID,ID…] [--update] [--against FILE]

  (no options)   full sizes; writes BENCHMARKS.md (15-25 minutes on two cores)
  --quick        tiny sizes; prints the report (writes only with --out)
  --out FILE     write the report to FILE
  --only IDS     run only these benchmarks: ${BENCHMARKS.map((b) => b.id).join(", ")};
                 prints the report (writes only with --out or --update)
  --update       with --only: put their sections and summary rows into the report there is (FILE,
                 default BENCHMARKS.md), marked as regenerated on their own; the rest stays
  --against FILE end the report with how far this run agrees with an earlier report (FILE,
                 e.g. a copy of BENCHMARKS.md): each summary ratio, and whether it lies within
                 the earlier run's spread
  -h, --help     this text (runs nothing, writes nothing)
`;

/** The command's options, checked: an unknown option or benchmark is refused, before anything runs or is written. */
export function parseBenchArgs(argv: string[]): "help" | { quick: boolean; out?: string; only?: string[]; update?: true; against?: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean" },
      out: { type: "string" },
      only: { type: "string" },
      update: { type: "boolean" },
      against: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const quick = values.quick === true;
  const only = values.only?.split(",").map((id) => id.trim());
  const unknown = only?.filter((id) => !BENCHMARKS.some((b) => b.id === id)) ?? [];
  if (only !== undefined && (unknown.length > 0 || only.length === 0)) {
    throw new Error(
      `--only: no benchmark ${unknown.map((id) => JSON.stringify(id)).join(", ") || "named"}; the benchmarks are ${BENCHMARKS.map((b) => b.id).join(", ")}`,
    );
  }
  if (values.update && only === undefined) throw new Error("--update needs --only: the benchmarks whose sections to regenerate");
  if (values.update && values.against !== undefined) throw new Error("--against compares a whole run with an earlier one; it does not go with --update");
  // A partial or tiny run is printed unless told where to write: it never replaces the full report by accident.
  const printed = (quick || only !== undefined) && !values.update;
  return {
    quick,
    out: values.out ?? (printed ? undefined : "BENCHMARKS.md"),
    only,
    ...(values.update ? { update: true as const } : {}),
    ...(values.against !== undefined ? { against: values.against } : {}),
  };
}

/** The pages of their own some benchmarks keep (docs/streaming-benchmark.md), from the same run as the report; not for tiny sizes. */
function writePages(results: readonly BenchResult[], quick: boolean): void {
  if (quick) return;
  for (const r of results) if (r.page) writeFileSync(r.page.path, r.page.text);
}

export async function main(argv: string[], write: (text: string) => void = (text) => process.stdout.write(text)): Promise<void> {
  const args = parseBenchArgs(argv);
  if (args === "help") {
    write(USAGE);
    return;
  }
  if (args.update) {
    const { results, loads } = await runBenchmarks({ quick: args.quick, only: args.only });
    writeFileSync(args.out!, updateReport(readFileSync(args.out!, "utf8"), results, loads));
    writePages(results, args.quick);
    process.stderr.write(`bench: updated ${args.only!.join(", ")} in ${args.out}\n`);
    return;
  }
  // The earlier report is read before anything runs: a file that cannot be read is refused at once.
  const earlier = args.against !== undefined ? readFileSync(args.against, "utf8") : undefined;
  const run = await runBenchmarks({ quick: args.quick, only: args.only });
  const { results } = run;
  const report = earlier === undefined ? run.report : `${run.report.trimEnd()}\n\n${agreementSection(earlier, args.against!, run.report)}\n`;
  if (args.out) writePages(results, args.quick);
  if (args.out) {
    writeFileSync(args.out, report);
    process.stderr.write(`bench: wrote ${args.out}\n`);
  } else write(report);
}

runIfMain(import.meta.url, main, { exitWhenDone: true });
