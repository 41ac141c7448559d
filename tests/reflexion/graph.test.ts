import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { promptOf } from "../../testkit/scripted-model.js";
import { roleModels } from "../../testkit/role-models.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const STEP_KEYS = ["evaluation", "iteration", "reflection", "response", "score", "task"];

describe("reflexion graph with scripted models", () => {
  it("acts, evaluates and reflects, refines, and stops early above 0.9", async () => {
    const m = roleModels({
      actor: ["draft answer", "refined answer"],
      evaluator: ["Weak. Final score: 7/10", "Excellent. **Final Score:** 9.5"],
      reflector: ["Add an example.", "Nothing to add."],
    });
    const out = await buildReflexionGraph({ model: m.factory }).invoke({ tasks: ["Explain recursion"] }, { context: { maxLoops: 3 } });
    expect(out.results).toEqual(["refined answer"]);
    expect(out.steps).toHaveLength(1);
    expect(out.steps[0]).toHaveLength(2);
    for (const step of out.steps[0]) expect(Object.keys(step).sort()).toEqual(STEP_KEYS);
    expect(out.steps[0].map((s) => s.score)).toEqual([0.7, 0.95]);
    expect(out.steps[0].map((s) => s.iteration)).toEqual([0, 1]);
    expect(out.outcomes[0]).toMatchObject({ stopReason: "early_stop", iterations: 2, bestIteration: 1, bestScore: 0.95, valid: null, error: null });
    // three model calls per iteration: act or refine, evaluate, reflect
    expect([m.actor.callCount, m.evaluator.callCount, m.reflector.callCount]).toEqual([2, 2, 2]);
    // refine works from the previous evaluation and reflection
    const refinePrompt = promptOf(m.actor, 1);
    expect(refinePrompt).toContain("draft answer");
    expect(refinePrompt).toContain("Weak. Final score: 7/10");
    expect(refinePrompt).toContain("Add an example.");
    expect(out.conversation).toEqual([
      { role: "user", content: "Explain recursion" },
      { role: "assistant", content: "refined answer" },
    ]);
    expect(out.usage.calls).toBe(6);
    expect(out.outcomes[0].usage.calls).toBe(6);
    // usage per call: which node, which iteration, and the sum matches the total
    expect(out.calls.map((c) => `${c.node}@${c.iteration}`)).toEqual(["actor@0", "evaluator@0", "reflector@0", "refine@1", "evaluator@1", "reflector@1"]);
    expect(out.calls.reduce((n, c) => n + c.usage.totalTokens, 0)).toBe(out.usage.totalTokens);
  });

  it("does not stop at exactly 0.9; stops after maxLoops", async () => {
    const m = roleModels({
      actor: ["a0", "a1", "a2"],
      evaluator: ["Final score: 9", "Final score: 9/10", "Overall score - 9"],
      reflector: ["r0", "r1", "r2"],
    });
    const out = await buildReflexionGraph({ model: m.factory }).invoke({ tasks: ["t"] });
    expect(out.steps[0]).toHaveLength(3);
    expect(out.outcomes[0].stopReason).toBe("max_loops");
    expect(m.evaluator.callCount).toBe(3);
  });

  it("best response is the highest score, the earliest on a tie; no score reads as 0.5", async () => {
    const m = roleModels({
      actor: ["first", "second", "third"],
      evaluator: ["Final score: 8", "no number here", "Overall score: 8/10"],
      reflector: ["r0", "r1", "r2"],
    });
    const out = await buildReflexionGraph({ model: m.factory }).invoke({ tasks: ["t"] });
    expect(out.steps[0].map((s) => s.score)).toEqual([0.8, 0.5, 0.8]);
    expect(out.results).toEqual(["first"]);
    expect(out.outcomes[0].bestIteration).toBe(0);
  });

  it("runs tasks in order; the second task's actor gets the first task's reflection", async () => {
    const m = roleModels({
      actor: ["sort answer", "dict sort answer"],
      evaluator: ["Final score: 9.5", "Final score: 9.5"],
      reflector: ["Lesson: state the sort key explicitly.", "ok"],
    });
    const out = await buildReflexionGraph({ model: m.factory, store: new InMemoryStore() }).invoke({
      tasks: ["Sort a list of numbers in Python", "Sort a list of dictionaries in Python by key"],
    });
    expect(out.results).toEqual(["sort answer", "dict sort answer"]);
    expect(promptOf(m.actor, 0)).not.toContain("Lesson");
    expect(promptOf(m.actor, 1)).toContain("Lesson: state the sort key explicitly.");
  });

  it("with useMemory false the actor never sees memories (the reference's behaviour)", async () => {
    const m = roleModels({
      actor: ["a", "b"],
      evaluator: ["Final score: 9.5", "Final score: 9.5"],
      reflector: ["Lesson: be brief.", "ok"],
    });
    await buildReflexionGraph({ model: m.factory }).invoke({ tasks: ["Sort numbers in Python", "Sort strings in Python"] }, { context: { useMemory: false } });
    expect(promptOf(m.actor, 1)).not.toContain("Lesson");
  });

  it("long-term memory persists across runs that share a store, and never crosses owners", async () => {
    const store = new InMemoryStore();
    const first = roleModels({ actor: ["a"], evaluator: ["Final score: 9.5"], reflector: ["Lesson: cite the Python docs."] });
    await buildReflexionGraph({ model: first.factory, store }).invoke({ tasks: ["Explain Python generators"] }, { configurable: { memoryOwner: "alice" } });

    const alice = roleModels({ actor: ["b"], evaluator: ["Final score: 9.5"], reflector: ["ok"] });
    await buildReflexionGraph({ model: alice.factory, store }).invoke({ tasks: ["Explain Python iterators"] }, { configurable: { memoryOwner: "alice" } });
    expect(promptOf(alice.actor, 0)).toContain("Lesson: cite the Python docs.");

    const bob = roleModels({ actor: ["c"], evaluator: ["Final score: 9.5"], reflector: ["ok"] });
    await buildReflexionGraph({ model: bob.factory, store }).invoke({ tasks: ["Explain Python iterators"] }, { configurable: { memoryOwner: "bob" } });
    expect(promptOf(bob.actor, 0)).not.toContain("Lesson");

    // The authenticated identity wins over memoryOwner.
    const mallory = roleModels({ actor: ["d"], evaluator: ["Final score: 9.5"], reflector: ["ok"] });
    await buildReflexionGraph({ model: mallory.factory, store }).invoke(
      { tasks: ["Explain Python iterators"] },
      { configurable: { memoryOwner: "alice", langgraph_auth_user: { identity: "mallory" } } },
    );
    expect(promptOf(mallory.actor, 0)).not.toContain("Lesson");
  });

  it("deterministic gate: a high-scoring invalid response neither stops the loop nor wins", async () => {
    const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
    const invalid = JSON.stringify({ ...example, replicas: 8 }); // replicas > 5 with cpu_limit 0.5
    const valid = JSON.stringify(example);
    const m = roleModels({
      actor: [invalid, valid, valid],
      evaluator: ["Perfect. Final score: 10", "Fine. Final score: 7", "Fine. Final score: 7"],
      reflector: ["r0", "r1", "r2"],
    });
    const out = await buildReflexionGraph({ model: m.factory }).invoke(
      { tasks: ["deployment config for payments"] },
      { context: { spec: "deployment-config" } },
    );
    expect(out.steps[0].map((s) => s.score)).toEqual([1, 0.7, 0.7]);
    expect(out.outcomes[0].stopReason).toBe("max_loops");
    expect(out.results).toEqual([valid]);
    expect(out.outcomes[0]).toMatchObject({ bestIteration: 1, valid: true });
    // the evaluator and reflector were told the exact errors
    expect(promptOf(m.evaluator, 0)).toContain(RULES.replicasNeedCpu(0.5, 8));
    expect(promptOf(m.reflector, 0)).toContain("replicas=8 requires");
  });

  it("a provider failure ends its task with an error; the other tasks are kept", async () => {
    const failure = Object.assign(new Error("Internal server error"), { status: 500 });
    const m = roleModels({
      actor: ["a1", "a2"],
      evaluator: [failure, "Final score: 9.5"],
      reflector: ["ok"],
    });
    const out = await buildReflexionGraph({ model: m.factory }).invoke({ tasks: ["first task", "second task"] });
    expect(out.outcomes.map((o) => o.stopReason)).toEqual(["error", "early_stop"]);
    expect(out.outcomes[0].error).toMatch(/HTTP 500.*Internal server error/);
    expect(out.results).toEqual([null, "a2"]);
    expect(out.steps[0]).toEqual([]);
    expect(out.steps[1]).toHaveLength(1);
  });

  it("refuses bad configuration and bad input before any model call", async () => {
    const cases: Array<[unknown, Record<string, unknown>, RegExp]> = [
      [{ tasks: ["t"] }, { maxLoops: 0 }, /maxLoops must be an integer from 1 to 10/],
      [{ tasks: ["t"] }, { maxLoops: "3" }, /maxLoops must be an integer from 1 to 10/],
      [{ tasks: ["t"] }, { memoryCapacity: -1 }, /memoryCapacity must be an integer/],
      [{ tasks: ["t"] }, { spec: "nope" }, /Unknown spec "nope"/],
      [{ tasks: "just one" }, {}, /tasks must be a list of strings, not a single string/],
      [{ tasks: [] }, {}, /tasks is empty/],
      [{ tasks: ["ok", 3] }, {}, /tasks\[1\] must be a string/],
    ];
    for (const [input, context, message] of cases) {
      const m = roleModels({ actor: ["x"], evaluator: ["Final score: 9.5"], reflector: ["r"] });
      await expect(buildReflexionGraph({ model: m.factory }).invoke(input as never, { context })).rejects.toThrow(message);
      expect(m.actor.callCount + m.evaluator.callCount + m.reflector.callCount).toBe(0);
    }
  });

  it("uses a different model per role when configured", async () => {
    const seen: string[] = [];
    const m = roleModels({ actor: ["a"], evaluator: ["Final score: 9.5"], reflector: ["r"] });
    const graph = buildReflexionGraph({
      model: (req) => {
        seen.push(`${req.role}:${req.model}`);
        return m.factory(req);
      },
    });
    await graph.invoke({ tasks: ["t"] }, { context: { model: "base", evaluatorModel: "judge" } });
    expect(seen).toEqual(["actor:base", "evaluator:judge", "reflector:base"]);
  });
});
