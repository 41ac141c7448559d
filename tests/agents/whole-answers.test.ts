/**
 * Correction retries (the validation graph's retryWith) do not reach the createAgent middleware or guarded
 * tools: there the answer is a tool call whose arguments are read exactly, so a retry is always the whole
 * answer again. Neither takes the setting, and neither ever asks for a JSON Patch.
 */
import { HumanMessage } from "@langchain/core/messages";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { validatedResponseMiddleware } from "../../src/agents/index.js";
import { PROMPT_HEADINGS } from "../../src/protocol/feedback.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { answerTurn, callTurn, promptAt, REQUEST, scriptedTurns, threeDefects, valid } from "./agent.support.js";

const asksForCorrections = (content: unknown) => JSON.stringify(content).includes(PROMPT_HEADINGS.corrections);

describe("whole-answer retries outside the validation graph", () => {
  it("validatedResponseMiddleware has no retryWith, and its retries (a tool result, or a text answer's retry prompt) ask for the whole answer", async () => {
    // @ts-expect-error retryWith is the validation graph's setting; the middleware retries with whole answers.
    validatedResponseMiddleware({ spec: "deployment-config", retryWith: "corrections" });
    const model = scriptedTurns([() => answerTurn(threeDefects), () => callTurn([], JSON.stringify(threeDefects)), () => answerTurn(valid)]);
    const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] }).invoke({
      messages: [new HumanMessage(REQUEST)],
    });
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 3 });
    for (const call of [1, 2]) expect(asksForCorrections(promptAt(model, call).at(-1)!.content)).toBe(false);
  });

  it("a guarded tool has no retryWith, and its refusal asks for the call again with whole arguments", async () => {
    const deploy = guardedTool({
      spec: "deployment-config",
      name: "deploy_service",
      func: () => "deployed",
      // @ts-expect-error retryWith is the validation graph's setting; a tool call is always made again whole.
      retryWith: "corrections",
    });
    const refused = await deploy.invoke(threeDefects);
    expect(typeof refused === "string" && refused.length > 0).toBe(true);
    expect(asksForCorrections(refused)).toBe(false);
  });
});
