/**
 * examples/guarded-agent.ts run as written (a child process) through the real
 * ChatOpenAI against the scripted OpenAI-compatible server, which answers with
 * tool calls; and the same agent in process over a streamed (SSE) connection.
 * Checks what crosses the wire: the tool's parameters and the error text the model receives.
 */
import { ChatOpenAI } from "@langchain/openai";
import { HumanMessage, type AIMessage, type AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countDeployCalls, createDeployAgent, type DeploymentConfig } from "../../examples/guarded-agent.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runNode } from "../../testkit/cli.js";
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedReply, type ScriptedServer } from "../../testkit/openai-server.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const spec = builtinSpecs.get("deployment-config")!;
const fixed: DeploymentConfig = {
  service_name: "payments-api",
  replicas: 8,
  resources: { cpu_limit: 1.0, memory_limit_mb: 512 },
  health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
};
const first = { ...fixed, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } };
const ERRORS_TEXT = [
  "deploy_service call 1 of 3 was not run: its arguments do not match the deployment-config spec.",
  "Errors:",
  `1. ${RULES.replicasNeedCpu(0.5, 8)}`,
  "Fix these and call deploy_service again with the corrected arguments, keeping everything that was already right.",
].join("\n");

/** The model's side: call with a config that breaks a rule; after errors, call with the fixed one; after a deployment, answer. */
function agentModel(req: RecordedRequest): ScriptedReply {
  const last = req.body.messages.at(-1);
  if (last.role === "tool" && String(last.content).startsWith("deployed")) return { content: "Deployed payments-api." };
  const args = last.role === "tool" ? fixed : first;
  const calls = req.body.messages.filter((m: { role: string }) => m.role === "tool").length;
  return { content: null, toolCalls: [{ id: `call_${calls}`, name: "deploy_service", arguments: JSON.stringify(args) }] };
}

function checkConversation(requests: RecordedRequest[]) {
  expect(requests).toHaveLength(3);
  const [tool] = requests[0].body.tools;
  expect(tool.type).toBe("function");
  expect(tool.function.name).toBe("deploy_service");
  expect(tool.function.parameters).toEqual({ $schema: "http://json-schema.org/draft-07/schema#", ...spec.schema });
  expect(tool.function.description).toContain(builtinSpecs.get("deployment-config")!.rules[0].description);
  // The error text the model received, exactly, as the result of its first call.
  const afterFirst = requests[1].body.messages.at(-1);
  expect(afterFirst).toEqual({ role: "tool", name: "deploy_service", content: ERRORS_TEXT, tool_call_id: "call_0" });
  expect(requests[2].body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_1" });
}

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedOpenAIServer({ responder: agentModel });
});
afterAll(async () => server?.close());

describe("examples/guarded-agent.ts through ChatOpenAI", () => {
  it("runs as written: two calls, one of which ran", async () => {
    server.requests.length = 0;
    const result = await runNode(["--conditions=langgraph-trustworthy-output-source", "examples/guarded-agent.ts"], {
      OPENAI_BASE_URL: server.baseURL,
      OPENAI_API_KEY: "test",
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("deploy_service was called 2 time(s); 1 call(s) ran.\nagent: Deployed payments-api.\n");
    checkConversation(server.requests);
    expect(server.requests[2].body.messages.at(-1).content).toBe("deployed payments-api: 8 replicas, 1 CPU");
  }, 120_000); // a child process through tsx: ~5 s alone

  it("works the same when the agent streams (SSE), as under the LangGraph server", async () => {
    server.requests.length = 0;
    const deployed: DeploymentConfig[] = [];
    // Streaming the graph in "messages" mode makes ChatOpenAI stream its calls. (ChatOpenAI's own `streaming: true`
    // estimates token counts with a tokenizer it downloads, which is not reachable here.)
    const model = new ChatOpenAI({ model: "scripted", apiKey: "test", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
    const agent = createDeployAgent({ model, deploy: (config) => (deployed.push(config), `deployed ${config.service_name}`) });
    let final: { messages: BaseMessage[] } | undefined;
    let toolCallChunks = 0;
    for await (const [mode, chunk] of await agent.stream(
      { messages: [new HumanMessage("Deploy payments-api with 8 replicas")] },
      { streamMode: ["messages", "values"] },
    )) {
      if (mode === "values") final = chunk as { messages: BaseMessage[] };
      else if (((chunk as unknown as [AIMessageChunk])[0].tool_call_chunks ?? []).length > 0) toolCallChunks++;
    }
    expect(server.requests.every((r) => r.stream)).toBe(true);
    expect(toolCallChunks).toBeGreaterThan(2);
    checkConversation(server.requests);
    expect(countDeployCalls(final!.messages)).toEqual({ calls: 2, ran: 1 });
    expect(deployed).toEqual([fixed]);
  }, 60_000);

  it("the guarded-tools page's example runs as written", async () => {
    server.requests.length = 0;
    const section = readFileSync("docs/guarded-tools.md", "utf8");
    const code = /```ts\n([\s\S]*?)```/.exec(section)![1];
    // Plain JavaScript in a TypeScript block; `--conditions=langgraph-trustworthy-output-source` resolves the package's own name to its source.
    const result = await runNode(["--conditions=langgraph-trustworthy-output-source", "--input-type=module", "-e", code], {
      OPENAI_BASE_URL: server.baseURL,
      OPENAI_API_KEY: "test",
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Deployed payments-api.\n");
    checkConversation(server.requests);
    expect(server.requests[2].body.messages.at(-1).content).toBe("deployed payments-api: 8 replicas");
  }, 120_000); // a child process through tsx: ~5 s alone

  it("a tool call whose arguments are not JSON never reaches the tool: LangChain files it as invalid and the agent ends", async () => {
    const local = await startScriptedOpenAIServer({
      replies: [{ content: null, toolCalls: [{ id: "c0", name: "deploy_service", arguments: '{"replicas": 8,' }] }],
    });
    try {
      const deployed: DeploymentConfig[] = [];
      const model = new ChatOpenAI({ model: "scripted", apiKey: "test", configuration: { baseURL: local.baseURL }, maxRetries: 0 });
      const result = await createDeployAgent({ model, deploy: (c) => (deployed.push(c), "deployed") }).invoke({ messages: [new HumanMessage("go")] });
      expect(local.requests).toHaveLength(1);
      expect((result.messages.at(-1) as AIMessage).invalid_tool_calls).toHaveLength(1);
      expect(countDeployCalls(result.messages)).toEqual({ calls: 0, ran: 0 });
      expect(deployed).toEqual([]);
    } finally {
      await local.close();
    }
  }, 60_000);
});
