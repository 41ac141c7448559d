/**
 * The built-in simulated model calls tools (bindTools): the examples' createAgent (validatedResponseMiddleware and
 * guardToolsMiddleware) and guardedTool agents run with it and no provider, a guard's errors fixed on the next call;
 * the validation graph's "tool" output mode; a structured answer for a spec it does not know, drawn from the
 * answer tool's schema.
 */
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createDeploymentAgent, type DeploymentConfig } from "../../examples/create-agent.js";
import { countDeployCalls, createDeployAgent } from "../../examples/guarded-agent.js";
import { guardToolsMiddleware, validatedResponseMiddleware } from "../../src/agents/index.js";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel } from "../../src/models.js";
import { SimulatedChatModel } from "../../src/simulated/model.js";
import { checkValue } from "../../src/specs/check.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { defineSpec } from "../../src/specs/spec.js";
import { buildValidationGraph } from "../../src/validation/graph.js";

const simulatedEnv = readEnvironment({ LLM_MODEL: "simulated" });
const simulated = () => createChatModel({ model: "simulated", role: "agent" }, simulatedEnv);
const deploymentConfig = builtinSpecs.get("deployment-config")!;
const REQUEST = "Deploy payments-api with 8 replicas, 512 MB; health check on /healthz every 10 s with a 2 s timeout.";

describe("the simulated model with tools", () => {
  it("examples/create-agent.ts: deploy_service rejected by its guard, called again with the errors fixed, then the deployed configuration as the valid answer", async () => {
    const deployed: DeploymentConfig[] = [];
    const agent = createDeploymentAgent({ model: simulated(), deploy: (config) => (deployed.push(config), `deployed ${config.service_name}`) });
    const result = await agent.invoke({ messages: [new HumanMessage(REQUEST)] });
    expect(result.responseOutcome).toMatchObject({ success: true, stopReason: "valid" });
    expect(deployed).toHaveLength(1);
    expect(result.responseOutcome!.success && result.responseOutcome!.value).toEqual(deployed[0]);
    const rejected = result.messages.filter((m) => m.getType() === "tool" && m.name === "deploy_service" && (m as { status?: string }).status === "error");
    expect(rejected.length).toBeGreaterThan(0);
  });

  it("examples/guarded-agent.ts: a guarded tool's errors fixed on the next call; the tool runs once, with a valid configuration", async () => {
    const deployed: DeploymentConfig[] = [];
    const agent = createDeployAgent({ model: simulated(), deploy: (config) => (deployed.push(config), `deployed ${config.service_name}`) });
    const result = await agent.invoke({ messages: [new HumanMessage(REQUEST)] });
    const { calls, ran } = countDeployCalls(result.messages);
    expect(calls).toBeGreaterThan(1);
    expect(ran).toBe(1);
    expect((await checkValue(deploymentConfig, deployed[0])).valid).toBe(true);
    expect(String(result.messages.at(-1)!.content)).toMatch(/deployed payments-api/);
  });

  it('the validation graph in "tool" output mode: the answer as a forced tool call, fixed on the retry', async () => {
    const out = await buildValidationGraph({ env: simulatedEnv }).invoke(
      { request: "A deployment config for payments-api with 8 replicas" },
      { context: { spec: "deployment-config", outputMode: "tool", maxAttempts: 3 } },
    );
    expect(out.success, JSON.stringify(out.errors)).toBe(true);
    expect(out.history[0].valid).toBe(false);
  });

  it("a structured answer for a spec it does not know: drawn from the answer tool's schema, seeded defects named and fixed", async () => {
    const spec = defineSpec({
      name: "ticket",
      description: "A support ticket.",
      schema: z.object({ id: z.string().regex(/^T-\d{4}$/), priority: z.enum(["low", "high"]), minutes: z.number().int().min(5).max(120) }),
    });
    const agent = createAgent({ model: simulated(), tools: [], middleware: [validatedResponseMiddleware({ spec, maxAttempts: 3 })] });
    const result = await agent.invoke({ messages: [new HumanMessage("Open a ticket for the login outage")] });
    expect(result.responseOutcome).toMatchObject({ success: true });
    expect(result.responseOutcome!.attempts).toBeGreaterThan(1);
    expect(result.responseOutcome!.success && result.responseOutcome!.value).toMatchObject({ id: expect.stringMatching(/^T-\d{4}$/) });
  });

  it("a guarded tool whose own schema shows fewer fields than its spec: the next call is the spec's, the named errors fixed, and the tool runs", async () => {
    // As docs/agents.md's sample: the model sees the tool's two fields; the guard holds the call to deployment-config.
    const ran: unknown[] = [];
    const deployService = tool(async (config) => (ran.push(config), `deployed ${config.service_name}`), {
      name: "deploy_service",
      description: "Deploy a service with this configuration.",
      schema: z.object({ service_name: z.string(), replicas: z.number() }).passthrough(),
    });
    const agent = createAgent({
      model: simulated(),
      tools: [deployService],
      middleware: [validatedResponseMiddleware({ spec: "deployment-config" }), guardToolsMiddleware({ tools: { deploy_service: "deployment-config" } })],
    });
    const result = await agent.invoke({ messages: [new HumanMessage("Deploy payments-api with 8 replicas")] });
    const results = result.messages.filter((m) => m.getType() === "tool" && m.name === "deploy_service").map((m) => m.text);
    expect(results).toHaveLength(2);
    expect(results[0]).toMatch(/^deploy_service call 1 of 3 was not run: its arguments do not match the deployment-config spec\./);
    expect(results[1]).toBe("deployed payments-api");
    expect(ran).toHaveLength(1);
    expect((await checkValue(deploymentConfig, ran[0])).valid).toBe(true);
    expect(result.responseOutcome).toMatchObject({ success: true, stopReason: "valid" });
  });

  it("a tool that always fails: three failed calls, then a text reply saying so, never a loop to the recursion limit", async () => {
    let calls = 0;
    const flaky = tool(
      () => {
        calls++;
        throw new Error("the deploy service is down");
      },
      { name: "deploy_service", description: "Deploy a service.", schema: z.object({ service_name: z.string() }) },
    );
    const result = await createReactAgent({ llm: simulated(), tools: [flaky] }).invoke({ messages: [new HumanMessage(REQUEST)] });
    // The first call's arguments break the tool's own schema (a seeded defect, fixed from the zod error's "→ at service_name"); the next two run and throw.
    expect(calls).toBe(2);
    expect(result.messages.filter((m) => m.getType() === "tool")).toHaveLength(3);
    expect(String(result.messages.at(-1)!.content)).toMatch(/deploy_service did not run: .*the deploy service is down/s);
  });

  it("bindTools is what a provider's client does: the tools reach the call, and a model without tools still answers in text", async () => {
    const model = new SimulatedChatModel({ seed: 1 }, "generator");
    const reply = await model.invoke([new HumanMessage(`Request:\n${REQUEST}`)]);
    expect(reply.tool_calls ?? []).toEqual([]);
    expect((await checkValue(deploymentConfig, JSON.parse(reply.text))).valid).toBe(false); // the first answer, with its defects
  });
});
