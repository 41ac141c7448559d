/**
 * validatedResponseMiddleware with `onFailure: "interrupt"` in a createAgent compiled
 * with a checkpointer (MemorySaver): out of attempts, the run pauses with the
 * validation graph's review payload and form, and a person's answer is held
 * to the same spec with the exact reader. Resuming never calls the model again
 * unless the person sends a new request.
 */
import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { validatedResponseMiddleware } from "../../src/agents/index.js";
import { noAnswerText } from "../../src/agents/prompts.js";
import { checkText, checkValue } from "../../src/specs/check.js";
import { defineSpec } from "../../src/specs/spec.js";
import { readReviewAnswer, REVIEW_ANSWERS, reviewAnswerSchema } from "../../src/protocol/review.js";
import { answerTurn, callTurn, deploymentSpec, REQUEST, scriptedTurns, structuredResponseOf, threeDefects, valid, quotaSpec } from "./agent.support.js";

async function pausedAgent(extraTurns: Array<() => ReturnType<typeof answerTurn>> = []) {
  const model = scriptedTurns([() => answerTurn(threeDefects), ...extraTurns]);
  const agent = createAgent({
    model,
    tools: [],
    middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 1, onFailure: "interrupt" })],
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: `agent-review-${Math.random()}` } };
  const out = await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, config);
  return { agent, config, model, out };
}

type Paused = Awaited<ReturnType<typeof pausedAgent>>;

async function shown({ agent, config }: Paused) {
  const state = await agent.graph.getState(config);
  return state.tasks.flatMap((t) => t.interrupts).at(-1) as { value: Record<string, any>; response_schema?: unknown } | undefined;
}

const errorsOf = async (value: unknown) => (await checkValue(deploymentSpec, value)).errors;
const resume = (paused: Paused, answer: unknown) => paused.agent.invoke(new Command({ resume: answer }), paused.config);

describe("validatedResponseMiddleware: a person finishes what the model could not (onFailure: interrupt)", () => {
  it("pauses with the request, the last answer, its exact errors and the validation graph's answers and form; the outcome says it awaits the review meanwhile", async () => {
    const paused = await pausedAgent();
    const interrupt = await shown(paused);
    const errors = (await checkValue(deploymentSpec, threeDefects)).errors;
    expect(interrupt?.value).toEqual({
      kind: "review",
      request: REQUEST,
      spec: "deployment-config",
      output: JSON.stringify(threeDefects),
      errors,
      attempts: 1,
      answers: REVIEW_ANSWERS,
    });
    expect(interrupt?.response_schema).toEqual(reviewAnswerSchema(deploymentSpec));
    // The run waits for a person: the outcome says so, and is no final failure.
    expect(paused.out.responseOutcome).toEqual({
      success: false,
      stopReason: "awaiting_review",
      errors,
      lastAnswer: JSON.stringify(threeDefects),
      attempts: 1,
      spec: "deployment-config",
    });
    expect(structuredResponseOf(paused.out)).toBeUndefined();
  });

  it("reads a person's text exactly: prose around the JSON is refused with the reader's error and asked again; exact JSON ends the run as the person's", async () => {
    const paused = await pausedAgent();
    const prose = `Use this: ${JSON.stringify(valid)}`;
    await resume(paused, { type: "edit", value: prose });
    const again = await shown(paused);
    expect(again?.value.errors).toEqual((await checkText(deploymentSpec, prose, "exact", { what: "the answer" })).errors);
    expect(again?.value.output).toBe(prose);

    const out = await resume(paused, { type: "edit", value: JSON.stringify(valid) });
    expect(out.responseOutcome).toEqual({ success: true, stopReason: "valid", value: valid, by: "human", errors: [], attempts: 1, spec: "deployment-config" });
    expect(structuredResponseOf(out)).toEqual(valid);
    expect(await shown(paused)).toBeUndefined();
    expect(paused.model.callCount).toBe(1);
  });

  it("holds a person's object to the spec too: an invalid one is shown again with its errors", async () => {
    const paused = await pausedAgent();
    await resume(paused, { type: "edit", value: threeDefects });
    expect((await shown(paused))?.value.errors).toEqual((await checkValue(deploymentSpec, threeDefects)).errors);
    const out = await resume(paused, { type: "edit", value: valid });
    expect(out.responseOutcome).toMatchObject({ success: true, by: "human" });
  });

  it("an answer the review does not understand is asked again, saying why", async () => {
    const paused = await pausedAgent();
    await resume(paused, { replicas: 3 });
    const decision = readReviewAnswer({ replicas: 3 });
    expect((await shown(paused))?.value.errors).toEqual([decision.kind === "invalid" ? decision.problem : ""]);
  });

  it("a rejection ends the run with stop reason rejected and the reason", async () => {
    const paused = await pausedAgent();
    const out = await resume(paused, { type: "reject", message: "not needed" });
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "rejected" });
    expect(out.responseOutcome?.errors.at(-1)).toBe("rejected at review: not needed");
    expect(structuredResponseOf(out)).toBeUndefined();
  });

  it("a new request sends the model back with a fresh attempt budget", async () => {
    const paused = await pausedAgent([() => answerTurn(valid, "second")]);
    const out = await resume(paused, { type: "retry", request: "Use 1 CPU and a /healthz path." });
    expect(paused.model.callCount).toBe(2);
    expect(paused.model.calls[1].messages.at(-1)?.content).toBe("Use 1 CPU and a /healthz path.");
    expect(out.responseOutcome).toMatchObject({ success: true, by: "model", attempts: 2 });
  });

  it("after a text answer (no tool call to answer) the review loops too: a refused answer is asked again, then a valid one ends the run", async () => {
    const model = scriptedTurns([() => callTurn([], "I cannot decide on a configuration.")]);
    const agent = createAgent({
      model,
      tools: [],
      middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 1, onFailure: "interrupt" })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: `agent-review-text-${Math.random()}` } };
    const first = await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, config);
    // The refused text answer has its verdict as a user turn, as an answer call has its result.
    expect(first.messages.map((m) => m.getType())).toEqual(["human", "ai", "human"]);
    const paused = { agent, config, model, out: first };
    const refused = await resume(paused, { type: "edit", value: threeDefects });
    expect(refused.responseOutcome).toMatchObject({ stopReason: "awaiting_review", errors: await errorsOf(threeDefects) });
    expect((await shown(paused))?.value.errors).toEqual(await errorsOf(threeDefects));
    const out = await resume(paused, { type: "edit", value: valid });
    expect(out.responseOutcome).toMatchObject({ success: true, by: "human", value: valid });
    expect(model.callCount).toBe(1);
  });

  it("a model that only calls other tools past maxToolTurns pauses for a person too; the person's answer ends it", async () => {
    const lookup = tool(() => "8 replicas", { name: "lookup", description: "Look up a service.", schema: z.object({ service: z.string() }) });
    const model = scriptedTurns([() => callTurn([{ name: "lookup", args: { service: "payments-api" }, id: "l0" }])]);
    const agent = createAgent({
      model,
      tools: [lookup],
      middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxToolTurns: 0, onFailure: "interrupt" })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: `agent-review-tools-${Math.random()}` } };
    const first = await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, config);
    expect(first.responseOutcome).toEqual({
      success: false,
      stopReason: "awaiting_review",
      errors: [noAnswerText(0)],
      lastAnswer: "",
      attempts: 0,
      spec: "deployment-config",
    });
    const out = await resume({ agent, config, model, out: first }, { type: "edit", value: valid });
    expect(out.responseOutcome).toMatchObject({ success: true, by: "human", value: valid, attempts: 0 });
  });

  it("answered again and again, the review keeps only the last refused answer: the thread's state does not grow", async () => {
    const paused = await pausedAgent();
    await resume(paused, { type: "edit", value: "not json" });
    const size = JSON.stringify((await paused.agent.graph.getState(paused.config)).values).length;
    for (let i = 0; i < 12; i++) await resume(paused, { type: "edit", value: "not json" });
    const after = await paused.agent.graph.getState(paused.config);
    expect(JSON.stringify(after.values).length).toBe(size);
    expect(after.values.responseOutcome).toMatchObject({ stopReason: "awaiting_review", lastAnswer: "not json" });
    const out = await resume(paused, { type: "edit", value: valid });
    expect(out.responseOutcome).toMatchObject({ success: true, by: "human", value: valid });
  });
});

/** The checkpoint store's record of `undefined`: a plain object a person (or a model) can write as well. */
const UNDEFINED_RECORD = { lc: 2, type: "undefined" };

/** A ticket spec that allows no extra fields: `note`, when given, must be a string. */
const ticketSpec = {
  name: "ticket",
  description: "A support ticket.",
  schema: { type: "object", required: ["title"], additionalProperties: false, properties: { title: { type: "string" }, note: { type: "string" } } },
};

/** An agent paused at the review of a ticket answer the model got wrong (`maxAttempts: 1`). */
async function pausedTicketAgent(options: { ruleContext?: (run: { context: unknown }) => unknown; spec?: object; context?: unknown; first?: unknown } = {}) {
  const spec = options.spec ?? ticketSpec;
  const name = (spec as { name: string }).name;
  const model = scriptedTurns([() => callTurn([{ name: `extract-${name}`, args: options.first ?? { title: 7 } }])]);
  const agent = createAgent({
    model,
    tools: [],
    middleware: [validatedResponseMiddleware({ spec: spec as never, maxAttempts: 1, onFailure: "interrupt", ruleContext: options.ruleContext })],
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: `agent-review-${Math.random()}` } };
  const out = await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, { ...config, context: options.context as never });
  return { agent, config, model, out };
}

describe("validatedResponseMiddleware: each review answer is judged once, as given, and never replayed", () => {
  it("a refused answer whose field is the checkpoint's undefined record, then a rejection: the run ends rejected", async () => {
    const paused = await pausedTicketAgent();
    const refused = await resume(paused, { type: "edit", value: { title: "Printer jam", note: UNDEFINED_RECORD } });
    expect(refused.responseOutcome).toMatchObject({ success: false, stopReason: "awaiting_review" });
    const out = await resume(paused, { type: "reject", message: "not a ticket" });
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "rejected" });
    expect(structuredResponseOf(out)).toBeUndefined();
    expect((await paused.agent.graph.getState(paused.config)).values.responseOutcome).toMatchObject({ stopReason: "rejected" });
  });

  it("a refused answer, then a valid one: the valid one is the result", async () => {
    const paused = await pausedTicketAgent();
    await resume(paused, { type: "edit", value: { title: "Printer jam", note: UNDEFINED_RECORD } });
    const out = await resume(paused, { type: "edit", value: { title: "Scanner offline" } });
    expect(out.responseOutcome).toMatchObject({ success: true, by: "human", value: { title: "Scanner offline" } });
    expect(structuredResponseOf(out)).toEqual({ title: "Scanner offline" });
  });

  it("a value holding a record the checkpoint would rewrite is refused, saying where, never accepted as another value", async () => {
    const open = { name: "note", description: "A note.", schema: { type: "object", required: ["title"], properties: { title: { type: "string" } } } };
    const paused = await pausedTicketAgent({ spec: open });
    const out = await resume(paused, { type: "edit", value: { title: "Printer jam", extra: UNDEFINED_RECORD } });
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "awaiting_review" });
    expect(out.responseOutcome?.errors.join("\n")).toMatch(/^extra has the fields "lc" and "type" of a LangGraph checkpoint marker/m);
    const shownAgain = await shown(paused);
    expect(shownAgain?.value.errors).toEqual(out.responseOutcome?.errors);
    const accepted = await resume(paused, { type: "edit", value: { title: "Printer jam", extra: { lc: 3, kind: "fine" } } });
    expect(accepted.responseOutcome).toMatchObject({ success: true, value: { title: "Printer jam", extra: { lc: 3, kind: "fine" } } });
    // What the thread keeps is the very value judged.
    expect((await paused.agent.graph.getState(paused.config)).values.responseOutcome).toEqual(accepted.responseOutcome);
  });

  it("judges each answer once: the spec's rule runs once per answer, however many answers came before", async () => {
    let runs = 0;
    const counted = defineSpec({
      name: "counted",
      description: "A title that is not 'draft'.",
      schema: { type: "object", required: ["title"], properties: { title: { type: "string" } } },
      rules: [
        {
          id: "not-draft",
          description: "title must not be draft.",
          inputs: { title: "string" },
          check: (v: { title: string }) => (runs++, v.title === "draft" ? "title is draft" : null),
        },
      ],
    });
    const paused = await pausedTicketAgent({ spec: counted, first: { title: "draft" } });
    expect(runs).toBe(1);
    for (let i = 0; i < 3; i++) await resume(paused, { type: "edit", value: { title: "draft" } });
    const out = await resume(paused, { type: "edit", value: { title: "final" } });
    expect(out.responseOutcome).toMatchObject({ success: true, value: { title: "final" } });
    expect(runs).toBe(5);
  });

  it("the spec's rules read the context the run started with, not the resume call's", async () => {
    const quota = quotaSpec();
    const paused = await pausedTicketAgent({ spec: quota, first: valid, context: { maxReplicas: 5 }, ruleContext: (run) => run.context });
    expect(paused.out.responseOutcome?.errors).toEqual(["replicas is 8; the team's quota is 5"]);
    const out = await paused.agent.invoke(new Command({ resume: { type: "edit", value: valid } }), { ...paused.config, context: { maxReplicas: 100 } });
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "awaiting_review", errors: ["replicas is 8; the team's quota is 5"] });
    const fixed = await paused.agent.invoke(new Command({ resume: { type: "edit", value: { ...valid, replicas: 5 } } }), paused.config);
    expect(fixed.responseOutcome).toMatchObject({ success: true, value: { replicas: 5 } });
  });
});
