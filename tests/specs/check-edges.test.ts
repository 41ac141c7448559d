/**
 * The check step at its edges: rules cannot change what was judged, promises never escape, nothing it is
 * handed makes it throw, slow rules share one deadline, and budgets take only what a provider can mean.
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { usageOf } from "../../src/shared/usage.js";
import { checkText, checkValue, checkValueSync } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type BusinessRule } from "../../src/specs/spec.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => void process.on("unhandledRejection", onUnhandled));
afterAll(() => void process.off("unhandledRejection", onUnhandled));

const deployment = resolveSpec("deployment-config");
const VALID = deployment.example as Record<string, unknown>;
const withRule = (rule: Omit<BusinessRule, "id" | "description" | "inputs"> & Partial<BusinessRule>) =>
  defineSpec({
    name: "ruled",
    description: "",
    schema: { type: "object", required: ["replicas"], properties: { replicas: { type: "integer", maximum: 10 } } },
    rules: [{ id: "r", description: "", inputs: { replicas: "integer" }, ...rule } as BusinessRule],
  });

describe("rules read what is judged and cannot change it", () => {
  it("a rule that writes to its document: the write fails, the verdict says so, and the value kept is the one the schema judged", async () => {
    const spec = withRule({ check: (_v, doc) => (((doc as { replicas: number }).replicas = 999), null) });
    for (const verdict of [await checkText(spec, '{"replicas": 3}', "model"), await checkValue(spec, { replicas: 3 }), checkValueSync(spec, { replicas: 3 })]) {
      expect(verdict.valid).toBe(false);
      expect(verdict.errors[0]).toMatch(/^rule "r" could not be checked: Cannot assign to read only property 'replicas'/);
      expect(verdict.value).toBeUndefined();
    }
    // A rule that writes to one of its input values (an object) fails the same way.
    const nested = defineSpec({
      name: "n",
      description: "",
      schema: { type: "object" },
      rules: [{ id: "w", description: "", inputs: { a: "object" }, check: (v) => ((v.a.x = 1), null) }],
    });
    expect((await checkValue(nested, { a: {} })).errors[0]).toMatch(/rule "w" could not be checked: Cannot add property x/);
  });

  it("an asynchronous rule that writes after the verdict changes nothing that was returned", async () => {
    let later: (() => void) | undefined;
    const spec = withRule({
      check: async (_v, doc) => {
        later = () => {
          try {
            (doc as { replicas: number }).replicas = 999;
          } catch {
            // frozen: the write is refused
          }
        };
        return null;
      },
    });
    const verdict = await checkValue(spec, { replicas: 3 });
    expect(verdict.valid).toBe(true);
    later!();
    expect(verdict.value).toEqual({ replicas: 3 });
    expect(verdict.parsed).toEqual({ replicas: 3 });
  });

  it("a rule that writes to the run's context changes neither the caller's context nor a later verdict", async () => {
    const context = { max: 5, seen: [] as number[] };
    const spec = defineSpec({
      name: "ctx",
      description: "",
      schema: { type: "object" },
      rules: [
        {
          id: "max",
          description: "",
          inputs: { replicas: "integer" },
          check: (v: Record<string, number>, _doc: unknown, ctx: typeof context) => {
            try {
              ctx.max = 100;
            } catch {
              // frozen
            }
            return v.replicas > ctx.max ? `replicas ${v.replicas} is over ${ctx.max}` : null;
          },
        },
      ],
    } as never);
    expect((await checkValue(spec, { replicas: 7 }, { context })).valid).toBe(false);
    expect(context.max).toBe(5);
    expect((await checkValue(spec, { replicas: 7 }, { context })).errors).toEqual(["replicas 7 is over 5"]);
  });

  it("a rule's context may carry a live object (a client): it is handed on as it is, not copied or frozen", async () => {
    class Client {
      calls = 0;
      has(name: string) {
        this.calls++;
        return name === "api";
      }
    }
    const client = new Client();
    const spec = defineSpec({
      name: "live",
      description: "",
      schema: { type: "object" },
      rules: [
        {
          id: "known",
          description: "",
          inputs: { service: "string" },
          check: (v, _d, ctx: { client: Client }) => (ctx.client.has(v.service) ? null : "unknown service"),
        },
      ],
    });
    expect((await checkValue(spec, { service: "api" }, { context: { client } })).valid).toBe(true);
    expect(client.calls).toBe(1);
  });

  it("a zod refinement that writes to what it reads is refused, and the result is what was judged", async () => {
    const spec = defineSpec({
      name: "zw",
      description: "",
      schema: z.object({ tags: z.array(z.string()), meta: z.any() }).refine((v) => ((v.meta.x = 1), true)),
    });
    const verdict = await checkValue(spec, { tags: ["a"], meta: {} });
    expect(verdict.valid).toBe(false);
    expect(verdict.errors.join()).toMatch(/Cannot add property x/);
  });
});

describe("promises never escape the check step", () => {
  afterEach(() => expect(unhandled).toEqual([]));

  it("a zod refinement written as a plain function that returns a rejected Promise: the synchronous check refuses it, nothing is left unobserved", async () => {
    const spec = defineSpec({
      name: "zp",
      description: "",
      schema: z.object({ a: z.number() }).refine(() => Promise.reject(new Error("lookup failed")) as unknown as boolean),
    });
    const report = checkValueSync(spec, { a: 1 });
    expect(report.valid).toBe(false);
    expect(report.errors[0]).toMatch(/a refinement or transform returned a Promise, which only the asynchronous check step .* can wait for/);
    const verdict = await checkValue(spec, { a: 1 });
    expect(verdict.valid).toBe(false);
    expect(verdict.errors[0]).toMatch(/lookup failed/);
    // Let any escaped rejection surface before afterEach looks.
    await new Promise((resolve) => setTimeout(resolve, 20));
  });

  it("the synchronous check gives zod's own verdict when nothing is asynchronous (issues and output as safeParse gives them)", () => {
    const schema = z.object({ n: z.number().min(5), s: z.string().transform((s) => s.toUpperCase()) });
    const spec = defineSpec({ name: "zs", description: "", schema });
    expect(checkValueSync(spec, { n: 7, s: "x" })).toMatchObject({ valid: true, value: { n: 7, s: "X" } });
    const bad = checkValueSync(spec, { n: 1, s: "x" });
    expect(bad.valid).toBe(false);
    expect(bad.errors.join()).toMatch(/n is 1/);
  });

  it("N rules that never settle take the deadline once, not N times", async () => {
    vi.useFakeTimers();
    try {
      const never = () => new Promise<null>(() => undefined);
      const spec = defineSpec({
        name: "slow",
        description: "",
        schema: { type: "object" },
        rules: ["a", "b", "c"].map((id) => ({ id, description: "", inputs: { x: "integer" as const }, check: never })),
      });
      let verdict: Awaited<ReturnType<typeof checkValue>> | undefined;
      void checkValue(spec, { x: 1 }, { timeoutMs: 1_000 }).then((v) => (verdict = v));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(verdict?.valid).toBe(false);
      expect(verdict?.errors).toEqual(["a", "b", "c"].map((id) => `rule "${id}" could not be checked: it did not finish within 1000 ms`));
    } finally {
      vi.useRealTimers();
    }
  });

  it("parallel tool calls of a spec with an asynchronous rule are counted as the check step judges them: four valid calls all run", async () => {
    const spec = defineSpec({
      name: "lookup",
      description: "",
      schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
      rules: [{ id: "known", description: "", inputs: { n: "integer" }, check: async (v) => (v.n >= 0 ? null : "n is unknown") }],
    });
    const ran: unknown[] = [];
    const tool = guardedTool({ spec, name: "look_up", description: "Look up.", maxAttempts: 2, func: async (a: unknown) => (ran.push(a), "ok") });
    const model = fakeModel();
    model.respond(
      new AIMessage({ content: "", tool_calls: [0, 1, 2, 3].map((n) => ({ type: "tool_call" as const, name: "look_up", args: { n }, id: `call_${n}` })) }),
    );
    model.respond(new AIMessage("done"));
    await createReactAgent({ llm: model, tools: [tool] }).invoke({ messages: [new HumanMessage("look up four")] });
    expect(ran).toHaveLength(4);
  });
});

describe("nothing it is handed makes the check step throw", () => {
  it("an asynchronous rule rejecting with a value that cannot become text", async () => {
    const spec = withRule({ check: () => Promise.reject(Object.create(null)) });
    const verdict = await checkValue(spec, { replicas: 3 });
    expect(verdict.valid).toBe(false);
    expect(verdict.errors).toEqual(['rule "r" could not be checked: it failed: a value that cannot be shown as text']);
  });

  it("a rule throwing something whose message getter throws", async () => {
    const thrown = Object.defineProperty({}, "message", {
      get: () => {
        throw new Error("no");
      },
    });
    const spec = withRule({
      check: () => {
        throw thrown;
      },
    });
    expect((await checkValue(spec, { replicas: 3 })).errors).toEqual(['rule "r" could not be checked: a value that cannot be shown as text']);
  });

  it("a value given as data that is a Proxy whose traps throw", async () => {
    const hostile = new Proxy(
      {},
      {
        getPrototypeOf: () => {
          throw new Error("trap");
        },
        ownKeys: () => {
          throw new Error("trap");
        },
      },
    );
    for (const verdict of [await checkValue(deployment, hostile), checkValueSync(deployment, hostile), await checkValue(deployment, { nested: hostile })]) {
      expect(verdict.valid).toBe(false);
      expect(verdict.errors[0]).toMatch(/could not be read as JSON data \(reading it threw: trap\)/);
    }
  });
});

describe("budgets take only what a provider can mean", () => {
  it("usage counts that are negative, not finite or missing are not taken: the output is estimated, the total never below input + output", () => {
    const content = "x".repeat(400);
    expect(usageOf({ content, usage_metadata: { input_tokens: -99_500, output_tokens: -99_500, total_tokens: -199_000 } })).toEqual({
      inputTokens: 0,
      outputTokens: 100,
      totalTokens: 100,
      calls: 1,
    });
    expect(usageOf({ content, usage_metadata: { input_tokens: -99_500, output_tokens: 7, total_tokens: -99_493 } }, 2_000)).toEqual({
      inputTokens: 500,
      outputTokens: 7,
      totalTokens: 507,
      calls: 1,
    });
    expect(usageOf({ content })).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 1 });
    expect(usageOf({ content, usage_metadata: { input_tokens: 10, output_tokens: Number.NaN, total_tokens: 3 } })).toEqual({
      inputTokens: 10,
      outputTokens: 100,
      totalTokens: 110,
      calls: 1,
    });
    expect(usageOf({ content, usage_metadata: { input_tokens: 10, output_tokens: 20, total_tokens: 30 } })).toEqual({
      inputTokens: 10,
      outputTokens: 20,
      totalTokens: 30,
      calls: 1,
    });
  });

  it("a provider reporting -99,500 tokens a call does not buy a 2,500-token run more calls", async () => {
    const bad = JSON.stringify({ ...VALID, replicas: 50 });
    const model = scriptedModel(Array.from({ length: 10 }, () => bad));
    const original = model.invoke.bind(model);
    model.invoke = (async (...args: Parameters<typeof original>) => {
      const message = (await original(...args)) as AIMessage;
      message.usage_metadata = { input_tokens: -99_500, output_tokens: 0, total_tokens: -99_500 };
      return message;
    }) as typeof model.invoke;
    const out = await buildValidationGraph({ model }).invoke({ request: "a deployment" }, { context: { maxAttempts: 10, maxTokens: 2_500 } });
    expect(out.stopReason).toBe("budget");
    expect(out.usage.calls).toBeLessThan(10);
    expect(out.usage.totalTokens).toBeGreaterThanOrEqual(0);
  });
});

describe("one check family", () => {
  it("checkValueSync gives checkValue's verdict synchronously", async () => {
    const { checkValue, checkValueSync } = await import("../../src/specs/check.js");
    const bad = {
      service_name: "Payments API",
      replicas: 8,
      resources: { cpu_limit: 0.5, memory_limit_mb: 512 },
      health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
    };
    const sync = checkValueSync("deployment-config", bad, { limits: { maxErrors: 5 } });
    expect(sync).toEqual(await checkValue("deployment-config", bad, { limits: { maxErrors: 5 } }));
    expect(sync.valid).toBe(false);
    expect(sync.errors).toHaveLength(2);
  });
});
