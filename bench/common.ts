/**
 * Shared pieces of the benchmarks: the result shape every benchmark returns,
 * timing and statistics helpers, machine information and markdown helpers.
 *
 * Every figure is measured next to its reference in the same run, and every
 * ratio is computed from those two numbers (see `compare`), so a reader (and
 * the smoke test) can recompute it.
 */
import { cpus, totalmem, platform, release } from "node:os";

export interface BenchOptions {
  /** Tiny sizes, for the smoke test and a quick look. */
  quick: boolean;
}

/** One measured figure. */
export interface Measurement {
  label: string;
  value: number;
  unit: string;
}

/**
 * A figure next to its reference, measured in the same run. `ratio` is
 * `value / reference` when `ratioOf` is "value/reference", else
 * `reference / value` (used for "N× faster than the reference").
 */
export interface Comparison {
  label: string;
  value: number;
  reference: number;
  unit: string;
  referenceLabel: string;
  ratioOf: "value/reference" | "reference/value";
  ratio: number;
}

export interface Target {
  description: string;
  /** null when the figure could not be measured in this run. */
  met: boolean | null;
  detail: string;
}

export interface BenchResult {
  id: string;
  title: string;
  rows: Measurement[];
  comparisons: Comparison[];
  targets: Target[];
  /** Correctness checks made on the benchmark's own inputs (they must all hold). */
  checks: { description: string; ok: boolean; detail?: string }[];
  /** The markdown section for BENCHMARKS.md. */
  markdown: string;
  /** Anything the benchmark could not run, with the reason. */
  notRun?: string[];
}

export function compare(
  label: string,
  value: number,
  reference: number,
  unit: string,
  referenceLabel: string,
  ratioOf: Comparison["ratioOf"] = "value/reference",
): Comparison {
  const ratio = ratioOf === "value/reference" ? value / reference : reference / value;
  return { label, value, reference, unit, referenceLabel, ratioOf, ratio };
}

/** Nanoseconds since an arbitrary origin, as a number. */
export function nowNs(): number {
  return Number(process.hrtime.bigint());
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

export function summarize(values: readonly number[]): { p50: number; p95: number; mean: number; min: number; max: number; n: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((s, v) => s + v, 0) / Math.max(1, values.length);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), mean, min: sorted[0], max: sorted[sorted.length - 1], n: values.length };
}

/** A value the optimiser cannot prove unused. */
export const sink = { value: 0 as unknown };

/**
 * Time `fn` over `inputs`: `rounds` samples of `iterations` passes over all
 * inputs, after a warm-up; the median sample, in nanoseconds per call.
 */
export function timePerCall<T>(inputs: readonly T[], fn: (input: T) => unknown, opts: { iterations: number; rounds: number; warmup?: number }): number {
  const warmup = opts.warmup ?? Math.max(1, Math.floor(opts.iterations / 4));
  for (let w = 0; w < warmup; w++) for (const input of inputs) sink.value = fn(input);
  const samples: number[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    const start = nowNs();
    for (let i = 0; i < opts.iterations; i++) for (const input of inputs) sink.value = fn(input);
    samples.push((nowNs() - start) / (opts.iterations * inputs.length));
  }
  return median(samples);
}

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  node: string;
  platform: string;
  date: string;
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model?.trim() || "unknown",
    cores: list.length,
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${platform()} ${release()}`,
    date: new Date().toISOString(),
  };
}

// ---------------------------------------------------------------------------
// Formatting

/** A number with sensible precision for a table. */
export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs === 0) return "0";
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US");
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(Math.min(2, digits));
  return value.toPrecision(digits);
}

export function fmtRatio(ratio: number): string {
  if (!Number.isFinite(ratio)) return String(ratio);
  if (ratio >= 100) return `${Math.round(ratio).toLocaleString("en-US")}×`;
  if (ratio >= 10) return `${ratio.toFixed(1)}×`;
  return `${ratio.toFixed(2)}×`;
}

export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.map((c) => String(c).replace(/\|/g, "\\|")).join(" | ")} |`;
  return [line(header), `| ${header.map(() => "---").join(" | ")} |`, ...rows.map(line)].join("\n");
}

export function comparisonTable(comparisons: readonly Comparison[]): string {
  return table(
    ["figure", "value", "reference", "ratio"],
    comparisons.map((c) => [
      c.label,
      `${fmt(c.value)} ${c.unit}`,
      `${c.referenceLabel}: ${fmt(c.reference)} ${c.unit}`,
      `${fmtRatio(c.ratio)} (${c.ratioOf === "value/reference" ? "value ÷ reference" : "reference ÷ value"})`,
    ]),
  );
}

export function targetLines(targets: readonly Target[]): string {
  return targets.map((t) => `- ${t.met === null ? "⚪ not measured" : t.met ? "✅ met" : "❌ not met"} — ${t.description}: ${t.detail}`).join("\n");
}

export function checkLines(checks: BenchResult["checks"]): string {
  return checks.map((c) => `- ${c.ok ? "✅" : "❌"} ${c.description}${c.detail ? ` (${c.detail})` : ""}`).join("\n");
}


/** The comparisons, targets and checks of a benchmark, as the lines every report section ends its figures with. */
export function outcomeBlocks(comparisons: readonly Comparison[], targets: readonly Target[], checks: BenchResult["checks"]): string {
  const targetBlock = targets.length > 0 ? ["Targets:", targetLines(targets), ""] : [];
  return [comparisonTable(comparisons), "", ...targetBlock, "Checks:", checkLines(checks)].join("\n");
}

/** Seeded PRNG (mulberry32): the same seed gives the same sequence. */
export { seededRandom as rng } from "../testkit/random.js";
