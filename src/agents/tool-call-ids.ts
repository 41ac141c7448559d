/**
 * Every tool call of a model turn with an id of its own. Some OpenAI-compatible
 * servers number calls per message (call_0 in every message) or send none.
 * LangChain's agent, once any middleware has an afterModel hook, runs only the
 * calls whose id has no result yet, so a reused id silently skips a call. A
 * call whose id is missing, repeated in its message, or already used earlier in
 * the conversation gets a fresh id; the turn is returned as it is otherwise.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";

export function withDistinctToolCallIds(message: AIMessage, history: readonly BaseMessage[]): AIMessage {
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return message;
  const used = new Set<string>();
  for (const m of history) {
    const resultOf = (m as { tool_call_id?: unknown }).tool_call_id;
    if (typeof resultOf === "string") used.add(resultOf);
    for (const call of (m as { tool_calls?: Array<{ id?: string }> }).tool_calls ?? []) if (call.id) used.add(call.id);
  }
  let changed = false;
  const distinct = calls.map((call) => {
    if (call.id && !used.has(call.id)) {
      used.add(call.id);
      return call;
    }
    changed = true;
    return { ...call, id: `call_${randomUUID().replace(/-/g, "").slice(0, 24)}` };
  });
  if (!changed) return message;
  // The copy must replace the turn in the agent's messages, not sit beside it: it keeps the turn's id (given one if it had none).
  message.id ??= `run-${randomUUID()}`;
  const { tool_calls: _providerCalls, ...kwargs } = message.additional_kwargs ?? {};
  return new AIMessage({
    id: message.id,
    content: message.content,
    name: message.name,
    tool_calls: distinct,
    invalid_tool_calls: message.invalid_tool_calls,
    usage_metadata: message.usage_metadata,
    response_metadata: message.response_metadata,
    additional_kwargs: kwargs,
  });
}
