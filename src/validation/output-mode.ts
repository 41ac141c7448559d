/**
 * How the model is asked for JSON: plain text (the prompt asks for it), the
 * provider's JSON mode, its JSON-schema mode (in the strict form of the schema
 * where the provider has one, ../providers/strict-form.ts), or a forced tool call whose arguments are the value.
 * What each provider sends in each mode is its row's (../providers/). Whatever comes
 * back, the deterministic validator judges it: a provider's strict mode
 * cannot express business rules, and some providers accept a mode and
 * ignore it. When a provider refuses a mode, the attempt falls back to the
 * next one that works and the run records that it did.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessageChunk, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { ProviderError } from "../errors.js";
import { missingAnswerError } from "../protocol/feedback.js";
import { DEFAULT_PROVIDER, MODEL_PROVIDERS, type ModelProvider } from "../providers/index.js";
import { sendable, type ModeRequest, type SchemaRequest } from "../providers/provider.js";
import { callModel, providerOf, stopReasonOf, textOf, type ModelAnswer } from "../providers/model-call.js";
import type { Spec } from "../specs/spec.js";

/** The ways an answer is asked for (what an attempt's record names). */
export const ANSWER_MODES = ["text", "json_object", "json_schema", "tool"] as const;
/** What a run may ask for: an answer mode, or "auto" (each provider's own). */
export const OUTPUT_MODES = ["auto", ...ANSWER_MODES] as const;
/** What a run asks for: a mode, or "auto" (the provider's own structured output, chosen per model). */
type RequestedMode = (typeof OUTPUT_MODES)[number];
/** The mode an answer was asked in. */
export type OutputMode = Exclude<RequestedMode, "auto">;

/** The concrete mode a run's setting asks this model for: "auto" is its provider's own structured output, and text for a chat model of no known provider. */
function modeFor(model: BaseChatModel, requested: RequestedMode): OutputMode {
  if (requested !== "auto") return requested;
  const provider = providerOf(model);
  return provider === undefined ? "text" : MODEL_PROVIDERS[provider].auto;
}

/** The mode to try when a provider refuses one. */
const FALLBACK: Record<OutputMode, OutputMode | undefined> = { json_schema: "json_object", tool: "text", json_object: "text", text: undefined };

/** A name providers accept for a schema or a tool: letters, digits, "_" and "-", at most 64. */
function providerName(spec: Spec): string {
  return `${spec.name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 56)}_output`;
}

/** What a structured-output request for a spec is made from. */
function schemaRequest(spec: Spec): SchemaRequest {
  return { name: providerName(spec), description: spec.description.slice(0, 500), schema: spec.schema };
}

/**
 * The json_schema request the default provider's row builds for a spec (strict where the strict form fits its
 * limits); what the strict-share measurement counts.
 */
export function jsonSchemaRequest(spec: Spec): ModeRequest {
  return MODEL_PROVIDERS[DEFAULT_PROVIDER].modes.json_schema!(schemaRequest(spec));
}

/**
 * The call options that ask this model's provider for JSON in `mode` (its row's; a chat model of no known
 * provider is asked as the default provider is), or undefined when the provider has no such mode.
 */
function modeOptions(provider: ModelProvider | undefined, mode: "json_object" | "json_schema", spec: Spec, strictRefused?: string): ModeRequest | undefined {
  return MODEL_PROVIDERS[provider ?? DEFAULT_PROVIDER].modes[mode]?.(schemaRequest(spec), strictRefused);
}

/**
 * The model, bound to ask for JSON the way `mode` says; how to read its answer;
 * and, for a streamed answer, how to read each piece (a fresh reader per call).
 */
function bindMode(
  model: BaseChatModel,
  mode: OutputMode,
  spec: Spec,
  strictRefused?: string,
):
  | ({
      runnable: BaseChatModel;
      read: (message: AIMessage) => string;
      pieces: () => (chunk: AIMessage) => string;
      /** Why the message holds no answer though it called tools (another tool than the answer's), or undefined. */
      missing?: (message: AIMessage) => string | undefined;
    } & Omit<ModeRequest, "options" | "preflight">)
  | { preflight: string }
  | undefined {
  const content = (message: AIMessage) => textOf(message.content);
  // A model that cannot stream gives its whole answer as one piece.
  const contentPieces = () => (chunk: AIMessage) => (AIMessageChunk.isInstance(chunk) ? textOf(chunk.content) : content(chunk));
  switch (mode) {
    case "text":
      return { runnable: model, read: content, pieces: contentPieces };
    case "json_object":
    case "json_schema": {
      const asked = modeOptions(providerOf(model), mode, spec, strictRefused);
      if (asked === undefined) return undefined;
      if (asked.preflight !== undefined) return { preflight: asked.preflight };
      const { options, dropped, ...strictness } = asked;
      return {
        runnable: model.withConfig(options as RunnableConfig) as unknown as BaseChatModel,
        read: content,
        pieces: contentPieces,
        ...(dropped !== undefined && dropped.length > 0 ? { dropped } : {}),
        ...strictness,
      };
    }
    case "tool": {
      const name = providerName(spec);
      // The provider's strict tool where it has one (within its documented limits), else the spec's schema as it is.
      const row = MODEL_PROVIDERS[providerOf(model) ?? DEFAULT_PROVIDER];
      const asked = row.tool?.(schemaRequest(spec), strictRefused) ?? { parameters: sendable(spec.schema) };
      const tool = {
        type: "function" as const,
        function: {
          name,
          description: `Submit the JSON object: ${spec.description}`.slice(0, 1_000),
          parameters: asked.parameters,
          ...(asked.strict ? { strict: true } : {}),
        },
      };
      // The tool's name as tool_choice: each client turns it into its provider's forced call.
      const runnable = model.bindTools!([tool], { tool_choice: name } as never) as unknown as BaseChatModel;
      // Only a call naming this tool is the answer: a call to another tool is not (see missingAnswer).
      const readWhole = (message: AIMessage): string => {
        // The arguments' text as the provider sent it, when the client keeps it (the default provider's does): judged by the
        // same bounded reader as any answer. Writing LangChain's parsed copy back out would overflow the stack on
        // arguments nested deeply enough, before the reader could say what is wrong.
        const sent = rawArguments(message, name);
        if (sent !== undefined) return sent;
        const call = message.tool_calls?.find((c) => c.name === name);
        if (call) {
          // A call with no arguments at all (a tool_use block without `input`) is an empty answer.
          if (call.args === undefined || call.args === null) return "";
          try {
            return JSON.stringify(call.args) ?? "";
          } catch {
            return "(the tool call's arguments could not be written out as JSON: they nest too deeply)";
          }
        }
        // Arguments that were not JSON: LangChain keeps the raw text; the parser says exactly what is wrong with it.
        const invalid = (message as { invalid_tool_calls?: Array<{ name?: string; args?: string }> }).invalid_tool_calls?.find((c) => c.name === name);
        if (invalid && typeof invalid.args === "string") return invalid.args;
        return toolCallNames(message).length > 0 ? "" : content(message);
      };
      const read = (message: AIMessage): string => {
        // Streamed: the arguments' text as sent, as for a whole answer (LangChain's merged tool_calls complete a
        // cut-off text leniently, which would judge JSON the model never finished).
        if (AIMessageChunk.isInstance(message) && (message.tool_call_chunks?.length ?? 0) > 0) {
          const chunk = message.tool_call_chunks!.find((c) => c.name === name);
          return chunk === undefined ? "" : (chunk.args ?? "");
        }
        return readWhole(message);
      };
      const missing = (message: AIMessage): string | undefined => {
        const called = toolCallNames(message);
        if (called.length === 0 || called.includes(name)) return undefined;
        return missingAnswerError(name, called);
      };
      // The arguments of the call to this tool, piece by piece (other calls are not the answer).
      const pieces = () => {
        let index: number | undefined;
        return (chunk: AIMessage): string => {
          if (!AIMessageChunk.isInstance(chunk)) return read(chunk);
          let text = "";
          for (const c of chunk.tool_call_chunks ?? []) {
            if (index === undefined && c.name === name) index = c.index ?? 0;
            if (index !== undefined && (c.index ?? 0) === index && typeof c.args === "string") text += c.args;
          }
          return text;
        };
      };
      return {
        runnable,
        read,
        pieces,
        missing,
        ...(asked.strict ? { strict: true } : {}),
        ...(asked.reshaped ? { reshaped: true } : {}),
        ...(asked.notStrict !== undefined ? { notStrict: asked.notStrict } : {}),
        ...(asked.dropped !== undefined ? { dropped: asked.dropped } : {}),
      };
    }
  }
}

/** What watches one model call while it streams: where its answer's text goes, and the signal that stops it. */
interface AnswerWatch {
  write(text: string): void;
  stop: AbortSignal;
}

/** The raw arguments text of the call to `name` in a message, as the provider sent it. */
function rawArguments(message: AIMessage, name: string): string | undefined {
  const call = providerToolCalls(message).find((c) => c?.function?.name === name);
  return typeof call?.function?.arguments === "string" ? call.function.arguments : undefined;
}

function providerToolCalls(message: AIMessage): Array<{ function?: { name?: unknown; arguments?: unknown } }> {
  const calls = (message.additional_kwargs as { tool_calls?: unknown } | undefined)?.tool_calls;
  return Array.isArray(calls) ? calls : [];
}

/** The names of the tools a message calls, however its client filed the calls (parsed, unparseable, streamed, as sent). */
function toolCallNames(message: AIMessage): string[] {
  const named = [
    ...(message.tool_calls ?? []),
    ...((message as { invalid_tool_calls?: Array<{ name?: unknown }> }).invalid_tool_calls ?? []),
    ...((message as { tool_call_chunks?: Array<{ name?: unknown }> }).tool_call_chunks ?? []),
    ...providerToolCalls(message).map((c) => ({ name: c?.function?.name })),
  ];
  return [...new Set(named.map((c) => c?.name).filter((n): n is string => typeof n === "string" && n.length > 0))];
}

/** Whether a failure is the provider refusing the way it was asked (a 400/422 about the format, schema or tools, or a reply the SDK could not parse as JSON), not a fault. */
function isModeRefusal(error: unknown, mode: OutputMode): boolean {
  if (mode === "text" || !(error instanceof ProviderError)) return false;
  const cause = (error as { cause?: { name?: unknown } }).cause;
  if (mode === "json_schema" && cause?.name === "SyntaxError") return true;
  return (
    (error.status === 400 || error.status === 422) &&
    /response_format|json_schema|json_object|schema|tool|function|strict|not supported|unsupported/i.test(error.message)
  );
}

export interface ModeAnswer extends ModelAnswer {
  /** The mode that produced the answer. */
  mode: OutputMode;
  /** Each mode the provider refused on the way, with what it said. */
  fallbacks: string[];
  /** Keywords of the spec's schema left out of the request because the provider's mode does not take them (the validator checked them all). */
  schemaDropped?: string[];
  /** The model called tools, none of them the answer's: the answer is missing, and this says what was called instead. */
  missing?: string;
  /** Asked in the strict form of the spec's schema: the answer is mapped back (../providers/strict-form.ts) before it is judged. */
  strict?: boolean;
  /** With `strict`: the provider whose strict form it was asked in (its row's dialect maps the answer back). */
  strictBy?: ModelProvider;
  /** Why a json_schema request that could have been strict was not. */
  notStrict?: string;
}

/** Whether the provider said the answer was finished (a stop word in any provider's field, ../providers/). */
function finished(message: AIMessage | undefined): boolean {
  return stopReasonOf(message) !== undefined;
}

/**
 * One model call in `mode` ("auto": the provider's own), falling back along json_schema → json_object → text
 * (tool → text) when the provider refuses; a strict request the provider refuses is first asked again without strict.
 */
export async function callModelInMode(
  model: BaseChatModel,
  messages: BaseMessage[],
  requested: RequestedMode,
  spec: Spec,
  options: { node: string; config?: RunnableConfig; watch?: (mode: OutputMode, reshaped: boolean) => AnswerWatch },
): Promise<ModeAnswer> {
  const { watch: watchFor, ...callOptions } = options;
  const fallbacks: string[] = [];
  let strictRefused: string | undefined;
  let again = false;
  for (let current: OutputMode | undefined = modeFor(model, requested); current !== undefined; current = again ? current : FALLBACK[current]) {
    again = false;
    if (current === "tool" && typeof model.bindTools !== "function") {
      fallbacks.push("tool: this chat model cannot call tools; fell back to text");
      continue;
    }
    const bound = bindMode(model, current, spec, strictRefused);
    if (bound === undefined) {
      fallbacks.push(`${current}: ${providerOf(model) ?? "this chat model"} has no such mode; fell back to ${FALLBACK[current]}`);
      continue;
    }
    if ("preflight" in bound) {
      // Checked before the call: the provider would refuse this request with a 400, so the next mode is asked instead.
      fallbacks.push(`${current} not sent: ${bound.preflight}; fell back to ${FALLBACK[current]}`);
      continue;
    }
    const { runnable, read, pieces, missing, dropped, strict, notStrict, reshaped } = bound;
    const answerWatch = watchFor?.(current, reshaped === true);
    const piece = pieces();
    const watch = answerWatch && { stop: answerWatch.stop, onChunk: (chunk: AIMessage) => answerWatch.write(piece(chunk)) };
    try {
      let message: AIMessage | undefined;
      // An empty answer is an answer: the provider billed the call, so it is an attempt like any other (counted
      // against the attempts and the token budget), and the reader tells the model what was wrong with it.
      const answer = await callModel(runnable, messages, { ...callOptions, allowEmpty: true, onMessage: (m) => (message = m), watch });
      const text = message ? read(message) : answer.text;
      // A response that carries no finished answer at all (no choices, no finish reason) is a fault worth another try.
      if (
        text.length === 0 &&
        answer.refusal === undefined &&
        !answer.stopped &&
        !finished(message) &&
        (message === undefined || toolCallNames(message).length === 0)
      ) {
        throw new ProviderError(`Model provider returned no message content in node "${options.node}"`, { node: options.node, transient: true });
      }
      const absent = message && missing?.(message);
      return {
        ...answer,
        text,
        mode: current,
        fallbacks,
        ...(dropped ? { schemaDropped: dropped } : {}),
        // The same row bindMode asked (a chat model of no known provider is asked as the default provider is).
        ...(strict ? { strict, strictBy: providerOf(model) ?? DEFAULT_PROVIDER } : {}),
        ...(notStrict !== undefined ? { notStrict } : {}),
        ...(absent ? { missing: absent } : {}),
      };
    } catch (error) {
      if (strict && isModeRefusal(error, current) && /invalid schema|strict/i.test((error as Error).message)) {
        // The strict form refused (a keyword or a pattern the provider does not take after all; a model without
        // json_schema at all says so otherwise): the same mode without strict, as the schema is, before any other mode.
        strictRefused = (error as Error).message.slice(0, 200);
        fallbacks.push(`${current} with strict: true refused (${strictRefused}); asked again without strict`);
        again = true;
        continue;
      }
      if (!isModeRefusal(error, current) || FALLBACK[current] === undefined) throw error;
      fallbacks.push(`${current} refused (${(error as Error).message.slice(0, 200)}); fell back to ${FALLBACK[current]}`);
    }
  }
  throw new ProviderError("no output mode left to try", { node: options.node });
}
