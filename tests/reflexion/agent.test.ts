import { InMemoryStore } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { AIMessage } from "@langchain/core/messages";
import { ConfigurationError, ProviderError } from "../../src/errors.js";
import { ReflexionAgent } from "../../src/reflexion/agent.js";
import { promptOf } from "../../testkit/scripted-model.js";
import { roleModels } from "../../testkit/role-models.js";

describe("ReflexionAgent", () => {
  it("act, evaluate, reflect and refine each make one model call of their role", async () => {
    const m = roleModels({ actor: ["an answer", "a better answer"], evaluator: ["Decent. Overall score: 6.5"], reflector: ["Be concrete."] });
    const agent = new ReflexionAgent({ model: m.factory });
    const lesson = { task: "t0", response: "r", evaluation: "e", reflection: "Use an analogy.", score: 0.9, iteration: 0 };
    expect(await agent.act("Explain DNS", [lesson])).toBe("an answer");
    expect(promptOf(m.actor, 0)).toContain("Use an analogy.");
    expect(await agent.evaluate("Explain DNS", "an answer")).toEqual({ evaluation: "Decent. Overall score: 6.5", score: 0.65 });
    expect(await agent.reflect("Explain DNS", "an answer", "Decent.")).toBe("Be concrete.");
    expect(await agent.refine("Explain DNS", "an answer", "Decent.", "Be concrete.")).toBe("a better answer");
    expect(promptOf(m.actor, 1)).toContain("Be concrete.");
  });

  it("an answer the provider did not finish is a provider fault in the provider's words, never a step", async () => {
    const cut = new AIMessage({ content: "half an ans", response_metadata: { finish_reason: "length" } });
    const m = roleModels({ actor: [cut, new AIMessage({ content: "an answer", additional_kwargs: { finishReason: "OTHER" } })] });
    const agent = new ReflexionAgent({ model: m.factory });
    const fault = await agent.act("Explain DNS", []).catch((e: unknown) => e);
    expect(fault).toBeInstanceOf(ProviderError);
    expect(fault).toMatchObject({ message: 'Model provider did not finish the answer in node "actor" (finish_reason "length")', transient: true });
    await expect(agent.act("Explain DNS", [])).rejects.toThrow(/\(finishReason "OTHER"\)/);
  });

  it("step acts (or takes the previous response), evaluates, reflects and records the step", async () => {
    const m = roleModels({ actor: ["first"], evaluator: ["Final score: 9.5", "Final score: 4"], reflector: ["r1", "r2"] });
    const agent = new ReflexionAgent({ model: m.factory, maxLoops: 3 });
    const s1 = await agent.step("Explain DNS caching");
    expect(s1).toEqual({ task: "Explain DNS caching", response: "first", evaluation: "Final score: 9.5", reflection: "r1", score: 0.95, iteration: 0 });
    const s2 = await agent.step("Explain DNS caching", 1, "given response");
    expect(s2.response).toBe("given response");
    expect(m.actor.callCount).toBe(1);
    expect(agent.memory.shortTerm.entries()).toHaveLength(2);
    // long-term admits score > 0.8 (s1) but not 0.4 at iteration 1 of 3
    expect((await agent.memory.longTermEntries()).map((e) => e.reflection)).toEqual(["r1"]);
    // Both share "dns" and "caching" with the query (2 of its 3 words): equal relevance, so the stable order (short-term, oldest first) holds;
    // s1, also in long-term memory, is scored once.
    expect((await agent.memory.getRelevantMemories("DNS caching basics", 5)).map((s) => s.reflection)).toEqual(["r1", "r2"]);
  });

  it("run returns the best response per task, or every step record with includeIntermediates; adds to the conversation", async () => {
    const m = roleModels({
      actor: ["a1", "a1-refined", "b1", "c1"],
      evaluator: ["Final score: 8", "Final score: 7", "Final score: 9.5", "Final score: 9.2"],
      reflector: ["ra", "ra2", "rb", "rc"],
    });
    const agent = new ReflexionAgent({ model: m.factory, maxLoops: 2 });
    expect(await agent.run(["task a", "task b"])).toEqual(["a1", "b1"]);
    expect(agent.conversation).toEqual([
      { role: "user", content: "task a" },
      { role: "assistant", content: "a1" },
      { role: "user", content: "task b" },
      { role: "assistant", content: "b1" },
    ]);
    const steps = await agent.run(["task c"], { includeIntermediates: true });
    expect(steps).toHaveLength(1);
    expect(steps[0].map((s) => [s.response, s.score, s.iteration])).toEqual([["c1", 0.92, 0]]);
    expect(agent.conversation).toHaveLength(6);
  });

  it("refuses a single string and bad settings before any model call", async () => {
    const m = roleModels({ actor: ["x"] });
    const agent = new ReflexionAgent({ model: m.factory });
    await expect(agent.run("Explain DNS" as unknown as string[])).rejects.toThrow(/a list of strings, not a single string/);
    expect(() => new ReflexionAgent({ maxLoops: 0 })).toThrow(ConfigurationError);
    expect(() => new ReflexionAgent({ memoryCapacity: 2.5 })).toThrow(/memoryCapacity must be an integer/);
    expect(m.actor.callCount).toBe(0);
  });

  it("memory persists across agents sharing a store and stays within its owner", async () => {
    const store = new InMemoryStore();
    const first = roleModels({ actor: ["a"], evaluator: ["Final score: 9.5"], reflector: ["Lesson: name the TTL."] });
    await new ReflexionAgent({ model: first.factory, store, owner: "alice" }).run(["Explain DNS TTL"]);
    const again = roleModels({ actor: ["b"], evaluator: ["Final score: 9.5"], reflector: ["ok"] });
    await new ReflexionAgent({ model: again.factory, store, owner: "alice" }).run(["Explain DNS records"]);
    expect(promptOf(again.actor, 0)).toContain("Lesson: name the TTL.");
    const other = roleModels({ actor: ["c"], evaluator: ["Final score: 9.5"], reflector: ["ok"] });
    await new ReflexionAgent({ model: other.factory, store, owner: "bob" }).run(["Explain DNS records"]);
    expect(promptOf(other.actor, 0)).not.toContain("Lesson");
  });

  it("memory capacity evicts the oldest long-term entries", async () => {
    const m = roleModels({
      actor: ["a", "b", "c"],
      evaluator: ["Final score: 9.5", "Final score: 9.5", "Final score: 9.5"],
      reflector: ["alpha lesson one", "beta lesson two", "gamma lesson three"],
    });
    const agent = new ReflexionAgent({ model: m.factory, memoryCapacity: 2 });
    await agent.run(["first topic here", "second subject there", "third matter elsewhere"]);
    expect((await agent.memory.longTermEntries()).map((e) => e.reflection)).toEqual(["beta lesson two", "gamma lesson three"]);
  });
});
