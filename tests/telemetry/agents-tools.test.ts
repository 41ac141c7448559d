/**
 * The same verdicts beside the graph: a guarded tool's call is an `execute_tool` span with the verdict on its
 * arguments and a refused call is counted; a Reflexion task is a span with a child span per round carrying its
 * score; the createAgent middleware counts refused answers and its answers' ends.
 */
import { HumanMessage } from "@langchain/core/messages";
import { trace } from "@opentelemetry/api";
import { createAgent } from "langchain";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { validatedResponseMiddleware } from "../../src/agents/index.js";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { roleModels } from "../../testkit/role-models.js";
import { answerTurn, REQUEST, scriptedTurns, threeDefects, valid } from "../agents/agent.support.js";
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
  it("counts each refused answer and the answer's end", async () => {
    const spec = { "trustworthy.spec": "deployment-config" };
    const before = {
      refused: await telemetry.count("trustworthy.attempts.refused", { ...spec, "trustworthy.error_class": "spec" }),
      valid: await telemetry.count("trustworthy.runs", { ...spec, "trustworthy.outcome": "valid" }),
    };
    const agent = createAgent({
      model: scriptedTurns([() => answerTurn(threeDefects), () => answerTurn(valid)]),
      tools: [],
      middleware: [validatedResponseMiddleware({ spec: "deployment-config" })],
    });
    const out = await agent.invoke({ messages: [new HumanMessage(REQUEST)] });
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 2 });
    expect(await telemetry.count("trustworthy.attempts.refused", { ...spec, "trustworthy.error_class": "spec" })).toBe(before.refused + 1);
    expect(await telemetry.count("trustworthy.runs", { ...spec, "trustworthy.outcome": "valid" })).toBe(before.valid + 1);
  });
});
