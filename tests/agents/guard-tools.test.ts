/**
 * Tools inside createAgent held to specs: guardToolsMiddleware wraps tools the user
 * already has (no rewrite), and guardedTool works as one of createAgent's
 * tools. A call whose arguments fail never reaches the function; its result is
 * the exact errors (guardedTool's text and record); the same attempt budget
 * applies, whatever the tool-call ids (shared by every message, or missing).
 */
import { HumanMessage, ToolMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { guardToolsMiddleware, validatedResponseMiddleware } from "../../src/agents/index.js";
import { checkText, checkValue } from "../../src/specs/check.js";
import { defineSpec } from "../../src/specs/spec.js";
import { guardRecordOf } from "../../src/tools/budget.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { invalidCallText, refusalText } from "../../src/tools/prompts.js";
import { answerTurn, callTurn, deploymentSpec, scriptedTurns, threeDefects, valid } from "./agent.support.js";

/** The tool as a user already has it: its own loose schema, no idea of the spec. */
function existingDeployTool() {
  const deployed: unknown[] = [];
  const deployService = tool((config: { service_name: string }) => (deployed.push(config), `deployed ${config.service_name}`), {
    name: "deploy_service",
    description: "Deploy a service with this configuration.",
    schema: z.object({ service_name: z.string() }).passthrough(),
  });
  return { deployService, deployed };
}

const deployCall = (args: unknown, id?: string | null) => () => callTurn([{ name: "deploy_service", args, id }]);
const results = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => m.getType() === "tool");
const outcomes = (messages: BaseMessage[]) => results(messages).map((m) => guardRecordOf(m)?.outcome ?? "ran");
const facts = (attempt: number) => ({ tool: "deploy_service", spec: "deployment-config", maxAttempts: 3, attempt });

async function run(
  turns: Array<() => AIMessage>,
  middleware: Parameters<typeof createAgent>[0]["middleware"] = [guardToolsMiddleware({ tools: { deploy_service: "deployment-config" } })],
) {
  const { deployService, deployed } = existingDeployTool();
  const model = scriptedTurns([...turns, () => callTurn([], "done")]);
  const out = await createAgent({ model, tools: [deployService], middleware }).invoke({ messages: [new HumanMessage("Deploy payments-api")] });
  return { out, deployed, model };
}

describe("guardToolsMiddleware: existing tools held to specs inside createAgent", () => {
  it("a failing call is not run and gets every error, exactly as guardedTool gives them; the fixed call runs", async () => {
    const { out, deployed, model } = await run([deployCall(threeDefects, "a"), deployCall(valid, "b")]);
    const errors = (await checkValue(deploymentSpec, threeDefects)).errors;
    const [first, second] = results(out.messages);
    expect(first.content).toBe(invalidCallText(facts(1), errors));
    expect(first.status).toBe("error");
    expect(guardRecordOf(first)).toEqual({ outcome: "invalid", spec: "deployment-config", attempt: 1, maxAttempts: 3, errors, callIndex: 0 });
    expect(second.content).toBe("deployed payments-api");
    expect(deployed).toEqual([valid]);
    expect(model.calls[1].messages.at(-1)?.content).toBe(first.content);
  });

  it("hands the function the spec's output (a zod spec's defaults applied)", async () => {
    const Deploy = z.object({ service_name: z.string().regex(/^[a-z][a-z0-9-]*$/), replicas: z.number().int().min(1).default(1) });
    const spec = defineSpec({ name: "small-deploy", description: "A small deployment.", schema: Deploy });
    const { deployed } = await run(
      [deployCall({ service_name: "Payments" }), deployCall({ service_name: "payments" })],
      [guardToolsMiddleware({ tools: { deploy_service: spec } })],
    );
    expect(deployed).toEqual([{ service_name: "payments", replicas: 1 }]);
  });

  it("hands the run's context to the spec's code rules (ruleContext)", async () => {
    const quota = defineSpec<Record<string, unknown>, { maxReplicas: number }>({
      name: "quota-deploy",
      description: "A deployment within the team's replica quota.",
      schema: deploymentSpec.schema,
      rules: [
        {
          id: "within-quota",
          description: "replicas within the quota.",
          inputs: { replicas: "integer" },
          check: (v, _d, c) => (v.replicas > c.maxReplicas ? `replicas is ${v.replicas}; the quota is ${c.maxReplicas}` : null),
        },
      ],
    });
    const { deployService, deployed } = existingDeployTool();
    const model = scriptedTurns([deployCall(valid, "a"), deployCall({ ...valid, replicas: 2 }, "b"), () => callTurn([], "done")]);
    const middleware = [guardToolsMiddleware({ tools: { deploy_service: quota }, ruleContext: (run: { context: unknown }) => run.context })];
    const out = await createAgent({ model, tools: [deployService], middleware }).invoke(
      { messages: [new HumanMessage("Deploy")] },
      { context: { maxReplicas: 4 } },
    );
    expect(guardRecordOf(results(out.messages)[0])?.errors).toEqual(["replicas is 8; the quota is 4"]);
    expect(deployed).toEqual([{ ...valid, replicas: 2 }]);
  });

  it("applies guardedTool's budget: three failed calls in a row, then refusals; the function never runs", async () => {
    const { out, deployed } = await run([deployCall(threeDefects, "a"), deployCall(threeDefects, "b"), deployCall(threeDefects, "c"), deployCall(valid, "d")]);
    expect(outcomes(out.messages)).toEqual(["invalid", "invalid", "invalid", "refused"]);
    expect(results(out.messages)[3].content).toBe(refusalText(facts(4)));
    expect(deployed).toEqual([]);
  });

  it.each([
    ["shared by every message", "call_0"],
    ["missing", null],
  ] as const)("counts the budget whatever the ids (%s): every call gets one result", async (_, id) => {
    const { out, deployed } = await run([deployCall(threeDefects, id), deployCall(threeDefects, id), deployCall(valid, id)]);
    expect(outcomes(out.messages)).toEqual(["invalid", "invalid", "ran"]);
    expect(results(out.messages).map((m) => guardRecordOf(m)?.attempt)).toEqual([1, 2, undefined]);
    expect(deployed).toEqual([valid]);
  });

  it("reads text arguments exactly: prose around the JSON is refused with the exact reader's error", async () => {
    const prose = `config: ${JSON.stringify(valid)}`;
    const { out, deployed } = await run([deployCall(prose, "a"), deployCall(JSON.stringify(valid), "b")]);
    const errors = (await checkText(deploymentSpec, prose, "exact", { what: "the arguments" })).errors;
    expect(results(out.messages)[0].content).toBe(invalidCallText(facts(1), errors));
    expect(deployed).toEqual([valid]);
  });

  it("beside validatedResponseMiddleware, calls with reused or missing ids all run or are judged (each gets a fresh id)", async () => {
    const answerAndDeploy = [
      () => callTurn([{ name: "deploy_service", args: threeDefects, id: "call_0" }]),
      () =>
        callTurn([
          { name: "deploy_service", args: valid, id: "call_0" },
          { name: "deploy_service", args: valid, id: null },
        ]),
      () => answerTurn(valid, "call_0"),
    ];
    const { deployService, deployed } = existingDeployTool();
    const model = scriptedTurns(answerAndDeploy);
    const agent = createAgent({
      model,
      tools: [deployService],
      middleware: [validatedResponseMiddleware({ spec: "deployment-config" }), guardToolsMiddleware({ tools: { deploy_service: "deployment-config" } })],
    });
    const out = await agent.invoke({ messages: [new HumanMessage("Deploy payments-api twice, then give me the config.")] });
    expect(outcomes(out.messages)).toEqual(["invalid", "ran", "ran", "ran"]);
    expect(deployed).toEqual([valid, valid]);
    const ids = results(out.messages).map((m) => m.tool_call_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(out.responseOutcome).toMatchObject({ success: true, value: valid });
  });
});

describe("guardedTool as one of createAgent's tools", () => {
  function deployAgent(turns: Array<() => AIMessage>) {
    const deployed: unknown[] = [];
    const deployService = guardedTool({
      spec: "deployment-config",
      name: "deploy_service",
      func: (config: { service_name: string }) => (deployed.push(config), `deployed ${config.service_name}`),
    });
    const model = scriptedTurns([...turns, () => callTurn([], "done")]);
    return { agent: createAgent({ model, tools: [deployService] }), deployed, model };
  }

  it("fails once with the exact errors, then runs with the fixed arguments", async () => {
    const { agent, deployed, model } = deployAgent([deployCall(threeDefects, "a"), deployCall(valid, "b")]);
    const out = await agent.invoke({ messages: [new HumanMessage("Deploy payments-api")] });
    const errors = (await checkValue(deploymentSpec, threeDefects)).errors;
    expect(results(out.messages).map((m) => m.content)).toEqual([invalidCallText(facts(1), errors), "deployed payments-api"]);
    expect(model.calls[1].messages.at(-1)?.content).toBe(invalidCallText(facts(1), errors));
    expect(deployed).toEqual([valid]);
  });

  it("refuses after three failed calls in a turn, with shared ids too; the function never runs", async () => {
    const { agent, deployed } = deployAgent([
      deployCall(threeDefects, "call_0"),
      deployCall(threeDefects, "call_0"),
      deployCall(threeDefects, "call_0"),
      deployCall(valid, "call_0"),
    ]);
    const out = await agent.invoke({ messages: [new HumanMessage("Deploy payments-api")] });
    expect(outcomes(out.messages)).toEqual(["invalid", "invalid", "invalid", "refused"]);
    expect(deployed).toEqual([]);
  });
});
