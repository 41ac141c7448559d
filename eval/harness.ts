/**
 * Runs strategies over the suite and keeps one record per (request, strategy).
 * Validity is always judged by the deterministic validator on the strategy's
 * final output, whatever the strategy itself claimed.
 */
import type { ModelSource } from "../src/models.js";
import { resolveSpec } from "../src/specs/registry.js";
import { checkTextSync } from "../src/specs/check.js";
import type { RetryFormsResult } from "./retry-forms.js";
import type { LoopRun } from "./loops.js";
import { STRATEGIES, type Strategy } from "./strategies.js";
import type { EvalRequest } from "./suite.js";

export interface EvalRecord {
  requestId: string;
  spec: string;
  difficulty: string;
  strategy: Strategy["id"];
  /** The strategy said it succeeded. */
  claimedSuccess: boolean;
  /** The deterministic validator accepts the final output. */
  valid: boolean;
  /** Claimed success, but the validator rejects the output. */
  falseApproval: boolean;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  attempts: number;
  latencyMs: number;
  /** The validator's errors on the final output (empty when valid). */
  finalErrors: string[];
  /** Set when the strategy failed (e.g. the provider failed); the record then counts as not valid and not claimed. */
  failure?: string;
}

export interface StrategySummary {
  strategy: Strategy["id"];
  name: string;
  requests: number;
  validRate: number;
  claimedRate: number;
  /** Share of all requests where the strategy claimed success and the output is invalid. */
  falseApprovalRate: number;
  /** Share of claimed successes that are invalid. */
  falseAmongClaimed: number;
  meanCalls: number;
  meanTokens: number;
  /** Every call (token) the strategy spent over the outputs the validator accepts; null when none is valid. */
  callsPerValidOutput: number | null;
  tokensPerValidOutput: number | null;
  meanLatencyMs: number;
  p50LatencyMs: number;
  failures: number;
  validBySpec: Record<string, number>;
}

export interface EvalMeta {
  /** Plain words: which model produced the numbers. */
  model: string;
  simulated: boolean;
  seed?: number;
  missRate?: number;
  maxAttempts: number;
  requests: number;
  date: string;
  durationMs: number;
}

export interface EvalRun {
  meta: EvalMeta;
  strategies: { id: Strategy["id"]; name: string; description: string }[];
  records: EvalRecord[];
  summaries: StrategySummary[];
  /** Escalation and token budgets on the validation graph (eval/loops.ts), when measured. */
  loops?: LoopRun;
  /** Whole answers against corrections, and syntax slips repaired or not (eval/retry-forms.ts), when measured. */
  retryForms?: RetryFormsResult;
}

export interface RunEvalOptions {
  model: ModelSource;
  modelName: string;
  meta: Omit<EvalMeta, "requests" | "date" | "durationMs" | "maxAttempts">;
  suite: readonly EvalRequest[];
  strategies?: readonly Strategy[];
  maxAttempts?: number;
  /** Requests run at once (per strategy). */
  concurrency?: number;
  onRecord?: (record: EvalRecord) => void;
}

export function judge(spec: string, finalText: string | null): { valid: boolean; errors: string[] } {
  if (finalText === null) return { valid: false, errors: ["no output"] };
  const report = checkTextSync(resolveSpec(spec), finalText, "model");
  return { valid: report.valid, errors: report.errors };
}

export async function runEval(options: RunEvalOptions): Promise<EvalRun> {
  const strategies = options.strategies ?? STRATEGIES;
  const maxAttempts = options.maxAttempts ?? 3;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const started = Date.now();
  const records: EvalRecord[] = [];

  for (const strategy of strategies) {
    const queue = [...options.suite];
    const worker = async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        const record = await runOne(strategy, item, options, maxAttempts);
        records.push(record);
        options.onRecord?.(record);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  }
  // Stable order: suite order, then strategy order.
  const position = new Map(options.suite.map((r, i) => [r.id, i]));
  const strategyPosition = new Map(strategies.map((s, i) => [s.id, i]));
  records.sort(
    (a, b) =>
      (position.get(a.requestId) ?? 0) - (position.get(b.requestId) ?? 0) || (strategyPosition.get(a.strategy) ?? 0) - (strategyPosition.get(b.strategy) ?? 0),
  );

  return {
    meta: { ...options.meta, maxAttempts, requests: options.suite.length, date: new Date().toISOString(), durationMs: Date.now() - started },
    strategies: strategies.map((s) => ({ id: s.id, name: s.name, description: s.description })),
    records,
    summaries: summarize(records, strategies),
  };
}

async function runOne(strategy: Strategy, item: EvalRequest, options: RunEvalOptions, maxAttempts: number): Promise<EvalRecord> {
  const base = { requestId: item.id, spec: item.spec, difficulty: item.difficulty, strategy: strategy.id };
  const t0 = performance.now();
  try {
    const outcome = await strategy.run(item, { model: options.model, maxAttempts, modelName: options.modelName });
    const latencyMs = performance.now() - t0;
    const verdict = judge(item.spec, outcome.finalText);
    return {
      ...base,
      claimedSuccess: outcome.claimedSuccess,
      valid: verdict.valid,
      falseApproval: outcome.claimedSuccess && !verdict.valid,
      calls: outcome.usage.calls,
      inputTokens: outcome.usage.inputTokens,
      outputTokens: outcome.usage.outputTokens,
      totalTokens: outcome.usage.totalTokens,
      attempts: outcome.attempts,
      latencyMs,
      finalErrors: verdict.errors,
    };
  } catch (error) {
    return {
      ...base,
      claimedSuccess: false,
      valid: false,
      falseApproval: false,
      calls: 0,
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
      attempts: 0,
      latencyMs: performance.now() - t0,
      finalErrors: [],
      failure: error instanceof Error ? error.message : String(error),
    };
  }
}

export function summarize(records: readonly EvalRecord[], strategies: readonly Pick<Strategy, "id" | "name">[]): StrategySummary[] {
  return strategies.map((s) => {
    const mine = records.filter((r) => r.strategy === s.id);
    const n = mine.length;
    const share = (pred: (r: EvalRecord) => boolean) => (n === 0 ? 0 : mine.filter(pred).length / n);
    const mean = (f: (r: EvalRecord) => number) => (n === 0 ? 0 : mine.reduce((t, r) => t + f(r), 0) / n);
    const claimed = mine.filter((r) => r.claimedSuccess).length;
    const valid = mine.filter((r) => r.valid).length;
    const latencies = mine.map((r) => r.latencyMs).sort((a, b) => a - b);
    const specs = [...new Set(mine.map((r) => r.spec))];
    return {
      strategy: s.id,
      name: s.name,
      requests: n,
      validRate: share((r) => r.valid),
      claimedRate: share((r) => r.claimedSuccess),
      falseApprovalRate: share((r) => r.falseApproval),
      falseAmongClaimed: claimed === 0 ? 0 : mine.filter((r) => r.falseApproval).length / claimed,
      meanCalls: mean((r) => r.calls),
      meanTokens: mean((r) => r.totalTokens),
      callsPerValidOutput: valid === 0 ? null : mine.reduce((t, r) => t + r.calls, 0) / valid,
      tokensPerValidOutput: valid === 0 ? null : mine.reduce((t, r) => t + r.totalTokens, 0) / valid,
      meanLatencyMs: mean((r) => r.latencyMs),
      p50LatencyMs: latencies.length === 0 ? 0 : latencies[Math.ceil(latencies.length / 2) - 1],
      failures: mine.filter((r) => r.failure !== undefined).length,
      validBySpec: Object.fromEntries(
        specs.map((spec) => {
          const bySpec = mine.filter((r) => r.spec === spec);
          return [spec, bySpec.filter((r) => r.valid).length / bySpec.length];
        }),
      ),
    };
  });
}
