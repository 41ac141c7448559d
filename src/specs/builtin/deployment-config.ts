/** The deployment-config spec: the source article's schema and its two cross-field rules, exactly. */
import { defineSpec } from "../spec.js";

/** The rules' messages, exported so that tests and tools match a rule through its message function, never a copy of its wording. */
export const deploymentConfigMessages = {
  replicasNeedCpu: (cpuLimit: number, replicas: number) => `resources.cpu_limit is ${cpuLimit}; replicas=${replicas} requires resources.cpu_limit >= 1.0`,
  timeoutBelowInterval: (timeout: number, interval: number) =>
    `health_check.timeout_seconds is ${timeout}; it must be < health_check.interval_seconds (${interval})`,
};

export const deploymentConfigSpec = defineSpec({
  name: "deployment-config",
  description: "A service deployment configuration: name, replica count, resource limits and a health check.",
  schema: {
    type: "object",
    required: ["service_name", "replicas", "resources", "health_check"],
    properties: {
      service_name: { type: "string", pattern: "^[a-z][a-z0-9-]*$" },
      replicas: { type: "integer", minimum: 1, maximum: 20 },
      resources: {
        type: "object",
        required: ["cpu_limit", "memory_limit_mb"],
        properties: {
          cpu_limit: { type: "number", minimum: 0.1, maximum: 8.0 },
          memory_limit_mb: { type: "integer", minimum: 128, maximum: 16384 },
        },
      },
      health_check: {
        type: "object",
        required: ["path", "timeout_seconds", "interval_seconds"],
        properties: {
          path: { type: "string", pattern: "^/" },
          timeout_seconds: { type: "integer", minimum: 1 },
          interval_seconds: { type: "integer", minimum: 5 },
        },
      },
    },
  },
  rules: [
    {
      id: "replicas-need-cpu",
      description: "When replicas > 5, resources.cpu_limit must be >= 1.0.",
      inputs: { replicas: "integer", "resources.cpu_limit": "number" },
      check: (v) => (v.replicas > 5 && v["resources.cpu_limit"] < 1.0 ? deploymentConfigMessages.replicasNeedCpu(v["resources.cpu_limit"], v.replicas) : null),
    },
    {
      id: "timeout-below-interval",
      description: "health_check.timeout_seconds must be strictly less than health_check.interval_seconds.",
      inputs: { "health_check.timeout_seconds": "integer", "health_check.interval_seconds": "integer" },
      check: (v) =>
        v["health_check.timeout_seconds"] >= v["health_check.interval_seconds"]
          ? deploymentConfigMessages.timeoutBelowInterval(v["health_check.timeout_seconds"], v["health_check.interval_seconds"])
          : null,
    },
  ],
  example: {
    service_name: "payments-api",
    replicas: 3,
    resources: { cpu_limit: 0.5, memory_limit_mb: 512 },
    health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
  },
});
