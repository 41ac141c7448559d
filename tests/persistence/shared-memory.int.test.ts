/**
 * Long-term memory shared across processes through the Postgres store: a
 * Reflexion run in one process admits a reflection; a run in another process
 * (another thread, the same owner and agent) gives it to its actor. An owner
 * with no memories sees none.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { namespaceLabel } from "../../src/reflexion/memory-store.js";
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedServer } from "../../testkit/openai-server.js";
import { runChild } from "../support/persistence-child.js";
import { describeWithPostgres } from "../support/postgres.js";

const TEST_TIMEOUT = 120_000;

// Owners are unique per run, so the shared test database is enough.
describeWithPostgres("long-term memory shared across processes", (db) => {
  let server: ScriptedServer;
  const reflection = `Lesson ${randomUUID()}: define the base case before the recursive case.`;

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      responder: (req) => {
        const system = req.messages[0]?.content ?? "";
        if (system.includes("evaluator")) return "Clear and correct. Final score: 9.5/10";
        if (system.includes("reflect")) return reflection;
        return "Recursion is a function calling itself on a smaller input until a base case.";
      },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const isActor = (r: RecordedRequest) => !/evaluator|reflect/.test(r.messages[0]?.content ?? "");

  it(
    "a reflection admitted in one process reaches the actor of another process",
    async () => {
      const owner = `owner-${randomUUID()}`;
      const common = { DATABASE_URL: db.url, OPENAI_BASE_URL: server.baseURL, CHILD_MAX_LOOPS: "3" };

      // Process 1 writes the memory.
      const first = await runChild("reflexion", {
        ...common,
        CHILD_THREAD_ID: `memory-a-${randomUUID()}`,
        CHILD_OWNER: owner,
        CHILD_TASKS: JSON.stringify(["Explain recursion in programming"]),
      });
      expect(first.code, first.stderr).toBe(0);
      expect(first.result!.outcomes[0].bestScore).toBe(0.95);
      expect(first.result!.steps[0][0].reflection).toBe(reflection);
      expect(server.requests.filter(isActor).every((r) => !r.messages.at(-1)!.content.includes(reflection))).toBe(true);

      // It is in PostgreSQL, under the owner's namespace.
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query("SELECT value FROM store WHERE namespace_path = $1", [
          ["reflexion", namespaceLabel(owner), "reflexion-agent", "entries"].join(":"),
        ]);
        expect(rows.map((r) => r.value.reflection)).toEqual([reflection]);
      } finally {
        await client.end();
      }

      // Process 2 (same owner) and process 3 (another owner) run a similar task at the same time;
      // their model names tell their requests apart.
      const before = server.requests.length;
      const task = JSON.stringify(["Explain recursion with an example"]);
      const [second, third] = await Promise.all([
        runChild("reflexion", { ...common, LLM_MODEL: "same-owner", CHILD_THREAD_ID: `memory-b-${randomUUID()}`, CHILD_OWNER: owner, CHILD_TASKS: task }),
        runChild("reflexion", { ...common, LLM_MODEL: "other-owner", CHILD_THREAD_ID: `memory-c-${randomUUID()}`, CHILD_OWNER: `other-${randomUUID()}`, CHILD_TASKS: task }),
      ]);
      expect(second.code, second.stderr).toBe(0);
      expect(third.code, third.stderr).toBe(0);
      const sent = server.requests.slice(before).filter(isActor);
      const actorOf = (model: string) => sent.filter((r) => r.model === model).map((r) => r.messages.at(-1)!.content);
      expect(actorOf("same-owner")).toHaveLength(1);
      expect(actorOf("same-owner")[0]).toContain("Lessons from earlier attempts at similar tasks");
      expect(actorOf("same-owner")[0]).toContain(reflection);
      expect(actorOf("other-owner")).toHaveLength(1);
      expect(actorOf("other-owner")[0]).not.toContain(reflection);
    },
    TEST_TIMEOUT,
  );
}, { database: "shared" });
