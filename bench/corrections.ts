/**
 * Benchmark: what a retry costs as the whole answer against as corrections (a JSON Patch), and syntax
 * slips repaired against refused, on the SIMULATED model (eval/retry-forms.ts, where the rules and the
 * wall-time model are stated); and the size of the same corrections as JSON Patch and as JSON Merge
 * Patch, the measurement behind choosing JSON Patch. Counts and tokens, not timings: the wall time is
 * computed from the tokens at a stated rate.
 */
import { callsSavedPerSlip, patchFormSizes, renderRetryForms, runRetryForms, targetCells, TIMING_TEXT } from "../eval/retry-forms.js";
import { compare, fmt, table, type BenchOptions, type BenchResult, type Comparison, type Target } from "./common.js";

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const result = await runRetryForms({ requests: opts.quick ? 1 : 40, sizes: opts.quick ? [500, 5_000] : undefined, defects: opts.quick ? [1, 3] : undefined });
  const cells = targetCells(result);
  const comparisons: Comparison[] = cells.map((cell) => {
    const whole = result.rows.find((r) => r.form === "answer" && r.size === cell.size && r.defects === cell.defects)!;
    const corrections = result.rows.find((r) => r.form === "corrections" && r.size === cell.size && r.defects === cell.defects)!;
    return compare(
      `retries' output tokens per valid output, corrections, ${cell.size / 1000} KB, ${cell.defects} defect(s)`,
      corrections.retryOutputTokens / corrections.valid,
      whole.retryOutputTokens / whole.valid,
      "tokens",
      "whole answers",
    );
  });
  const targets: Target[] = [
    {
      description:
        "corrections on 5-20 KB answers with ≤ 3 defects: ≥ 3× fewer output tokens in the retries per valid output, at the same valid rate (simulated model)",
      met: cells.length === 0 ? null : cells.every((c) => c.retryOutput >= 3 && c.validSame),
      detail: cells.map((c) => `${c.size / 1000} KB/${c.defects}: ${fmt(c.retryOutput)}×`).join(", "),
    },
    {
      description: `corrections on 5-20 KB answers with ≤ 3 defects: ≥ 2× less wall time in the retries per valid output (${TIMING_TEXT}; simulated model)`,
      met: cells.length === 0 ? null : cells.every((c) => c.retryWall >= 2 && c.validSame),
      detail: cells.map((c) => `${c.size / 1000} KB/${c.defects}: ${fmt(c.retryWall)}×`).join(", "),
    },
    {
      description:
        "syntax slips repaired: one call fewer per slipped answer (at least 0.9; a slip at the last attempt costs no call but ends the run invalid) (simulated model)",
      met: Number.isNaN(callsSavedPerSlip(result)) ? null : callsSavedPerSlip(result) >= 0.9,
      detail: `${fmt(callsSavedPerSlip(result))} calls saved per slipped answer`,
    },
  ];
  const sizes = await patchFormSizes(opts.quick ? [500, 5_000] : undefined, opts.quick ? [1, 3] : undefined);
  const sizeRows = sizes.map((s) => [
    `${s.size / 1000} KB`,
    String(s.defects),
    String(s.jsonPatch),
    String(s.mergePatch),
    `${fmt(s.mergePatch / s.jsonPatch)}×`,
  ]);
  const markdown = [
    "## Corrections instead of whole answers, and syntax slips repaired",
    "",
    renderRetryForms(result, "###"),
    "",
    "### JSON Patch or JSON Merge Patch",
    "",
    "The characters each form needs for the same corrections (the first answer's defects fixed): JSON Patch addresses an array element by its index, the path the validator's errors name; " +
      "JSON Merge Patch (RFC 7386) cannot, so a fix inside a list sends the whole list again (and it cannot set a field to null, since null means remove).",
    "",
    table(["answer", "defects", "JSON Patch (chars)", "JSON Merge Patch (chars)", "Merge ÷ Patch"], sizeRows),
  ].join("\n");
  const rows = result.rows.flatMap((r) => [
    {
      label: `${r.size / 1000} KB, ${r.defects} defect(s), retryWith ${r.form}: output tokens per valid output`,
      value: r.outputTokens / r.valid,
      unit: "tokens",
    },
    { label: `${r.size / 1000} KB, ${r.defects} defect(s), retryWith ${r.form}: calls per valid output`, value: r.calls / r.valid, unit: "calls" },
  ]);
  const checks = [
    {
      description: "every correction applied is judged whole: each form reaches a valid output on every request where whole answers do",
      ok: cells.every((c) => c.validSame),
    },
  ];
  return { id: "corrections", title: "Corrections", rows, comparisons, targets, checks, markdown };
}
