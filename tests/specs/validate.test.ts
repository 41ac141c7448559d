import { describe, it, expect } from "vitest";
import { apiRequestMessages as API, apiRequestSpec } from "../../src/specs/builtin/api-request.js";
import { dbQueryMessages as DB, dbQuerySpec } from "../../src/specs/builtin/db-query.js";
import { deploymentConfigSpec } from "../../src/specs/builtin/deployment-config.js";
import { signupFormMessages as SIGNUP, signupFormSpec } from "../../src/specs/builtin/signup-form.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import type { Spec } from "../../src/specs/spec.js";
import { checkValueSync } from "../../src/specs/check.js";
import { pointerToPath } from "../../src/json/paths.js";
import { DEFAULT_VALIDATION_LIMITS, type ValidationLimits } from "../../src/specs/messages.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

type Json = Record<string, any>;

/** A fresh, valid deployment config. */
function deployment(): Json {
  return {
    service_name: "payments-api",
    replicas: 3,
    resources: { cpu_limit: 0.5, memory_limit_mb: 512 },
    health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
  };
}

/** A copy of `base` with the dotted `path` set to `value` (or removed when `value` is `remove`). */
const remove = Symbol("remove");
function withField(base: Json, path: string, value: unknown): Json {
  const copy = structuredClone(base);
  const keys = path.split(".");
  let target: Json = copy;
  for (const key of keys.slice(0, -1)) target = target[key];
  const last = keys[keys.length - 1];
  if (value === remove) delete target[last];
  else target[last] = value;
  return copy;
}

function check(spec: Spec, value: unknown, limits?: Partial<ValidationLimits & { maxChars: number }>) {
  return checkValueSync(spec, value, { limits });
}

/** Errors for the deployment spec with one field changed. */
function deploymentErrors(path: string, value: unknown): string[] {
  return check(deploymentConfigSpec, withField(deployment(), path, value)).errors;
}

function expectValid(spec: Spec, value: unknown): void {
  const report = check(spec, value);
  expect(report.errors).toEqual([]);
  expect(report.valid).toBe(true);
  expect(report.problemCount).toBe(0);
}

describe("deployment-config: the valid baseline", () => {
  it("accepts the baseline object and the spec's own example", () => {
    expectValid(deploymentConfigSpec, deployment());
    expectValid(deploymentConfigSpec, deploymentConfigSpec.example);
  });

  it("reports valid/problemCount consistently with the errors", () => {
    const report = check(deploymentConfigSpec, withField(deployment(), "replicas", 0));
    expect(report.valid).toBe(false);
    expect(report.problemCount).toBe(1);
    expect(report.errors).toHaveLength(1);
  });
});

describe("deployment-config: replicas (integer, 1..20)", () => {
  it("rejects 0, below the minimum", () => {
    expect(deploymentErrors("replicas", 0)).toEqual(["replicas is 0; it must be >= 1"]);
  });

  it("accepts 1, the minimum", () => {
    expectValid(deploymentConfigSpec, withField(deployment(), "replicas", 1));
  });

  it("accepts 20, the maximum (with enough CPU for the replicas rule)", () => {
    const value = withField(withField(deployment(), "replicas", 20), "resources.cpu_limit", 1.0);
    expectValid(deploymentConfigSpec, value);
  });

  it("rejects 21, above the maximum", () => {
    const value = withField(withField(deployment(), "replicas", 21), "resources.cpu_limit", 1.0);
    expect(check(deploymentConfigSpec, value).errors).toEqual(["replicas is 21; it must be <= 20"]);
  });

  it("rejects the non-integer 2.5 and says what type it found", () => {
    expect(deploymentErrors("replicas", 2.5)).toEqual(["replicas is 2.5 (number); it must be an integer"]);
  });

  it('rejects the string "3" and says it is a string', () => {
    expect(deploymentErrors("replicas", "3")).toEqual(['replicas is "3" (string); it must be an integer']);
  });

  it("accepts an integer written as 3.0 (it is the same JSON number)", () => {
    expectValid(deploymentConfigSpec, withField(deployment(), "replicas", 3.0));
  });

  it("reports both the type and the range for 0.5", () => {
    expect(deploymentErrors("replicas", 0.5)).toEqual(["replicas is 0.5 (number); it must be an integer", "replicas is 0.5; it must be >= 1"]);
  });
});

describe("deployment-config: resources.cpu_limit (number, 0.1..8.0)", () => {
  it("rejects 0.09", () => {
    expect(deploymentErrors("resources.cpu_limit", 0.09)).toEqual(["resources.cpu_limit is 0.09; it must be >= 0.1"]);
  });

  it("accepts 0.1", () => {
    expectValid(deploymentConfigSpec, withField(deployment(), "resources.cpu_limit", 0.1));
  });

  it("accepts 8.0", () => {
    expectValid(deploymentConfigSpec, withField(deployment(), "resources.cpu_limit", 8.0));
  });

  it("rejects 8.01", () => {
    expect(deploymentErrors("resources.cpu_limit", 8.01)).toEqual(["resources.cpu_limit is 8.01; it must be <= 8"]);
  });

  it("rejects a numeric string", () => {
    expect(deploymentErrors("resources.cpu_limit", "1.5")).toEqual(['resources.cpu_limit is "1.5" (string); it must be a number']);
  });
});

describe("deployment-config: resources.memory_limit_mb (integer, 128..16384)", () => {
  it("rejects 127", () => {
    expect(deploymentErrors("resources.memory_limit_mb", 127)).toEqual(["resources.memory_limit_mb is 127; it must be >= 128"]);
  });

  it("accepts 128 and 16384", () => {
    expectValid(deploymentConfigSpec, withField(deployment(), "resources.memory_limit_mb", 128));
    expectValid(deploymentConfigSpec, withField(deployment(), "resources.memory_limit_mb", 16384));
  });

  it("rejects 16385", () => {
    expect(deploymentErrors("resources.memory_limit_mb", 16385)).toEqual(["resources.memory_limit_mb is 16385; it must be <= 16384"]);
  });

  it("rejects the non-integer 256.5", () => {
    expect(deploymentErrors("resources.memory_limit_mb", 256.5)).toEqual(["resources.memory_limit_mb is 256.5 (number); it must be an integer"]);
  });
});

describe("deployment-config: service_name (pattern ^[a-z][a-z0-9-]*$)", () => {
  const patternError = (name: string) => `service_name is ${JSON.stringify(name)}; it must match the pattern ^[a-z][a-z0-9-]*$`;

  it.each(["1payments", "Payments-api", "payments_api", "payments api", "", "-payments"])("rejects %j", (name) => {
    expect(deploymentErrors("service_name", name)).toEqual([patternError(name)]);
  });

  it.each(["payments-api", "a", "api-v2-eu-west-1", "x-"])("accepts %j", (name) => {
    expectValid(deploymentConfigSpec, withField(deployment(), "service_name", name));
  });

  it("rejects a non-string name with a type message", () => {
    expect(deploymentErrors("service_name", 42)).toEqual(["service_name is 42 (integer); it must be a string"]);
  });
});

describe("deployment-config: health_check", () => {
  it("requires path to start with /", () => {
    expect(deploymentErrors("health_check.path", "healthz")).toEqual(['health_check.path is "healthz"; it must match the pattern ^/']);
    expectValid(deploymentConfigSpec, withField(deployment(), "health_check.path", "/"));
    expectValid(deploymentConfigSpec, withField(deployment(), "health_check.path", "/ready?full=1"));
  });

  it("rejects timeout_seconds 0 and accepts 1", () => {
    expect(deploymentErrors("health_check.timeout_seconds", 0)).toEqual(["health_check.timeout_seconds is 0; it must be >= 1"]);
    expectValid(deploymentConfigSpec, withField(deployment(), "health_check.timeout_seconds", 1));
  });

  it("rejects interval_seconds 4 and accepts 5", () => {
    const base = withField(deployment(), "health_check.timeout_seconds", 1);
    expect(check(deploymentConfigSpec, withField(base, "health_check.interval_seconds", 4)).errors).toEqual([
      "health_check.interval_seconds is 4; it must be >= 5",
    ]);
    expectValid(deploymentConfigSpec, withField(base, "health_check.interval_seconds", 5));
  });
});

describe("deployment-config: required fields", () => {
  it.each(["service_name", "replicas", "resources", "health_check"])("reports the missing top-level field %s", (field) => {
    expect(deploymentErrors(field, remove)).toEqual([`${field} is missing; it is required`]);
  });

  it.each(["resources.cpu_limit", "resources.memory_limit_mb", "health_check.path", "health_check.timeout_seconds", "health_check.interval_seconds"])(
    "reports the missing nested field with its dotted path: %s",
    (path) => {
      expect(deploymentErrors(path, remove)).toEqual([`${path} is missing; it is required`]);
    },
  );

  it("reports every missing field of an empty object, in the schema's order", () => {
    expect(check(deploymentConfigSpec, {}).errors).toEqual([
      "service_name is missing; it is required",
      "replicas is missing; it is required",
      "resources is missing; it is required",
      "health_check is missing; it is required",
    ]);
  });

  it("reports every missing nested field when the nested objects are empty", () => {
    const value = { ...deployment(), resources: {}, health_check: {} };
    expect(check(deploymentConfigSpec, value).errors).toEqual([
      "resources.cpu_limit is missing; it is required",
      "resources.memory_limit_mb is missing; it is required",
      "health_check.path is missing; it is required",
      "health_check.timeout_seconds is missing; it is required",
      "health_check.interval_seconds is missing; it is required",
    ]);
  });

  it("reports a value that is not an object at all", () => {
    expect(check(deploymentConfigSpec, null).errors).toEqual(["the value is null; it must be an object"]);
    expect(check(deploymentConfigSpec, [1, 2]).errors).toEqual(["the value is an array of 2 items; it must be an object"]);
    expect(check(deploymentConfigSpec, "config").errors).toEqual(['the value is "config" (string); it must be an object']);
    expect(check(deploymentConfigSpec, 7).errors).toEqual(["the value is 7 (integer); it must be an object"]);
  });

  it("reports a nested object of the wrong type", () => {
    expect(deploymentErrors("resources", "big")).toEqual(['resources is "big" (string); it must be an object']);
    expect(deploymentErrors("health_check", null)).toEqual(["health_check is null; it must be an object"]);
  });
});

describe("deployment-config: rule replicas-need-cpu", () => {
  const withReplicasAndCpu = (replicas: number, cpu: number) => withField(withField(deployment(), "replicas", replicas), "resources.cpu_limit", cpu);

  it("does not apply at replicas 5, even with little CPU", () => {
    expectValid(deploymentConfigSpec, withReplicasAndCpu(5, 0.1));
  });

  it("fires at replicas 6 with cpu_limit 0.99", () => {
    expect(check(deploymentConfigSpec, withReplicasAndCpu(6, 0.99)).errors).toEqual([RULES.replicasNeedCpu(0.99, 6)]);
  });

  it("is satisfied at replicas 6 with cpu_limit 1.0", () => {
    expectValid(deploymentConfigSpec, withReplicasAndCpu(6, 1.0));
  });

  it("fires on the article's example (replicas 8, cpu 0.5) with the exact message", () => {
    expect(check(deploymentConfigSpec, withReplicasAndCpu(8, 0.5)).errors).toEqual([RULES.replicasNeedCpu(0.5, 8)]);
  });

  it("still fires when replicas itself is out of range (both are reported)", () => {
    expect(check(deploymentConfigSpec, withReplicasAndCpu(25, 0.5)).errors).toEqual(["replicas is 25; it must be <= 20", RULES.replicasNeedCpu(0.5, 25)]);
  });
});

describe("deployment-config: rule timeout_seconds < interval_seconds", () => {
  const withTimes = (timeout: number, interval: number) =>
    withField(withField(deployment(), "health_check.timeout_seconds", timeout), "health_check.interval_seconds", interval);

  it("fires when timeout equals interval", () => {
    expect(check(deploymentConfigSpec, withTimes(10, 10)).errors).toEqual([RULES.timeoutBelowInterval(10, 10)]);
  });

  it("fires when timeout exceeds interval", () => {
    expect(check(deploymentConfigSpec, withTimes(30, 10)).errors).toEqual([RULES.timeoutBelowInterval(30, 10)]);
  });

  it("is satisfied when timeout is interval - 1", () => {
    expectValid(deploymentConfigSpec, withTimes(9, 10));
  });
});

describe("deployment-config: all problems in one report", () => {
  const broken = {
    service_name: "Payments_API",
    replicas: 8,
    resources: { cpu_limit: 0.5, memory_limit_mb: 100 },
    health_check: { path: "healthz", timeout_seconds: 30, interval_seconds: 10 },
  };

  it("reports every schema error and both rules together, schema errors first", () => {
    const report = check(deploymentConfigSpec, broken);
    expect(report.errors).toEqual([
      'service_name is "Payments_API"; it must match the pattern ^[a-z][a-z0-9-]*$',
      "resources.memory_limit_mb is 100; it must be >= 128",
      'health_check.path is "healthz"; it must match the pattern ^/',
      RULES.replicasNeedCpu(0.5, 8),
      RULES.timeoutBelowInterval(30, 10),
    ]);
    expect(report.problemCount).toBe(5);
    expect(report.valid).toBe(false);
  });

  it("runs the rules even when service_name is invalid or missing", () => {
    const { service_name: _, ...withoutName } = broken;
    const errors = check(deploymentConfigSpec, withoutName).errors;
    expect(errors[0]).toBe("service_name is missing; it is required");
    expect(errors).toContain(RULES.replicasNeedCpu(0.5, 8));
    expect(errors).toContain(RULES.timeoutBelowInterval(30, 10));
  });

  it("runs one rule when the other rule's inputs are unusable", () => {
    const value = { ...structuredClone(broken), health_check: "every 10s" };
    const errors = check(deploymentConfigSpec, value).errors;
    expect(errors).toContain(RULES.replicasNeedCpu(0.5, 8));
    expect(errors).toContain('health_check is "every 10s" (string); it must be an object');
    expect(errors.some((e) => e.includes("interval_seconds"))).toBe(false);
  });
});

describe("deployment-config: rules with missing or ill-typed inputs do not run", () => {
  const ruleMessage = /requires resources\.cpu_limit|must be < health_check\.interval_seconds/;

  it.each<[string, string, unknown]>([
    ["replicas missing", "replicas", remove],
    ["replicas a string", "replicas", "8"],
    ["replicas fractional", "replicas", 8.5],
    ["replicas null", "replicas", null],
    ["cpu_limit missing", "resources.cpu_limit", remove],
    ["cpu_limit a string", "resources.cpu_limit", "0.5"],
    ["cpu_limit null", "resources.cpu_limit", null],
    ["resources an array", "resources", [0.5, 512]],
    ["resources null", "resources", null],
  ])("skips the replicas rule when %s", (_label, path, value) => {
    const base = withField(deployment(), "replicas", 8);
    const dirty = withField(path.startsWith("resources.") ? withField(base, "resources.cpu_limit", 0.5) : base, path, value);
    const errors = check(deploymentConfigSpec, dirty).errors;
    expect(errors.length).toBeGreaterThan(0); // the schema still says what is wrong
    expect(errors.some((e) => ruleMessage.test(e))).toBe(false);
  });

  it.each<[string, string, unknown]>([
    ["timeout missing", "health_check.timeout_seconds", remove],
    ["interval missing", "health_check.interval_seconds", remove],
    ["timeout a string", "health_check.timeout_seconds", "30"],
    ["interval a boolean", "health_check.interval_seconds", true],
    ["interval fractional", "health_check.interval_seconds", 9.5],
    ["health_check an array", "health_check", []],
  ])("skips the timeout rule when %s", (_label, path, value) => {
    const base = withField(deployment(), "health_check.timeout_seconds", 30);
    const errors = check(deploymentConfigSpec, withField(base, path, value)).errors;
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.some((e) => ruleMessage.test(e))).toBe(false);
  });

  it("does not crash on any kind of top-level value", () => {
    for (const value of [undefined, null, 0, "", true, [], {}, [deployment()], { replicas: {}, resources: [] }]) {
      const report = check(deploymentConfigSpec, value);
      expect(report.valid).toBe(false);
      expect(report.errors.some((e) => ruleMessage.test(e))).toBe(false);
    }
  });

  it("does not read rule inputs through the prototype chain", () => {
    const value = JSON.parse('{"service_name":"a","__proto__":{"replicas":8,"resources":{"cpu_limit":0.5}}}');
    const errors = check(deploymentConfigSpec, value).errors;
    expect(errors).toEqual(['the value has a field named "__proto__", which a checkpoint would not give back as written; rename the field']);
    expect(errors.some((e) => ruleMessage.test(e))).toBe(false);
    expect(({} as Record<string, unknown>).replicas).toBeUndefined();
  });
});

describe("determinism", () => {
  const messy = {
    service_name: "Bad Name",
    replicas: 12,
    resources: { cpu_limit: 0.2, memory_limit_mb: 99999 },
    health_check: { path: "x", timeout_seconds: 0, interval_seconds: 0 },
  };

  /** The same object with the key order of every level reversed. */
  function reversed(value: unknown): unknown {
    if (Array.isArray(value)) return value.map(reversed);
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reversed(v)]),
    );
  }

  it("gives identical reports for the same input twice", () => {
    const first = check(deploymentConfigSpec, messy);
    const second = check(deploymentConfigSpec, structuredClone(messy));
    expect(second).toEqual(first);
    expect(first.errors.length).toBeGreaterThan(3);
  });

  it("gives the same messages when the input's keys are in another order", () => {
    const shuffled = reversed(messy);
    expect(Object.keys(shuffled as object)).toEqual(Object.keys(messy).reverse());
    const a = check(deploymentConfigSpec, messy);
    const b = check(deploymentConfigSpec, shuffled);
    expect([...b.errors].sort()).toEqual([...a.errors].sort());
    expect(b.problemCount).toBe(a.problemCount);
  });

  it("gives the same messages for a shuffled object with unexpected fields", () => {
    const value = { table: "t", columns: ["a"], filters: [], limit: 10, offset: 0, extra_one: 1, extra_two: 2 };
    const a = check(dbQuerySpec, value).errors;
    const b = check(dbQuerySpec, reversed(value)).errors;
    expect([...b].sort()).toEqual([...a].sort());
    expect(a).toContain('the object has an unexpected field "extra_one"; remove it');
  });
});

describe("caps on the report", () => {
  /** A db-query with exactly 100 problems: 60 bad columns (+ too many), 19 filters with two bad fields each, a bad table. */
  function hundredProblems() {
    return {
      table: "Orders",
      columns: Array.from({ length: 60 }, (_, i) => `Col${i}`),
      filters: Array.from({ length: 19 }, () => ({ column: "Bad Column", op: "~", value: 1 })),
      limit: 10,
      offset: 0,
    };
  }

  it("counts 100 problems and reports maxErrors of them plus a summary line", () => {
    const report = check(dbQuerySpec, hundredProblems());
    expect(report.problemCount).toBe(100);
    expect(report.valid).toBe(false);
    expect(report.errors).toHaveLength(DEFAULT_VALIDATION_LIMITS.maxErrors + 1);
    expect(DEFAULT_VALIDATION_LIMITS.maxErrors).toBe(20);
    expect(report.errors[20]).toBe("…and 80 more problems");
    expect(report.errors[0]).toBe('table is "Orders"; it must match the pattern ^[a-z_][a-z0-9_]*$');
    expect(report.errors[1]).toBe("columns is an array of 60 items; it must have at most 50 items");
    expect(report.errors[2]).toBe('columns[0] is "Col0"; it must match the pattern ^[a-z_][a-z0-9_]*$');
  });

  it("honours a custom maxErrors", () => {
    const report = check(dbQuerySpec, hundredProblems(), { maxErrors: 5 });
    expect(report.errors).toHaveLength(6);
    expect(report.errors[5]).toBe("…and 95 more problems");
    expect(report.problemCount).toBe(100);
  });

  it("uses the singular for exactly one hidden problem and adds no line when nothing is hidden", () => {
    const value = { ...deployment(), replicas: 0, resources: { cpu_limit: 0, memory_limit_mb: 0 } };
    const all = check(deploymentConfigSpec, value);
    expect(all.problemCount).toBe(3);
    expect(check(deploymentConfigSpec, value, { maxErrors: 2 }).errors).toEqual([...all.errors.slice(0, 2), "…and 1 more problem"]);
    expect(check(deploymentConfigSpec, value, { maxErrors: 3 }).errors).toEqual(all.errors);
  });

  it("keeps the first problems in order when cutting", () => {
    const full = check(dbQuerySpec, hundredProblems(), { maxErrors: 1000 });
    expect(full.errors).toHaveLength(100);
    const capped = check(dbQuerySpec, hundredProblems());
    expect(capped.errors.slice(0, 20)).toEqual(full.errors.slice(0, 20));
  });

  it("echoes a 900 KB string within the value cap", () => {
    const huge = "A".repeat(900_000);
    const errors = check(deploymentConfigSpec, withField(deployment(), "service_name", huge)).errors;
    expect(errors).toEqual([`service_name is "${"A".repeat(60)}"… (900000 characters); it must match the pattern ^[a-z][a-z0-9-]*$`]);
    expect(errors[0].length).toBeLessThan(200);
  });

  it("honours a custom maxValueChars", () => {
    const errors = check(deploymentConfigSpec, withField(deployment(), "service_name", "ABCDEFGHIJKLMNOP"), { maxValueChars: 5 }).errors;
    expect(errors).toEqual(['service_name is "ABCDE"… (16 characters); it must match the pattern ^[a-z][a-z0-9-]*$']);
  });

  it("bounds the echo of strings made of characters that need escaping", () => {
    const nasty = "\u0000".repeat(100_000);
    const [message] = check(deploymentConfigSpec, withField(deployment(), "service_name", nasty)).errors;
    expect(message.startsWith('service_name is "\\u0000')).toBe(true);
    expect(message).toContain("… (100000 characters)");
    expect(message.length).toBeLessThan(200);
  });

  it("bounds every message when values, keys and rule inputs are huge", () => {
    const long = "x".repeat(1_000_000);
    const value = {
      table: long,
      columns: [long, "id"],
      filters: [{ column: long, op: "in", value: long }],
      order_by: { column: `${long}y`, direction: "up" },
      limit: 10,
      offset: 0,
      [long]: 1,
    };
    const report = check(dbQuerySpec, value, { maxErrors: 1000, maxChars: 10_000_000 });
    expect(report.valid).toBe(false);
    // 300 characters, then how many were cut.
    for (const message of report.errors) expect(message.length).toBeLessThanOrEqual(330);
    // The rule's message names the huge values cut short (describeValue), within the bound.
    const ruleMessage = DB.orderByColumn(`${long}y`, [long, "id"]);
    expect(report.errors).toContain(ruleMessage);
    expect(ruleMessage).toContain(`"${"x".repeat(60)}"… (1000001 characters)`);
    expect(ruleMessage).toContain(`"${"x".repeat(30)}"… (1000000 characters), "id"`);
    expect(check(dbQuerySpec, value).errors.join("\n").length).toBeLessThan(21 * 301);
  });
});

describe("api-request spec", () => {
  function request(): Json {
    return structuredClone(apiRequestSpec.example) as Json;
  }

  it("accepts its example and a plain GET", () => {
    expectValid(apiRequestSpec, apiRequestSpec.example);
    expectValid(apiRequestSpec, { method: "GET", url: "https://api.example.com/v1/orders?page=2", headers: {}, timeout_ms: 1000, retries: 3 });
    expectValid(apiRequestSpec, { method: "DELETE", url: "https://api.example.com/v1/orders/1", headers: {}, body: null, timeout_ms: 1000, retries: 0 });
  });

  it("bodyless-methods: a GET with a body", () => {
    const value = { method: "GET", url: "https://api.example.com/x", headers: {}, body: { a: 1 }, timeout_ms: 1000, retries: 0 };
    expect(check(apiRequestSpec, value).errors).toEqual([API.bodyNotAllowed("GET")]);
  });

  it("body-needs-content-type: a PUT without body or Content-Type reports both", () => {
    const value = { method: "PUT", url: "https://api.example.com/x", headers: {}, timeout_ms: 1000, retries: 0 };
    expect(check(apiRequestSpec, value).errors).toEqual([API.bodyRequired(undefined, "PUT"), API.contentType(undefined, "PUT")]);
  });

  it("body-needs-content-type: a null body and the wrong Content-Type", () => {
    const value = { method: "PATCH", url: "https://api.example.com/x", headers: { "Content-Type": "text/plain" }, body: null, timeout_ms: 1000, retries: 0 };
    expect(check(apiRequestSpec, value).errors).toEqual([API.bodyRequired(null, "PATCH"), API.contentType("text/plain", "PATCH")]);
  });

  it("retried-post-needs-idempotency-key: fires with retries > 0, not with retries 0", () => {
    const value = request();
    delete value.headers["Idempotency-Key"];
    expect(check(apiRequestSpec, value).errors).toEqual([API.idempotencyKey({}, 2)]);
    expectValid(apiRequestSpec, { ...value, retries: 0 });
  });

  it("retried-post-needs-idempotency-key: a non-string key is named, not called missing", () => {
    const value = request();
    value.headers["Idempotency-Key"] = 42;
    expect(check(apiRequestSpec, value).errors).toEqual([
      'headers["Idempotency-Key"] is 42 (integer); it must be a string',
      API.idempotencyKey({ "Idempotency-Key": 42 }, 2),
    ]);
  });

  it("retry-budget: fires above 120000 ms in total and not at exactly 120000", () => {
    expect(check(apiRequestSpec, { ...request(), timeout_ms: 60000, retries: 2 }).errors).toEqual([API.retryBudget(60000, 2)]);
    expectValid(apiRequestSpec, { ...request(), timeout_ms: 40000, retries: 2 });
  });

  it("describes a bad header name as a field name, once", () => {
    const value = request();
    value.headers["Bad Header!"] = "x";
    expect(check(apiRequestSpec, value).errors).toEqual([
      'headers has a field named "Bad Header!"; field names must match the pattern ^[A-Za-z0-9-]+$ (rename or remove it)',
    ]);
  });

  it("names both allowed types of a union and unexpected fields", () => {
    const value = { ...request(), body: "text", verbose: true };
    expect(check(apiRequestSpec, value).errors).toEqual([
      'the object has an unexpected field "verbose"; remove it',
      'body is "text" (string); it must be an object or null',
    ]);
  });

  it("lists the allowed values of an enum", () => {
    const value = { ...request(), method: "FETCH" };
    expect(check(apiRequestSpec, value).errors).toEqual(['method is "FETCH"; it must be one of "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"']);
  });
});

describe("db-query spec", () => {
  function query(): Json {
    return structuredClone(dbQuerySpec.example) as Json;
  }

  it("accepts its example", () => {
    expectValid(dbQuerySpec, dbQuerySpec.example);
  });

  it("order-by-selected-column: the ordering column must be selected", () => {
    const value = { ...query(), columns: ["id", "customer_id"], order_by: { column: "total", direction: "asc" } };
    expect(check(dbQuerySpec, value).errors).toEqual([DB.orderByColumn("total", ["id", "customer_id"])]);
  });

  it("offset-needs-order: offset > 0 without order_by", () => {
    const value = query();
    delete value.order_by;
    value.offset = 10;
    expect(check(dbQuerySpec, value).errors).toEqual([DB.offsetNeedsOrder(10)]);
    expectValid(dbQuerySpec, { ...value, offset: 0 });
  });

  it("pagination-window: limit + offset over 10000, and exactly 10000", () => {
    expect(check(dbQuerySpec, { ...query(), limit: 1000, offset: 9001 }).errors).toEqual([DB.paginationWindow(1000, 9001)]);
    expectValid(dbQuerySpec, { ...query(), limit: 1000, offset: 9000 });
  });

  it("in-needs-list: op in needs a non-empty array, other ops a single value", () => {
    const value = {
      ...query(),
      filters: [
        { column: "status", op: "in", value: "paid" },
        { column: "status", op: "in", value: [] },
        { column: "total", op: "=", value: [1, 2] },
        { column: "total", op: ">", value: 10 },
        { column: "status", op: "in", value: Array.from({ length: 101 }, (_, i) => i) },
      ],
    };
    expect(check(dbQuerySpec, value).errors).toEqual([
      DB.inNeedsList(0, "paid"),
      DB.inNeedsList(1, []),
      DB.singleValue(2, "="),
      DB.inNeedsList(
        4,
        Array.from({ length: 101 }, (_, i) => i),
      ),
    ]);
  });

  it("reports duplicate columns with their indexes in order", () => {
    const value = { ...query(), columns: ["id", "total", "id", "created_at"] };
    expect(check(dbQuerySpec, value).errors).toEqual(["columns has duplicate items at [0] and [2]; items must be unique"]);
  });

  it("skips in-needs-list for filters that are not objects, without crashing", () => {
    const value = { ...query(), filters: [null, 3, "x", [], { op: "in" }] };
    const errors = check(dbQuerySpec, value).errors;
    expect(errors).toContain("filters[0] is null; it must be an object");
    // No message of the rule: none ends as its messages end.
    const ruleEnding = (message: string) => message.slice(message.indexOf(";"));
    expect(errors.filter((e) => e.endsWith(ruleEnding(DB.inNeedsList(0, null))) || e.endsWith(ruleEnding(DB.singleValue(0, "="))))).toEqual([]);
  });
});

describe("signup-form spec", () => {
  function form(): Json {
    return structuredClone(signupFormSpec.example) as Json;
  }

  it("accepts its example", () => {
    expectValid(signupFormSpec, signupFormSpec.example);
  });

  it("passwords-match", () => {
    expect(check(signupFormSpec, { ...form(), confirm_password: "correct-horse-battery!" }).errors).toEqual([SIGNUP.passwordsDiffer()]);
  });

  it("minors-need-consent: missing, false, and given consent; 18 needs none", () => {
    expect(check(signupFormSpec, { ...form(), age: 15 }).errors).toEqual([SIGNUP.consentRequired(undefined, 15)]);
    expect(check(signupFormSpec, { ...form(), age: 17, parental_consent: false }).errors).toEqual([SIGNUP.consentRequired(false, 17)]);
    expectValid(signupFormSpec, { ...form(), age: 15, parental_consent: true });
    expectValid(signupFormSpec, { ...form(), age: 18 });
  });

  it("password-not-email", () => {
    const value = { ...form(), email: "margaret@example.com", password: "Margaret-rules-1234", confirm_password: "Margaret-rules-1234" };
    expect(check(signupFormSpec, value).errors).toEqual([SIGNUP.passwordHasEmail("margaret")]);
  });

  it("reports formats and constants precisely", () => {
    const value = { ...form(), email: "not-an-email", accept_terms: false, country: "gb" };
    expect(check(signupFormSpec, value).errors).toEqual([
      'email is "not-an-email"; it must be a valid email',
      'country is "gb"; it must match the pattern ^[A-Z]{2}$',
      "accept_terms is false; it must be true",
    ]);
  });
});

describe("every built-in spec", () => {
  it.each([...builtinSpecs.values()].map((s) => [s.name, s] as const))("%s: the example is valid and every rule has a description", (_name, spec) => {
    expect(spec.example).toBeDefined();
    expectValid(spec, spec.example);
    for (const rule of spec.rules) expect(rule.description.length).toBeGreaterThan(10);
  });
});

describe("pointerToPath", () => {
  it("turns JSON pointers into readable paths", () => {
    expect(pointerToPath("")).toBe("");
    expect(pointerToPath("/a/0/b")).toBe("a[0].b");
    expect(pointerToPath("/headers/Content-Type")).toBe('headers["Content-Type"]');
    expect(pointerToPath("/health_check/timeout_seconds")).toBe("health_check.timeout_seconds");
    expect(pointerToPath("/a~1b/c~0d")).toBe('["a/b"]["c~d"]');
    expect(pointerToPath("/has space")).toBe('["has space"]');
  });
});
