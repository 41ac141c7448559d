/** A scripted model per Reflexion role (actor, evaluator, reflector), as a model factory. */
import type { ChatModelFactory } from "../src/models.js";
import { scriptedModel, type ScriptedAnswer } from "./scripted-model.js";

export function roleModels(script: { actor?: ScriptedAnswer[]; evaluator?: ScriptedAnswer[]; reflector?: ScriptedAnswer[] }) {
  const models = {
    actor: scriptedModel(script.actor ?? []),
    evaluator: scriptedModel(script.evaluator ?? []),
    reflector: scriptedModel(script.reflector ?? []),
  };
  const factory: ChatModelFactory = (request) => models[request.role as keyof typeof models];
  return { ...models, factory };
}

/** Role models that answer up to `answers` times each, never scoring above 0.9, so every task runs all its loops; `calls()` counts their answers. */
export function endlessModels(answers: number, score = "Final score: 5") {
  let calls = 0;
  const many = (text: string) =>
    Array.from({ length: answers }, () => () => {
      calls++;
      return text;
    });
  const { factory } = roleModels({ actor: many("an answer"), evaluator: many(score), reflector: many("a lesson") });
  return { factory, calls: () => calls };
}
