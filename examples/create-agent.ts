/**
 * A deployment agent built with LangChain v1's createAgent: its final answer
 * is held to the deployment-config spec (validatedResponseMiddleware), and its existing
 * deploy_service tool runs only with a configuration that passes the same
 * spec (guardToolsMiddleware). When the model's answer or arguments fail, it gets every
 * error and tries again; the run ends with a typed outcome. Runs against
 * whatever OPENAI_API_KEY / OPENAI_BASE_URL point to, or keyless with
 * LLM_MODEL=simulated:
 *
 *   npx tsx examples/create-agent.ts
 */
import { pathToFileURL } from "node:url";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import { createAgent, tool } from "langchain";
import { z } from "zod";
import { createChatModel, readEnvironment } from "langgraph-trustworthy-output";
import { guardToolsMiddleware, validatedResponseMiddleware } from "langgraph-trustworthy-output/agents";

/** What the deployment-config spec guarantees deploy_service and the answer hold. */
export interface DeploymentConfig {
  service_name: string;
  replicas: number;
  resources: { cpu_limit: number; memory_limit_mb: number };
  health_check: { path: string; timeout_seconds: number; interval_seconds: number };
}

export const AGENT_PROMPT =
  "You deploy services. Call deploy_service with a complete configuration; if it answers with errors, fix every one and call it again. " +
  "Then give the configuration that was deployed as your final answer.";

export interface DeploymentAgentOptions {
  model: BaseChatModel;
  /** Where the real deployment would happen; it only ever sees a valid configuration. */
  deploy: (config: DeploymentConfig) => string | Promise<string>;
  maxAttempts?: number;
}

export function createDeploymentAgent({ model, deploy, maxAttempts = 3 }: DeploymentAgentOptions) {
  // The tool as an app already has it, with its own schema and none of the spec's rules; guardToolsMiddleware holds its calls to the spec.
  const deployService = tool((config: DeploymentConfig) => deploy(config), {
    name: "deploy_service",
    description: "Deploy a service with this configuration.",
    schema: z.object({
      service_name: z.string(),
      replicas: z.number(),
      resources: z.object({ cpu_limit: z.number(), memory_limit_mb: z.number() }),
      health_check: z.object({ path: z.string(), timeout_seconds: z.number(), interval_seconds: z.number() }),
    }),
  });
  return createAgent({
    model,
    tools: [deployService],
    systemPrompt: AGENT_PROMPT,
    middleware: [
      validatedResponseMiddleware({ spec: "deployment-config", maxAttempts }),
      guardToolsMiddleware({ tools: { deploy_service: "deployment-config" }, maxAttempts }),
    ],
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const agent = createDeploymentAgent({
    model: createChatModel({ model: readEnvironment().model, role: "agent" }),
    deploy: (config) => `deployed ${config.service_name}: ${config.replicas} replicas, ${config.resources.cpu_limit} CPU`,
  });
  const result = await agent.invoke({
    messages: [new HumanMessage("Deploy payments-api with 8 replicas, 512 MB; health check on /healthz every 10 s with a 2 s timeout.")],
  });
  const outcome = result.responseOutcome;
  if (outcome?.success) {
    console.log(`valid answer after ${outcome.attempts} attempt(s):`, JSON.stringify(outcome.value));
  } else {
    console.log(`no valid answer (${outcome?.stopReason ?? "no outcome"}):`, outcome?.errors.join("; "));
    process.exitCode = 1;
  }
}
