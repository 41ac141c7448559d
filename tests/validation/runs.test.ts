/**
 * The validation graph's guarantees on every path: the front-door checks hold
 * whichever way the graph is compiled or configured, a new request never merges
 * into an interrupted run, and a resumed run keeps the settings it started with.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { MemorySaver } from "@langchain/langgraph";
import { getCurrentRunTree } from "langsmith/singletons/traceable";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ConfigurationError } from "../../src/errors.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { defineSpec } from "../../src/specs/spec.js";
import { ValidationConfigSchema } from "../../src/validation/configuration.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph, createValidationGraphBuilder } from "../../src/validation/graph.js";
import { promptOf, scriptedModel } from "../../testkit/scripted-model.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const BROKEN = JSON.stringify({
  service_name: "payments-api",
  replicas: 8,
  resources: { cpu_limit: 0.5, memory_limit_mb: 512 },
  health_check: { path: "/healthz", timeout_seconds: 5, interval_seconds: 10 },
});
const REQUEST = { request: "A deployment config for payments-api with 8 replicas" };
const failure = () => Object.assign(new Error("Service Unavailable"), { status: 503 });

describe("front-door checks belong to the graph", () => {
  const BAD: Array<[string, Record<string, unknown>, Record<string, unknown>, RegExp]> = [
    ["maxAttempts 0", REQUEST, { maxAttempts: 0 }, /maxAttempts must be an integer from 1 to 20; got 0/],
    ["maxAttempts 2.5", REQUEST, { maxAttempts: 2.5 }, /^maxAttempts must be an integer from 1 to 20; got 2.5$/],
    ["maxAttempts NaN", REQUEST, { maxAttempts: Number.NaN }, /^maxAttempts must be an integer from 1 to 20; got NaN$/],
    ['maxAttempts "3"', REQUEST, { maxAttempts: "3" }, /^maxAttempts must be an integer from 1 to 20; got "3" \(a string\)$/],
    ["an unknown outputMode", REQUEST, { outputMode: "xml" }, /outputMode must be one of/],
    ["a misspelt setting", REQUEST, { maxAttempt: 5 }, /no setting "maxAttempt"; did you mean "maxAttempts"\?/],
    ["an unknown setting", REQUEST, { colour: "blue" }, /no setting "colour"/],
    ["an empty request", { request: " " }, {}, /request is empty/],
    ["a missing request", {}, {}, /request must be a string; got undefined/],
    ["an unknown spec", REQUEST, { spec: "nope" }, /Unknown spec "nope"/],
  ];
  type Invocable = { invoke: (input: never, config: never) => Promise<unknown> };
  const paths: Array<[string, () => Invocable]> = [
    ["buildValidationGraph", () => buildValidationGraph({ model: scriptedModel([VALID]) })],
    [
      "the builder compiled by the caller, with a checkpointer",
      () => createValidationGraphBuilder({ model: scriptedModel([VALID]) }).compile({ checkpointer: new MemorySaver() }),
    ],
    ["withConfig on the compiled graph", () => buildValidationGraph({ model: scriptedModel([VALID]) }).withConfig({ tags: ["x"], recursionLimit: 50 })],
  ];
  for (const [pathName, make] of paths) {
    it(`${pathName}: every bad input or setting is refused with a readable ConfigurationError before any model call`, async () => {
      for (const [, input, context, says] of BAD) {
        const graph = make();
        const error = await graph.invoke(input as never, { context, configurable: { thread_id: `t-${Math.random()}` } } as never).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(ConfigurationError);
        expect((error as Error).message).toMatch(says);
      }
    });
  }

  it("settings passed in configurable (no context) are checked too; LangGraph's own keys there are not refused", async () => {
    const graph = createValidationGraphBuilder({ model: scriptedModel([VALID]) }).compile({ checkpointer: new MemorySaver() });
    await expect(graph.invoke(REQUEST, { configurable: { thread_id: "c1", maxAttempts: 0 } })).rejects.toThrow(/maxAttempts must be an integer/);
    await expect(graph.invoke(REQUEST, { configurable: { thread_id: "c2", maxAtempts: 2 } })).rejects.toThrow(/did you mean "maxAttempts"/);
    const out = await graph.invoke(REQUEST, { configurable: { thread_id: "c3", checkpoint_ns: "", maxAttempts: 2 } });
    expect(out.success).toBe(true);
  });

  it("the published context schema still says no other keys are allowed", () => {
    const graph = buildValidationGraph({ model: scriptedModel([]) });
    const schema = (graph.builder as unknown as { _configRuntimeSchema: z.ZodType })._configRuntimeSchema;
    const json = z.toJSONSchema(schema) as { additionalProperties: unknown; properties: Record<string, unknown> };
    expect(json.additionalProperties).toBe(false);
    expect(Object.keys(json.properties)).toContain("maxAttempts");
  });
});

describe("a run's settings are parsed once", () => {
  /** Parses of the run settings' schema during `run` (the front door's check and the run's start share one). */
  async function parsesDuring(run: () => Promise<unknown>): Promise<number> {
    const spy = vi.spyOn(ValidationConfigSchema, "safeParse");
    try {
      await run();
      return spy.mock.calls.length;
    } finally {
      spy.mockRestore();
    }
  }

  it("one generateValidated, one graph invoke (settings in context, or in configurable): one parse each", async () => {
    const settings = { maxAttempts: 2, ruleContext: { services: ["payments-api"] }, models: [{ model: "a" }, { model: "b" }] };
    const model = () => scriptedModel([VALID]);
    expect(await parsesDuring(() => generateValidated({ model, spec: "deployment-config", request: REQUEST.request, ...settings }))).toBe(1);
    const graph = buildValidationGraph({ model });
    expect(await parsesDuring(() => graph.invoke(REQUEST, { context: settings }))).toBe(1);
    expect(await parsesDuring(() => graph.invoke(REQUEST, { configurable: { maxAttempts: 2 } }))).toBe(1);
  });

  it("the run's settings are the same either way: those checked at the front door are the run's own", async () => {
    const graph = buildValidationGraph({ model: scriptedModel([BROKEN, VALID, BROKEN, VALID]), checkpointer: new MemorySaver() });
    const runOf = async (config: { configurable: Record<string, unknown>; context?: Record<string, unknown> }) => {
      await graph.invoke(REQUEST, config);
      return (await graph.getState(config)).values.run;
    };
    const a = await runOf({ configurable: { thread_id: "once-a" }, context: { maxAttempts: 2, stopEarly: "never" } });
    // Settings in configurable as well as context are read by the run (context wins), and parsed there.
    const b = await runOf({ configurable: { thread_id: "once-b", stopEarly: "never" }, context: { maxAttempts: 2 } });
    expect(a).toEqual(b);
    expect(a).toMatchObject({ maxAttempts: 2, stopEarly: "never" });
  });

  it("the front door checks a run's settings over the builder's defaults, not over the schema's", async () => {
    // The builder allows 10 attempts: a first model making 4 of them leaves the second model some.
    const graph = buildValidationGraph({ model: () => scriptedModel([VALID]), maxAttempts: 10, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "builder-defaults" }, context: { models: [{ model: "a", attempts: 4 }, { model: "b" }] } };
    expect((await graph.invoke(REQUEST, config)).success).toBe(true);
    expect((await graph.getState(config)).values.run).toMatchObject({ maxAttempts: 10 });
    await expect(
      graph.invoke(REQUEST, {
        configurable: { thread_id: "builder-defaults-2" },
        context: { maxAttempts: 4, models: [{ model: "a", attempts: 4 }, { model: "b" }] },
      }),
    ).rejects.toThrow(/use 4 attempt\(s\) and maxAttempts is 4/);
  });
});

describe("one run, one request", () => {
  it("a new request on a thread whose run was interrupted starts a fresh run: no attempts, history or prompt text carried over", async () => {
    const model = scriptedModel([BROKEN, failure(), VALID]);
    const graph = buildValidationGraph({ model, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "interrupted" }, context: { maxAttempts: 3 } };
    await expect(graph.invoke(REQUEST, config)).rejects.toThrow(/HTTP 503/);
    expect((await graph.getState(config)).values.attempts).toBe(1);

    const out = await graph.invoke({ request: "A deployment config for orders-api" }, config);
    expect(out.success).toBe(true);
    expect(out.attempts).toBe(1);
    expect(out.history.map((h) => h.attempt)).toEqual([1]);
    expect(out.usage.calls).toBe(1);
    // The new run's prompt is a first attempt for the new request: the other request's output is nowhere in it.
    const prompt = String(model.calls[2].messages.at(-1)!.content);
    expect(prompt).toContain("orders-api");
    expect(prompt).not.toContain("payments-api");
    expect(prompt).not.toContain("A validator rejected it");
  });

  it("the same request sent again is a new run too (only invoke(null) resumes)", async () => {
    const model = scriptedModel([BROKEN, failure(), VALID]);
    const graph = buildValidationGraph({ model, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "same" } };
    await expect(graph.invoke(REQUEST, config)).rejects.toThrow(/HTTP 503/);
    const again = await graph.invoke(REQUEST, config);
    expect(again).toMatchObject({ attempts: 1, success: true });
    expect(again.history.map((h) => h.attempt)).toEqual([1]);
  });

  it("a resumed run uses the spec and limits it was started with, whatever the resuming call passes", async () => {
    const window = {
      name: "time-window",
      schema: {
        type: "object",
        required: ["start", "end"],
        properties: { start: { type: "integer" }, end: { type: "integer", exclusiveMinimum: { $data: "1/start" } } },
      },
    };
    const model = scriptedModel(['{"start": 5, "end": 1}', failure(), '{"start": 5, "end": 2}', '{"start": 5, "end": 3}']);
    const graph = buildValidationGraph({ model, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "settings" } };
    await expect(graph.invoke({ request: "a window" }, { ...config, context: { spec: window, maxAttempts: 3 } })).rejects.toThrow(/HTTP 503/);

    // Resumed with other settings (the built-in default spec, one attempt): the run keeps its own.
    const out = await graph.invoke(null, { ...config, context: { spec: "deployment-config", maxAttempts: 1 } });
    expect(out.spec).toBe("time-window");
    expect(out.attempts).toBe(3);
    expect(out.stopReason).toBe("max_attempts");
    expect(out.success).toBe(false);
    expect(out.errors).toEqual(["end is 3; it must be > 5 (the value of start)"]);
    // The retry prompt still describes the run's own spec.
    expect(promptOf(model, 2)).toContain('"exclusiveMinimum"');
  });

  it("a first attempt cut short resumes with the settings its input was given; a new input after it starts over with its own", async () => {
    const model = scriptedModel([failure(), BROKEN, BROKEN, failure(), BROKEN, VALID]);
    const graph = buildValidationGraph({ model, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "first-cut" } };
    await expect(graph.invoke(REQUEST, { ...config, context: { maxAttempts: 1 } })).rejects.toThrow(/HTTP 503/);
    // Nothing recorded yet but the pending first attempt, which carries the run's settings in the checkpoint.
    const pending = await graph.getState(config);
    expect(pending.next).toEqual(["generate"]);
    expect(pending.values.attempts).toBe(0);

    const resumed = await graph.invoke(null, { ...config, context: { maxAttempts: 5 } });
    expect(resumed).toMatchObject({ attempts: 1, success: false, stopReason: "max_attempts" });
    expect(resumed.history.map((h) => h.attempt)).toEqual([1]);

    // A run cut after its first attempt, then a new input with other settings: a fresh run with those.
    await expect(graph.invoke(REQUEST, { ...config, context: { maxAttempts: 3, stopOnNoProgress: true } })).rejects.toThrow(/HTTP 503/);
    const cut = await graph.getState(config);
    expect(cut.values).toMatchObject({ attempts: 1, stopReason: null, run: { maxAttempts: 3, stopOnNoProgress: true } });
    const again = await graph.invoke({ request: "A deployment config for orders-api" }, { ...config, context: { maxAttempts: 2 } });
    expect(again).toMatchObject({ attempts: 2, success: true, stopReason: "valid" });
    expect(again.history.map((h) => h.attempt)).toEqual([1, 2]);
    expect(again.usage.calls).toBe(2);
    expect((await graph.getState(config)).values.run).toMatchObject({ request: "A deployment config for orders-api", maxAttempts: 2, stopOnNoProgress: false });
  });

  it("each attempt is two steps (generate, validate) and a run takes none of its own; Studio draws the same four nodes and routes", async () => {
    const graph = buildValidationGraph({ model: scriptedModel([BROKEN, VALID, BROKEN, VALID]), checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "steps" }, streamMode: "updates" as const };
    const nodes: string[] = [];
    for await (const update of await graph.stream(REQUEST, config)) nodes.push(...Object.keys(update));
    expect(nodes).toEqual(["generate", "validate", "generate", "validate"]);
    expect((await graph.getState(config)).values).toMatchObject({ success: true, attempts: 2, stopReason: "valid" });

    // The edge from START is a plain call, not a traced run of its own (see src/graph/direct-call.ts); the nodes are runs.
    const started: string[] = [];
    const handler = BaseCallbackHandler.fromMethods({
      handleChainStart: (_chain, _inputs, _runId, _parent, _tags, _metadata, _type, name) => void started.push(String(name)),
    });
    await graph.invoke(REQUEST, { configurable: { thread_id: "steps-traced" }, callbacks: [handler] });
    expect(started).toEqual(expect.arrayContaining(["generate", "validate"]));
    expect(started.filter((name) => /startRun|RunnableLambda|Branch/.test(name))).toEqual([]);

    const drawing = await graph.getGraphAsync();
    expect(Object.keys(drawing.nodes).sort()).toEqual(["__end__", "__start__", "generate", "review", "validate"]);
    const edges = drawing.edges.map((e) => `${e.source}${e.conditional ? " -.-> " : " --> "}${e.target}`).sort();
    expect(edges).toEqual([
      "__start__ -.-> generate",
      "generate --> validate",
      "review -.-> __end__",
      "review -.-> generate",
      "review -.-> review",
      "validate -.-> __end__",
      "validate -.-> generate",
      "validate -.-> review",
    ]);
  });

  it("generate and validate run as plain calls: no langsmith RunTree is built for them with tracing off; model calls still get the node's callbacks", async () => {
    const inside: unknown[] = [];
    const rule = {
      id: "seen",
      description: "records the run tree",
      inputs: { n: "integer" as const },
      check: () => {
        inside.push(getCurrentRunTree(true));
        return null;
      },
    };
    const spec = defineSpec({
      name: "n",
      description: "n",
      schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
      rules: [rule],
    });
    const model = scriptedModel(['{"n": 1}']);
    const modelRuns: Array<string | undefined> = [];
    const handler = BaseCallbackHandler.fromMethods({ handleChatModelStart: (_llm, _messages, _runId, parentRunId) => void modelRuns.push(parentRunId) });
    const out = await buildValidationGraph({ model, spec }).invoke({ request: "n" }, { callbacks: [handler] });
    expect(out.success).toBe(true);
    expect(inside).toEqual([undefined]);
    // The model call is still a child run of the generate step.
    expect(modelRuns).toHaveLength(1);
    expect(modelRuns[0]).toEqual(expect.any(String));
  });

  it("a run started with a code-defined spec resumes only on a graph built with the same spec", async () => {
    const rule = {
      id: "even",
      description: "n must be even.",
      inputs: { n: "integer" as const },
      check: (v: Record<string, any>) => (v.n % 2 === 0 ? null : `n is ${v.n}; it must be even`),
    };
    const spec = defineSpec({
      name: "even",
      description: "An even number.",
      schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
      rules: [rule],
    });
    const other = defineSpec({
      name: "even",
      description: "An even number.",
      schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
      rules: [{ ...rule, check: () => null }],
    });
    const checkpointer = new MemorySaver();
    const config = { configurable: { thread_id: "code" } };
    await expect(buildValidationGraph({ model: scriptedModel(['{"n": 3}', failure()]), spec, checkpointer }).invoke({ request: "n" }, config)).rejects.toThrow(
      /HTTP 503/,
    );

    await expect(buildValidationGraph({ model: scriptedModel(['{"n": 5}']), spec: other, checkpointer }).invoke(null, config)).rejects.toThrow(
      /started with the code-defined spec "even"; resume it with a graph built with that same spec/,
    );
    const out = await buildValidationGraph({ model: scriptedModel(['{"n": 4}']), spec, checkpointer }).invoke(null, config);
    expect(out).toMatchObject({ success: true, attempts: 2, spec: "even" });
  });
});
