/**
 * A ReAct agent (LangGraph's createReactAgent) whose deploy_service tool runs
 * only with a configuration that passes the deployment-config spec. When the
 * model's arguments fail, the tool answers with the exact errors, the model
 * fixes them and calls again; after 3 failed calls in a turn the tool refuses.
 * Runs against whatever OPENAI_API_KEY / OPENAI_BASE_URL point to:
 *
 *   npx tsx examples/guarded-agent.ts
 */
import { pathToFileURL } from "node:url";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createChatModel, guardedTool, readEnvironment } from "langgraph-trustworthy-output";

/** What the deployment-config spec guarantees deploy_service receives. */
export interface DeploymentConfig {
  service_name: string;
  replicas: number;
  resources: { cpu_limit: number; memory_limit_mb: number };
  health_check: { path: string; timeout_seconds: number; interval_seconds: number };
}

export const AGENT_PROMPT =
  "You deploy services. Call deploy_service with a complete configuration. " +
  "If it answers with errors, fix every one and call it again; when it refuses, tell the user why.";

export interface DeployAgentOptions {
  model: BaseChatModel;
  /** Where the real deployment would happen; it only ever sees a valid configuration. */
  deploy: (config: DeploymentConfig) => string | Promise<string>;
  maxAttempts?: number;
}

export function createDeployAgent({ model, deploy, maxAttempts = 3 }: DeployAgentOptions) {
  const deployService = guardedTool({
    spec: "deployment-config",
    name: "deploy_service",
    description: "Deploy a service with this configuration.",
    maxAttempts,
    func: (config: DeploymentConfig) => deploy(config),
  });
  return createReactAgent({ llm: model, tools: [deployService], prompt: AGENT_PROMPT });
}

/** How many times the agent called deploy_service, and how many of those calls ran. */
export function countDeployCalls(messages: BaseMessage[]): { calls: number; ran: number } {
  const results = messages.filter((m) => m.getType() === "tool" && m.name === "deploy_service");
  return { calls: results.length, ran: results.filter((m) => (m as { status?: string }).status !== "error").length };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const agent = createDeployAgent({
    model: createChatModel({ model: readEnvironment().model, role: "agent" }),
    deploy: (config) => `deployed ${config.service_name}: ${config.replicas} replicas, ${config.resources.cpu_limit} CPU`,
  });
  const result = await agent.invoke({
    messages: [new HumanMessage("Deploy payments-api with 8 replicas, 0.5 CPU and 512 MB; health check on /healthz every 10 s, 2 s timeout.")],
  });
  const { calls, ran } = countDeployCalls(result.messages);
  console.log(`deploy_service was called ${calls} time(s); ${ran} call(s) ran.`);
  console.log("agent:", String(result.messages.at(-1)?.content));
}
