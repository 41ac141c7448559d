/**
 * The same verdicts beside the graph: a guarded tool's call is an `execute_tool` span with the verdict on its
 * arguments and a refused call is counted; a Reflexion task is a span with a child span per round carrying its
 * score; each answer of the createAgent middleware is a chat span with its verdict, refused answers and the
 * answers' ends counted.
 */
import { HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { SpanStatusCode, trace } from "@opentelemetry/api";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { validatedResponseMiddleware } from "../../src/agents/index.js";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { checkValue } from "../../src/specs/check.js";
import { builtinSpecs, fingerprintSpec } from "../../src/specs/registry.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { roleModels } from "../../testkit/role-models.js";
import { z } from "zod";
import { answerTurn, callTurn, deploymentSpec, REQUEST, scriptedTurns, threeDefects, valid } from "../agents/agent.support.js";
import { parentOf, recordTelemetry, spansNamed, type Recording } from "./support.js";

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;

let telemetry: Recording;
beforeAll(() => {
  telemetry = recordTelemetry();
});
afterAll(async () => {
  await telemetry.stop();
});
beforeEach(() => telemetry.spans.reset());

describe("guarded tools", () => {
  it("a call that runs is an execute_tool span around the function; one refused is a span saying why, counted", async () => {
    const deploy = guardedTool({
      spec: "deployment-config",
      name: "deploy_service",
      maxAttempts: 2,
      func: async () => {
        trace.getTracer("user").startSpan("user deploy").end();
        return "deployed";
      },
    });
    const refusedBefore = await telemetry.count("trustworthy.tool.refusals", { "trustworthy.tool": "deploy_service", "trustworthy.error_class": "invalid" });
    const call = (args: unknown, id: string) => ({ type: "tool_call" as const, name: "deploy_service", args: args as Record<string, unknown>, id });
    await deploy.invoke(call({ ...VALID, replicas: 8 }, "c1"));
    await deploy.invoke(call(VALID, "c2"));

    const spans = spansNamed(telemetry.spans, "execute_tool deploy_service");
    expect(spans.map((span) => span.attributes["trustworthy.valid"])).toEqual([false, true]);
    expect(spans[0].attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "trustworthy.error_class": "invalid", "trustworthy.error_count": 1 });
    const [user] = spansNamed(telemetry.spans, "user deploy");
    expect(parentOf(user)).toBe(spans[1].spanContext().spanId);
    expect(await telemetry.count("trustworthy.tool.refusals", { "trustworthy.tool": "deploy_service", "trustworthy.error_class": "invalid" })).toBe(
      refusedBefore + 1,
    );
  });
});

describe("Reflexion", () => {
  it("a task is a span; each round a child span with its score; the task's outcome on its span", async () => {
    const m = roleModels({ actor: ["first", "second"], evaluator: ["Final score: 6", "Final score: 9.5"], reflector: ["r0", "r1"] });
    const out = await buildReflexionGraph({ model: m.factory }).invoke({ tasks: ["Explain recursion."] }, { context: { maxLoops: 3 } });
    const [task] = spansNamed(telemetry.spans, "invoke_agent Reflexion");
    const rounds = spansNamed(telemetry.spans, "reflexion round");
    expect(out.outcomes[0]).toMatchObject({ stopReason: "early_stop", iterations: 2 });
    expect(rounds.map((span) => [span.attributes["trustworthy.round"], span.attributes["trustworthy.score"]])).toEqual(
      out.steps[0].map((step) => [step.iteration, step.score]),
    );
    expect(rounds.every((span) => parentOf(span) === task.spanContext().spanId)).toBe(true);
    expect(task.attributes).toMatchObject({
      "trustworthy.stop_reason": "early_stop",
      "trustworthy.rounds": 2,
      "trustworthy.best_score": out.outcomes[0].bestScore,
    });
  });
});

describe("the createAgent middleware", () => {
  const spec = { "trustworthy.spec": "deployment-config" };
  const answerAgent = (model: ReturnType<typeof scriptedTurns>, tools: StructuredToolInterface[] = []) =>
    createAgent({ model, tools, middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 2 })] });

  it("each answer is a GenAI chat span under the caller's, with the verdict as the graph's attempts carry it; refused answers and the end counted", async () => {
    const before = {
      refused: await telemetry.count("trustworthy.attempts.refused", { ...spec, "trustworthy.error_class": "spec" }),
      valid: await telemetry.count("trustworthy.runs", { ...spec, "trustworthy.outcome": "valid" }),
    };
    const agent = answerAgent(scriptedTurns([() => answerTurn(threeDefects), () => answerTurn(valid)]));
    const out = await trace.getTracer("user").startActiveSpan("user request", async (span) => {
      try {
        return await agent.invoke({ messages: [new HumanMessage(REQUEST)] });
      } finally {
        span.end();
      }
    });
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 2 });
    expect(await telemetry.count("trustworthy.attempts.refused", { ...spec, "trustworthy.error_class": "spec" })).toBe(before.refused + 1);
    expect(await telemetry.count("trustworthy.runs", { ...spec, "trustworthy.outcome": "valid" })).toBe(before.valid + 1);

    const [caller] = spansNamed(telemetry.spans, "user request");
    const attempts = spansNamed(telemetry.spans, "chat");
    expect(attempts.map((span) => parentOf(span))).toEqual([caller.spanContext().spanId, caller.spanContext().spanId]);
    const errors = (await checkValue(deploymentSpec, threeDefects)).errors;
    expect(attempts[0].attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "trustworthy.spec.name": "deployment-config",
      "trustworthy.spec.fingerprint": fingerprintSpec(deploymentSpec),
      "trustworthy.attempt": 1,
      "trustworthy.valid": false,
      "trustworthy.error_count": errors.length,
      "trustworthy.errors": errors.slice(0, 3),
      "trustworthy.error_class": "spec",
      "trustworthy.output_mode": "tool",
    });
    expect(attempts[0].attributes["trustworthy.stop_reason"]).toBeUndefined();
    expect(attempts[1].attributes).toMatchObject({
      "trustworthy.attempt": 2,
      "trustworthy.valid": true,
      "trustworthy.error_count": 0,
      "trustworthy.stop_reason": "valid",
    });
  });

  it("a turn that calls the agent's tools is a chat span marked a tool turn; the last refused answer says max_attempts; a call that throws ends its span failed", async () => {
    const lookup = tool(async () => "8 replicas", { name: "lookup_quota", description: "The team's quota.", schema: z.object({}) });
    const agent = answerAgent(
      scriptedTurns([() => callTurn([{ name: "lookup_quota", args: {} }]), () => answerTurn(threeDefects), () => answerTurn(threeDefects)]),
      [lookup],
    );
    const out = await agent.invoke({ messages: [new HumanMessage(REQUEST)] });
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 2 });
    expect(spansNamed(telemetry.spans, "chat").map((span) => [span.attributes["trustworthy.tool_turn"], span.attributes["trustworthy.stop_reason"]])).toEqual([
      [true, undefined],
      [undefined, undefined],
      [undefined, "max_attempts"],
    ]);

    telemetry.spans.reset();
    const failing = fakeModel().alwaysThrow(new Error("provider down"));
    await expect(answerAgent(failing).invoke({ messages: [new HumanMessage(REQUEST)] })).rejects.toThrow("provider down");
    const [failed] = spansNamed(telemetry.spans, "chat");
    expect(failed.status).toMatchObject({ code: SpanStatusCode.ERROR, message: "provider down" });
  });
});

describe("the createAgent middleware's review", () => {
  it("a person's decisions are counted by decision and each is a review span, as the validation graph's review reports them", async () => {
    const spec = { "trustworthy.spec": "deployment-config" };
    const count = (decision: string) => telemetry.count("trustworthy.reviews", { ...spec, "trustworthy.decision": decision });
    const before = { refused: await count("refused_value"), accepted: await count("accepted") };
    const agent = createAgent({
      model: scriptedTurns([() => answerTurn(threeDefects)]),
      tools: [],
      middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 1, onFailure: "interrupt" })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "telemetry-review" } };
    await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, config);
    telemetry.spans.reset();
    await agent.invoke(new Command({ resume: { type: "edit", value: threeDefects } }), config);
    const out = await agent.invoke(new Command({ resume: { type: "edit", value: valid } }), config);
    expect(out.responseOutcome).toMatchObject({ success: true, stopReason: "valid", by: "human" });
    expect([await count("refused_value"), await count("accepted")]).toEqual([before.refused + 1, before.accepted + 1]);
    expect(spansNamed(telemetry.spans, "review").map((span) => [span.attributes["trustworthy.decision"], span.attributes["trustworthy.stop_reason"]])).toEqual([
      ["refused_value", undefined],
      ["accepted", "valid"],
    ]);
  });
});
