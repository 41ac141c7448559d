/**
 * Consumer fixture: the project's own LangChain objects used with the
 * installed package, as an app that already has @langchain/core and
 * @langchain/langgraph does. The package must import the project's copies of
 * both, not copies of its own. A chat model class of the project's own (a
 * BaseChatModel subclass) and a FakeListChatModel drive the validation graph,
 * and a run paused for review, checkpointed by the project's MemorySaver,
 * carries the answer's JSON Schema (`response_schema`, what sets the lowest
 * supported LangGraph) and ends valid when resumed. Prints one JSON line.
 */
import { createRequire } from "node:module";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { Command, MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { buildValidationGraph, builtinSpecs, defineSpec, generateValidated } from "langgraph-trustworthy-output";

const VALID = builtinSpecs.get("deployment-config").example;
const BROKEN = { ...VALID, replicas: 8, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } };

/** The project's own chat model: answers with its replies in order. */
class ReplayChatModel extends BaseChatModel {
  constructor(replies) {
    super({});
    this.replies = replies;
    this.calls = 0;
  }
  _llmType() {
    return "replay";
  }
  async _generate() {
    const text = this.replies[Math.min(this.calls++, this.replies.length - 1)];
    return { generations: [{ text, message: new AIMessage(text) }] };
  }
}

const own = new ReplayChatModel([JSON.stringify(BROKEN), JSON.stringify(VALID)]);
const ownRun = await buildValidationGraph({ model: own, spec: "deployment-config", maxAttempts: 3 }).invoke({
  request: "A deployment config for payments-api",
});

const listed = await generateValidated({
  model: new FakeListChatModel({ responses: ['{"a": 1.5}', '{"a": 2}'] }),
  spec: defineSpec({ name: "whole", description: "A whole number.", schema: z.object({ a: z.number().int() }) }),
  request: "a whole number",
  maxAttempts: 2,
});

const reviewed = buildValidationGraph({ model: new ReplayChatModel([JSON.stringify(BROKEN)]), spec: "deployment-config", checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: "review" }, context: { maxAttempts: 1, onFailure: "interrupt" } };
await reviewed.invoke({ request: "A deployment config for payments-api" }, config);
const pending = (await reviewed.getState(config)).tasks.flatMap((t) => t.interrupts).at(-1);
const resumed = await reviewed.invoke(new Command({ resume: { type: "edit", value: VALID } }), config);

// Where the package's own imports resolve to: the project's copies, or copies of its own.
const fromPackage = createRequire(import.meta.resolve("langgraph-trustworthy-output"));
const fromProject = createRequire(import.meta.url);
const sameCopy = (name) => fromPackage.resolve(`${name}/package.json`) === fromProject.resolve(`${name}/package.json`);

console.log(
  JSON.stringify({
    versions: { core: fromProject("@langchain/core/package.json").version, langgraph: fromProject("@langchain/langgraph/package.json").version },
    sameCopy: { core: sameCopy("@langchain/core"), langgraph: sameCopy("@langchain/langgraph") },
    ownModel: { success: ownRun.success, attempts: ownRun.attempts, calls: own.calls },
    fakeList: { success: listed.success, attempts: listed.attempts, value: listed.value },
    review: { responseSchema: typeof pending?.response_schema, success: resumed.success, by: resumed.history.at(-1).by },
  }),
);
