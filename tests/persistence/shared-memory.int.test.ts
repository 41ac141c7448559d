/**
 * Long-term memory shared across processes through the Postgres store: a
 * Reflexion run in a child process admits a reflection; a run in another
 * process (this one, with a connection pool of its own; another thread, the
 * same owner and agent) gives it to its actor. An owner with no memories,
 * running at the same time, sees none.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel } from "../../src/models.js";
import { openPersistence } from "../../src/persistence/open.js";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { namespaceLabel } from "../../src/reflexion/memory-store.js";
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedServer } from "../../testkit/openai-server.js";
import { runChild } from "../support/persistence-child.js";
import { describeWithPostgres } from "../support/postgres.js";

/** 40 s measured with the machine's load average near 19. */
const TEST_TIMEOUT = 240_000;

// Owners are unique per run, so the shared test database is enough.
describeWithPostgres(
  "long-term memory shared across processes",
  (db) => {
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

        // This process, which ran nothing of process 1's, runs a similar task for the same owner and, at the
        // same time, for another owner; their model names tell their requests apart.
        const before = server.requests.length;
        const tasks = ["Explain recursion with an example"];
        const reader = await openPersistence({ databaseUrl: db.url });
        try {
          const env = { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
          const graph = buildReflexionGraph({ ...reader, model: (request) => createChatModel(request, env) });
          const run = (model: string, memoryOwner: string) =>
            graph.invoke(
              { tasks },
              { configurable: { thread_id: `memory-${model}-${randomUUID()}`, memoryOwner }, context: { maxLoops: 3, model }, durability: "sync" },
            );
          const [second, third] = await Promise.all([run("same-owner", owner), run("other-owner", `other-${randomUUID()}`)]);
          expect(second.outcomes[0].bestScore).toBe(0.95);
          expect(third.outcomes[0].bestScore).toBe(0.95);
        } finally {
          await reader.close();
        }
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
  },
  { database: "shared" },
);
