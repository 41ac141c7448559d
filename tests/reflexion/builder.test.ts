/**
 * The Reflexion graph however it is compiled: the drawing is the design's, the
 * builder compiled by hand (own checkpointer, default config) refuses bad
 * input and settings before any model call and finishes the longest run
 * allowed, and so does the compiled graph under `withConfig`.
 */
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { MAX_TASKS } from "../../src/reflexion/configuration.js";
import { ConfigurationError } from "../../src/errors.js";
import { ReflexionAgent } from "../../src/reflexion/agent.js";
import { buildReflexionGraph, createReflexionGraphBuilder } from "../../src/reflexion/graph.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { defineSpec } from "../../src/specs/spec.js";
import { endlessModels as roleEndlessModels, roleModels } from "../../testkit/role-models.js";
import { scriptedModel } from "../../testkit/scripted-model.js";
import type { ChatModelFactory } from "../../src/models.js";

/** Models that answer forever: every task runs all its loops. */
const endlessModels = () => roleEndlessModels(MAX_TASKS * 10 + 5);

function edgesOf(graph: { edges: { source: string; target: string }[] }) {
  return graph.edges.map((e) => `${e.source} -> ${e.target}`).sort();
}

describe("the drawing", () => {
  it("is exactly the design: the task progression, and inside it the task's loop; no error-handler nodes", async () => {
    const graph = buildReflexionGraph({ model: roleModels({}).factory });
    const top = await graph.getGraphAsync();
    expect(Object.keys(top.nodes).sort()).toEqual(["__end__", "__start__", "each_task"]);
    expect(edgesOf(top)).toEqual(["__start__ -> each_task", "each_task -> __end__"]);

    const inside = await graph.getGraphAsync({ xray: true });
    expect(Object.keys(inside.nodes).sort()).toEqual([
      "__end__",
      "__start__",
      "each_task:__end__",
      "each_task:actor",
      "each_task:evaluator",
      "each_task:memory",
      "each_task:refine",
      "each_task:reflector",
    ]);
    expect(edgesOf(inside)).toEqual(
      [
        "__start__ -> each_task:actor",
        "each_task:__end__ -> __end__",
        "each_task:actor -> each_task:evaluator",
        "each_task:actor -> each_task:__end__",
        "each_task:evaluator -> each_task:reflector",
        "each_task:evaluator -> each_task:__end__",
        "each_task:reflector -> each_task:memory",
        "each_task:reflector -> each_task:__end__",
        "each_task:memory -> each_task:refine",
        "each_task:memory -> each_task:__end__",
        "each_task:refine -> each_task:evaluator",
        "each_task:refine -> each_task:__end__",
      ].sort(),
    );
  });
});

describe("compiled by hand from the builder", () => {
  it("refuses bad settings and bad tasks before any model call, with the package's messages", async () => {
    const cases: Array<[unknown, Record<string, unknown>, RegExp]> = [
      [{ tasks: ["t"] }, { maxLoops: 0 }, /maxLoops must be an integer from 1 to 10; got 0/],
      [{ tasks: ["t"] }, { maxLoops: 11 }, /maxLoops must be an integer from 1 to 10/],
      [{ tasks: ["t"] }, { spec: "nope" }, /Unknown spec "nope"/],
      [{ tasks: [] }, {}, /tasks is empty/],
      [{ tasks: Array.from({ length: MAX_TASKS + 1 }, () => "t") }, {}, new RegExp(`the limit is ${MAX_TASKS} per run`)],
      [{ tasks: ["ok", ""] }, {}, /tasks\[1\] is empty/],
      [{ tasks: "one task" }, {}, /tasks must be a list of strings, not a single string/],
      [{}, {}, /tasks must be a list of strings; got undefined/],
    ];
    for (const [input, context, message] of cases) {
      const m = roleModels({ actor: ["x"], evaluator: ["Final score: 9.5"], reflector: ["r"] });
      const graph = createReflexionGraphBuilder({ model: m.factory }).compile({ checkpointer: new MemorySaver() });
      const run = graph.invoke(input as never, { configurable: { thread_id: crypto.randomUUID() }, context });
      await expect(run).rejects.toThrow(message);
      await expect(run).rejects.toBeInstanceOf(ConfigurationError);
      expect(m.actor.callCount + m.evaluator.callCount + m.reflector.callCount).toBe(0);
    }
  });

  it("honours the builder's defaults and the run's context inside each task's loop", async () => {
    const m = endlessModels();
    const graph = createReflexionGraphBuilder({ model: m.factory, defaults: { maxLoops: 2 } }).compile();
    expect((await graph.invoke({ tasks: ["a", "b"] })).outcomes.map((o) => o.iterations)).toEqual([2, 2]);
    expect((await graph.invoke({ tasks: ["a"] }, { context: { maxLoops: 4 } })).outcomes.map((o) => o.iterations)).toEqual([4]);
  });
});

describe("resuming an interrupted run", () => {
  it("does not run a finished task again", async () => {
    const m = roleModels({ actor: ["first answer", "second answer"], evaluator: ["Final score: 9.5", "Final score: 9.5"], reflector: ["r1", "r2"] });
    let failOnce = true;
    const factory: ChatModelFactory = (request) => {
      // The process "crashes" (a fault that is not the provider's) at the second task's first model call.
      if (request.role === "actor" && m.actor.callCount === 1 && failOnce) {
        failOnce = false;
        throw new TypeError("process crashed");
      }
      return m.factory(request);
    };
    const graph = createReflexionGraphBuilder({ model: factory, store: new InMemoryStore() }).compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "resume" }, context: { maxLoops: 1 } };
    await expect(graph.invoke({ tasks: ["task one", "task two"] }, config)).rejects.toThrow(/process crashed/);
    expect(m.actor.callCount).toBe(1);
    const out = await graph.invoke(null, config);
    expect(out.results).toEqual(["first answer", "second answer"]);
    // task one was not asked again
    expect(m.actor.callCount).toBe(2);
    expect(m.evaluator.callCount).toBe(2);
  });
});

describe("the compiled graph under withConfig", () => {
  it("still refuses bad settings and still finishes a long run", async () => {
    const m = endlessModels();
    const graph = buildReflexionGraph({ model: m.factory }).withConfig({ recursionLimit: 25, configurable: { memoryOwner: "carol" } });
    await expect(graph.invoke({ tasks: ["t"] }, { context: { maxLoops: 0 } })).rejects.toThrow(/maxLoops must be an integer from 1 to 10/);
    await expect(graph.invoke({ tasks: "one" as never })).rejects.toThrow(/not a single string/);
    expect(m.calls()).toBe(0);
    // One task of 10 loops takes about 40 steps, well past the limit of 25 the caller set: each task's loop
    // counts its steps apart from the others' and from the caller's limit.
    const out = await graph.invoke({ tasks: ["t0", "t1", "t2"] }, { context: { maxLoops: 10 } });
    expect(out.outcomes.map((o) => o.iterations)).toEqual([10, 10, 10]);
    expect(m.calls()).toBe(3 * 10 * 3);
  }, 300_000);
});

describe("with a gate and no response passing it", () => {
  const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
  const invalid = JSON.stringify({ ...example, replicas: 8 });

  it("the task's result is null and its outcome says valid: false, pointing at the best-scored invalid step", async () => {
    const m = roleModels({ actor: [invalid, invalid], evaluator: ["Final score: 9.8", "Final score: 6"], reflector: ["r0", "r1"] });
    const out = await buildReflexionGraph({ model: m.factory, store: new InMemoryStore() }).invoke(
      { tasks: ["deployment config"] },
      { context: { spec: "deployment-config", maxLoops: 2 } },
    );
    expect(out.results).toEqual([null]);
    expect(out.outcomes[0]).toMatchObject({ stopReason: "max_loops", valid: false, bestIteration: 0, bestScore: 0.98, iterations: 2 });
    expect(out.steps[0].map((s) => s.response)).toEqual([invalid, invalid]);
    expect(out.conversation[1]).toEqual({ role: "assistant", content: "" });
  });

  it("ReflexionAgent.run() returns null for it, never the invalid response", async () => {
    const m = roleModels({ actor: [invalid, JSON.stringify(example)], evaluator: ["Final score: 9.8", "Final score: 9.6"], reflector: ["r", "r"] });
    const agent = new ReflexionAgent({ model: m.factory, spec: "deployment-config", maxLoops: 1 });
    expect(await agent.run(["deployment config", "another deployment config"])).toEqual([null, JSON.stringify(example)]);
    const report = await new ReflexionAgent({
      model: roleModels({ actor: [invalid], evaluator: ["Final score: 10"], reflector: ["r"] }).factory,
      spec: "deployment-config",
      maxLoops: 1,
    }).runWithReport(["x"]);
    expect(report.results).toEqual([null]);
    expect(report.outcomes[0].valid).toBe(false);
  });
});

describe("a resumed run keeps the settings it started with", () => {
  it("an interrupted run resumed with another spec and loop limit still uses its own for the remaining tasks", async () => {
    const gate = { name: "flag", schema: { type: "object", required: ["ok"], properties: { ok: { const: true } } } };
    const abort = new AbortController();
    let actorCalls = 0;
    const actorAnswer = () => {
      actorCalls++;
      // Interrupt the run during the second task's first act.
      if (actorCalls === 2) abort.abort();
      return '{"ok": true}';
    };
    const many = (f: () => string) => Array.from({ length: 50 }, () => f);
    const { factory } = roleModels({ actor: many(actorAnswer), evaluator: many(() => "Final score: 5"), reflector: many(() => "a lesson") });
    const graph = createReflexionGraphBuilder({ model: factory }).compile({ checkpointer: new MemorySaver(), store: new InMemoryStore() });
    const thread = { configurable: { thread_id: "pinned" } };
    await expect(graph.invoke({ tasks: ["first", "second"] }, { ...thread, context: { spec: gate, maxLoops: 2 }, signal: abort.signal })).rejects.toThrow();

    // Resumed with a spec the answers fail and one loop: the run keeps its own gate (which they pass) and two loops.
    const other = { name: "strict", schema: { type: "object", required: ["never"] } };
    const out = await graph.invoke(null, { ...thread, context: { spec: other, maxLoops: 1 } });
    expect(out.outcomes.map((o) => o.valid)).toEqual([true, true]);
    expect(out.steps.map((s) => s.length)).toEqual([2, 2]);
    expect(out.results).toEqual(['{"ok": true}', '{"ok": true}']);
  });
});

describe("code-defined specs", () => {
  it("many runs at once on one graph, each with its own code-defined spec, each keep their spec for the whole run", async () => {
    const runs = 80;
    const many = (text: string) => Array.from({ length: runs }, () => text);
    const { factory } = roleModels({ actor: many('{"n": 5}'), evaluator: many("Final score: 5"), reflector: many("a lesson") });
    const graph = buildReflexionGraph({ model: factory });
    const specs = Array.from({ length: runs }, (_, i) =>
      defineSpec({
        name: `capped-${i}`,
        description: "",
        schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
        rules: [{ id: "max", description: `n <= ${i}`, inputs: { n: "integer" }, check: (v) => (v.n <= i ? null : `n is ${v.n}; it must be <= ${i}`) }],
      }),
    );
    const outs = await Promise.all(specs.map((spec) => graph.invoke({ tasks: ["n"] }, { context: { spec, maxLoops: 1, useMemory: false } })));
    expect(outs.map((out) => out.outcomes[0].valid)).toEqual(specs.map((_, i) => 5 <= i));
  });
});
