/**
 * What a retry costs in each form (the `retryWith` setting): the whole answer again, or only the
 * corrections (a JSON Patch). Answers of about 0.5, 5 and 20 KB with 1, 3 and 10 defects go through the
 * validation graph (generateValidated) once per form; per valid output it reports model calls, input and
 * output tokens, and the wall time those tokens take at a stated rate. Syntax slips are measured too:
 * calls per valid output with repairSyntax on and off.
 *
 * On the simulated model (the default) every first answer is a spec's example with seeded defects and
 * its corrections follow fixed rules (eval/simulated-model.ts, SIMULATION_RULES), some of them bad at a
 * seeded rate: the figures show how the forms behave under those rules, not how a language model behaves.
 * Against a real endpoint the first answer of each run is still the simulated model's planted one (so
 * every run has the same defects to fix), and every retry is the real model's.
 */
import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import jsonPatch from "fast-json-patch";
import { firstAttemptPrompt } from "../src/protocol/feedback.js";
import type { ModelRequest, ModelSource } from "../src/models.js";
import { generationSystemPrompt } from "../src/validation/prompts.js";
import type { RetryWith } from "../src/settings.js";
import { defineSpec, type Spec } from "../src/specs/spec.js";
import { generateValidated, type ValidationOutcome } from "../src/validation/generate.js";
import { EvaluationModel } from "./simulated-model.js";

/** Answer sizes, in characters of compact JSON, and defects per first answer. */
export const SIZES = [500, 5_000, 20_000] as const;
export const DEFECT_COUNTS = [1, 3, 10] as const;

/**
 * The wall-time model applied to token counts: every call pays a fixed latency, reads its input at the
 * prefill rate and writes its output at the output rate (typical of a hosted mid-size model).
 */
export const TIMING = { latencyS: 0.5, outputTokensPerS: 50, inputTokensPerS: 2_000 } as const;
export const TIMING_TEXT = `${TIMING.latencyS} s per call + input tokens ÷ ${TIMING.inputTokensPerS}/s + output tokens ÷ ${TIMING.outputTokensPerS}/s`;

/** Seeded rates the simulated model makes bad corrections and syntax slips at in this section. */
export const DEFAULT_BAD_CORRECTION_RATE = 0.1;
export const DEFAULT_SLIP_RATE = 0.3;

const REGIONS = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-south-1"];

/** A spec whose example is a list of workers, about `chars` characters of compact JSON. */
export function sizedSpec(chars: number): Spec {
  const worker = (i: number) => ({
    name: `worker-${String(i).padStart(3, "0")}`,
    replicas: 1 + (i % 7),
    cpu: 0.5 + (i % 4),
    memory_mb: 256 * (1 + (i % 8)),
    port: 8000 + i,
    region: REGIONS[i % REGIONS.length],
    enabled: i % 5 !== 0,
    note: i % 3 === 0 ? "serves the batch queue" : "serves requests",
  });
  const workers: ReturnType<typeof worker>[] = [];
  const size = () => JSON.stringify({ fleet: "payments", workers }).length;
  while (size() < chars - 100 || workers.length === 0) workers.push(worker(workers.length));
  return defineSpec({
    name: `fleet-${Math.round(chars / 100) / 10}kb`,
    description: `A fleet of ${workers.length} workers for the payments platform, one entry per worker.`,
    schema: {
      type: "object",
      required: ["fleet", "workers"],
      additionalProperties: false,
      properties: {
        fleet: { type: "string", pattern: "^[a-z][a-z0-9-]*$" },
        workers: {
          type: "array",
          minItems: 1,
          items: {
            type: "object",
            required: ["name", "replicas", "cpu", "memory_mb", "port", "region", "enabled", "note"],
            additionalProperties: false,
            properties: {
              name: { type: "string", pattern: "^[a-z][a-z0-9-]*$" },
              replicas: { type: "integer", minimum: 1, maximum: 50 },
              cpu: { type: "number", minimum: 0.1, maximum: 16 },
              memory_mb: { type: "integer", minimum: 128, maximum: 65536 },
              port: { type: "integer", minimum: 1024, maximum: 65535 },
              region: { type: "string", enum: REGIONS },
              enabled: { type: "boolean" },
              note: { type: "string", maxLength: 200 },
            },
          },
        },
      },
    },
    example: { fleet: "payments", workers },
  });
}

/** Per valid output: what each form cost. */
export interface FormRow {
  size: number;
  defects: number;
  form: RetryWith;
  runs: number;
  valid: number;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** Seconds, from the tokens at TIMING. */
  wallS: number;
  /** The same for the retries alone (every call after a run's first answer, which is the same in every form). */
  retryCalls: number;
  retryInputTokens: number;
  retryOutputTokens: number;
  retryWallS: number;
  /** Corrections asked for, and those set aside (followed by a whole-answer retry). */
  corrections: number;
  setAside: number;
}

export interface SlipRow {
  repair: boolean;
  runs: number;
  valid: number;
  calls: number;
  /** Answers that had a syntax slip: repaired (repair on) or refused as not JSON (repair off). */
  slipped: number;
}

export interface RetryFormsResult {
  simulated: boolean;
  model: string;
  requestsPerCell: number;
  maxAttempts: number;
  badCorrectionRate: number;
  slipRate: number;
  rows: FormRow[];
  slips: SlipRow[];
}

export interface RetryFormsOptions {
  /** A real endpoint's models; undefined: the simulated model. */
  model?: ModelSource;
  modelName?: string;
  seed?: number;
  forms?: readonly RetryWith[];
  sizes?: readonly number[];
  defects?: readonly number[];
  /** Runs per (size, defects, form) cell, each a different request. */
  requests?: number;
  maxAttempts?: number;
  badCorrectionRate?: number;
  slipRate?: number;
  log?: (line: string) => void;
}

const wallOf = (calls: number, input: number, output: number) => calls * TIMING.latencyS + input / TIMING.inputTokensPerS + output / TIMING.outputTokensPerS;

/**
 * A model whose first answer in each run is the simulated model's (the spec's example with the planted
 * defects) and whose later answers are the real model's: every run of a real endpoint starts from the same
 * defects, so the forms are compared on the same fixes.
 */
class PlantedFirstAnswer extends BaseChatModel {
  private calls = 0;
  constructor(
    private readonly planted: EvaluationModel,
    private readonly real: BaseChatModel,
    fields: BaseChatModelParams = {},
  ) {
    super(fields);
  }
  _llmType(): string {
    return "planted-first-answer";
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const model = this.calls++ === 0 ? this.planted : this.real;
    const reply = await model.invoke(messages);
    const message = new AIMessage({ content: reply.content, usage_metadata: reply.usage_metadata, response_metadata: reply.response_metadata });
    return { generations: [{ text: reply.text, message }] };
  }
}

/** The answers of one run: the simulated model, or (for a real endpoint) its planted first answer and the real model's retries. */
function runModel(options: RetryFormsOptions, seed: number, defects: number, slipRate: number): ModelSource {
  const simulated = new EvaluationModel({ seed, defects, badCorrectionRate: options.badCorrectionRate ?? DEFAULT_BAD_CORRECTION_RATE, slipRate }, "generator");
  if (options.model === undefined) return simulated;
  const real = options.model;
  // One wrapper per run: the node asks the source for its model on every attempt, and only the run's first answer is planted.
  let wrapper: PlantedFirstAnswer | undefined;
  return async (request: ModelRequest) => (wrapper ??= new PlantedFirstAnswer(simulated, typeof real === "function" ? await real(request) : real));
}

function requestText(spec: Spec, i: number): string {
  return `${spec.description} Request ${i + 1}: the fleet as it runs today.`;
}

export async function runRetryForms(options: RetryFormsOptions = {}): Promise<RetryFormsResult> {
  const seed = options.seed ?? 1;
  const forms = options.forms ?? (["answer", "corrections", "auto"] as const);
  const sizes = options.sizes ?? SIZES;
  const defectCounts = options.defects ?? DEFECT_COUNTS;
  const requests = options.requests ?? 8;
  const maxAttempts = options.maxAttempts ?? 4;
  const slipRate = options.slipRate ?? DEFAULT_SLIP_RATE;
  const log = options.log ?? (() => {});
  const rows: FormRow[] = [];
  for (const size of sizes) {
    const spec = sizedSpec(size);
    for (const defects of defectCounts) {
      for (const form of forms) {
        const row: FormRow = {
          size,
          defects,
          form,
          runs: 0,
          valid: 0,
          calls: 0,
          inputTokens: 0,
          outputTokens: 0,
          wallS: 0,
          retryCalls: 0,
          retryInputTokens: 0,
          retryOutputTokens: 0,
          retryWallS: 0,
          corrections: 0,
          setAside: 0,
        };
        for (let i = 0; i < requests; i++) {
          const outcome = await generateValidated({
            model: runModel(options, seed, defects, 0),
            modelName: options.modelName,
            spec,
            request: requestText(spec, i),
            maxAttempts,
            retryWith: form,
            outputMode: "text",
          });
          add(row, outcome);
        }
        log(`retry forms: ${size} chars, ${defects} defects, ${form}: ${row.valid}/${row.runs} valid`);
        rows.push(row);
      }
    }
  }
  // Syntax slips: the 5 KB answers with one defect, repair on and off (whole-answer retries).
  const spec = sizedSpec(5_000);
  const slips: SlipRow[] = [];
  for (const repair of [true, false]) {
    const row: SlipRow = { repair, runs: 0, valid: 0, calls: 0, slipped: 0 };
    for (let i = 0; i < requests * 3; i++) {
      const outcome = await generateValidated({
        model: runModel(options, seed, 1, slipRate),
        modelName: options.modelName,
        spec,
        request: requestText(spec, i),
        maxAttempts,
        repairSyntax: repair,
        outputMode: "text",
      });
      row.runs++;
      if (outcome.success) row.valid++;
      row.calls += outcome.usage.calls;
      row.slipped += outcome.history.filter((r) => r.repairs !== undefined || r.errors.some((e) => /^The answer is not valid JSON/.test(e))).length;
    }
    log(`retry forms: syntax slips, repair ${repair ? "on" : "off"}: ${row.valid}/${row.runs} valid`);
    slips.push(row);
  }
  return {
    simulated: options.model === undefined,
    model: options.model === undefined ? `simulated (seed ${seed})` : (options.modelName ?? "the endpoint's model"),
    requestsPerCell: requests,
    maxAttempts,
    badCorrectionRate: options.badCorrectionRate ?? DEFAULT_BAD_CORRECTION_RATE,
    slipRate,
    rows,
    slips,
  };
}

function add(row: FormRow, outcome: ValidationOutcome): void {
  row.runs++;
  if (outcome.success) row.valid++;
  row.calls += outcome.usage.calls;
  row.inputTokens += outcome.usage.inputTokens;
  row.outputTokens += outcome.usage.outputTokens;
  for (const [i, record] of outcome.history.entries()) {
    const wall = wallOf(1, record.usage.inputTokens, record.usage.outputTokens);
    row.wallS += wall;
    if (i > 0) {
      row.retryCalls++;
      row.retryInputTokens += record.usage.inputTokens;
      row.retryOutputTokens += record.usage.outputTokens;
      row.retryWallS += wall;
    }
    if (record.correction) {
      row.corrections++;
      if (!record.correction.applied) row.setAside++;
    }
  }
}

const per = (total: number, valid: number) => (valid === 0 ? NaN : total / valid);
const num = (n: number, digits = 0) => (Number.isNaN(n) ? "—" : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }));

/** Whole answers ÷ corrections per cell, per valid output: for the whole run, and for its retries alone (what the setting changes). */
export function formRatios(
  result: RetryFormsResult,
  form: RetryWith = "corrections",
): Array<{ size: number; defects: number; output: number; wall: number; retryOutput: number; retryWall: number; validSame: boolean }> {
  const out = [];
  for (const row of result.rows.filter((r) => r.form === form)) {
    const whole = result.rows.find((r) => r.form === "answer" && r.size === row.size && r.defects === row.defects);
    if (!whole) continue;
    const ratio = (key: keyof FormRow) => per(whole[key] as number, whole.valid) / per(row[key] as number, row.valid);
    out.push({
      size: row.size,
      defects: row.defects,
      output: ratio("outputTokens"),
      wall: ratio("wallS"),
      retryOutput: ratio("retryOutputTokens"),
      retryWall: ratio("retryWallS"),
      validSame: row.valid >= whole.valid,
    });
  }
  return out;
}

/** Whether the targets hold: on 5-20 KB answers with at most 3 defects, corrections' retries take ≥ 3× fewer output tokens and ≥ 2× less wall time per valid output, at the same valid rate. */
export function targetCells(result: RetryFormsResult) {
  return formRatios(result).filter((r) => r.size >= 5_000 && r.defects <= 3);
}

/**
 * Calls a refused slip costs: the extra calls with repair off (against on), per slipped answer refused. A
 * slip at the last attempt costs no call but ends the run invalid, so this stays at or under one.
 */
export function callsSavedPerSlip(result: RetryFormsResult): number {
  const on = result.slips.find((r) => r.repair);
  const off = result.slips.find((r) => !r.repair);
  if (!on || !off || off.slipped === 0) return NaN;
  return (off.calls - on.calls) / off.slipped;
}

/** A part of a report section: a paragraph (its text in markdown's inline marks, ** and `) or a table. */
export type ReportBlock = { paragraph: string } | { head: string[]; rows: string[][] };

/** The retry-forms section as markdown, under a heading of this level. */
export function renderRetryForms(result: RetryFormsResult, heading = "##"): string {
  return [
    `${heading} ${RETRY_FORMS_TITLE}`,
    ...retryFormsBlocks(result).map((block) => ("paragraph" in block ? block.paragraph : table(block.head, block.rows))),
  ].join("\n\n");
}

export const RETRY_FORMS_TITLE = "Retry forms: whole answers against corrections";

/** The retry-forms section's paragraphs and tables, in order, for each report's own rendering (markdown, HTML). */
export function retryFormsBlocks(result: RetryFormsResult): ReportBlock[] {
  const source = result.simulated
    ? "**These figures come from the simulated model, not a language model**: its first answers are a spec's example with seeded defects, and its corrections are the exact JSON Patch of what its whole retry would fix, " +
      `bad at a seeded rate of ${result.badCorrectionRate} (not applicable, a path outside the answer, or worse). A real model's corrections may be better or worse; run \`npm run eval -- --model NAME\` against an endpoint to see.`
    : `Model: ${result.model}. The first answer of every run is the simulated model's (the example with planted defects); every retry is the real model's.`;
  const rows = result.rows.map((r) => [
    `${num(r.size / 1000, 1)} KB`,
    String(r.defects),
    r.form,
    `${r.valid}/${r.runs}`,
    num(per(r.calls, r.valid), 2),
    num(per(r.inputTokens, r.valid)),
    num(per(r.outputTokens, r.valid)),
    num(per(r.wallS, r.valid), 1),
    num(per(r.retryOutputTokens, r.valid)),
    num(per(r.retryWallS, r.valid), 1),
    r.corrections === 0 ? "—" : `${r.corrections} (${r.setAside} set aside)`,
  ]);
  const ratios = formRatios(result).map((r) => [
    `${num(r.size / 1000, 1)} KB`,
    String(r.defects),
    `${num(r.output, 1)}×`,
    `${num(r.wall, 1)}×`,
    `${num(r.retryOutput, 1)}×`,
    `${num(r.retryWall, 1)}×`,
    r.validSame ? "yes" : "no",
  ]);
  const cells = targetCells(result);
  const met = (test: (r: (typeof cells)[number]) => boolean) => (cells.length === 0 ? "not measured" : cells.every(test) ? "met" : "not met");
  const [on, off] = [result.slips.find((s) => s.repair), result.slips.find((s) => !s.repair)];
  const slipRows = result.slips.map((s) => [s.repair ? "on" : "off", `${s.valid}/${s.runs}`, num(per(s.calls, s.valid), 2), String(s.slipped)]);
  const blocks: ReportBlock[] = [
    { paragraph: source },
    {
      paragraph: `Per valid output, over ${result.requestsPerCell} requests per row, at most ${result.maxAttempts} attempts, output mode "text". Wall time is computed from the tokens: ${TIMING_TEXT}.`,
    },
    {
      head: [
        "answer",
        "defects",
        "retryWith",
        "valid",
        "calls",
        "input tokens",
        "output tokens",
        "wall time (s)",
        "retries' output tokens",
        "retries' wall time (s)",
        "corrections",
      ],
      rows,
    },
    {
      paragraph:
        "Whole answers ÷ corrections, per valid output (higher: corrections cost less). The first answer is the same in both forms, so the whole run's ratio cannot pass about 2× with one retry; the retries' columns are what the setting changes:",
    },
    {
      head: [
        "answer",
        "defects",
        "output tokens, whole run",
        "wall time, whole run",
        "output tokens, retries",
        "wall time, retries",
        "valid rate at least the same",
      ],
      rows: ratios,
    },
    {
      paragraph:
        `Target on 5-20 KB answers with at most 3 defects, the retries per valid output at the same valid rate: ≥ 3× fewer output tokens: ${met((r) => r.retryOutput >= 3 && r.validSame)}; ` +
        `≥ 2× less wall time: ${met((r) => r.retryWall >= 2 && r.validSame)}.`,
    },
    { paragraph: `Syntax slips (5 KB answers, one defect, a slip in ${Math.round(result.slipRate * 100)}% of whole answers), repairSyntax on and off:` },
    { head: ["repairSyntax", "valid", "calls per valid output", "slipped answers"], rows: slipRows },
  ];
  if (on && off)
    blocks.push({
      paragraph:
        `Calls saved per slipped answer by repairing it: ${num(callsSavedPerSlip(result), 2)} (the extra calls with repairSyntax off, per slipped answer it refused; ` +
        "a slip at the last attempt costs no call but ends the run invalid, hence the lower valid rate).",
    });
  return blocks;
}

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

/** JSON Patch against JSON Merge Patch: the characters each needs for the same corrections (the first answer's defects fixed). */
export async function patchFormSizes(sizes: readonly number[] = SIZES, defects: readonly number[] = DEFECT_COUNTS, seed = 1) {
  const out: Array<{ size: number; defects: number; jsonPatch: number; mergePatch: number }> = [];
  for (const size of sizes) {
    const spec = sizedSpec(size);
    for (const count of defects) {
      const model = new EvaluationModel({ seed, defects: count }, "generator");
      const first = await model.invoke([new SystemMessage(generationSystemPrompt(spec)), new HumanMessage(firstAttemptPrompt(requestText(spec, 0)))]);
      const broken = JSON.parse(first.text) as object;
      const fixed = spec.example as object;
      out.push({
        size,
        defects: count,
        jsonPatch: JSON.stringify(jsonPatch.compare(broken, fixed)).length,
        mergePatch: JSON.stringify(mergePatch(broken, fixed)).length,
      });
    }
  }
  return out;
}

/** The RFC 7386 merge patch from `a` to `b`: objects are merged field by field; an array that differs is sent whole. */
function mergePatch(a: unknown, b: unknown): unknown {
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object" || Array.isArray(a) || Array.isArray(b)) return b;
  const out: Record<string, unknown> = {};
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  for (const key of Object.keys(left)) if (!Object.hasOwn(right, key)) out[key] = null;
  for (const [key, value] of Object.entries(right)) {
    if (!Object.hasOwn(left, key) || JSON.stringify(left[key]) !== JSON.stringify(value)) out[key] = mergePatch(left[key], value);
  }
  return out;
}
