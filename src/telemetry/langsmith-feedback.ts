/**
 * The verdict of a graph's run as LangSmith feedback: a LangChain callback handler that, when a
 * validation run ends, asks a LangSmith client to score the graph's run — `valid` 0/1
 * (with the stop reason as its comment) and `attempts` — so LangSmith's dashboards can chart the
 * share of valid runs per project, prompt or model. Nothing is sent for other runs, and a client that
 * fails changes nothing (docs/tracing.md).
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { ChainValues } from "@langchain/core/utils/types";

/** What the handler needs of a LangSmith client: `createFeedback` (langsmith's `Client` has it). */
export type FeedbackClient = ConstructorParameters<typeof VerdictFeedbackHandler>[0];

/** The graphs whose runs are scored, by the names their compiled graphs carry. */
const SCORED_GRAPHS = new Set(["Deterministic validation"]);
/** Runs started and not ended that the handler remembers; past it the oldest are forgotten (never scored). */
const MAX_OPEN_RUNS = 1_000;

/**
 * Scores each validation run it sees end, through the LangSmith client given. Pass it
 * among a run's callbacks; `flush()` waits for the scores sent so far.
 *
 * @example
 * ```ts
 * import { Client } from "langsmith";
 * import { buildValidationGraph, VerdictFeedbackHandler } from "langgraph-trustworthy-output";
 *
 * const feedback = new VerdictFeedbackHandler(new Client());
 * await buildValidationGraph().invoke({ request: "A deployment config for payments-api" }, { callbacks: [feedback] });
 * await feedback.flush();
 * ```
 */
export class VerdictFeedbackHandler extends BaseCallbackHandler {
  name = "verdict_feedback";
  // Its handlers only note a run id and start a request: awaited, a run's score is on its way when invoke returns.
  override awaitHandlers = true;
  private readonly open = new Set<string>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly client: {
      createFeedback(runId: string, key: string, options: { score?: number; comment?: string; sourceInfo?: Record<string, unknown> }): Promise<unknown>;
    },
  ) {
    super();
  }

  // The order @langchain/core's CallbackManager calls it with (its declaration names the last four otherwise);
  // tests/telemetry/feedback-scores.test.ts fails if an upgrade changes it.
  override handleChainStart(
    _chain: Serialized,
    _inputs: ChainValues,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    if (runName === undefined || !SCORED_GRAPHS.has(runName)) return;
    this.open.add(runId);
    if (this.open.size > MAX_OPEN_RUNS) this.open.delete(this.open.values().next().value!);
  }

  override handleChainEnd(outputs: ChainValues, runId: string): void {
    if (!this.open.delete(runId)) return;
    const verdict = verdictOf(outputs);
    if (verdict === undefined) return;
    this.send(runId, "valid", { score: verdict.valid ? 1 : 0, comment: verdict.stopReason, sourceInfo: { spec: verdict.spec } });
    if (verdict.attempts !== undefined) this.send(runId, "attempts", { score: verdict.attempts });
  }

  override handleChainError(_error: unknown, runId: string): void {
    this.open.delete(runId);
  }

  /** Waits for every score sent so far (each either stored or refused by the client: neither throws here). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private send(runId: string, key: string, options: Parameters<FeedbackClient["createFeedback"]>[2]): void {
    let sent: Promise<unknown>;
    try {
      sent = Promise.resolve(this.client.createFeedback(runId, key, options)).catch(() => undefined);
    } catch {
      return;
    }
    this.pending.add(sent);
    void sent.finally(() => this.pending.delete(sent));
  }
}

/** A run's verdict from its graph's output (`success`, `stopReason`, `attempts`, `spec`). */
function verdictOf(outputs: ChainValues): { valid: boolean; stopReason: string; attempts?: number; spec?: string } | undefined {
  if (outputs === null || typeof outputs !== "object") return undefined;
  const out = outputs as Record<string, unknown>;
  if (typeof out.stopReason === "string" && typeof out.success === "boolean") {
    return {
      valid: out.success,
      stopReason: out.stopReason,
      ...(typeof out.attempts === "number" ? { attempts: out.attempts } : {}),
      ...(typeof out.spec === "string" ? { spec: out.spec } : {}),
    };
  }
  return undefined;
}
