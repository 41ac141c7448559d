/** What the createAgent tests share: deployment answers (valid and with three defects, two of them cross-field rules), a spec whose rule reads the run's context, and scripted model turns. */
import { AIMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { answerToolName } from "../../src/agents/answer.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { defineSpec } from "../../src/specs/spec.js";

export const deploymentSpec = builtinSpecs.get("deployment-config")!;
/** The answer tool's name for the deployment-config spec. */
export const ANSWER = answerToolName(deploymentSpec);

export const valid = {
  service_name: "payments-api",
  replicas: 8,
  resources: { cpu_limit: 1.0, memory_limit_mb: 512 },
  health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
};
/** Three defects: a pattern, and both cross-field rules (cpu for 8 replicas, timeout not below the interval). */
export const threeDefects = {
  ...valid,
  resources: { cpu_limit: 0.5, memory_limit_mb: 512 },
  health_check: { path: "healthz", timeout_seconds: 10, interval_seconds: 10 },
};

export const REQUEST = "Deploy payments-api with 8 replicas, health check on healthz every 10 s.";

/** A model turn with these tool calls (an id of null leaves the call without one, as some servers send it). */
export function callTurn(calls: Array<{ name: string; args: unknown; id?: string | null }>, content = ""): AIMessage {
  const toolCalls = calls.map((c, i) => ({ name: c.name, args: c.args, id: c.id === null ? undefined : (c.id ?? `call_${i}`), type: "tool_call" }) as ToolCall);
  return new AIMessage({ content, tool_calls: toolCalls });
}

/** A model turn that answers with the answer tool. */
export function answerTurn(args: unknown, id?: string | null): AIMessage {
  return callTurn([{ name: ANSWER, args, id }]);
}

/** A scripted model answering with these turns in order (fresh message objects each time); records every call. */
export function scriptedTurns(turns: Array<() => AIMessage>) {
  const model = fakeModel();
  for (const turn of turns) model.respond(() => turn());
  return model;
}

/** The messages the model received in call `n` (0-based). */
export function promptAt(model: ReturnType<typeof fakeModel>, n: number): BaseMessage[] {
  return model.calls[n].messages;
}

/** The agent's structuredResponse at run time (LangChain types it only when createAgent is given a responseFormat; the typed answer is responseOutcome). */
export function structuredResponseOf(state: object): unknown {
  return (state as { structuredResponse?: unknown }).structuredResponse;
}

/** The deployment spec with a rule that reads the run's context: replicas within the team's quota. */
export function quotaSpec() {
  return defineSpec<Record<string, unknown>, { maxReplicas: number }>({
    name: "quota-deploy",
    description: "A deployment within the team's replica quota.",
    schema: deploymentSpec.schema,
    rules: [
      {
        id: "within-quota",
        description: "replicas must not exceed the team's quota.",
        inputs: { replicas: "integer" },
        check: (v, _doc, context) => (v.replicas > context.maxReplicas ? `replicas is ${v.replicas}; the team's quota is ${context.maxReplicas}` : null),
      },
    ],
  });
}
