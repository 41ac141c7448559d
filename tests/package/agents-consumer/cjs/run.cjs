/**
 * Consumer fixture in a CommonJS project with `langchain` installed beside the tarball: require() of both entry
 * points, and a createAgent with validatedResponseMiddleware and a scripted model whose first answer breaks the
 * deployment-config spec (a pattern and both cross-field rules) and whose second is valid. Prints one JSON line.
 */
const { AIMessage, HumanMessage } = require("@langchain/core/messages");
const { fakeModel } = require("@langchain/core/testing");
const { createAgent } = require("langchain");
const { checkValue } = require("langgraph-trustworthy-output");
const { guardToolsMiddleware, validatedResponseMiddleware } = require("langgraph-trustworthy-output/agents");

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
async function main() {
  const out = await agent.invoke({ messages: [new HumanMessage("Deploy payments-api with 8 replicas")] });
  // The check step of the same (CommonJS) build, on the first answer: what the middleware fed back.
  const errors = (await checkValue("deployment-config", broken)).errors;
  const modules = Object.keys(require.cache).filter((path) => path.includes("/node_modules/langgraph-trustworthy-output/"));
  console.log(
    JSON.stringify({
      outcome: out.responseOutcome,
      structuredResponse: out.structuredResponse,
      errors,
      feedback: model.calls[1].messages.at(-1).content,
      cjsOnly: modules.length > 0 && modules.every((path) => path.includes("/dist/cjs/src/")),
    }),
  );
}

// A failure ends the process with its error and exit status 1 (an unhandled rejection).
void main();
