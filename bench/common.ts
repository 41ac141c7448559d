/**
 * Shared pieces of the benchmarks: the result shape every benchmark returns,
 * timing and statistics helpers, machine information and markdown helpers.
 *
 * One ratio definition everywhere (see RATIO_DEFINITION): a ratio reads
 * value ÷ reference, is taken within each repetition (the value and its
 * reference measured side by side), and the median of those per-repetition
 * ratios is reported with their min–max. Medians of per-repetition ratios
 * resist a repetition that a busy machine slowed down for one variant only;
 * a ratio of two medians does not, which is why the two can differ.
 */
import { cpus, loadavg, totalmem, platform, release } from "node:os";
import { pathToFileURL } from "node:url";
import { seededRandom } from "../testkit/random.js";

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

/** How every ratio in the reports is defined; said in the report's header and next to every comparison table. */
export const RATIO_DEFINITION =
  "ratio = value ÷ reference, taken within each repetition (value and reference measured side by side), reported as the median of the per-repetition ratios (min–max); " +
  "value and reference are the medians of their own figures, so the ratio need not equal their quotient";

/**
 * A figure next to its reference, measured in the same run. `ratios` are
 * value ÷ reference within each repetition, `ratio` is their median, and
 * `value`/`reference` are the medians of the figures themselves.
 */
export interface Comparison {
  label: string;
  value: number;
  reference: number;
  unit: string;
  referenceLabel: string;
  /** value ÷ reference within each repetition. */
  ratios: number[];
  /** The median of `ratios`. */
  ratio: number;
  /** A confidence interval of `ratio` (see medianRatioInterval), when the benchmark took one; the reports print it in place of the min–max. */
  interval?: { low: number; high: number; level: number };
}

export interface Target {
  description: string;
  /** null when the figure could not be measured in this run, or could not be told from the limit (`undecided`). */
  met: boolean | null;
  detail: string;
  /** Set (with `met: null`) when the figure was measured but its confidence interval holds the limit: the run cannot tell. */
  undecided?: true;
}

/** A target's outcome in words, as the reports print it. */
export function targetOutcome(t: Target): string {
  if (t.met === null) return t.undecided ? "cannot tell at this noise" : "not measured";
  return t.met ? "met" : "not met";
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
  /** A page of its own with the same figures (written with BENCHMARKS.md, so the two always agree). */
  page?: { path: string; text: string };
}

/** A figure measured once next to its reference: one repetition, ratio = value ÷ reference. */
export function compare(label: string, value: number, reference: number, unit: string, referenceLabel: string, _reads?: "value/reference"): Comparison {
  return { label, value, reference, unit, referenceLabel, ratios: [value / reference], ratio: value / reference };
}

/** A figure and its reference measured in the same repetitions (pairs by index): medians of each, and the median of per-repetition ratios. */
export function compareRepeated(label: string, values: readonly number[], references: readonly number[], unit: string, referenceLabel: string): Comparison {
  if (values.length !== references.length || values.length === 0) throw new Error(`${label}: ${values.length} values for ${references.length} references`);
  const ratios = values.map((v, i) => v / references[i]);
  return { label, value: median(values), reference: median(references), unit, referenceLabel, ratios, ratio: median(ratios) };
}

/** A ratio's confidence interval (see medianRatioInterval), with the spread of the ratios it summarises. */
export interface RatioInterval {
  /** The median of the per-repetition ratios. */
  median: number;
  /** The interval's bounds, and its level (0.95 for a 95 % interval). */
  low: number;
  high: number;
  level: number;
  /** The ratios' first and third quartiles: how far one repetition strays. */
  q1: number;
  q3: number;
  /** Repetitions. */
  n: number;
}

/**
 * The median of the per-repetition ratios value ÷ reference (pairs by index) with a percentile bootstrap
 * confidence interval: the ratios resampled with replacement `resamples` times, the median of each
 * resample, and the interval between the (1 − level)/2 and (1 + level)/2 quantiles of those medians.
 * Seeded, so the same figures give the same interval.
 */
export function medianRatioInterval(
  values: readonly number[],
  references: readonly number[],
  options: { level?: number; resamples?: number; seed?: number } = {},
): RatioInterval {
  if (values.length !== references.length || values.length === 0) throw new Error(`${values.length} values for ${references.length} references`);
  const level = options.level ?? 0.95;
  const resamples = options.resamples ?? 2_000;
  const ratios = values.map((v, i) => v / references[i]);
  const sorted = [...ratios].sort((a, b) => a - b);
  const random = seededRandom(options.seed ?? 1);
  const medians = new Float64Array(resamples);
  const sample = new Float64Array(ratios.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < ratios.length; i++) sample[i] = ratios[Math.floor(random() * ratios.length)];
    sample.sort();
    const mid = sample.length >> 1;
    medians[r] = sample.length % 2 === 1 ? sample[mid] : (sample[mid - 1] + sample[mid]) / 2;
  }
  medians.sort();
  const quantile = (q: number) => medians[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))];
  return {
    median: median(ratios),
    low: quantile((1 - level) / 2),
    high: quantile((1 + level) / 2),
    level,
    q1: quartile(sorted, 0.25),
    q3: quartile(sorted, 0.75),
    n: ratios.length,
  };
}

/** The q-quantile of sorted values, interpolated between neighbours. */
function quartile(sorted: readonly number[], q: number): number {
  const at = q * (sorted.length - 1);
  const lower = Math.floor(at);
  return sorted[lower] + (sorted[Math.min(sorted.length - 1, lower + 1)] - sorted[lower]) * (at - lower);
}

/**
 * Whether a ratio is at most `limit`, as far as its interval can tell: met when the whole interval is at or
 * under the limit, not met when the whole interval is over it, and undecided when the interval holds it.
 */
export function verdictUnder(limit: number, interval: { low: number; high: number }): "met" | "not met" | "cannot tell" {
  if (interval.high <= limit) return "met";
  if (interval.low > limit) return "not met";
  return "cannot tell";
}

/** value ÷ reference per repetition, and their median: for targets and prose that quote a ratio. */
export function ratioStats(values: readonly number[], references: readonly number[]): { ratios: number[]; median: number; min: number; max: number } {
  const ratios = values.map((v, i) => v / references[i]);
  return { ratios, median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
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

/** The median (the mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** CPU time of this process (user + system, every thread), µs. */
export function cpuUs(since?: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(since);
  return c.user + c.system;
}

/** Shuffle a copy (Fisher–Yates) with the given random source. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** The 1, 5 and 15 minute load averages, as the reports print them. */
export function fmtLoad(l: readonly number[] = loadavg()): string {
  return l.map((x) => x.toFixed(2)).join(" / ");
}

export function summarize(values: readonly number[]): { p50: number; p95: number; mean: number; min: number; max: number; n: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((s, v) => s + v, 0) / Math.max(1, values.length);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), mean, min: sorted[0], max: sorted[sorted.length - 1], n: values.length };
}

/** The least-squares slope of y over x (NaN with fewer than two distinct x). */
export function leastSquaresSlope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
  }
  return sxx === 0 ? NaN : sxy / sxx;
}

/** A value the optimiser cannot prove unused. */
export const sink = { value: 0 as unknown };

/**
 * A timing loop of its own for one measured function. A loop shared by every
 * measured function makes its call site megamorphic, so V8 stops inlining the
 * function under test and every call pays a generic call; each loop made here
 * is a separate function with its own type feedback.
 */
export function ownLoop<T>(): (fn: (input: T) => unknown, inputs: readonly T[], iterations: number) => unknown {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function(
    "fn",
    "inputs",
    "iterations",
    "let last; for (let i = 0; i < iterations; i++) for (let k = 0; k < inputs.length; k++) last = fn(inputs[k]); return last;",
  ) as never;
}

/** One timed round of a variant: CPU and wall time per call, in nanoseconds. */
export interface RoundSample {
  cpuNs: number;
  wallNs: number;
}

/** A variant of an interleaved micro-benchmark: `round(passes)` runs `passes` passes over its inputs and says how long one call took. */
export interface MicroVariant {
  name: string;
  round: (passes: number) => RoundSample | Promise<RoundSample>;
  /** Passes per round (calibrated by `interleavedRounds` when absent). */
  passes?: number;
}

/** A JavaScript variant: `fn` over `inputs`, in a timing loop of its own, CPU time from process.cpuUsage(). */
export function jsVariant<T>(name: string, inputs: readonly T[], fn: (input: T) => unknown): MicroVariant {
  const loop = ownLoop<T>();
  return {
    name,
    round: (passes) => {
      const wall0 = nowNs();
      const cpu0 = process.cpuUsage();
      sink.value = loop(fn, inputs, passes);
      const cpu = cpuUs(cpu0) * 1000;
      const wall = nowNs() - wall0;
      const calls = passes * inputs.length;
      return { cpuNs: cpu / calls, wallNs: wall / calls };
    },
  };
}

/**
 * Interleaved rounds: every round runs every variant once, in a random order,
 * so drift in the machine's load reaches all variants alike. Each variant's
 * passes per round are calibrated first so a round takes about `roundMs`;
 * `warmupRounds` rounds are run and dropped. Returns each variant's samples,
 * one per round, in round order (so index i of two variants is one repetition).
 */
export async function interleavedRounds(
  variants: readonly MicroVariant[],
  opts: { rounds: number; roundMs: number; warmupRounds?: number; seed?: number },
): Promise<Map<string, RoundSample[]>> {
  const random = seededRandom(opts.seed ?? 7);
  const passes = new Map<string, number>();
  for (const v of variants) {
    if (v.passes !== undefined) {
      passes.set(v.name, v.passes);
      continue;
    }
    // Calibrate: grow the passes until a round takes long enough to time (a tenth of roundMs), then scale.
    let p = 1;
    for (;;) {
      const t0 = nowNs();
      await v.round(p);
      const ms = (nowNs() - t0) / 1e6;
      if (ms >= opts.roundMs / 10 || p >= 1e7) {
        passes.set(v.name, Math.max(1, Math.round((p * opts.roundMs) / Math.max(ms, 1e-3))));
        break;
      }
      p *= 4;
    }
  }
  const samples = new Map<string, RoundSample[]>(variants.map((v) => [v.name, []]));
  const total = (opts.warmupRounds ?? 1) + opts.rounds;
  for (let r = 0; r < total; r++) {
    for (const v of shuffled(variants, random)) {
      const s = await v.round(passes.get(v.name)!);
      if (r >= total - opts.rounds) samples.get(v.name)!.push(s);
    }
  }
  return samples;
}

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

/** A comparison's ratio as the reports print it: the median, and the min–max over repetitions when there are several. */
export function fmtComparisonRatio(c: Comparison): string {
  if (c.interval !== undefined) {
    const three = (ratio: number) => `${ratio.toFixed(3)}×`;
    return `${three(c.ratio)} (${three(c.interval.low)}–${three(c.interval.high)}, ${c.ratios.length} reps, ${Math.round(c.interval.level * 100)} % CI)`;
  }
  return c.ratios.length > 1
    ? `${fmtRatio(c.ratio)} (${fmtRatio(Math.min(...c.ratios))}–${fmtRatio(Math.max(...c.ratios))}, ${c.ratios.length} reps)`
    : fmtRatio(c.ratio);
}

/** median (min–max) of a list of numbers. */
export function spread(values: readonly number[], format: (x: number) => string = fmt): string {
  if (values.length === 1) return format(values[0]);
  return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

export function comparisonTable(comparisons: readonly Comparison[]): string {
  return [
    `Ratios: ${RATIO_DEFINITION}.`,
    "",
    table(
      ["figure", "value", "reference", "ratio (value ÷ reference)"],
      comparisons.map((c) => [c.label, `${fmt(c.value)} ${c.unit}`, `${c.referenceLabel}: ${fmt(c.reference)} ${c.unit}`, fmtComparisonRatio(c)]),
    ),
  ].join("\n");
}

export function targetLines(targets: readonly Target[]): string {
  return targets.map((t) => `- ${t.met === null ? "⚪" : t.met ? "✅" : "❌"} ${targetOutcome(t)} — ${t.description}: ${t.detail}`).join("\n");
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

/** The value after `name` in a worker's arguments (`--runs 1000`), or undefined when it is not given. */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/**
 * Runs `main` with the arguments when `moduleUrl` (the caller's import.meta.url) is the program being run:
 * a rejection prints its stack and exits 1; with `exitWhenDone`, success exits 0 (a worker that leaves
 * handles open must still end).
 */
export function runIfMain(moduleUrl: string, main: (argv: string[]) => Promise<unknown>, options: { exitWhenDone?: boolean } = {}): void {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  main(process.argv.slice(2)).then(
    () => {
      if (options.exitWhenDone) process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
