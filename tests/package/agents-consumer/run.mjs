/**
 * Consumer fixture, in a project with `langchain` installed beside the
 * tarball: a createAgent with validatedResponseMiddleware and a scripted model whose
 * first answer breaks the deployment-config spec (a pattern and both
 * cross-field rules) and whose second is valid. Prints one JSON line.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createAgent } from "langchain";
import { guardToolsMiddleware, validatedResponseMiddleware } from "langgraph-trustworthy-output/agents";

const valid = {
  service_name: "payments-api",
  replicas: 8,
  resources: { cpu_limit: 1.0, memory_limit_mb: 512 },
  health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
};
const broken = { ...valid, resources: { cpu_limit: 0.5, memory_limit_mb: 512 }, health_check: { path: "healthz", timeout_seconds: 10, interval_seconds: 10 } };
const answer = (args, id) => new AIMessage({ content: "", tool_calls: [{ name: "extract-deployment-config", args, id, type: "tool_call" }] });

const model = fakeModel().respond(answer(broken, "a")).respond(answer(valid, "b"));
const agent = createAgent({
  model,
  tools: [],
  middleware: [validatedResponseMiddleware({ spec: "deployment-config" }), guardToolsMiddleware({ tools: { deploy_service: "deployment-config" } })],
});
const out = await agent.invoke({ messages: [new HumanMessage("Deploy payments-api with 8 replicas")] });
console.log(JSON.stringify({ outcome: out.responseOutcome, structuredResponse: out.structuredResponse, feedback: model.calls[1].messages.at(-1).content }));
