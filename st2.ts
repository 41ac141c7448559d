import { createAgent, tool } from "langchain";
import { z } from "zod";
import { createChatModel, readEnvironment } from "./src/index.js";
import { guardToolsMiddleware, validatedResponseMiddleware } from "./src/agents/index.js";
process.env.LLM_MODEL = "simulated";
const deployService = tool(async (config) => `deployed ${config.service_name}`, {
  name: "deploy_service",
  description: "Deploy a service with this configuration.",
  schema: z.object({ service_name: z.string(), replicas: z.number() }).passthrough(),
});
const agent = createAgent({
  model: createChatModel({ model: readEnvironment().model, role: "agent" }),
  tools: [deployService],
  middleware: [validatedResponseMiddleware({ spec: "deployment-config" }), guardToolsMiddleware({ tools: { deploy_service: "deployment-config" } })],
});
const out = await agent.invoke({ messages: [{ role: "user", content: "Deploy payments-api with 8 replicas" }] });
for (const m of out.messages) console.log(m.getType(), JSON.stringify(m.content).slice(0, 400), JSON.stringify((m as any).tool_calls ?? "").slice(0, 600));
console.log(out.responseOutcome?.stopReason);
