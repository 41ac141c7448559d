/**
 * Hostile structured answers inside createAgent (huge, too deep, a
 * `__proto__` key, not JSON) get the same bounded feedback as the validation
 * graph: for a text answer, the very retry prompt the graph would send; for
 * an answer given as tool arguments, errors and a recorded answer within the
 * same bounds. Nothing an answer holds reaches Object.prototype.
 */
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { validatedResponseMiddleware } from "../../src/agents/index.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { MAX_RECORDED_OUTPUT_CHARS } from "../../src/protocol/feedback.js";
import { MAX_ERRORS_SECTION_CHARS, MAX_FEEDBACK_CHARS } from "../../src/protocol/feedback.js";
import { scriptedModel } from "../../testkit/scripted-model.js";
import { answerTurn, callTurn, REQUEST, scriptedTurns, structuredResponseOf, valid } from "./agent.support.js";

const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
const HOSTILE_TEXT: Array<[string, string]> = [
  ["huge", `{"service_name": "${"x".repeat(1_200_000)}"}`],
  ["too deep", deep(10_000)],
  ["not JSON", "I would rather not give a configuration."],
  ["many errors", JSON.stringify(Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`field_${i}`, i])))],
];

/** The validation graph's second prompt (its retry) for this first answer, and the agent's feedback to the same answer as text. */
async function bothRetries(answer: string): Promise<{ graph: string; agent: string }> {
  const graphModel = scriptedModel([answer, JSON.stringify(valid)]);
  await buildValidationGraph({ model: graphModel, spec: "deployment-config", maxAttempts: 2 }).invoke({ request: REQUEST });
  const agentModel = scriptedTurns([() => callTurn([], answer), () => answerTurn(valid)]);
  const out = await createAgent({
    model: agentModel,
    tools: [],
    middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 2 })],
  }).invoke({
    messages: [new HumanMessage(REQUEST)],
  });
  expect(out.responseOutcome).toMatchObject({ success: true, attempts: 2 });
  const graphRetry = graphModel.calls[1].messages.at(-1) as BaseMessage;
  const agentRetry = agentModel.calls[1].messages.at(-1) as BaseMessage;
  return { graph: String(graphRetry.content), agent: String(agentRetry.content) };
}

describe("validatedResponseMiddleware: hostile answers get the validation graph's bounded feedback", () => {
  it.each(HOSTILE_TEXT)("a %s text answer gets the very retry prompt the validation graph sends, within its bound", async (_, answer) => {
    const { graph, agent } = await bothRetries(answer);
    expect(agent).toBe(graph);
    expect(agent.length).toBeLessThanOrEqual(REQUEST.length + MAX_FEEDBACK_CHARS);
  });

  it.each([
    ["huge", { ...valid, service_name: "x".repeat(1_200_000) }],
    ["too deep", JSON.parse(deep(5_000))],
    ["many errors", Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`field_${i}`, i]))],
    ["not JSON text", "{replicas: eight"],
  ])("a %s answer given as tool arguments gets bounded errors and a bounded recorded answer", async (_, args) => {
    const model = scriptedTurns([() => answerTurn(args)]);
    const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 1 })] }).invoke({
      messages: [new HumanMessage(REQUEST)],
    });
    const outcome = out.responseOutcome;
    if (outcome?.success !== false) throw new Error("expected a failure");
    expect(outcome.errors.length).toBeGreaterThan(0);
    expect(outcome.errors.join("\n").length).toBeLessThanOrEqual(MAX_ERRORS_SECTION_CHARS * 2);
    expect(outcome.lastAnswer.length).toBeLessThanOrEqual(MAX_RECORDED_OUTPUT_CHARS + 40);
    const feedback = String(out.messages.at(-1)!.content);
    expect(feedback.length).toBeLessThanOrEqual(MAX_ERRORS_SECTION_CHARS + 500);
    expect(structuredResponseOf(out)).toBeUndefined();
  });

  it("a __proto__ key is refused (a checkpoint would not give it back), never reaching Object.prototype", async () => {
    const text = `{"__proto__": {"polluted": true}, ${JSON.stringify(valid).slice(1)}`;
    const args = JSON.parse(text) as Record<string, unknown>;
    for (const turn of [() => callTurn([], text), () => answerTurn(args)]) {
      const model = scriptedTurns([turn]);
      const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 1 })] }).invoke({
        messages: [new HumanMessage(REQUEST)],
      });
      expect(out.responseOutcome).toMatchObject({ success: false });
      expect(JSON.stringify(out.responseOutcome)).toContain('has a field named \\"__proto__\\", which a checkpoint would not give back as written');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});
