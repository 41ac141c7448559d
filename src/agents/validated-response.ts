/**
 * validatedResponse: the one middleware that gives a LangChain v1 createAgent
 * a structured answer held to a spec. It supplies the answer's format itself
 * (a tool whose parameters are the spec's JSON Schema, as toolStrategy does),
 * judges every answer with the check step (schema, cross-field rules, zod),
 * gives the model every error of a rejected answer, lets it try again within
 * `maxAttempts`, and ends the run with a typed outcome in the agent's state
 * (`responseOutcome`). `structuredResponse` is only ever an accepted value.
 *
 *   model call (wrapModelCall): the model answers → judged → accepted, or rejected with its errors
 *   after the model (afterModel): rejected → jump back to the model; out of attempts → end, or pause for a person
 */
import { HumanMessage, ToolMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import { Command, getConfig } from "@langchain/langgraph";
import { createMiddleware } from "langchain";
import { randomUUID } from "node:crypto";
import { ConfigurationError, SpecError } from "../errors.js";
import { bound } from "../shared/text.js";
import type { CheckLimits } from "../specs/check.js";
import { resolveSpec, type SpecRef } from "../specs/registry.js";
import type { Spec } from "../specs/spec.js";
import { MAX_ECHOED_OUTPUT_CHARS, retryPrompt } from "../validation/prompts.js";
import { answerTool, answerToolName, judgeAnswer, readTurn } from "./answer.js";
import { attemptsOption, ruleContextFor, type RuleContextOption } from "./options.js";
import { responseStateSchema, type AnswerProgress, type ResponseOutcome } from "./outcome.js";
import { answerAcceptedText, answerRejectedText, answerSetAsideText } from "./prompts.js";
import { review } from "./review.js";
import { withDistinctToolCallIds } from "./tool-call-ids.js";

export interface ValidatedResponseOptions<T> {
  /** What a valid answer is: a built-in spec name, an inline JSON spec, or a Spec from defineSpec (a zod spec types the answer). Its schema must describe an object. */
  spec: Spec<T> | SpecRef;
  /** Answers the model may give in a run before the answer fails (1-10, default 3). */
  maxAttempts?: number;
  /** When the model runs out of attempts: end the run with the failure (default), or pause for a person (needs a checkpointer). */
  onFailure?: "end" | "interrupt";
  /** Size, depth and message limits of the check step; the defaults are the validation graph's. */
  limits?: Partial<CheckLimits>;
  /** Facts the spec's code rules read: a value, or computed from the run, e.g. `(run) => run.context`. */
  ruleContext?: RuleContextOption;
}

export const DEFAULT_ANSWER_ATTEMPTS = 3;
/** The middleware's name in the agent (a name may appear once per agent). */
export const VALIDATED_RESPONSE = "validatedResponse";
/** Marks the retry prompts this middleware writes as a user turn (a text answer has no tool call to answer). */
const FEEDBACK_ID_PREFIX = "validated-response-feedback-";

/**
 * Middleware that holds a createAgent's structured answer to a spec; the outcome is `responseOutcome` in the agent's state.
 *
 * @example
 * ```ts
 * import { ChatOpenAI } from "@langchain/openai";
 * import { createAgent } from "langchain";
 * import { validatedResponse } from "langgraph-trustworthy-output/agents";
 *
 * const agent = createAgent({ model: new ChatOpenAI({ model: "gpt-4o-mini" }), tools: [], middleware: [validatedResponse({ spec: "deployment-config" })] });
 * const { responseOutcome } = await agent.invoke({ messages: [{ role: "user", content: "Deploy payments-api with 8 replicas" }] });
 * if (responseOutcome?.success) console.log(responseOutcome.value);
 * ```
 */
export function validatedResponse<T = unknown>(options: ValidatedResponseOptions<T>) {
  const spec = resolveSpec(options.spec as SpecRef) as Spec<T>;
  if (spec.schema.type !== "object") {
    throw new SpecError(`Spec ${JSON.stringify(spec.name)} cannot be an agent's answer: the answer is given as tool arguments, a JSON object, so its schema needs "type": "object".`);
  }
  const maxAttempts = attemptsOption(options.maxAttempts, DEFAULT_ANSWER_ATTEMPTS);
  const onFailure = options.onFailure ?? "end";
  if (onFailure !== "end" && onFailure !== "interrupt") throw new ConfigurationError(`onFailure must be "end" or "interrupt"; got ${JSON.stringify(onFailure)}.`);
  const { limits, ruleContext } = options;
  const judging = (context: unknown) => ({ limits, context: ruleContextFor(ruleContext, context) });
  const tool = answerToolName(spec);
  const definition = answerTool(spec, tool);
  const fresh = (): AnswerProgress => ({ attempts: 0, limit: maxAttempts, next: null });

  return createMiddleware({
    name: VALIDATED_RESPONSE,
    stateSchema: responseStateSchema<T>(),

    // Each new input starts a new answer; a resumed run continues with the one it paused on.
    beforeAgent: () => ({ responseOutcome: null, _answerProgress: fresh() }),

    wrapModelCall: async (request, handler) => {
      if (request.responseFormat !== undefined) {
        throw new ConfigurationError("validatedResponse supplies the agent's answer format: remove responseFormat from createAgent and read the answer from responseOutcome (or structuredResponse).");
      }
      const progress = request.state._answerProgress ?? fresh();
      const messages = request.state.messages as BaseMessage[];
      const raw = await handler({ ...request, tools: [...request.tools, definition], toolChoice: request.toolChoice ?? "required" });
      const response = withDistinctToolCallIds(raw, messages);
      const turn = readTurn(response, tool, toolNames(request.tools));
      if (turn.kind === "work") {
        if (turn.setAside.length === 0) return response;
        return new Command({ update: { messages: [response, ...turn.setAside.map((call) => resultOf(call, answerSetAsideText(tool), "error"))] } });
      }

      const { verdict, shown } = await judgeAnswer(spec, turn, judging(request.runtime.context));
      const attempts = progress.attempts + 1;
      if (verdict.valid) {
        const outcome: ResponseOutcome<T> = { success: true, stopReason: "valid", value: verdict.value as T, by: "model", errors: [], attempts, spec: spec.name };
        const results = turn.kind === "tool" ? turn.calls.map((call) => resultOf(call, answerAcceptedText(verdict.value), "success")) : [];
        return new Command({
          update: { messages: [response, ...results], structuredResponse: verdict.value, responseOutcome: outcome, _answerProgress: { ...progress, attempts, next: "end" } },
        });
      }

      const last = attempts >= progress.limit;
      // The attempt's number within the current budget (a person's new request at the review grants a fresh one).
      const attempt = attempts - (progress.limit - maxAttempts);
      // A text answer has no call to answer: the validation graph's retry prompt, echoing the answer as recorded (bounded), as the graph does.
      const feedback: BaseMessage[] =
        turn.kind === "tool"
          ? turn.calls.map((call) => resultOf(call, answerRejectedText(tool, verdict.errors, attempt, maxAttempts), "error"))
          : last
            ? []
            : [new HumanMessage({ id: `${FEEDBACK_ID_PREFIX}${randomUUID()}`, content: retryPrompt(lastRequest(messages), shown, verdict.errors) })];
      if (!last) return new Command({ update: { messages: [response, ...feedback], _answerProgress: { ...progress, attempts, next: "retry" } } });
      const failure: ResponseOutcome<T> = { success: false, stopReason: "max_attempts", errors: verdict.errors, lastAnswer: shown, attempts, spec: spec.name };
      return new Command({
        update: { messages: [response, ...feedback], responseOutcome: failure, _answerProgress: { ...progress, attempts, next: onFailure === "interrupt" ? "review" : "end" } },
      });
    },

    afterModel: {
      canJumpTo: ["model", "end"],
      hook: async (state) => {
        const progress = state._answerProgress;
        if (!progress?.next) return undefined;
        const settled = { ...progress, next: null };
        if (progress.next === "retry") return { _answerProgress: settled, jumpTo: "model" };
        const outcome = state.responseOutcome;
        if (progress.next === "end" || outcome === null || outcome.success) return { _answerProgress: settled, jumpTo: "end" };
        // LangChain gives these hooks only the context its middleware declares; the run's own context is in its config.
        const result = await review(spec, outcome, lastRequest(state.messages), judging(getConfig()?.context));
        if (result.kind === "request") {
          return {
            messages: [new HumanMessage(result.request)],
            responseOutcome: null,
            _answerProgress: { attempts: progress.attempts, limit: progress.attempts + maxAttempts, next: null },
            jumpTo: "model",
          };
        }
        // A spec's schema describes an object (checked above), so an accepted value is one.
        const accepted = result.kind === "accepted" ? { structuredResponse: result.outcome.value as Record<string, unknown> } : {};
        return { ...accepted, responseOutcome: result.outcome, _answerProgress: settled, jumpTo: "end" };
      },
    },
  });
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
