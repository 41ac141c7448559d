/**
 * examples/create-agent.ts through the real ChatOpenAI against the scripted
 * OpenAI-compatible server, which answers with tool calls: run as written (a
 * child process), and in process over a streamed (SSE) connection and with
 * tool-call ids the server reuses in every message. Checks what crosses the
 * wire: both tools' parameters, the forced tool choice, and the exact error
 * texts the model receives for its tool call and for its structured answer.
 */
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeploymentAgent, type DeploymentConfig } from "../../examples/create-agent.js";
import { answerRejectedText } from "../../src/agents/prompts.js";
import { checkValue } from "../../src/specs/check.js";
import { invalidCallText } from "../../src/tools/prompts.js";
import { runNode } from "../../testkit/cli.js";
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedReply, type ScriptedServer } from "../../testkit/openai-server.js";
import { ANSWER, deploymentSpec, threeDefects, valid } from "./agent.support.js";

/** Breaks one cross-field rule only: a response schema alone would accept it. */
const ruleOnly = { ...valid, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } };

/** The model's side: a deploy call with three defects, the fixed call, an answer that breaks a rule, the fixed answer. */
function script(id: (n: number) => string): ScriptedReply[] {
  const call = (n: number, name: string, args: unknown): ScriptedReply => ({
    content: null,
    toolCalls: [{ id: id(n), name, arguments: JSON.stringify(args) }],
  });
  return [call(0, "deploy_service", threeDefects), call(1, "deploy_service", valid), call(2, ANSWER, ruleOnly), call(3, ANSWER, valid)];
}

async function checkConversation(requests: RecordedRequest[]) {
  expect(requests).toHaveLength(4);
  const tools = requests[0].body.tools as Array<{ type: string; function: { name: string; parameters: unknown; description: string } }>;
  expect(tools.map((t) => t.function.name)).toEqual(["deploy_service", ANSWER]);
  expect(tools[1].function.parameters).toEqual(deploymentSpec.schema);
  for (const rule of deploymentSpec.rules) expect(tools[1].function.description).toContain(rule.description);
  expect(requests.every((r) => r.body.tool_choice === "required")).toBe(true);
  const deployErrors = (await checkValue(deploymentSpec, threeDefects)).errors;
  const answerErrors = (await checkValue(deploymentSpec, ruleOnly)).errors;
  const lastOf = (n: number) => requests[n].body.messages.at(-1);
  expect(lastOf(1)).toMatchObject({
    role: "tool",
    content: invalidCallText({ tool: "deploy_service", spec: "deployment-config", maxAttempts: 3, attempt: 1 }, deployErrors),
  });
  expect(lastOf(2)).toMatchObject({ role: "tool", content: "deployed payments-api: 8 replicas, 1 CPU" });
  expect(lastOf(3)).toMatchObject({ role: "tool", content: answerRejectedText(ANSWER, answerErrors, 1, 3) });
  // Every call the model made has exactly one result, paired by id.
  const final = requests[3].body.messages as Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
  const callIds = final.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
  expect(final.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(callIds);
}

const deploy = (deployed: DeploymentConfig[]) => (config: DeploymentConfig) => (
  deployed.push(config),
  `deployed ${config.service_name}: ${config.replicas} replicas, ${config.resources.cpu_limit} CPU`
);
const REQUEST = "Deploy payments-api with 8 replicas, 512 MB; health check on /healthz every 10 s with a 2 s timeout.";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedOpenAIServer();
});
afterAll(async () => server?.close());

describe("examples/create-agent.ts through ChatOpenAI", () => {
  it("runs as written: the deploy call and the answer each fail once, get their exact errors, and the run ends valid", async () => {
    server.requests.length = 0;
    server.setReplies(script((n) => `call_${n}`));
    const result = await runNode(["--conditions=langgraph-trustworthy-output-source", "examples/create-agent.ts"], {
      OPENAI_BASE_URL: server.baseURL,
      OPENAI_API_KEY: "test",
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`valid answer after 2 attempt(s): ${JSON.stringify(valid)}\n`);
    await checkConversation(server.requests);
  }, 120_000); // a child process through tsx: ~5 s alone

  it("works the same when the agent streams (SSE), as under the LangGraph server", async () => {
    server.requests.length = 0;
    server.setReplies(script((n) => `call_${n}`));
    const deployed: DeploymentConfig[] = [];
    const model = new ChatOpenAI({ model: "scripted", apiKey: "test", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
    const agent = createDeploymentAgent({ model, deploy: deploy(deployed) });
    let final: { responseOutcome?: unknown; messages: BaseMessage[] } | undefined;
    for await (const [mode, chunk] of await agent.stream({ messages: [new HumanMessage(REQUEST)] }, { streamMode: ["messages", "values"] })) {
      if (mode === "values") final = chunk as typeof final;
    }
    expect(server.requests.every((r) => r.stream)).toBe(true);
    await checkConversation(server.requests);
    expect(deployed).toEqual([valid]);
    expect(final?.responseOutcome).toMatchObject({ success: true, stopReason: "valid", value: valid, attempts: 2 });
  }, 60_000);

  it("holds when the server reuses one tool-call id in every message", async () => {
    server.requests.length = 0;
    server.setReplies(script(() => "call_0"));
    const deployed: DeploymentConfig[] = [];
    const model = new ChatOpenAI({ model: "scripted", apiKey: "test", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
    const out = await createDeploymentAgent({ model, deploy: deploy(deployed) }).invoke({ messages: [new HumanMessage(REQUEST)] });
    await checkConversation(server.requests);
    expect(deployed).toEqual([valid]);
    expect(out.responseOutcome).toMatchObject({ success: true, value: valid, attempts: 2 });
  }, 60_000);
});
