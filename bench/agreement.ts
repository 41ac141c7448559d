/**
 * How far two runs of `npm run bench` agree: each ratio of the summary read
 * from an earlier report and from this run, side by side. A ratio measured
 * over repetitions is reproduced when this run's median lies within the
 * earlier run's stated spread (its min–max, or its confidence interval when it states one); a figure with one repetition (a
 * count, a size) is reproduced when the two agree within 1 %. What
 * `npm run bench -- --against EARLIER.md` adds to the report.
 */
import { fmtRatio, table } from "./common.js";

/** One ratio of a report's summary: its median and, when measured over repetitions, their min–max. */
export interface SummaryRatio {
  benchmark: string;
  figure: string;
  ratio: number;
  spread?: { min: number; max: number; reps: number };
}

/** A number as the reports print it ("1,250", "0.06", "3.4e-3"). */
const number = String.raw`(\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)`;
const RATIO = new RegExp(`^${number}×(?: \\(${number}×–${number}×, (\\d+) reps(?:, \\d+ % CI)?\\))?`);
const read = (text: string) => Number(text.replace(/,/g, ""));

/** The ratios of a report's first summary table (benchmark, figure, value, reference, ratio); rows whose ratio does not read are left out. */
export function summaryRatios(report: string): SummaryRatio[] {
  const lines = report.split("\n");
  const start = lines.indexOf("## Summary");
  if (start < 0) return [];
  const out: SummaryRatio[] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("## ")) break;
    if (!line.startsWith("|")) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cells = line.split(" | ").map((cell) => cell.replace(/^\| ?| ?\|$/g, ""));
    if (cells.length !== 5 || cells[0] === "benchmark" || cells[0].startsWith("---")) continue;
    const match = RATIO.exec(cells[4]);
    if (!match) continue;
    const [, ratio, min, max, reps] = match;
    out.push({
      benchmark: cells[0],
      figure: cells[1],
      ratio: read(ratio),
      ...(min !== undefined ? { spread: { min: read(min), max: read(max), reps: Number(reps) } } : {}),
    });
  }
  return out;
}

/** How one figure of this run compares with the earlier run's. */
export interface Agreement {
  benchmark: string;
  figure: string;
  earlier: SummaryRatio;
  now: SummaryRatio;
  /** This run's ratio within the earlier run's spread, or (one repetition) equal to it within 1 %. */
  reproduced: boolean;
}

/** The figures both reports have, matched by benchmark and figure, each judged as the module's comment says. */
export function agreements(earlier: readonly SummaryRatio[], now: readonly SummaryRatio[]): Agreement[] {
  const key = (r: SummaryRatio) => `${r.benchmark}\u0000${r.figure}`;
  const before = new Map(earlier.map((r) => [key(r), r]));
  return now.flatMap((r) => {
    const e = before.get(key(r));
    if (e === undefined) return [];
    const reproduced = e.spread ? r.ratio >= e.spread.min && r.ratio <= e.spread.max : Math.abs(r.ratio - e.ratio) <= 0.01 * Math.abs(e.ratio);
    return [{ benchmark: r.benchmark, figure: r.figure, earlier: e, now: r, reproduced }];
  });
}

const shown = (r: SummaryRatio) => (r.spread ? `${fmtRatio(r.ratio)} (${fmtRatio(r.spread.min)}–${fmtRatio(r.spread.max)})` : fmtRatio(r.ratio));

/** The report's section: every figure both runs have, whether this run reproduced it, and a count. */
export function agreementSection(earlierReport: string, earlierName: string, thisReport: string): string {
  const rows = agreements(summaryRatios(earlierReport), summaryRatios(thisReport));
  const withSpread = rows.filter((r) => r.earlier.spread);
  const single = rows.filter((r) => !r.earlier.spread);
  const count = (list: Agreement[]) => `${list.filter((r) => r.reproduced).length} of ${list.length}`;
  const earlierSource = /\| source \| ([^|]+) \|/.exec(earlierReport)?.[1]?.trim();
  const earlierDate = /\| date \| ([^|]+) \|/.exec(earlierReport)?.[1]?.trim();
  return [
    "## Agreement with an earlier run",
    "",
    `This run's summary ratios against those of \`${earlierName}\`${earlierSource ? ` (${earlierSource}` : ""}${earlierDate ? `${earlierSource ? ", " : " ("}${earlierDate})` : earlierSource ? ")" : ""}. ` +
      "A ratio measured over repetitions is reproduced when this run's median lies within the earlier run's min–max; a figure with one repetition (a count, a size) when the two agree within 1 %.",
    "",
    `Reproduced: ${count(withSpread)} ratios measured over repetitions, ${count(single)} figures with one repetition.`,
    "",
    rows.length === 0
      ? "The two reports have no figure in common."
      : table(
          ["benchmark", "figure", "earlier run", "this run", "this ÷ earlier", "reproduced"],
          rows.map((r) => [r.benchmark, r.figure, shown(r.earlier), shown(r.now), fmtRatio(r.now.ratio / r.earlier.ratio), r.reproduced ? "yes" : "**no**"]),
        ),
  ].join("\n");
}
