/** Prompts of the Reflexion graph: actor, evaluator, reflector and refine. */
import { bound } from "../shared/text.js";
import type { StepRecord } from "./memory.js";

/** Default system prompt for the actor. */
export const REFLEXION_PROMPT = [
  "You are a capable assistant that gets better with every attempt.",
  "Answer the task completely and accurately, with clear structure.",
  "When lessons from earlier attempts are given, apply them.",
].join(" ");

export const EVALUATOR_PROMPT = [
  "You are a strict, fair evaluator of answers.",
  "Judge the response to the task on accuracy, completeness, clarity and relevance.",
  "Name concrete strengths and concrete weaknesses.",
  "If a validator reports errors, the response is not acceptable until they are fixed.",
  'End with one line of the form "Final score: N/10", where N is a number from 0 to 10.',
].join(" ");

export const REFLECTOR_PROMPT = [
  "You reflect on an attempt at a task so that the next attempt is better.",
  "From the task, the response and its evaluation, say what went wrong or could be better, why, and exactly what to do differently next time.",
  "Be specific and brief; write lessons that would also help on similar tasks.",
].join(" ");

/** Longest text of any one part echoed into a prompt. */
const MAX_PART_CHARS = 8_000;

function validatorSection(errors: readonly string[] | null): string {
  if (errors === null) return "";
  if (errors.length === 0) return "\n\nValidator: the response passes the deterministic validator.";
  return `\n\nValidator errors (deterministic, certainly correct):\n${errors.map((e) => `- ${e}`).join("\n")}`;
}

export function actorPrompt(task: string, memories: readonly StepRecord[]): string {
  const lessons = memories.filter((m) => m.reflection.trim().length > 0);
  if (lessons.length === 0) return `Task:\n${task}`;
  return [`Task:\n${task}`, `Lessons from earlier attempts at similar tasks:\n${lessons.map((m) => `- ${bound(m.reflection, 1_000)}`).join("\n")}`].join(
    "\n\n",
  );
}

export function evaluatorPrompt(task: string, response: string, validationErrors: readonly string[] | null): string {
  return `Task:\n${task}\n\nResponse:\n${bound(response, MAX_PART_CHARS)}${validatorSection(validationErrors)}`;
}

export function reflectorPrompt(task: string, response: string, evaluation: string, validationErrors: readonly string[] | null): string {
  return [
    `Task:\n${task}`,
    `Response:\n${bound(response, MAX_PART_CHARS)}`,
    `Evaluation:\n${bound(evaluation, MAX_PART_CHARS)}${validatorSection(validationErrors)}`,
  ].join("\n\n");
}

export function refinePrompt(task: string, original: string, evaluation: string, reflection: string, validationErrors: readonly string[] | null): string {
  return [
    `Task:\n${task}`,
    `Your previous response:\n${bound(original, MAX_PART_CHARS)}`,
    `Its evaluation:\n${bound(evaluation, MAX_PART_CHARS)}${validatorSection(validationErrors)}`,
    `Your reflection:\n${bound(reflection, MAX_PART_CHARS)}`,
    "Write an improved response to the task that addresses the evaluation and applies the reflection. Reply with the response only.",
  ].join("\n\n");
}
