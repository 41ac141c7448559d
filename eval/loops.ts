/**
 * Escalation and token budgets, measured: the validation graph on the same requests with a cheap model
 * alone, a strong model alone, the cheap one escalating to the strong one, and that escalation under a
 * token budget. Per configuration: valid output, model calls and tokens per request (per model too) and
 * per valid output, and budget stops. Every budgeted run is checked against the budget's rule from its
 * own records: each call made started within the budget (tokens spent + the call's estimated input ≤
 * the budget), each budget stop was owed (spent + the next call's input > the budget), and no call was
 * made once the total had passed the budget.
 */
import type { ModelSource } from "../src/models.js";
import { estimateTokens } from "../src/shared/usage.js";
import { resolveSpec } from "../src/specs/registry.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { generationSystemPrompt } from "../src/validation/prompts.js";
import { firstAttemptPrompt, retryPrompt } from "../src/protocol/feedback.js";
import type { AttemptRecord, StopReason } from "../src/validation/state.js";
import type { EvalRequest } from "./suite.js";

/** Which model names play the cheap and the strong model. */
export interface Tiers {
  small: string;
  large: string;
}

export interface LoopConfig {
  id: "small" | "large" | "escalation" | "escalation-budget";
  name: string;
  settings: { model?: string; models?: { model: string; attempts?: number }[]; maxTokens?: number };
}

/** The four configurations, for an attempt budget, a token budget and the two model names. */
export function loopConfigs(tiers: Tiers, maxAttempts: number, maxTokens: number): LoopConfig[] {
  const firstTries = Math.max(1, maxAttempts - 1);
  const models = [{ model: tiers.small, attempts: firstTries }, { model: tiers.large }];
  return [
    { id: "small", name: `${tiers.small} only`, settings: { model: tiers.small } },
    { id: "large", name: `${tiers.large} only`, settings: { model: tiers.large } },
    { id: "escalation", name: `${tiers.small} for ${firstTries} attempt(s), then ${tiers.large}`, settings: { models } },
    { id: "escalation-budget", name: `the same escalation, budget ${maxTokens} tokens`, settings: { models, maxTokens } },
  ];
}

export interface LoopRecord {
  config: LoopConfig["id"];
  requestId: string;
  spec: string;
  difficulty: string;
  valid: boolean;
  stopReason: StopReason | null;
  attempts: number;
  calls: number;
  totalTokens: number;
  /** Tokens and calls per model name. */
  byModel: Record<string, { tokens: number; calls: number }>;
  /** For a budgeted run: the budget rule checked on this run's own records. */
  budget?: BudgetCheck;
}

export interface BudgetCheck {
  limit: number;
  /** Per call made: tokens spent before it + its estimated input. */
  startedAt: number[];
  /** When the run stopped for the budget: tokens spent + the next call's estimated input. */
  stoppedAt?: number;
  /** Calls made after the total had passed the budget (the rule says 0). */
  callsPastBudget: number;
}

export interface LoopSummary {
  config: LoopConfig["id"];
  name: string;
  requests: number;
  validRate: number;
  meanCalls: number;
  meanTokens: number;
  /** Mean tokens per request of each tier's model. */
  meanTokensSmall: number;
  meanTokensLarge: number;
  /** All calls (tokens) over the number of valid outputs; null when there is none. */
  callsPerValidOutput: number | null;
  tokensPerValidOutput: number | null;
  budgetStops: number;
}

/** The budget rule over every budgeted run: how many calls and stops were checked, and whether any broke it. */
export interface BudgetProof {
  limit: number;
  runs: number;
  callsChecked: number;
  /** Largest (spent + estimated input) ÷ limit over the calls made: at most 1. */
  worstStart: number;
  stopsChecked: number;
  /** Smallest (spent + next input) ÷ limit over the budget stops: above 1. */
  closestStop: number | null;
  callsPastBudget: number;
  /** Calls that started over the budget, and stops that were not owed (both 0 when the rule held). */
  violations: number;
}

export interface LoopRun {
  tiers: Tiers;
  maxAttempts: number;
  maxTokens: number;
  configs: LoopConfig[];
  records: LoopRecord[];
  summaries: LoopSummary[];
  proof: BudgetProof;
}

export interface RunLoopsOptions {
  model: ModelSource;
  tiers: Tiers;
  suite: readonly EvalRequest[];
  maxAttempts: number;
  maxTokens: number;
}

export async function runLoops(options: RunLoopsOptions): Promise<LoopRun> {
  const configs = loopConfigs(options.tiers, options.maxAttempts, options.maxTokens);
  const graph = buildValidationGraph({ model: options.model });
  const records: LoopRecord[] = [];
  for (const config of configs) {
    for (const item of options.suite) {
      const out = await graph.invoke(
        { request: item.request },
        { context: { spec: item.spec, maxAttempts: options.maxAttempts, temperature: 0, ...config.settings } },
      );
      // fromEntries: a model may be named anything, "__proto__" included.
      const byModel: LoopRecord["byModel"] = Object.fromEntries(
        Object.entries(out.usageByModel).map(([name, usage]) => [name, { tokens: usage.totalTokens, calls: usage.calls }]),
      );
      records.push({
        config: config.id,
        requestId: item.id,
        spec: item.spec,
        difficulty: item.difficulty,
        valid: out.success,
        stopReason: out.stopReason,
        attempts: out.attempts,
        calls: out.usage.calls,
        totalTokens: out.usage.totalTokens,
        byModel,
        ...(config.settings.maxTokens !== undefined ? { budget: checkBudget(item, out.history, out.stopReason, config.settings.maxTokens) } : {}),
      });
    }
  }
  return {
    tiers: options.tiers,
    maxAttempts: options.maxAttempts,
    maxTokens: options.maxTokens,
    configs,
    records,
    summaries: summarizeLoops(records, configs, options.tiers),
    proof: budgetProof(records, options.maxTokens),
  };
}

/** The input the budget estimates for an attempt's call: the system prompt and the attempt's prompt, characters ÷ 4. */
function estimatedInput(item: EvalRequest, previous: AttemptRecord | undefined): number {
  const system = generationSystemPrompt(resolveSpec(item.spec));
  const user = previous ? retryPrompt(item.request, previous.output, previous.errors) : firstAttemptPrompt(item.request);
  return estimateTokens(system.length + user.length);
}

/** The budget rule, checked on one run's records (recomputed here, not read from the graph). */
export function checkBudget(item: EvalRequest, history: readonly AttemptRecord[], stopReason: StopReason | null, limit: number): BudgetCheck {
  const startedAt: number[] = [];
  let spent = 0;
  let callsPastBudget = 0;
  for (let i = 0; i < history.length; i++) {
    if (spent > limit) callsPastBudget++;
    startedAt.push(spent + estimatedInput(item, history[i - 1]));
    spent += history[i].usage.totalTokens;
  }
  const stoppedAt = stopReason === "budget" ? spent + estimatedInput(item, history.at(-1)) : undefined;
  return { limit, startedAt, ...(stoppedAt !== undefined ? { stoppedAt } : {}), callsPastBudget };
}

export function budgetProof(records: readonly LoopRecord[], limit: number): BudgetProof {
  const checks = records.flatMap((r) => (r.budget ? [r.budget] : []));
  const starts = checks.flatMap((c) => c.startedAt);
  const stops = checks.flatMap((c) => (c.stoppedAt !== undefined ? [c.stoppedAt] : []));
  return {
    limit,
    runs: checks.length,
    callsChecked: starts.length,
    worstStart: starts.length === 0 ? 0 : Math.max(...starts) / limit,
    stopsChecked: stops.length,
    closestStop: stops.length === 0 ? null : Math.min(...stops) / limit,
    callsPastBudget: checks.reduce((n, c) => n + c.callsPastBudget, 0),
    violations: starts.filter((s) => s > limit).length + stops.filter((s) => s <= limit).length,
  };
}

export function summarizeLoops(records: readonly LoopRecord[], configs: readonly LoopConfig[], tiers: Tiers): LoopSummary[] {
  return configs.map((config) => {
    const mine = records.filter((r) => r.config === config.id);
    const n = mine.length;
    const total = (f: (r: LoopRecord) => number) => mine.reduce((t, r) => t + f(r), 0);
    const mean = (f: (r: LoopRecord) => number) => (n === 0 ? 0 : total(f) / n);
    const valid = mine.filter((r) => r.valid).length;
    return {
      config: config.id,
      name: config.name,
      requests: n,
      validRate: n === 0 ? 0 : valid / n,
      meanCalls: mean((r) => r.calls),
      meanTokens: mean((r) => r.totalTokens),
      meanTokensSmall: mean((r) => tokensOf(r, tiers.small)),
      meanTokensLarge: mean((r) => tokensOf(r, tiers.large)),
      callsPerValidOutput: valid === 0 ? null : total((r) => r.calls) / valid,
      tokensPerValidOutput: valid === 0 ? null : total((r) => r.totalTokens) / valid,
      budgetStops: mine.filter((r) => r.stopReason === "budget").length,
    };
  });
}

function tokensOf(record: LoopRecord, model: string): number {
  return Object.hasOwn(record.byModel, model) ? record.byModel[model].tokens : 0;
}
