/**
 * A hand-written checker of the deployment-config spec: the article's JSON
 * Schema and its two cross-field rules, written out field by field in plain
 * TypeScript. It is the speed floor the generic validator is compared with.
 *
 * It reports every problem, with the same messages, in the same order, as
 * `checkValueSync(deploymentConfigSpec, value)` (schema errors in schema
 * order, then the rules; a rule runs only when its inputs are present and
 * well typed). The benchmark checks that on every input it times.
 */
import { describeValue } from "../src/shared/text.js";
import { deploymentConfigMessages } from "../src/specs/builtin/deployment-config.js";

export interface CheckResult {
  valid: boolean;
  errors: string[];
}

const SERVICE_NAME = /^[a-z][a-z0-9-]*$/;
const HEALTH_PATH = /^\//;

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function isInteger(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v);
}

function isNumber(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

function typeError(path: string, value: unknown, expected: string): string {
  let kind = "";
  if (value !== null && typeof value !== "object") kind = ` (${typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value})`;
  return `${path} is ${describeValue(value)}${kind}; it must be ${expected}`;
}

function checkString(errors: string[], path: string, value: unknown, pattern: RegExp, source: string): void {
  if (typeof value !== "string") errors.push(typeError(path, value, "a string"));
  else if (!pattern.test(value)) errors.push(`${path} is ${describeValue(value)}; it must match the pattern ${source}`);
}

function checkInteger(errors: string[], path: string, value: unknown, min: number, max?: number): void {
  if (!isInteger(value)) errors.push(typeError(path, value, "an integer"));
  if (isNumber(value)) {
    if (max !== undefined && value > max) errors.push(`${path} is ${value}; it must be <= ${max}`);
    if (value < min) errors.push(`${path} is ${value}; it must be >= ${min}`);
  }
}

function checkNumber(errors: string[], path: string, value: unknown, min: number, max: number): void {
  if (!isNumber(value)) {
    errors.push(typeError(path, value, "a number"));
    return;
  }
  if (value > max) errors.push(`${path} is ${value}; it must be <= ${max}`);
  if (value < min) errors.push(`${path} is ${value}; it must be >= ${min}`);
}

export function checkDeploymentConfig(value: unknown): CheckResult {
  if (!isObject(value)) return { valid: false, errors: [typeError("the value", value, "an object")] };
  const errors: string[] = [];
  const { service_name, replicas, resources, health_check } = value;

  if (service_name === undefined) errors.push("service_name is missing; it is required");
  if (replicas === undefined) errors.push("replicas is missing; it is required");
  if (resources === undefined) errors.push("resources is missing; it is required");
  if (health_check === undefined) errors.push("health_check is missing; it is required");

  if (service_name !== undefined) checkString(errors, "service_name", service_name, SERVICE_NAME, "^[a-z][a-z0-9-]*$");
  if (replicas !== undefined) checkInteger(errors, "replicas", replicas, 1, 20);
  if (resources !== undefined) {
    if (!isObject(resources)) errors.push(typeError("resources", resources, "an object"));
    else {
      if (resources.cpu_limit === undefined) errors.push("resources.cpu_limit is missing; it is required");
      if (resources.memory_limit_mb === undefined) errors.push("resources.memory_limit_mb is missing; it is required");
      if (resources.cpu_limit !== undefined) checkNumber(errors, "resources.cpu_limit", resources.cpu_limit, 0.1, 8.0);
      if (resources.memory_limit_mb !== undefined) checkInteger(errors, "resources.memory_limit_mb", resources.memory_limit_mb, 128, 16384);
    }
  }
  if (health_check !== undefined) {
    if (!isObject(health_check)) errors.push(typeError("health_check", health_check, "an object"));
    else {
      if (health_check.path === undefined) errors.push("health_check.path is missing; it is required");
      if (health_check.timeout_seconds === undefined) errors.push("health_check.timeout_seconds is missing; it is required");
      if (health_check.interval_seconds === undefined) errors.push("health_check.interval_seconds is missing; it is required");
      if (health_check.path !== undefined) checkString(errors, "health_check.path", health_check.path, HEALTH_PATH, "^/");
      if (health_check.timeout_seconds !== undefined) checkInteger(errors, "health_check.timeout_seconds", health_check.timeout_seconds, 1);
      if (health_check.interval_seconds !== undefined) checkInteger(errors, "health_check.interval_seconds", health_check.interval_seconds, 5);
    }
  }

  // Cross-field rules: each runs when its inputs are present and well typed.
  if (isInteger(replicas) && isObject(resources) && Object.hasOwn(resources, "cpu_limit") && isNumber(resources.cpu_limit)) {
    if (replicas > 5 && resources.cpu_limit < 1.0) {
      errors.push(deploymentConfigMessages.replicasNeedCpu(resources.cpu_limit, replicas));
    }
  }
  if (
    isObject(health_check) &&
    Object.hasOwn(health_check, "timeout_seconds") &&
    Object.hasOwn(health_check, "interval_seconds") &&
    isInteger(health_check.timeout_seconds) &&
    isInteger(health_check.interval_seconds) &&
    health_check.timeout_seconds >= health_check.interval_seconds
  ) {
    errors.push(deploymentConfigMessages.timeoutBelowInterval(health_check.timeout_seconds, health_check.interval_seconds));
  }
  return { valid: errors.length === 0, errors };
}
