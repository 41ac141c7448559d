/**
 * On the Postgres store, namespace prefixes are matched with SQL LIKE; agent
 * and owner names with "_" or "%" must still never see each other's memories.
 */
import { expect, it } from "vitest";
import { openPersistence } from "../../src/persistence/open.js";
import { ensureReflexionConfig } from "../../src/reflexion/configuration.js";
import { storeMemoryFor } from "../../src/reflexion/nodes.js";
import { describeWithPostgres } from "../support/postgres.js";

// A database of its own: the agent and owner names are fixed, so a rerun must not find the last run's memories.
describeWithPostgres("memory namespaces on PostgreSQL", (db) => {
  it("my_agent, my-agent and myXagent, and owners 50% and 50x, keep their memories apart", async () => {
    const p = await openPersistence({ databaseUrl: db.url });
    try {
      const memoryOf = (agentName: string, owner: string) =>
        storeMemoryFor({ configurable: { memoryOwner: owner } }, ensureReflexionConfig({ context: { agentName } }), p.store);
      const step = (reflection: string) => ({ task: "Explain DNS caching", response: "r", evaluation: "e", reflection, score: 0.95, iteration: 0 });
      await memoryOf("myXagent", "alice").add(step("lesson of myXagent"));
      await memoryOf("my-agent", "alice").add(step("lesson of my-agent"));
      await memoryOf("my_agent", "50x").add(step("lesson of owner 50x"));
      expect((await memoryOf("my_agent", "alice").entries()).map((e) => e.reflection)).toEqual([]);
      expect((await memoryOf("my-agent", "alice").entries()).map((e) => e.reflection)).toEqual(["lesson of my-agent"]);
      expect((await memoryOf("my_agent", "50%").entries()).map((e) => e.reflection)).toEqual([]);
      expect((await memoryOf("my_agent", "50x").search("DNS caching", 5)).map((e) => e.reflection)).toEqual(["lesson of owner 50x"]);
    } finally {
      await p.close();
    }
  });
});
