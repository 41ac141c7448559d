/** examples/guarded-agent.ts with a scripted model: the agent's first deploy_service call fails the spec, it gets the errors, fixes them and succeeds. */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { describe, expect, it } from "vitest";
import { AGENT_PROMPT, countDeployCalls, createDeployAgent, type DeploymentConfig } from "../../examples/guarded-agent.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const fixed: DeploymentConfig = {
  service_name: "payments-api",
  replicas: 8,
  resources: { cpu_limit: 1.0, memory_limit_mb: 512 },
  health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
};
const first = { ...fixed, resources: { cpu_limit: 0.5, memory_limit_mb: 512 }, health_check: { path: "healthz", timeout_seconds: 10, interval_seconds: 10 } };

const EXPECTED_ERRORS_TEXT = [
  "deploy_service call 1 of 3 was not run: its arguments do not match the deployment-config spec.",
  "Errors:",
  '1. health_check.path is "healthz"; it must match the pattern ^/',
  `2. ${RULES.replicasNeedCpu(0.5, 8)}`,
  `3. ${RULES.timeoutBelowInterval(10, 10)}`,
  "Fix these and call deploy_service again with the corrected arguments, keeping everything that was already right.",
].join("\n");

describe("examples/guarded-agent.ts", () => {
  it("fails once, gets the exact errors, fixes them and deploys: two calls, one run, with valid arguments", async () => {
    const model = fakeModel()
      .respondWithTools([{ name: "deploy_service", args: first, id: "call_a" }])
      .respondWithTools([{ name: "deploy_service", args: fixed, id: "call_b" }])
      .respond(new AIMessage("Deployed payments-api."));
    const deployed: DeploymentConfig[] = [];
    const agent = createDeployAgent({ model, deploy: (config) => (deployed.push(config), `deployed ${config.service_name}`) });

    const result = await agent.invoke({ messages: [new HumanMessage("Deploy payments-api with 8 replicas")] });

    expect(countDeployCalls(result.messages)).toEqual({ calls: 2, ran: 1 });
    expect(deployed).toEqual([fixed]);
    expect(model.callCount).toBe(3);
    // What the model received after its first call: the validator's exact messages.
    const second = model.calls[1].messages;
    expect(second[0].content).toBe(AGENT_PROMPT);
    expect(second.at(-1)!.getType()).toBe("tool");
    expect(second.at(-1)!.content).toBe(EXPECTED_ERRORS_TEXT);
    expect(model.calls[2].messages.at(-1)!.content).toBe("deployed payments-api");
    expect(String(result.messages.at(-1)!.content)).toBe("Deployed payments-api.");
  });

  it("stops after three failed calls: the tool refuses and the function never runs", async () => {
    const model = fakeModel();
    for (let i = 0; i < 4; i++) model.respondWithTools([{ name: "deploy_service", args: first }]);
    model.respond(new AIMessage("I could not make the configuration valid."));
    const deployed: DeploymentConfig[] = [];
    const agent = createDeployAgent({ model, deploy: (config) => (deployed.push(config), "deployed") });
    const result = await agent.invoke({ messages: [new HumanMessage("Deploy payments-api")] });
    expect(countDeployCalls(result.messages)).toEqual({ calls: 4, ran: 0 });
    expect(deployed).toEqual([]);
    expect(String(result.messages.at(-2)!.content)).toMatch(/^deploy_service refused this call without running it: 3 of 3 attempts already failed/);
  });
});
