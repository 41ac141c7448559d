/** Reflexion under bad model output: every task finishes or fails clearly, no task is lost, memory keeps only complete entries. */
import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { memoryNamespace } from "../../src/reflexion/memory-store.js";
import { MAX_RECORDED_TEXT_CHARS } from "../../src/reflexion/nodes.js";
import { roleModels } from "../../testkit/role-models.js";

const STEP_KEYS = ["evaluation", "iteration", "reflection", "response", "score", "task"];

describe("reflexion under bad output", () => {
  it("scores without a number, negative, huge; an empty reflection; a 1 MB evaluation", async () => {
    const huge = "This is verbose. ".repeat(62_000) + "Final score: 7";
    const m = roleModels({
      actor: ["a0", "a1", "a2", "b0", "b1", "b2"],
      evaluator: ["Looks fine to me.", "Final score: -4", "Overall score: 120/10", huge, "FINAL SCORE: 1000000", "final score: **NaN**"],
      reflector: ["", "r1", "r2", "rb0", "rb1", "rb2"],
    });
    const store = new InMemoryStore();
    const out = await buildReflexionGraph({ model: m.factory, store }).invoke({ tasks: ["first task", "second task"] }, { context: { maxLoops: 3 } });
    expect(out.results).toHaveLength(2);
    // no number → 0.5; negative → 0; 120/10 → clamped to 1 (but not above 0.9 early-stop? 1 > 0.9 stops)
    expect(out.steps[0].map((s) => s.score)).toEqual([0.5, 0, 1]);
    expect(out.outcomes[0].stopReason).toBe("early_stop");
    expect(out.steps[1][0].score).toBe(0.7);
    expect(out.steps[1][0].evaluation.length).toBeLessThanOrEqual(MAX_RECORDED_TEXT_CHARS + 40);
    expect(out.steps[1][1].score).toBe(1); // 1000000/10 clamped
    for (const steps of out.steps) for (const s of steps) expect(Object.keys(s).sort()).toEqual(STEP_KEYS);
    // The empty reflection is a complete entry of its own; nothing half-written is in memory.
    const items = await store.search([...memoryNamespace("anonymous", "reflexion-agent"), "entries"], { limit: 100 });
    for (const item of items) {
      for (const key of STEP_KEYS) expect(item.value).toHaveProperty(key);
      expect(typeof item.value.score).toBe("number");
      expect(Number.isFinite(item.value.score)).toBe(true);
    }
    // the 1 MB evaluation reached the reflector bounded
    expect(String(m.reflector.calls[3].messages.at(-1)!.content).length).toBeLessThan(30_000);
  });

  it("a model error mid-task fails that task clearly; the tasks around it are kept; memory has only complete steps", async () => {
    const failure = Object.assign(new Error("upstream exploded"), { status: 502 });
    const m = roleModels({
      actor: ["a0", "b0", "b1", "c0"],
      evaluator: ["Final score: 9.5", "Final score: 5", "Final score: 6", "Final score: 9.5"],
      reflector: ["ra", "rb", failure, "rc"],
    });
    const store = new InMemoryStore();
    const out = await buildReflexionGraph({ model: m.factory, store }).invoke({ tasks: ["task a", "task b", "task c"] });
    expect(out.outcomes.map((o) => o.stopReason)).toEqual(["early_stop", "error", "early_stop"]);
    expect(out.outcomes[1].error).toMatch(/HTTP 502.*upstream exploded/);
    // task b keeps its completed first step and its best response so far
    expect(out.steps[1].map((s) => s.iteration)).toEqual([0]);
    expect(out.results).toEqual(["a0", "b0", "c0"]);
    const items = await store.search([...memoryNamespace("anonymous", "reflexion-agent"), "entries"], { limit: 100 });
    expect(items.map((i) => i.value.reflection).sort()).toEqual(["ra", "rc"]);
  });
});
