/**
 * The validation loop without LangGraph: a plain async loop making the same
 * calls as the compiled graph (the same prompt functions, the same model call,
 * the same parser and validator, the same per-attempt records). The reference
 * for the graph's framework overhead.
 */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { resolveModel, type ModelSource } from "../src/models.js";
import { callModel } from "../src/providers/model-call.js";
import { addUsage, ZERO_USAGE, type TokenUsage } from "../src/shared/usage.js";
import type { Spec } from "../src/specs/spec.js";
import { generationSystemPrompt } from "../src/validation/prompts.js";
import { firstAttemptPrompt, retryPrompt } from "../src/protocol/feedback.js";
import { checkTextSync } from "../src/specs/check.js";

export interface PlainLoopResult {
  success: boolean;
  value: unknown;
  errors: string[];
  attempts: number;
  history: { attempt: number; output: string; errors: string[]; valid: boolean; usage: TokenUsage }[];
  usage: TokenUsage;
}

export async function plainValidationLoop(
  model: ModelSource,
  spec: Spec,
  request: string,
  maxAttempts: number,
  modelName = "bench-model",
): Promise<PlainLoopResult> {
  const history: PlainLoopResult["history"] = [];
  let usage: TokenUsage = { ...ZERO_USAGE };
  for (let attempt = 1; ; attempt++) {
    const chat = await resolveModel(model, { model: modelName, temperature: 0, role: "generate" });
    const previous = history.at(-1);
    const messages = [
      new SystemMessage(generationSystemPrompt(spec)),
      new HumanMessage(previous ? retryPrompt(request, previous.output, previous.errors) : firstAttemptPrompt(request)),
    ];
    const answer = await callModel(chat, messages, { node: "generate" });
    usage = addUsage(usage, answer.usage);
    const report = checkTextSync(spec, answer.text, "model");
    history.push({ attempt, output: answer.text, errors: report.errors, valid: report.valid, usage: answer.usage });
    if (report.valid || attempt >= maxAttempts) {
      return { success: report.valid, value: report.valid ? report.value : (report.parsed ?? null), errors: report.errors, attempts: attempt, history, usage };
    }
  }
}
