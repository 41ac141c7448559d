/**
 * One model call, as every node makes it: messages in; text and usage out; any
 * provider failure turned into a ProviderError that says what the provider said.
 * A call may also be watched while it streams, and stopped: the request is
 * aborted (no more tokens are generated) and the answer so far is returned.
 */
import { callbackHandlerPrefersStreaming, type BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { ProviderError, redactSecrets } from "../errors.js";
import { MODEL_PROVIDERS, providerOfClient, type ModelProvider } from "./index.js";
import type { StopWords } from "./provider.js";
import { mergeChunks } from "./message-chunks.js";
import { bound } from "../shared/text.js";
import { usageOf, type TokenUsage } from "../shared/usage.js";

export interface ModelAnswer {
  text: string;
  usage: TokenUsage;
  /** The request was stopped before the answer was complete (see StreamWatch). */
  stopped?: boolean;
  /** The provider declined to answer and said why (redacted, bounded): see refusalOf. */
  refusal?: string;
  /** The provider cut the answer at its output limit, in its own words (e.g. `stop_reason "max_tokens"`): see answerEnd. */
  truncated?: string;
  /** The answer did not finish: a stop that does not mean "finished", or none at all, in the provider's words (see answerEnd). */
  unfinished?: string;
}

/** Longest refusal text kept. */
const MAX_REFUSAL_CHARS = 2_000;

/**
 * The provider's refusal on an answer, as the provider marked it: `additional_kwargs.refusal` (a `refusal`
 * field, kept there by the default provider's client and by LangChain's Responses API converter), a content
 * part of type "refusal", or a stop word its row lists as withheld (then the text that came with it, or a
 * sentence naming the stop). Only the provider's mark counts: an answer that
 * merely reads like a refusal ("I can't help with that") is an answer, and the validator says what is wrong with it.
 */
export function refusalOf(message: AIMessage | null | undefined, provider?: ModelProvider): string | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const marked = (message.additional_kwargs as { refusal?: unknown } | undefined)?.refusal;
  let text = typeof marked === "string" ? marked : "";
  if (text.length === 0 && Array.isArray(message.content)) {
    for (const part of message.content as unknown[]) {
      const p = part as { type?: unknown; refusal?: unknown } | null;
      if (p !== null && typeof p === "object" && p.type === "refusal" && typeof p.refusal === "string") text += p.refusal;
    }
  }
  if (text.trim().length === 0) {
    // A provider's client is read in its own fields only (another provider's field may hold the same word in another vocabulary).
    const stop = stopReasonOf(message, provider === undefined ? undefined : MODEL_PROVIDERS[provider].stops.map((words) => words.field));
    if (stop !== undefined && STOP_WORDS.get(stop.field)!.withheld.includes(stop.reason))
      text = `${stop.field} "${stop.reason}"${textOf(message.content).trim() ? `: ${textOf(message.content)}` : ""}`;
  }
  if (text.trim().length === 0) return undefined;
  // Redacted before it is cut, so a cut cannot leave the start of a key behind.
  return bound(redactSecrets(text), MAX_REFUSAL_CHARS);
}

/** Every provider's stop words, field by field (the table in ../providers/). */
const STOP_WORDS: ReadonlyMap<string, StopWords> = new Map(
  Object.values(MODEL_PROVIDERS).flatMap((row) => row.stops.map((words): [string, StopWords] => [words.field, words])),
);

/**
 * Why the provider ended an answer, in its own field (each row's `stops` name them; some clients leave it in
 * `additional_kwargs` when streamed). `generationInfo` is the call's generation info, where LangChain leaves
 * some providers' stop when it aggregates a streamed answer for `invoke()` (see answerEnd).
 */
export function stopReasonOf(
  message: AIMessage | null | undefined,
  fields: Iterable<string> = STOP_WORDS.keys(),
  generationInfo?: Record<string, unknown>,
): { field: string; reason: string } | undefined {
  if (message === null || typeof message !== "object") return undefined;
  // The call's own info first: it holds the provider's word as sent, where a message may hold LangChain's mapping of it.
  const sources = [generationInfo, message.response_metadata, message.additional_kwargs] as Array<Record<string, unknown> | undefined>;
  for (const field of fields) {
    for (const source of sources) {
      const reason = source?.[field];
      if (typeof reason === "string" && reason.length > 0) return { field, reason };
    }
  }
  return undefined;
}

/**
 * How an answer ended, by its provider's stop (one rule, fail-closed): "finished" only on a stop that means
 * the model finished; "cut" at the output limit; "withheld" by the provider; "unfinished" for any other
 * stop, or none at all from a provider's client (a stream that ended without the provider's last event).
 * `said` is the provider's words. A chat model of no known provider (your own, a fake, the simulated
 * model) that reports no stop has no such word to give: its answer is taken as finished, unless it is a
 * model given by name (`unknownProvider: "named"`: LangChain's initChatModel, a provider's client whose
 * provider is not one of the table's), whose answer with no stop is unfinished.
 * `generationInfo` is what the call itself reported, read before the message: `stream()` copies the
 * generation info onto each piece, but `invoke()` with a streaming listener (LangGraph's messages mode)
 * aggregates the pieces without it, and some providers' stop (`finish_reason`, `finishReason`) is only
 * there; LangGraph's v3 event stream leaves on the message LangChain's mapping of the reason
 * (`tool_calls` as `tool_use`, any unknown one as `stop`), and the provider's own only on its last event.
 */
type AnswerEnd = { kind: "finished" } | { kind: "cut" | "withheld" | "unfinished"; said: string };

export function answerEnd(
  message: AIMessage | null | undefined,
  provider: ModelProvider | undefined,
  generationInfo?: Record<string, unknown>,
  options: { unknownProvider?: "own" | "named" } = {},
): AnswerEnd {
  // A provider's client is read in its own fields only; a chat model of no known provider in any of them.
  const fields = provider === undefined ? undefined : MODEL_PROVIDERS[provider].stops.map((words) => words.field);
  const stop = stopReasonOf(message, fields, generationInfo);
  if (stop === undefined) {
    // A model given by name is a provider's client (LangChain's initChatModel builds nothing else): with no stop
    // this package can read, its answer is not known to be finished, so it is not (fail-closed).
    if (provider === undefined && options.unknownProvider === "named")
      return { kind: "unfinished", said: "no stop: the answer of a model given by name ended without a stop reason this package reads" };
    if (provider === undefined) return { kind: "finished" };
    return { kind: "unfinished", said: `no ${MODEL_PROVIDERS[provider].stops[0].field}: the answer ended without the provider's stop` };
  }
  const words = STOP_WORDS.get(stop.field)!;
  const said = `${stop.field} ${JSON.stringify(bound(stop.reason, 100))}`;
  if (words.finished.includes(stop.reason)) return { kind: "finished" };
  if (words.cut.includes(stop.reason)) return { kind: "cut", said };
  if (words.withheld.includes(stop.reason)) return { kind: "withheld", said };
  return { kind: "unfinished", said };
}

/**
 * The provider whose client a chat model is (through any bindings: `withConfig`, `bindTools`), or
 * undefined for one of no known provider.
 */
export function providerOf(model: unknown): ModelProvider | undefined {
  let current = model as { bound?: unknown; _llmType?: unknown } | null;
  for (let depth = 0; depth < 10 && current !== null && typeof current === "object"; depth++) {
    if (typeof current._llmType === "function") {
      const type: unknown = (current as { _llmType(): unknown })._llmType();
      return typeof type === "string" ? providerOfClient(type) : undefined;
    }
    current = current.bound as typeof current;
  }
  return undefined;
}

/**
 * The model name a chat model gives LangChain's tracers (`ls_model_name`, through any bindings), or undefined
 * (a chat model that does not say).
 */
export function modelNameOf(model: unknown): string | undefined {
  let current = model as { bound?: unknown; getLsParams?: unknown } | null;
  for (let depth = 0; depth < 10 && current !== null && typeof current === "object"; depth++) {
    if (typeof current.getLsParams === "function") {
      try {
        const name: unknown = (current as { getLsParams(options: object): { ls_model_name?: unknown } }).getLsParams({}).ls_model_name;
        return typeof name === "string" ? name : undefined;
      } catch {
        return undefined;
      }
    }
    current = current.bound as typeof current;
  }
  return undefined;
}

/** Watches an answer while it streams. */
interface StreamWatch {
  /** Each piece as it arrives (a model that cannot stream gives its whole answer as one). */
  onChunk(chunk: AIMessage): void;
  /** Aborted to stop the request: the answer so far is returned, with `stopped: true`. */
  stop: AbortSignal;
}

/**
 * The `configurable` key by which a run asks its model calls to stream
 * (streamValidated sets it): the answer is read as it arrives with no callback
 * handler attached, so no token is dispatched to a listener nobody reads.
 */
export const STREAM_TOKENS_KEY = "stream_tokens";

/**
 * Whether the run streams model tokens: it asked to (STREAM_TOKENS_KEY, as
 * streamValidated does), or a callback handler that asks for them is listening
 * (LangGraph's messages mode, the LangGraph server's event stream). A run that
 * does not stream keeps whole-answer requests, as before.
 */
export function streamsTokens(config?: RunnableConfig): boolean {
  if (config?.configurable?.[STREAM_TOKENS_KEY] === true) return true;
  const callbacks = config?.callbacks as { handlers?: unknown } | unknown[] | undefined;
  const handlers = Array.isArray(callbacks) ? callbacks : Array.isArray(callbacks?.handlers) ? (callbacks.handlers as unknown[]) : [];
  return handlers.some(
    (handler) => handler !== null && typeof handler === "object" && Boolean(callbackHandlerPrefersStreaming(handler as BaseCallbackHandler)),
  );
}

/** Provider faults worth another try at the node level (the client already retried HTTP errors). */
function isTransientProviderError(error: unknown): boolean {
  return error instanceof ProviderError && error.transient;
}

/** Node-level retry for transient provider faults the client does not retry itself (e.g. an empty answer). */
export const PROVIDER_RETRY_POLICY = {
  maxAttempts: 3,
  initialInterval: 1_000,
  backoffFactor: 2,
  maxInterval: 10_000,
  retryOn: isTransientProviderError,
};

export async function callModel(
  model: BaseChatModel,
  messages: BaseMessage[],
  options: { node: string; config?: RunnableConfig; allowEmpty?: boolean; onMessage?: (message: AIMessage) => void; watch?: StreamWatch },
): Promise<ModelAnswer> {
  let message: AIMessage;
  let stopped = false;
  let estimated: TokenUsage | undefined;
  try {
    // A run that streams tokens is read through stream() even when nothing watches it: invoke() with a streaming
    // callback aggregates the pieces without their generation info, and some providers' stop (finish_reason) is only there.
    if (options.watch === undefined && !streamsTokens(options.config)) message = (await model.invoke(messages, options.config)) as AIMessage;
    else ({ message, stopped, estimated } = await streamCall(model, messages, options.config, options.watch ?? unwatched()));
  } catch (error) {
    throw ProviderError.from(error, options.node);
  }
  if (message !== null && typeof message === "object") options.onMessage?.(message);
  const text = message !== null && typeof message === "object" ? textOf(message.content) : "";
  const provider = providerOf(model);
  const refusal = refusalOf(message, provider);
  // No content at all (OpenAI-compatible servers send `content: null` this way) is a provider
  // fault worth another try, not an answer, unless the provider said it refuses; whitespace is an
  // answer, and the parser says what is wrong with it.
  if (text.length === 0 && refusal === undefined && !options.allowEmpty && !(message?.tool_calls && message.tool_calls.length > 0)) {
    throw new ProviderError(`Model provider returned no message content in node "${options.node}"`, { node: options.node, transient: true });
  }
  // A request we stopped ends without the provider's word; a cut, and an answer that did not finish, are outcomes of their own.
  const end = stopped || refusal !== undefined ? undefined : answerEnd(message, provider);
  return {
    text,
    usage: estimated ?? usageOf(message, promptChars(messages)),
    ...(stopped ? { stopped } : {}),
    ...(refusal !== undefined ? { refusal } : {}),
    ...(end?.kind === "cut" ? { truncated: end.said } : {}),
    // A withheld stop the refusal reader did not take (it always does) still never counts as finished.
    ...(end?.kind === "unfinished" || end?.kind === "withheld" ? { unfinished: end.said } : {}),
  };
}

/**
 * The call, streamed: the pieces kept as they arrive and merged into one
 * message once, at the end (merging each piece into the message so far
 * builds a message per piece). When
 * the watch stops it, the provider's stream is aborted and what arrived is
 * the answer. A provider reports usage at the end of a stream, so a stopped
 * answer (or a stream without usage) counts its output as the pieces that
 * carried text (a provider sends about one token a piece) and its input as 0.
 */
async function streamCall(
  model: BaseChatModel,
  messages: BaseMessage[],
  config: RunnableConfig | undefined,
  watch: StreamWatch,
): Promise<{ message: AIMessage; stopped: boolean; estimated?: TokenUsage }> {
  const signal = config?.signal ? AbortSignal.any([config.signal, watch.stop]) : watch.stop;
  const chunks: AIMessageChunk[] = [];
  let whole: AIMessage | undefined;
  let pieces = 0;
  let stopped = false;
  try {
    // Read inside the run's context, as LangChain runs a node's body (the graph's nodes run as plain calls, see
    // DirectCall): each chunk's context then finds the run's tracing settings there, instead of in the environment.
    await AsyncLocalStorageProviderSingleton.runWithConfig(config ?? {}, async () => {
      for await (const chunk of await model.stream(messages, { ...config, signal })) {
        if (AIMessageChunk.isInstance(chunk)) {
          chunks.push(chunk);
          if (carriesText(chunk)) pieces++;
        } else whole = chunk as AIMessage;
        watch.onChunk(chunk as AIMessage);
      }
    });
  } catch (error) {
    // Our own stop ends the stream with an abort; anything else (the run's own cancellation included) is the provider's.
    if (!watch.stop.aborted || config?.signal?.aborted) throw error;
    stopped = true;
  }
  const message = whole ?? mergeChunks(chunks) ?? new AIMessageChunk({ content: "" });
  // Usage arrives last: when it did, the whole answer was generated and the provider's count stands.
  if (whole !== undefined || message.usage_metadata !== undefined) return { message, stopped };
  return { message, stopped, estimated: { inputTokens: 0, outputTokens: pieces, totalTokens: pieces, calls: 1 } };
}

/** A watch that reads nothing and never stops the call. */
function unwatched(): StreamWatch {
  return { onChunk: () => undefined, stop: new AbortController().signal };
}

/** Characters of a prompt, for a usage estimate. */
function promptChars(messages: readonly BaseMessage[]): number {
  let n = 0;
  for (const m of messages) n += typeof m.content === "string" ? m.content.length : textOf(m.content).length;
  return n;
}

function carriesText(chunk: AIMessageChunk): boolean {
  if (textOf(chunk.content).length > 0) return true;
  return (chunk.tool_call_chunks ?? []).some((c) => typeof c.args === "string" && c.args.length > 0);
}

/** The text of a message's content: a string, or the text parts of a content array. */
export function textOf(content: AIMessage["content"] | null | undefined): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof part === "string" ? part : part && typeof part === "object" && "text" in part && typeof part.text === "string" ? part.text : ""))
    .join("");
}
