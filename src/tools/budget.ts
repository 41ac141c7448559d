/**
 * A guarded tool's attempt budget, read from the conversation itself: the
 * failed calls are the tool's own "not run" results in the run's messages
 * since the user last wrote. Nothing is kept in process memory, so two
 * threads (or two users on one server) never share a count, a checkpointed
 * thread keeps its count across restarts and workers, and memory use does not
 * grow with the number of runs. Pure: no model, no graph.
 */

/** Where a guarded tool marks the results of calls it did not run (in ToolMessage.artifact). */
export const GUARD_ARTIFACT_KEY = "guardedTool";

/** What a guarded tool records on the result of a call it did not run. */
export interface GuardRecord {
  /** "invalid": the arguments failed the spec; "refused": the budget was already spent, nothing was checked. */
  outcome: "invalid" | "refused";
  spec: string;
  /** 1-based number of the call among the attempts the budget counts. */
  attempt: number;
  maxAttempts: number;
  /** The validator's messages, exactly as the model received them (empty for a refusal). */
  errors: string[];
}

/** The guard record of a tool result, when a guarded tool did not run that call. */
export function guardRecordOf(message: unknown): GuardRecord | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const artifact = (message as { artifact?: unknown }).artifact;
  if (artifact === null || typeof artifact !== "object") return undefined;
  const record = (artifact as Record<string, unknown>)[GUARD_ARTIFACT_KEY] as GuardRecord | undefined;
  return record && (record.outcome === "invalid" || record.outcome === "refused") ? record : undefined;
}

export interface BudgetQuery {
  tool: string;
  /** The id of the call being decided; the message that holds it ends the count. */
  toolCallId?: string;
  maxAttempts: number;
  /** Whether a call's arguments pass the spec (for calls made alongside this one, whose results are not in the messages yet). */
  passes: (args: unknown) => boolean;
}

/**
 * How many of this tool's calls failed in a row, since the last human message,
 * before the call being decided. A call that ran resets the count; once the
 * count reaches the budget every later call counts as failed (it is refused).
 * Earlier calls to the same tool in the same model message run at the same
 * time as this one; they are judged with the same check, so parallel calls
 * are numbered as if made one after another.
 */
export function failuresBefore(messages: unknown, query: BudgetQuery): number {
  if (!Array.isArray(messages)) return 0;
  let start = messages.length;
  while (start > 0 && typeOf(messages[start - 1]) !== "human") start--;

  const next = (failures: number, failed: boolean) => (failures >= query.maxAttempts || failed ? failures + 1 : 0);
  const names = new Map<string, string>();
  let failures = 0;
  for (let i = start; i < messages.length; i++) {
    const message = messages[i];
    const type = typeOf(message);
    if (type === "ai") {
      const calls = toolCallsOf(message);
      if (query.toolCallId !== undefined && calls.some((c) => c.id === query.toolCallId)) {
        for (const call of calls) {
          if (call.id === query.toolCallId) break;
          if (call.name === query.tool) failures = next(failures, !query.passes(call.args));
        }
        return failures;
      }
      for (const call of calls) if (typeof call.id === "string") names.set(call.id, call.name);
    } else if (type === "tool") {
      const m = message as { name?: unknown; tool_call_id?: unknown };
      const name = typeof m.name === "string" ? m.name : names.get(String(m.tool_call_id));
      if (name === query.tool) failures = next(failures, guardRecordOf(message) !== undefined);
    }
  }
  return failures;
}

function typeOf(message: unknown): string | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const m = message as { getType?: () => string; type?: unknown };
  if (typeof m.getType === "function") return m.getType();
  return typeof m.type === "string" ? m.type : undefined;
}

function toolCallsOf(message: unknown): Array<{ id?: string; name: string; args: unknown }> {
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  return Array.isArray(calls) ? calls.filter((c) => c !== null && typeof c === "object" && typeof c.name === "string") : [];
}
