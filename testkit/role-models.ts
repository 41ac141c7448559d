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
