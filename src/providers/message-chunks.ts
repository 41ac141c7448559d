/**
 * A streamed answer's chunks merged into one message, once, at the end. The
 * message is the one `a.concat(b).concat(c)…` gives (the same LangChain merge
 * functions, applied field by field in the same order), without building a
 * message per chunk on the way: that costs a construction per chunk, and
 * more the longer the answer.
 */
import { AIMessageChunk, _mergeDicts, _mergeLists, mergeContent, mergeResponseMetadata, mergeUsageMetadata } from "@langchain/core/messages";

type Fields = ConstructorParameters<typeof AIMessageChunk>[0] & object;
/** LangChain's list merge (typed for content blocks; concat applies it to tool calls and their chunks too). */
const mergeLists = _mergeLists as <T>(left: T[] | undefined, right: T[] | undefined) => T[] | undefined;

/** The chunks as one message (undefined for none); a single chunk is returned as it is, as a fold would. */
export function mergeChunks(chunks: readonly AIMessageChunk[]): AIMessageChunk | undefined {
  const first = chunks[0];
  if (first === undefined || chunks.length === 1) return first;
  // What each field of the message merged so far holds: what AIMessageChunk.concat reads from `this`.
  let content = first.content;
  let additionalKwargs = first.additional_kwargs;
  let responseMetadata = first.response_metadata;
  let toolCallChunks = first.tool_call_chunks;
  let toolCalls = first.tool_calls;
  let usage = first.usage_metadata;
  let id = first.id;
  for (let k = 1; k < chunks.length; k++) {
    const chunk = chunks[k];
    content = mergeContent(content, chunk.content);
    // Merging nothing in gives a copy of the same fields: skipped (most pieces carry no additional fields).
    if (!isEmpty(chunk.additional_kwargs)) additionalKwargs = _mergeDicts(additionalKwargs, chunk.additional_kwargs) ?? {};
    if (!isEmpty(chunk.response_metadata)) responseMetadata = mergeResponseMetadata(responseMetadata, chunk.response_metadata);
    let mergedChunks: typeof toolCallChunks = [];
    if (toolCallChunks !== undefined || chunk.tool_call_chunks !== undefined) {
      const raw = mergeLists(toolCallChunks, chunk.tool_call_chunks);
      if (raw !== undefined && raw.length > 0) mergedChunks = raw;
    }
    let mergedCalls: typeof toolCalls = [];
    if (mergedChunks.length === 0 && (toolCalls !== undefined || chunk.tool_calls !== undefined)) {
      const raw = mergeLists(toolCalls, chunk.tool_calls);
      if (raw !== undefined && raw.length > 0) mergedCalls = raw;
    }
    toolCallChunks = mergedChunks;
    // A message built with tool-call chunks reads its tool calls from them; concat then merges only the chunks.
    toolCalls = mergedCalls;
    if (usage !== undefined || chunk.usage_metadata !== undefined) usage = mergeUsageMetadata(usage, chunk.usage_metadata);
    id = id ?? chunk.id;
  }
  const fields: Fields = {
    content,
    additional_kwargs: additionalKwargs,
    response_metadata: responseMetadata,
    tool_call_chunks: toolCallChunks,
    tool_calls: toolCalls,
    id,
    ...(usage !== undefined ? { usage_metadata: usage } : {}),
  };
  const Cls = first.constructor as new (fields: Fields) => AIMessageChunk;
  return new Cls(fields);
}

/** An object with no own fields (`_mergeDicts(left, {})` is a copy of `left`). */
function isEmpty(dict: object | undefined): boolean {
  if (dict === undefined) return false;
  for (const key in dict) if (Object.hasOwn(dict, key)) return false;
  return true;
}
