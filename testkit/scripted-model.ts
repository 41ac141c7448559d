/** The scripted in-process chat model that tests, benchmarks and the evaluation use (the package's own, src/simulated/scripted-model.ts), and helpers to script and read it. */
import { ScriptedChatModel, type ScriptedAnswer } from "../src/simulated/scripted-model.js";

export { aiReply, ScriptedChatModel, type ScriptedAnswer, type ScriptedChatModelOptions } from "../src/simulated/scripted-model.js";

/** A chat model that answers with the given replies in order and records every call; a further call throws. */
export function scriptedModel(answers: ScriptedAnswer[]): ScriptedChatModel {
  return new ScriptedChatModel({ answers });
}

/** The text of every message of the n-th call (0-based). */
export function promptOf(model: ScriptedChatModel, call: number): string {
  return model.calls[call].messages.map((m) => String(m.content)).join("\n---\n");
}
