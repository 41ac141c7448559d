/**
 * The verdict of a graph's run on LangSmith, two ways.
 *
 * - On the run itself: when a validation run stops, its graph's run as LangChain's LangSmith tracer
 *   holds it gets the verdict as metadata (`trustworthy_valid`, `trustworthy_attempts`,
 *   `trustworthy_stop_reason`, `trustworthy_spec`) and tags (`trustworthy:valid` or `trustworthy:invalid`,
 *   `trustworthy:stop:<reason>`), sent with the run when it ends, so LangSmith's filters find the runs by
 *   them. Nothing happens when the run is not traced.
 * - As feedback: a LangChain callback handler that, when a validation run ends, asks a LangSmith client
 *   to score the graph's run — `valid` 0/1 (with the stop reason as its comment) and `attempts` — so
 *   LangSmith's dashboards can chart the share of valid runs per project, prompt or model. Nothing is
 *   sent for other runs, and a client that fails changes nothing.
 *
 * docs/tracing.md says how to filter and chart by them.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { ChainValues } from "@langchain/core/utils/types";
import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { RunnableConfig } from "@langchain/core/runnables";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import { bound } from "../shared/text.js";

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

/** A run's verdict as the graph reaches it. */
interface RunVerdict {
  /** Whether the output passed the spec (absent: no spec judged it, as for Reflexion without one). */
  valid?: boolean;
  /** Why the run stopped (Reflexion: each task's reason, distinct, joined with ","). */
  stopReason: string;
  /** Attempts made (Reflexion: rounds, over its tasks). */
  attempts: number;
  spec?: string;
}

/** The prefix of the tags the verdict puts on a run (a run that stops twice keeps only the last verdict's). */
const VERDICT_TAG_PREFIX = "trustworthy:";
/** The most characters of a spec's name put on a run (a run may supply its own spec, named as it likes). */
const MAX_SPEC_NAME_CHARS = 200;

/**
 * Puts a run's verdict on the graph's run that LangChain's LangSmith tracer is recording, as metadata and
 * tags, called by the node that reached the verdict with the config LangGraph gave it. The tracer sends a
 * run's metadata and tags when the run ends, from the run it keeps (`getRun`): the node's run is a child
 * of the graph's, so its parent is the run to mark. LangSmith's own guide adds metadata to a run the same
 * way, on its run tree before it ends. Untraced (no LangSmith tracer among the callbacks), nothing is done.
 * tests/telemetry/langsmith-run-verdict.test.ts fails if an upgrade changes what this relies on.
 *
 * Returns how many runs were marked (one per LangSmith tracer among the callbacks). Never throws: a fault
 * here marks nothing, and the run goes on.
 */
export function markRunVerdict(config: RunnableConfig | undefined, verdict: RunVerdict): number {
  const callbacks = config?.callbacks;
  // A bare list of handlers comes with no run of the node's own to start from.
  if (callbacks === undefined || Array.isArray(callbacks)) return 0;
  let marked = 0;
  try {
    marked = markRuns(callbacks, verdict);
  } catch {
    // The verdict is missing from the run; the run itself is not touched.
  }
  return marked;
}

function markRuns(callbacks: CallbackManager, verdict: RunVerdict): number {
  const nodeRunId = callbacks.getParentRunId();
  if (nodeRunId === undefined) return 0;
  let marked = 0;
  for (const handler of callbacks.handlers) {
    if (!(handler instanceof LangChainTracer)) continue;
    const graphRunId = handler.getRun(nodeRunId)?.parent_run_id;
    const run = graphRunId === undefined ? undefined : handler.getRun(graphRunId);
    if (run === undefined) continue;
    run.extra = {
      ...run.extra,
      metadata: {
        ...run.extra?.metadata,
        ...(verdict.valid !== undefined ? { trustworthy_valid: verdict.valid } : {}),
        trustworthy_attempts: verdict.attempts,
        trustworthy_stop_reason: verdict.stopReason,
        ...(verdict.spec !== undefined ? { trustworthy_spec: bound(verdict.spec, MAX_SPEC_NAME_CHARS) } : {}),
      },
    };
    run.tags = [
      ...(run.tags ?? []).filter((tag) => !tag.startsWith(VERDICT_TAG_PREFIX)),
      ...(verdict.valid !== undefined ? [`${VERDICT_TAG_PREFIX}${verdict.valid ? "valid" : "invalid"}`] : []),
      ...verdict.stopReason.split(",").map((reason) => `${VERDICT_TAG_PREFIX}stop:${reason}`),
    ];
    marked++;
  }
  return marked;
}
