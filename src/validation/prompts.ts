/** The validation graph's system prompt: a spec's constraints and rules in words. The retry feedback is ../protocol/feedback.ts, shared with the agent middleware. */
import { describeSpec } from "../specs/describe.js";
import type { Spec } from "../specs/spec.js";

const systemPrompts = new WeakMap<Spec, string>();

/** The system prompt for a spec: its constraints and rules in words (built once per spec). */
export function generationSystemPrompt(spec: Spec): string {
  let prompt = systemPrompts.get(spec);
  if (prompt === undefined) {
    prompt = buildSystemPrompt(spec);
    systemPrompts.set(spec, prompt);
  }
  return prompt;
}

function buildSystemPrompt(spec: Spec): string {
  return [
    `You write JSON objects of this kind: ${spec.description}`,
    "Reply with exactly one JSON object and nothing else: no explanation, no code fences.",
    "Every constraint and rule below is checked by a validator; an answer that breaks any of them is rejected.",
    "",
    describeSpec(spec),
  ].join("\n");
}
