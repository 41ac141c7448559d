import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { defineSpec } from "../../src/specs/spec.js";
import { promptOf, scriptedModel } from "../../testkit/scripted-model.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const BROKEN = JSON.stringify({
  service_name: "payments-api",
  replicas: 8,
  resources: { cpu_limit: 0.5, memory_limit_mb: 512 },
  health_check: { path: "/healthz", timeout_seconds: 30, interval_seconds: 10 },
});
const REQUEST = { request: "A deployment config for payments-api with 8 replicas" };

describe("validation graph with a scripted model", () => {
  it("valid on the first try: one model call, success, stop reason valid", async () => {
    const model = scriptedModel([VALID]);
    const graph = buildValidationGraph({ model });
    const out = await graph.invoke(REQUEST);
    expect(model.callCount).toBe(1);
    expect(out.success).toBe(true);
    expect(out.stopReason).toBe("valid");
    expect(out.attempts).toBe(1);
    expect(out.errors).toEqual([]);
    expect(out.value).toEqual(JSON.parse(VALID));
    expect(out.spec).toBe("deployment-config");
    expect(out.history).toHaveLength(1);
    expect(out.usage.calls).toBe(1);
    expect(out.usage.totalTokens).toBeGreaterThan(0);
  });

  it("invalid then fixed: two calls; the retry prompt carries the exact errors and the previous output", async () => {
    const model = scriptedModel([BROKEN, VALID]);
    const out = await buildValidationGraph({ model }).invoke(REQUEST);
    expect(model.callCount).toBe(2);
    expect(out.success).toBe(true);
    expect(out.attempts).toBe(2);
    expect(out.history.map((h) => h.valid)).toEqual([false, true]);
    const expectedErrors = [RULES.replicasNeedCpu(0.5, 8), RULES.timeoutBelowInterval(30, 10)];
    expect(out.history[0].errors).toEqual(expectedErrors);
    const retry = promptOf(model, 1);
    for (const e of expectedErrors) expect(retry).toContain(e);
    expect(retry).toContain(BROKEN);
    expect(retry).toContain(REQUEST.request);
    // The first prompt has no errors in it; both carry the constraints.
    expect(promptOf(model, 0)).not.toContain("A validator rejected it");
    expect(promptOf(model, 0)).toContain("replicas > 5");
    expect(out.usage.calls).toBe(2);
    expect(out.usage.totalTokens).toBe(out.history[0].usage.totalTokens + out.history[1].usage.totalTokens);
  });

  it("never valid: exactly maxAttempts calls, success false with the last output and its errors", async () => {
    const model = scriptedModel([BROKEN, BROKEN, BROKEN, BROKEN, BROKEN]);
    const out = await buildValidationGraph({ model }).invoke(REQUEST, { context: { maxAttempts: 4 } });
    expect(model.callCount).toBe(4);
    expect(out.success).toBe(false);
    expect(out.stopReason).toBe("max_attempts");
    expect(out.attempts).toBe(4);
    expect(out.value).toEqual(JSON.parse(BROKEN));
    expect(out.errors).toHaveLength(2);
    expect(out.history).toHaveLength(4);
  });

  it("defaults to three attempts", async () => {
    const model = scriptedModel([BROKEN, BROKEN, BROKEN, VALID]);
    const out = await buildValidationGraph({ model }).invoke(REQUEST);
    expect(model.callCount).toBe(3);
    expect(out.success).toBe(false);
  });

  it("stops on no progress when enabled (same errors twice in a row)", async () => {
    const model = scriptedModel([BROKEN, BROKEN, VALID]);
    const out = await buildValidationGraph({ model }).invoke(REQUEST, { context: { stopOnNoProgress: true, maxAttempts: 5 } });
    expect(model.callCount).toBe(2);
    expect(out.stopReason).toBe("no_progress");
    expect(out.success).toBe(false);
  });

  it("feeds a parse error back and recovers", async () => {
    const model = scriptedModel(['Sure! {"service_name": "x", ', `\`\`\`json\n${VALID}\n\`\`\``]);
    const out = await buildValidationGraph({ model }).invoke(REQUEST);
    expect(out.success).toBe(true);
    expect(out.history[0].errors[0]).toMatch(/truncated/);
    expect(promptOf(model, 1)).toMatch(/truncated/);
    expect(out.value).toEqual(JSON.parse(VALID));
  });

  it("retry prompts do not grow with the attempt number", async () => {
    const model = scriptedModel(Array(6).fill(BROKEN));
    await buildValidationGraph({ model }).invoke(REQUEST, { context: { maxAttempts: 6 } });
    const sizes = model.calls.map((_, i) => promptOf(model, i).length);
    expect(new Set(sizes.slice(1)).size).toBe(1);
  });

  it("uses the spec named in the run config", async () => {
    const example = JSON.stringify(builtinSpecs.get("db-query")!.example);
    const model = scriptedModel([example]);
    const out = await buildValidationGraph({ model }).invoke({ request: "orders query" }, { context: { spec: "db-query" } });
    expect(out.success).toBe(true);
    expect(out.spec).toBe("db-query");
  });

  it("accepts an inline JSON spec through the run config", async () => {
    const spec = JSON.stringify({
      name: "window",
      schema: {
        type: "object",
        required: ["start", "end"],
        properties: { start: { type: "integer" }, end: { type: "integer", exclusiveMinimum: { $data: "1/start" } } },
      },
    });
    const model = scriptedModel(['{"start": 5, "end": 3}', '{"start": 5, "end": 9}']);
    const out = await buildValidationGraph({ model }).invoke({ request: "a window" }, { context: { spec } });
    expect(out.success).toBe(true);
    expect(out.spec).toBe("window");
    expect(out.history[0].errors).toEqual(["end is 3; it must be > 5 (the value of start)"]);
  });

  it("refuses bad configuration and bad requests before any model call", async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>, RegExp]> = [
      [REQUEST, { maxAttempts: 0 }, /maxAttempts must be an integer from 1 to 20/],
      [REQUEST, { maxAttempts: 21 }, /maxAttempts must be an integer from 1 to 20/],
      [REQUEST, { maxAttempts: 2.5 }, /maxAttempts must be an integer from 1 to 20/],
      [REQUEST, { maxAttempts: "3" }, /maxAttempts must be an integer from 1 to 20; got "3" \(a string\)/],
      [REQUEST, { spec: "no-such-spec" }, /Unknown spec "no-such-spec".*deployment-config/],
      [REQUEST, { spec: '{"schema": {"type": "strin"}}' }, /not a valid JSON Schema/],
      [{ request: "   " }, {}, /request is empty/],
      [{ request: 42 }, {}, /request must be a string/],
    ];
    for (const [input, context, message] of cases) {
      const model = scriptedModel([VALID]);
      await expect(buildValidationGraph({ model }).invoke(input as never, { context })).rejects.toThrow(message);
      expect(model.callCount).toBe(0);
    }
  });

  it("a provider failure does not count as an attempt and the checkpoint keeps earlier attempts", async () => {
    const failure = Object.assign(new Error("Service Unavailable"), { status: 503 });
    const model = scriptedModel([BROKEN, failure, VALID]);
    const checkpointer = new MemorySaver();
    const graph = buildValidationGraph({ model, checkpointer });
    const config = { configurable: { thread_id: "t1" } };
    await expect(graph.invoke(REQUEST, config)).rejects.toThrow(/HTTP 503.*Service Unavailable/);
    const saved = await graph.getState(config);
    expect(saved.values.attempts).toBe(1);
    expect(saved.values.history).toHaveLength(1);
    // Resume the same thread: the run continues at attempt 2 with the errors of attempt 1.
    const out = await graph.invoke(null, config);
    expect(out.success).toBe(true);
    expect(out.attempts).toBe(2);
    expect(out.history.map((h) => h.attempt)).toEqual([1, 2]);
  });

  it("a finished thread given a new request starts a new run", async () => {
    const model = scriptedModel([VALID, BROKEN, VALID]);
    const graph = buildValidationGraph({ model, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t2" } };
    await graph.invoke(REQUEST, config);
    const second = await graph.invoke({ request: "another one" }, config);
    expect(second.attempts).toBe(2);
    expect(second.history.map((h) => h.attempt)).toEqual([1, 2]);
    expect(second.usage.calls).toBe(2);
  });
});

describe("builder options", () => {
  it("takes a code-defined spec with its own business rule, and a default attempt limit", async () => {
    const spec = defineSpec({
      name: "discount",
      description: "A discount code.",
      schema: { type: "object", required: ["code", "percent"], properties: { code: { type: "string" }, percent: { type: "integer", minimum: 1 } } },
      rules: [
        {
          id: "big-discounts-need-vip-codes",
          description: "percent > 30 requires a code starting with VIP-.",
          inputs: { code: "string", percent: "integer" },
          check: (v) =>
            v.percent > 30 && !v.code.startsWith("VIP-")
              ? `code is ${JSON.stringify(v.code)}; percent=${v.percent} requires a code starting with "VIP-"`
              : null,
        },
      ],
    });
    const model = scriptedModel(['{"code": "SAVE", "percent": 40}', '{"code": "SAVE", "percent": 40}', '{"code": "VIP-SAVE", "percent": 40}']);
    const out = await buildValidationGraph({ model, spec, maxAttempts: 2 }).invoke({ request: "a 40% code" });
    expect(out.spec).toBe("discount");
    expect(out.success).toBe(false);
    expect(out.attempts).toBe(2);
    expect(out.errors).toEqual(['code is "SAVE"; percent=40 requires a code starting with "VIP-"']);
    // run config still overrides the builder's defaults
    const again = await buildValidationGraph({
      model: scriptedModel(['{"code": "SAVE", "percent": 40}', '{"code": "VIP-1", "percent": 40}']),
      spec,
      maxAttempts: 1,
    }).invoke({ request: "a 40% code" }, { context: { maxAttempts: 2 } });
    expect(again.success).toBe(true);
  });
});
