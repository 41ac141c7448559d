/**
 * validatedResponse with `onFailure: "interrupt"` in a createAgent compiled
 * with a checkpointer (MemorySaver): out of attempts, the run pauses with the
 * validation graph's review payload and form, and a person's answer is held
 * to the same spec with the exact reader. Resuming never calls the model again
 * unless the person sends a new request.
 */
import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { validatedResponse } from "../../src/agents/index.js";
import { MAX_REVIEW_ANSWERS } from "../../src/agents/review.js";
import { checkText, checkValue } from "../../src/specs/check.js";
import { readReviewAnswer, REVIEW_ANSWERS, reviewAnswerSchema } from "../../src/validation/nodes.js";
import { answerTurn, deploymentSpec, REQUEST, scriptedTurns, structuredResponseOf, threeDefects, valid } from "./agent.support.js";

async function pausedAgent(extraTurns: Array<() => ReturnType<typeof answerTurn>> = []) {
  const model = scriptedTurns([() => answerTurn(threeDefects), ...extraTurns]);
  const agent = createAgent({
    model,
    tools: [],
    middleware: [validatedResponse({ spec: "deployment-config", maxAttempts: 1, onFailure: "interrupt" })],
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

const resume = (paused: Paused, answer: unknown) => paused.agent.invoke(new Command({ resume: answer }), paused.config);

describe("validatedResponse: a person finishes what the model could not (onFailure: interrupt)", () => {
  it("pauses with the request, the last answer, its exact errors and the validation graph's answers and form; the failure is in the state meanwhile", async () => {
    const paused = await pausedAgent();
    const interrupt = await shown(paused);
    const errors = (await checkValue(deploymentSpec, threeDefects)).errors;
    expect(interrupt?.value).toEqual({ kind: "review", request: REQUEST, spec: "deployment-config", output: JSON.stringify(threeDefects), errors, attempts: 1, answers: REVIEW_ANSWERS });
    expect(interrupt?.response_schema).toEqual(reviewAnswerSchema(deploymentSpec));
    expect(paused.out.responseOutcome).toMatchObject({ success: false, stopReason: "max_attempts", errors });
    expect(structuredResponseOf(paused.out)).toBeUndefined();
  });

  it("reads a person's text exactly: prose around the JSON is refused with the reader's error and asked again; exact JSON ends the run as the person's", async () => {
    const paused = await pausedAgent();
    const prose = `Use this: ${JSON.stringify(valid)}`;
    await resume(paused, { value: prose });
    const again = await shown(paused);
    expect(again?.value.errors).toEqual((await checkText(deploymentSpec, prose, "exact", { what: "the answer" })).errors);
    expect(again?.value.output).toBe(prose);

    const out = await resume(paused, { value: JSON.stringify(valid) });
    expect(out.responseOutcome).toEqual({ success: true, stopReason: "valid", value: valid, by: "human", errors: [], attempts: 1, spec: "deployment-config" });
    expect(structuredResponseOf(out)).toEqual(valid);
    expect(await shown(paused)).toBeUndefined();
    expect(paused.model.callCount).toBe(1);
  });

  it("holds a person's object to the spec too: an invalid one is shown again with its errors", async () => {
    const paused = await pausedAgent();
    await resume(paused, { value: threeDefects });
    expect((await shown(paused))?.value.errors).toEqual((await checkValue(deploymentSpec, threeDefects)).errors);
    const out = await resume(paused, { value: valid });
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
    const out = await resume(paused, { reject: true, reason: "not needed" });
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "rejected" });
    expect(out.responseOutcome?.errors.at(-1)).toBe("rejected at review: not needed");
    expect(structuredResponseOf(out)).toBeUndefined();
  });

  it("a new request sends the model back with a fresh attempt budget", async () => {
    const paused = await pausedAgent([() => answerTurn(valid, "second")]);
    const out = await resume(paused, { request: "Use 1 CPU and a /healthz path." });
    expect(paused.model.callCount).toBe(2);
    expect(paused.model.calls[1].messages.at(-1)?.content).toBe("Use 1 CPU and a /healthz path.");
    expect(out.responseOutcome).toMatchObject({ success: true, by: "model", attempts: 2 });
  });

  it(`after ${MAX_REVIEW_ANSWERS} refused answers in a row the review ends as rejected, so answering again and again cannot grow the work`, async () => {
    const paused = await pausedAgent();
    for (let i = 1; i < MAX_REVIEW_ANSWERS; i++) await resume(paused, { value: "not json" });
    expect(await shown(paused)).toBeDefined();
    const out = await resume(paused, { value: "still not json" });
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "rejected", lastAnswer: "still not json" });
    expect(out.responseOutcome?.errors.at(-1)).toMatch(new RegExp(`^${MAX_REVIEW_ANSWERS} answers in a row were refused`));
    expect(await shown(paused)).toBeUndefined();
  });
});
