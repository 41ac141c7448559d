/**
 * validatedResponseMiddleware: the one middleware that gives a LangChain v1 createAgent
 * a structured answer held to a spec. It supplies the answer's format itself
 * (a tool whose parameters are the spec's JSON Schema, as toolStrategy does),
 * judges every answer with the check step (schema, cross-field rules, zod),
 * gives the model every error of a rejected answer, lets it try again within
 * `maxAttempts`, and ends the run with a typed outcome in the agent's state
 * (`responseOutcome`). `structuredResponse` is only ever an accepted value.
 *
 *   model call (wrapModelCall): the model answers → judged → accepted, or rejected with its errors;
 *                               it calls other tools → work (within maxToolTurns); a review is open → no model call
 *   after the model (afterModel): rejected → jump back to the model; out of attempts → end, or pause for a person:
 *                                 one answer per step (./review.ts), asked again by looping through the model step
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import type { ChatModelStreamEvent } from "@langchain/core/language_models/event";
import type { LLMResult } from "@langchain/core/outputs";
import { mergeConfigs, Runnable, RunnableBinding } from "@langchain/core/runnables";
import { Command, getConfig } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { ConfigurableModel } from "langchain/chat_models/universal";
import { randomUUID } from "node:crypto";
import { readSpecLimits } from "../environment.js";
import { ConfigurationError, SpecError } from "../errors.js";
import { bound } from "../shared/text.js";
import type { CheckLimits } from "../specs/check.js";
import { fingerprintSpec, resolveSpec, type SpecLike } from "../specs/registry.js";
import type { Spec } from "../specs/spec.js";
import { MAX_ECHOED_OUTPUT_CHARS, retryPrompt, truncatedAnswerError, unfinishedAnswerError } from "../protocol/feedback.js";
import { answerEnd, modelNameOf, providerOf, streamsTokens } from "../providers/model-call.js";
import { providerOfTrace, type ModelProvider } from "../providers/index.js";
import { answerTool, answerToolName, judgeAnswer, readTurn } from "./answer.js";
import { attemptsOption, countOption, ON_FAILURE, ON_FAILURE_ERROR } from "../settings.js";
import { ruleContextFor, type RuleContextOption } from "./options.js";
import { responseStateSchema, type AnswerProgress, type ResponseOutcome } from "./outcome.js";
import { answerAcceptedText, answerRejectedText, answerSetAsideText, noAnswerText } from "./prompts.js";
import { reviewStep } from "./review.js";
import { AnswerStreamReader } from "./answer-stream.js";
import { AttemptWatch, stoppedAttemptErrors } from "../streaming/attempt.js";
import { DEFAULT_STOP_EARLY, STOP_POLICIES, type StopPolicy } from "../streaming/partial-check.js";
import { withDistinctToolCallIds } from "./tool-call-ids.js";
import { AnswerTrace, defined, endSpan, openTelemetry, recordMetric, startSpan, type AnswerFacts } from "../telemetry/open-telemetry.js";
import { markRunVerdict } from "../telemetry/langsmith-feedback.js";

/** Options of validatedResponseMiddleware: the spec, the attempt and tool-turn budgets, what happens on failure, limits and rule facts. */
export interface ValidatedResponseOptions<T> {
  /** What a valid answer is: a schema in code (zod, Valibot, ArkType, Effect …) or a Spec from defineSpec (both type the answer), a built-in spec name, or an inline JSON spec. Its schema must describe an object. */
  spec: SpecLike<T>;
  /** Answers the model may give in a run before the answer fails (1-10, default 3). */
  maxAttempts?: number;
  /** Model turns that call the agent's other tools in a run; a turn past them ends the answer without one, stop reason "no_answer" (0-20, default 5). */
  maxToolTurns?: number;
  /** When the model runs out of attempts (or tool turns): end the run with the failure (default), or pause for a person (needs a checkpointer). */
  onFailure?: (typeof ON_FAILURE)[number];
  /** Size, depth and message limits of the check step; the defaults are the validation graph's. */
  limits?: Partial<CheckLimits>;
  /** Facts the spec's code rules read: a value, or computed from the run, e.g. `(run) => run.context` (the context the run started with; resuming it keeps them). */
  ruleContext?: RuleContextOption;
  /**
   * How much of a streamed answer the partial checks let through before they stop the request, as the validation graph's
   * `stopEarly`: "never", "useless" (default: an answer that can no longer be valid, or is not JSON), "first-error".
   * Applies when the answer streams (`streamAnswer`).
   */
  stopEarly?: StopPolicy;
  /**
   * Read the answer's arguments as they arrive, through the partial checks, with progress on LangGraph's `custom`
   * stream: true makes the chat model stream its answer; the default does so when the run already streams the
   * model's tokens (LangGraph's `messages` mode), as the validation graph does.
   */
  streamAnswer?: boolean;
}

const DEFAULT_ANSWER_ATTEMPTS = 3;
/**
 * Tool turns allowed by default. With the default attempts they fit in
 * LangGraph's default recursion limit (25 steps): a tool turn takes three
 * steps (model, this hook, tools) and an answer two.
 */
const DEFAULT_TOOL_TURNS = 5;
const MAX_TOOL_TURNS = 20;
/** The middleware's name in the agent (a name may appear once per agent). */
const VALIDATED_RESPONSE = "validatedResponseMiddleware";
/** Marks the feedback this middleware writes as a user turn (a text answer has no tool call to answer). */
const FEEDBACK_ID_PREFIX = "validated-response-feedback-";

/**
 * Middleware that holds a createAgent's structured answer to a spec; the outcome is `responseOutcome` in the agent's state.
 *
 * @example
 * ```ts
 * import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
 * import { createAgent } from "langchain";
 * import { validatedResponseMiddleware } from "langgraph-trustworthy-output/agents";
 *
 * declare const model: BaseChatModel; // any LangChain chat model
 * const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] });
 * const { responseOutcome } = await agent.invoke({ messages: [{ role: "user", content: "Deploy payments-api with 8 replicas" }] });
 * if (responseOutcome?.success) console.log(responseOutcome.value);
 * ```
 */
export function validatedResponseMiddleware<T = unknown>(options: ValidatedResponseOptions<T>) {
  // The operator's limits on run-time specs (RUNTIME_SPEC_LIMITS) hold for an inline spec given here too.
  const spec = resolveSpec(options.spec, { specLimits: readSpecLimits() }) as Spec<T>;
  if (spec.schema.type !== "object") {
    throw new SpecError(
      `Spec ${JSON.stringify(spec.name)} cannot be an agent's answer: the answer is given as tool arguments, a JSON object, so its schema needs "type": "object".`,
    );
  }
  const maxAttempts = attemptsOption(options.maxAttempts, DEFAULT_ANSWER_ATTEMPTS);
  const maxToolTurns = countOption("maxToolTurns", options.maxToolTurns, DEFAULT_TOOL_TURNS, 0, MAX_TOOL_TURNS);
  const onFailure = options.onFailure ?? "end";
  if (!ON_FAILURE.includes(onFailure)) throw new ConfigurationError(`${ON_FAILURE_ERROR}; got ${JSON.stringify(onFailure)}.`);
  const stopEarly = options.stopEarly ?? DEFAULT_STOP_EARLY;
  if (!STOP_POLICIES.includes(stopEarly))
    throw new ConfigurationError(`stopEarly must be one of ${STOP_POLICIES.map((p) => JSON.stringify(p)).join(", ")}; got ${JSON.stringify(stopEarly)}.`);
  const { limits, ruleContext } = options;
  const judging = (progress: AnswerProgress) => ({ limits, context: typeof ruleContext === "function" ? progress.ruleContext : ruleContext });
  const tool = answerToolName(spec);
  const definition = answerTool(spec, tool);
  const fingerprint = fingerprintSpec(spec);
  const fresh = (): AnswerProgress => ({
    attempts: 0,
    limit: maxAttempts,
    toolTurns: 0,
    next: null,
    ...(typeof ruleContext === "function" ? { ruleContext: ruleContextFor(ruleContext, getConfig()?.context) } : {}),
  });
  /** Out of attempts or tool turns: the failure ends the run, or waits for a person. */
  const failed = (outcome: Extract<ResponseOutcome<T>, { success: false }>, progress: AnswerProgress) =>
    onFailure === "interrupt"
      ? { responseOutcome: { ...outcome, stopReason: "awaiting_review" as const }, _answerProgress: { ...progress, next: "review" as const } }
      : { responseOutcome: outcome, _answerProgress: { ...progress, next: "end" as const } };

  /** A rejected answer: its errors to the model and another try, or, out of attempts, the failure. */
  const rejectAttempt = (
    progress: AnswerProgress,
    response: AIMessage,
    turn: { kind: string; calls?: ToolCall[] },
    shown: string,
    errors: string[],
    messages: readonly BaseMessage[],
  ) => {
    const attempts = progress.attempts + 1;
    const last = attempts >= progress.limit;
    // The attempt's number within the current budget (a person's new request at the review grants a fresh one).
    const attempt = attempts - (progress.limit - maxAttempts);
    const rejected = answerRejectedText(tool, errors, attempt, maxAttempts);
    // Every answer gets its verdict in the conversation: each answer call its result; an answer with no call to answer,
    // a user turn (the validation graph's retry prompt, echoing the answer as recorded, bounded, as the graph does).
    const feedback: BaseMessage[] =
      turn.kind === "tool" && turn.calls !== undefined && turn.calls.length > 0
        ? turn.calls.map((call) => resultOf(call, rejected, "error"))
        : [
            new HumanMessage({
              id: `${FEEDBACK_ID_PREFIX}${randomUUID()}`,
              content: last ? rejected : retryPrompt(lastRequest(messages), shown, errors),
            }),
          ];
    const tried = { ...progress, attempts };
    if (!last) return new Command({ update: { messages: [response, ...feedback], _answerProgress: { ...tried, next: "retry" } } });
    const failure = { success: false as const, stopReason: "max_attempts" as const, errors, lastAnswer: shown, attempts, spec: spec.name };
    return new Command({ update: { messages: [response, ...feedback], ...failed(failure, tried) } });
  };

  return createMiddleware({
    name: VALIDATED_RESPONSE,
    stateSchema: responseStateSchema<T>(),

    // Each new input starts a new answer; a resumed run continues with the one it paused on, and with the rules' context it started with.
    // LangChain gives hooks only the context its middleware declares; the run's own context is in its config.
    beforeAgent: () => ({ responseOutcome: null, _answerProgress: fresh() }),

    wrapModelCall: async (request, handler) => {
      if (request.responseFormat !== undefined) {
        throw new ConfigurationError(
          "validatedResponseMiddleware supplies the agent's answer format: remove responseFormat from createAgent and read the answer from responseOutcome (or structuredResponse).",
        );
      }
      const progress = request.state._answerProgress ?? fresh();
      // A person is answering at the review: the model is not called; the review (afterModel) takes the next answer.
      if (progress.next === "review") return new Command({ update: {} });
      const messages = request.state.messages as BaseMessage[];
      // A provider's client gets a listener for the call's generation info: when the agent streams (messages mode, the
      // LangGraph server), LangChain aggregates the streamed pieces into the message without it, and some providers'
      // stop (finish_reason, finishReason) is only there. A model given by name (createAgent's `model: "provider:name"`,
      // initChatModel) is listened to as well: the chat model that answers says its provider then. A chat model of no
      // known provider is called as it is.
      const provider = providerOf(request.model);
      const named = provider === undefined && isNamedModel(request.model);
      const info = (provider !== undefined || named) && Runnable.isRunnable(request.model) ? new GenerationInfoListener() : undefined;
      // The answer's arguments are read as they arrive (the partial checks, progress on the custom stream, the stop policy).
      const config = getConfig();
      const watch = new AttemptWatch({
        spec,
        attempt: progress.attempts + 1,
        policy: stopEarly,
        publish: config?.writer,
        limits,
        context: judging(progress).context,
        exact: true,
      });
      const stop = new AbortController();
      const streamed = options.streamAnswer ?? streamsTokens(config);
      const reader = streamed && Runnable.isRunnable(request.model) ? new AnswerStreamReader(watch, tool, stop) : undefined;
      const listeners = [info, reader].filter((listener) => listener !== undefined);
      const model = listeners.length === 0 ? request.model : listenedTo(request.model as Runnable, listeners, reader ? stop.signal : undefined);
      // The call and its verdict on an OpenTelemetry span (../telemetry/open-telemetry.ts), under the caller's active span.
      const trace = await AnswerTrace.start({ spec: spec.name, fingerprint, attempt: progress.attempts + 1 });
      let raw: AIMessage;
      try {
        raw = await trace.call(() => handler({ ...request, model, tools: [...request.tools, definition], toolChoice: request.toolChoice ?? "required" }));
      } catch (error) {
        // Only the stop policy's own abort is an attempt stopped early; any other failure is the call's.
        if (!stop.signal.aborted || config?.signal?.aborted) {
          if (reader) watch.failed(error);
          trace.fail(error);
          throw error;
        }
        raw = new AIMessage({ content: "" });
      }
      const answered = (facts: AnswerFacts = {}): AnswerFacts => ({
        model: info?.model ?? modelNameOf(request.model),
        provider: provider ?? info?.provider,
        inputTokens: raw.usage_metadata?.input_tokens,
        outputTokens: raw.usage_metadata?.output_tokens,
        ...facts,
      });
      const attempts = progress.attempts + 1;
      const last = attempts >= progress.limit;
      const stopped = reader ? watch.finish() : undefined;
      if (stopped !== undefined && stop.signal.aborted) {
        // The answer was stopped early: an attempt whose errors are the certain ones found, and why it was stopped.
        const errors = stoppedAttemptErrors(stopped);
        const stopReason = last ? "max_attempts" : undefined;
        trace.endVerdict(answered({ stoppedEarly: stopped.reason, mode: "tool" }), { valid: false, errors, errorClass: "stopped_early", stopReason, attempts });
        return rejectAttempt(progress, new AIMessage({ content: "" }), { kind: "text" }, bound(reader?.text ?? "", MAX_ECHOED_OUTPUT_CHARS), errors, messages);
      }
      const response = withDistinctToolCallIds(raw, messages);
      const turn = readTurn(response, tool, toolNames(request.tools));
      if (turn.kind === "work") {
        const toolTurns = progress.toolTurns + 1;
        trace.endTurn(answered(), toolTurns > maxToolTurns ? { stopReason: "no_answer", attempts: progress.attempts } : undefined);
        if (toolTurns > maxToolTurns) {
          // Past the budget: the turn's calls are not run (each gets a result saying so) and the answer ends without one.
          const text = noAnswerText(maxToolTurns);
          const results = (response.tool_calls ?? []).map((call) => resultOf(call, text, "error"));
          const failure = {
            success: false as const,
            stopReason: "no_answer" as const,
            errors: [text],
            lastAnswer: "",
            attempts: progress.attempts,
            spec: spec.name,
          };
          return new Command({ update: { messages: [response, ...results], ...failed(failure, progress) } });
        }
        const setAside = turn.setAside.map((call) => resultOf(call, answerSetAsideText(tool), "error"));
        return new Command({ update: { messages: [response, ...setAside], _answerProgress: { ...progress, toolTurns } } });
      }

      const judged = await judgeAnswer(spec, turn, judging(progress));
      // Only an answer the provider finished can be valid (the same stop table as every model call): a cut, a withheld
      // answer, another stop or none at all from a provider's client is an attempt whose one error says so.
      const end = answerEnd(raw, provider ?? info?.provider, info?.generationInfo, { unknownProvider: named ? "named" : "own" });
      const { verdict, shown } =
        end.kind === "finished"
          ? judged
          : {
              shown: judged.shown,
              verdict: {
                valid: false as const,
                problemCount: 1,
                errors: [end.kind === "cut" ? truncatedAnswerError(end.said) : unfinishedAnswerError(end.said)],
              },
            };
      // The verdict on the attempt's span, counted: a refused answer by class, the answer's end with its attempts.
      trace.endVerdict(answered({ mode: turn.kind === "text" ? "text" : "tool", finishReasons: end.kind === "finished" ? undefined : [end.said] }), {
        valid: verdict.valid,
        errors: verdict.errors,
        errorClass: end.kind === "cut" ? "truncated" : end.kind !== "finished" ? "unfinished" : "spec",
        repairs: verdict.repairs?.length,
        stopReason: verdict.valid ? "valid" : last ? "max_attempts" : undefined,
        attempts,
      });
      if (verdict.valid) {
        const outcome: ResponseOutcome<T> = {
          success: true,
          stopReason: "valid",
          value: verdict.value as T,
          by: "model",
          errors: [],
          attempts,
          spec: spec.name,
        };
        const results = turn.kind === "tool" ? turn.calls.map((call) => resultOf(call, answerAcceptedText(verdict.value), "success")) : [];
        return new Command({
          update: {
            messages: [response, ...results],
            structuredResponse: verdict.value,
            responseOutcome: outcome,
            _answerProgress: { ...progress, attempts, next: "end" },
          },
        });
      }

      return rejectAttempt(progress, response, turn, shown, verdict.errors, messages);
    },

    afterModel: {
      canJumpTo: ["model", "end"],
      hook: async (state) => {
        const progress = state._answerProgress;
        if (!progress?.next) return undefined;
        const settled = { ...progress, next: null };
        if (progress.next === "retry") return { _answerProgress: settled, jumpTo: "model" };
        const outcome = state.responseOutcome;
        if (progress.next === "end" || outcome?.stopReason !== "awaiting_review") {
          verdictOnAgentRun(outcome);
          return { _answerProgress: settled, jumpTo: "end" };
        }
        // One answer per step: a refused one loops back through the model step (which does not call the model while a review is open) to this hook.
        const result = await reviewStep(spec, outcome, lastRequest(state.messages), judging(progress));
        await traceReviewDecision(spec.name, result);
        if (result.kind === "again") return { responseOutcome: result.outcome, jumpTo: "model" };
        if (result.kind === "request") {
          return {
            messages: [new HumanMessage(result.request)],
            responseOutcome: null,
            _answerProgress: { ...settled, limit: progress.attempts + maxAttempts, toolTurns: 0 },
            jumpTo: "model",
          };
        }
        // A spec's schema describes an object (checked above), so an accepted value is one.
        const accepted = result.kind === "accepted" ? { structuredResponse: result.outcome.value as Record<string, unknown> } : {};
        verdictOnAgentRun(result.outcome);
        return { ...accepted, responseOutcome: result.outcome, _answerProgress: settled, jumpTo: "end" };
      },
    },
  });
}

/** What a person decided at the review, as the validation graph's review reports it: counted, and a span under the caller's. */
async function traceReviewDecision(spec: string, result: { kind: "accepted" | "rejected" | "request" | "again" }): Promise<void> {
  const otel = await openTelemetry();
  if (otel === undefined) return;
  const decision = { accepted: "accepted", rejected: "rejected", request: "new_request", again: "refused_value" }[result.kind];
  recordMetric(otel, "reviews", 1, { spec, decision });
  const stopReason = result.kind === "accepted" ? "valid" : result.kind === "rejected" ? "rejected" : undefined;
  endSpan(
    otel,
    startSpan(otel, "review", { attributes: { "trustworthy.decision": decision, "trustworthy.spec.name": spec } }),
    defined({ "trustworthy.stop_reason": stopReason }),
  );
}

/**
 * The answer's verdict on the agent's LangSmith run, when the run is traced there (markRunVerdict: metadata and
 * tags on the agent graph's run, the parent of this hook's node). An answer still waiting for a person has none.
 */
function verdictOnAgentRun(outcome: ResponseOutcome | null | undefined): void {
  if (outcome === null || outcome === undefined || outcome.stopReason === "awaiting_review") return;
  let config: ReturnType<typeof getConfig> | undefined;
  try {
    config = getConfig();
  } catch {
    // Not inside a graph's step (a hook called on its own): there is no run to mark.
    return;
  }
  markRunVerdict(config, { valid: outcome.success, stopReason: outcome.stopReason, attempts: outcome.attempts, spec: outcome.spec });
}

/**
 * Whether the agent's model was given by name: LangChain's configurable model (what createAgent makes of
 * `model: "provider:name"`, and what initChatModel returns), bare or bound. Its provider is known only once
 * the chat model it builds answers.
 */
function isNamedModel(model: unknown): boolean {
  let current = model as { bound?: unknown } | null;
  for (let depth = 0; depth < 10 && current !== null && typeof current === "object"; depth++) {
    if (current instanceof ConfigurableModel) return true;
    current = current.bound as typeof current;
  }
  return false;
}

/** The names of the agent's tools: LangChain tools, and tools given in a provider's format. */
function toolNames(tools: readonly unknown[]): Set<string> {
  const names = new Set<string>();
  for (const t of tools as Array<{ name?: unknown; function?: { name?: unknown } }>) {
    const name = t?.name ?? t?.function?.name;
    if (typeof name === "string") names.add(name);
  }
  return names;
}

/** The result of an answer call, paired with the call by its id (ids are made distinct first). */
function resultOf(call: ToolCall, content: string, status: "success" | "error"): ToolMessage {
  return new ToolMessage({ content, status, name: call.name, tool_call_id: call.id ?? "" });
}

/** The request the answer is for: the last user turn that is not one of this middleware's retry prompts (bounded). */
function lastRequest(messages: readonly BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.getType() === "human" && !String(m.id ?? "").startsWith(FEEDBACK_ID_PREFIX)) return bound(m.text, MAX_ECHOED_OUTPUT_CHARS);
  }
  return "";
}

/**
 * The model, with a listener on its calls: a binding (`withConfig` of a provider's chat model builds
 * a new model whose options do not carry listeners), and a binding's own config kept. createAgent binds the
 * tools to the chat model inside it.
 */
function listenedTo(model: Runnable, listeners: BaseCallbackHandler[], signal?: AbortSignal): Runnable {
  const extra = { callbacks: listeners, ...(signal ? { signal } : {}) };
  if (RunnableBinding.isRunnableBinding(model)) {
    return new RunnableBinding({
      bound: model.bound,
      kwargs: model.kwargs,
      config: mergeConfigs(model.config, extra),
      configFactories: model.configFactories,
    });
  }
  return new RunnableBinding({ bound: model, kwargs: {}, config: extra });
}

/**
 * Keeps what the model call (its last chat model run) reported of its end: the generation info LangChain
 * hands its listeners at the call's end (the streamed pieces' info merged), and, when the call streams
 * LangChain's events (LangGraph's v3 event stream), the provider's metadata on its last event. Awaited,
 * so it is read before the call returns.
 */
class GenerationInfoListener extends BaseCallbackHandler {
  name = "GenerationInfoListener";
  generationInfo: Record<string, unknown> | undefined;
  /** The provider of the chat model that answered, as its client names itself to callbacks (`ls_provider`). */
  provider: ModelProvider | undefined;
  /** The model name the chat model that answered gave its callbacks (`ls_model_name`). */
  model: string | undefined;
  #run: string | undefined;

  constructor() {
    super({ _awaitHandler: true });
  }

  // A call made again (a retry inside the handler) starts afresh: the answer returned is the last call's.
  override handleChatModelStart(
    _model: unknown,
    _messages: unknown,
    runId: string,
    _parentRunId?: string,
    _extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): void {
    this.#run = runId;
    this.generationInfo = undefined;
    this.provider = providerOfTrace(metadata?.ls_provider);
    this.model = typeof metadata?.ls_model_name === "string" ? metadata.ls_model_name : undefined;
  }

  override handleChatModelStreamEvent(event: ChatModelStreamEvent, runId: string): void {
    if (runId === this.#run && event.event === "message-finish" && event.responseMetadata !== undefined) {
      this.generationInfo = { ...this.generationInfo, ...event.responseMetadata };
    }
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    if (runId === this.#run) this.generationInfo = { ...output.generations[0]?.[0]?.generationInfo, ...this.generationInfo };
  }
}
