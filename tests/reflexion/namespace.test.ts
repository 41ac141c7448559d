import { describe, expect, it } from "vitest";
import { memoryNamespace, namespaceLabel } from "../../src/reflexion/memory-store.js";

describe("memory namespace labels", () => {
  const samples = ["alice", "alice@example.com", "my_agent", "my-agent", "myXagent", "50%", "a.b:c", "~7e~", "", "émilie", "🚀", "a b"];

  it("never contain characters the store forbids or that SQL LIKE treats as wildcards", () => {
    for (const s of samples) expect(namespaceLabel(s)).toMatch(/^[A-Za-z0-9~-]+$/);
  });

  it("are one-to-one, so two names never share a namespace", () => {
    const labels = samples.map(namespaceLabel);
    expect(new Set(labels).size).toBe(samples.length);
  });

  it("keep plain names readable", () => {
    expect(memoryNamespace("alice", "reflexion-agent")).toEqual(["reflexion", "alice", "reflexion-agent"]);
    expect(namespaceLabel("my_agent")).toBe("my~5f~agent");
  });
});
