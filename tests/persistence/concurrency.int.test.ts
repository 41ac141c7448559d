/**
 * Many concurrent runs on one PostgreSQL-backed graph: 100 validation threads
 * at once (ten times the checkpointer's connections), each corrected on its second attempt by a real ChatOpenAI client
 * against the scripted server (with latency). Every run must succeed and every
 * thread's checkpointed state must be complete and consistent, with the
 * default pool sizes (10 + 5 connections).
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel } from "../../src/models.js";
import { DEFAULT_CHECKPOINTER_POOL_SIZE, DEFAULT_STORE_POOL_SIZE, openPersistence, type Persistence } from "../../src/persistence/open.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { describeWithPostgres } from "../support/postgres.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const BROKEN = JSON.stringify({ ...(builtinSpecs.get("deployment-config")!.example as object), replicas: 8 });
const RUNS = 100;
/**
 * pg-pool counts the wait for a free pooled connection against its connection timeout. On a busy machine the
 * runs' own CPU work stretches that wait past the default 10 s, which is not what this test is about.
 */
const CONNECT_TIMEOUT_MS = 60_000;

// A database of its own: the test counts the connections to it, which no other file may add to.
describeWithPostgres("concurrent runs on PostgreSQL", (db) => {
  let server: ScriptedServer;
  let persistence: Persistence;

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      latencyMs: 30,
      responder: (req) => (req.messages.at(-1)?.content.includes("A validator rejected it") ? VALID : BROKEN),
    });
    persistence = await openPersistence({ databaseUrl: db.url, connectTimeoutMs: CONNECT_TIMEOUT_MS });
  });
  afterAll(async () => {
    await persistence?.close();
    await server?.close();
  });

  it(
    `${RUNS} concurrent validation runs on distinct threads: no errors, every thread complete`,
    async () => {
      const env = { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
      const graph = buildValidationGraph({ ...persistence, model: (request) => createChatModel(request, env) });
      const threads = Array.from({ length: RUNS }, (_, i) => ({ id: `load-${i}-${randomUUID()}`, request: `A deployment config for service-${i}` }));
      const before = server.requests.length;

      // Watch how many connections this process holds on the database while the runs go.
      const watcher = new pg.Client({ connectionString: db.url });
      await watcher.connect();
      let peakConnections = 0;
      let watching = true;
      const watch = (async () => {
        while (watching) {
          const { rows } = await watcher.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
          );
          peakConnections = Math.max(peakConnections, rows[0].n);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();

      const started = performance.now();
      const settled = await Promise.allSettled(
        threads.map((t) => graph.invoke({ request: t.request }, { configurable: { thread_id: t.id }, durability: "sync" })),
      );
      const wallMs = performance.now() - started;
      watching = false;
      await watch;
      await watcher.end();

      const failures = settled.flatMap((s, i) => (s.status === "rejected" ? [`${threads[i].id}: ${String(s.reason)}`] : []));
      expect(failures).toEqual([]);
      for (const s of settled) {
        const out = (s as PromiseFulfilledResult<Record<string, any>>).value;
        expect(out.success).toBe(true);
        expect(out.attempts).toBe(2);
        expect(out.history.map((h: { attempt: number }) => h.attempt)).toEqual([1, 2]);
        expect(out.usage.calls).toBe(2);
      }
      expect(server.requests.length - before).toBe(2 * RUNS);
      expect(peakConnections).toBeLessThanOrEqual(DEFAULT_CHECKPOINTER_POOL_SIZE + DEFAULT_STORE_POOL_SIZE);

      // Read back through a fresh connection pool: every thread's checkpoint is final and consistent.
      const reader = await openPersistence({ databaseUrl: db.url, connectTimeoutMs: CONNECT_TIMEOUT_MS });
      try {
        const readGraph = buildValidationGraph({ ...reader });
        const states = await Promise.all(threads.map((t) => readGraph.getState({ configurable: { thread_id: t.id } })));
        states.forEach((state, i) => {
          expect(state.next, threads[i].id).toEqual([]);
          expect(state.values.request).toBe(threads[i].request);
          expect(state.values.success).toBe(true);
          expect(state.values.stopReason).toBe("valid");
          expect(state.values.attempts).toBe(2);
          expect(state.values.history.map((h: { attempt: number }) => h.attempt)).toEqual([1, 2]);
          expect(state.values.usage.calls).toBe(2);
          expect(state.values.value).toEqual(JSON.parse(VALID));
        });
      } finally {
        await reader.close();
      }
      console.log(
        `${RUNS} concurrent runs (${2 * RUNS} model calls, 30 ms latency each): ${Math.round(wallMs)} ms wall time, ` +
          `peak ${peakConnections} database connections`,
      );
    },
    // About 15 s of CPU; 70 s measured with the machine's load average near 19.
    300_000,
  );
});
