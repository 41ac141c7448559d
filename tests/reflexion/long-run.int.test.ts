/**
 * The longest Reflexion run allowed (MAX_TASKS tasks at 10 loops) through the builder compiled by hand,
 * with a checkpointer and LangGraph's default recursion limit: 3,000 model calls in process. It crosses no
 * boundary, but at about 20 s it is too long for the unit tests' inner loop, so it runs with the
 * integration tests.
 */
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { MAX_TASKS } from "../../src/reflexion/configuration.js";
import { createReflexionGraphBuilder } from "../../src/reflexion/graph.js";
import { endlessModels as roleEndlessModels } from "../../testkit/role-models.js";

/** Models that answer forever: every task runs all its loops. */
const endlessModels = () => roleEndlessModels(MAX_TASKS * 10 + 5);

describe("compiled by hand from the builder", () => {
  it(`finishes ${MAX_TASKS} tasks at 10 loops with LangGraph's default recursion limit and a checkpointer`, async () => {
    const m = endlessModels();
    const graph = createReflexionGraphBuilder({ model: m.factory, store: new InMemoryStore() }).compile({ checkpointer: new MemorySaver() });
    const tasks = Array.from({ length: MAX_TASKS }, (_, i) => `task number ${i}`);
    const out = await graph.invoke({ tasks }, { configurable: { thread_id: "long-run" }, context: { maxLoops: 10 } });
    expect(out.results).toHaveLength(MAX_TASKS);
    expect(out.outcomes.every((o) => o.stopReason === "max_loops" && o.iterations === 10)).toBe(true);
    expect(m.calls()).toBe(MAX_TASKS * 10 * 3);
    expect(out.usage.calls).toBe(MAX_TASKS * 10 * 3);
    expect(out.calls).toHaveLength(MAX_TASKS * 10 * 3);
  }, 600_000);
});
