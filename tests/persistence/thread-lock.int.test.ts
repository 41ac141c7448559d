/**
 * One run per thread at a time across processes on one PostgreSQL database: separate processes, each with its own
 * openPersistence pools, run generateValidated on the same thread at once. Every success a caller is told is a
 * finished checkpoint of its own request holding that value; the thread's last state is one run's whole (request,
 * spec, history and verdict); a refused run says so and calls no model; a queued run says so; a process killed
 * with SIGKILL while it holds the thread frees it for the next run (within that run's wait, 120 s); the command line
 * with --thread waits for a held thread and says so. The lock's
 * loss (its connection killed) stops the run with a ThreadLockLostError. No advisory lock is left behind.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ThreadLockLostError } from "../../src/errors.js";
import { openPersistence, type Persistence } from "../../src/persistence/open.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { threadLockKey } from "../../src/persistence/threads.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedServer } from "../../testkit/openai-server.js";
import { runCli } from "../../testkit/cli.js";
import { startChild, parseResult, type ChildProcessHandle } from "../support/persistence-child.js";
import { describeWithPostgres, waitFor, waitForAdvisoryLockWaiter } from "../support/postgres.js";

/** Each test: a few child processes started through tsx (each several seconds on a loaded machine). */
const TEST_TIMEOUT = 300_000;
const CHILD_TIMEOUT = 180_000;

const spec = (name: string, maximum?: number) =>
  JSON.stringify({
    name,
    schema: { type: "object", required: ["replicas"], properties: { replicas: maximum === undefined ? { type: "integer" } : { type: "integer", maximum } } },
  });
const STRICT = spec("strict", 10);
const LOOSE = spec("loose");

const DEPLOYMENT = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const CLI_ENV = { OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0" };

/** Which run a model request belongs to: the request text its prompt carries. */
const runOf = (req: RecordedRequest) => /request ([A-Z])\b/.exec(req.messages.map((m) => m.content).join("\n"))?.[1] ?? "?";

function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describeWithPostgres(
  "one run per thread across processes on PostgreSQL",
  (db) => {
    let server: ScriptedServer;
    let persistence: Persistence;
    const children: ChildProcessHandle[] = [];

    beforeAll(async () => {
      server = await startScriptedOpenAIServer();
      persistence = await openPersistence({ databaseUrl: db.url });
    });
    afterAll(async () => {
      for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
      await Promise.all(children.map((c) => c.exited.catch(() => undefined)));
      await persistence?.close();
      await server?.close();
    });

    const start = (threadId: string, env: Record<string, string>) => {
      const child = startChild("validate-thread", { DATABASE_URL: db.url, OPENAI_BASE_URL: server.baseURL, CHILD_THREAD_ID: threadId, ...env });
      children.push(child);
      return child;
    };
    const finished = async (child: ChildProcessHandle) => {
      const { code } = await child.exited;
      return { code, stdout: child.stdout(), stderr: child.stderr(), result: parseResult(child.stdout()) };
    };
    const requestsOf = (threadRuns: string[], since: number) =>
      server.requests
        .slice(since)
        .map(runOf)
        .filter((r) => threadRuns.includes(r));

    /** The thread's finished checkpoints and its last state, read through this process's own pools. */
    async function threadState(threadId: string) {
      const graph = buildValidationGraph({ ...persistence });
      const config = { configurable: { thread_id: threadId } };
      const finals: Array<Record<string, any>> = [];
      for await (const snapshot of graph.getStateHistory(config)) if (snapshot.next.length === 0) finals.push(snapshot.values);
      return { finals, last: (await graph.getState(config)).values as Record<string, any> };
    }

    /** Advisory locks held on the test database's thread keys, by any session. */
    async function heldThreadLocks(threadIds: string[]): Promise<number> {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const keys = threadIds.map((id) => BigInt.asUintN(64, BigInt(threadLockKey(id))));
        const { rows } = await client.query<{ classid: string; objid: string }>(
          "SELECT classid::text, objid::text FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1",
        );
        return rows.filter((r) => keys.some((k) => BigInt(r.classid) === k >> 32n && BigInt(r.objid) === (k & 0xffffffffn))).length;
      } finally {
        await client.end();
      }
    }

    it(
      "two processes at once on one thread (strict A answers 30, 31, 5; loose B answers 50): B waits, both successes are the thread's own, the last state is B's whole",
      async () => {
        const threadId = `race-${randomUUID()}`;
        const since = server.requests.length;
        const holdA = gate();
        let callsOfA = 0;
        server.setResponder(async (req) => {
          if (runOf(req) === "B") return JSON.stringify({ replicas: 50 });
          const n = callsOfA++;
          if (n === 0) await holdA.opened;
          return JSON.stringify({ replicas: [30, 31, 5][Math.min(n, 2)] });
        });

        const a = start(threadId, { CHILD_REQUEST: "request A", CHILD_SPEC: STRICT, CHILD_MAX_ATTEMPTS: "3" });
        await waitFor("A's first model request", () => callsOfA > 0 || a.process.exitCode !== null, CHILD_TIMEOUT);
        const b = start(threadId, { CHILD_REQUEST: "request B", CHILD_SPEC: LOOSE, CHILD_MAX_ATTEMPTS: "3", CHILD_MAX_WAIT_MS: "170000" });
        await waitFor("B to say it waits for the thread", () => b.stdout().includes("QUEUED") || b.process.exitCode !== null, CHILD_TIMEOUT);
        expect(b.stdout()).toContain("QUEUED");
        expect(requestsOf(["B"], since)).toEqual([]);
        holdA.open();

        const [doneA, doneB] = await Promise.all([finished(a), finished(b)]);
        expect(doneA.code, doneA.stderr).toBe(0);
        expect(doneB.code, doneB.stderr).toBe(0);
        expect(doneA.stdout).not.toContain("QUEUED");
        expect(doneA.result).toMatchObject({ success: true, value: { replicas: 5 }, attempts: 3, spec: "strict" });
        expect(doneB.result).toMatchObject({ success: true, value: { replicas: 50 }, attempts: 1, spec: "loose" });
        // One run after the other.
        expect(requestsOf(["A", "B"], since).join("")).toBe("AAAB");

        const { finals, last } = await threadState(threadId);
        expect(finals.some((v) => v.request === "request A" && v.success === true && v.value?.replicas === 5 && v.spec === "strict")).toBe(true);
        expect(finals.some((v) => v.request === "request B" && v.success === true && v.value?.replicas === 50 && v.spec === "loose")).toBe(true);
        expect(last).toMatchObject({ request: "request B", spec: "loose", success: true, value: { replicas: 50 }, attempts: 1 });
        expect(last.history.map((h: { output: string }) => JSON.parse(h.output).replicas)).toEqual([50]);
        expect(await heldThreadLocks([threadId])).toBe(0);
      },
      TEST_TIMEOUT,
    );

    it(
      "same spec, A failing (30, 31) while B (5) waits and C asks with reject: C is refused and calls no model, B's success is the thread's last state",
      async () => {
        const threadId = `same-spec-${randomUUID()}`;
        const since = server.requests.length;
        const holdA = gate();
        let callsOfA = 0;
        server.setResponder(async (req) => {
          const run = runOf(req);
          if (run !== "A") return JSON.stringify({ replicas: 5 });
          const n = callsOfA++;
          if (n === 0) await holdA.opened;
          return JSON.stringify({ replicas: [30, 31][Math.min(n, 1)] });
        });

        const a = start(threadId, { CHILD_REQUEST: "request A", CHILD_SPEC: STRICT, CHILD_MAX_ATTEMPTS: "2" });
        await waitFor("A's first model request", () => callsOfA > 0 || a.process.exitCode !== null, CHILD_TIMEOUT);
        const c = start(threadId, { CHILD_REQUEST: "request C", CHILD_SPEC: STRICT, CHILD_STRATEGY: "reject" });
        const doneC = await finished(c);
        expect(doneC.code, doneC.stderr).toBe(3);
        expect(doneC.stdout).toContain(`BUSY ${JSON.stringify({ code: "THREAD_BUSY", reason: "running", threadId })}`);
        expect(doneC.result).toBeNull();
        const b = start(threadId, { CHILD_REQUEST: "request B", CHILD_SPEC: STRICT, CHILD_MAX_ATTEMPTS: "2", CHILD_MAX_WAIT_MS: "170000" });
        await waitFor("B to say it waits for the thread", () => b.stdout().includes("QUEUED") || b.process.exitCode !== null, CHILD_TIMEOUT);
        holdA.open();

        const [doneA, doneB] = await Promise.all([finished(a), finished(b)]);
        expect(doneA.result).toMatchObject({ success: false, stopReason: "max_attempts", value: { replicas: 31 } });
        expect(doneB.result).toMatchObject({ success: true, value: { replicas: 5 }, attempts: 1 });
        expect(requestsOf(["A", "B", "C"], since).join("")).toBe("AAB");

        const { finals, last } = await threadState(threadId);
        expect(finals.some((v) => v.request === "request B" && v.success === true && v.value?.replicas === 5)).toBe(true);
        expect(finals.some((v) => v.request === "request A" && v.success === false && v.value?.replicas === 31)).toBe(true);
        expect(finals.some((v) => v.request === "request C")).toBe(false);
        expect(last).toMatchObject({ request: "request B", success: true, value: { replicas: 5 }, attempts: 1 });
        expect(last.history.map((h: { output: string }) => JSON.parse(h.output).replicas)).toEqual([5]);
        expect(await heldThreadLocks([threadId])).toBe(0);
      },
      TEST_TIMEOUT,
    );

    it(
      "a process killed (SIGKILL) while it holds the thread frees it: the waiting run gets the thread within its wait (120 s) and finishes",
      async () => {
        const threadId = `killed-${randomUUID()}`;
        const since = server.requests.length;
        let callsOfA = 0;
        server.setResponder((req) => {
          if (runOf(req) === "B") return JSON.stringify({ replicas: 50 });
          callsOfA++;
          return { fault: "hang" };
        });

        const a = start(threadId, { CHILD_REQUEST: "request A", CHILD_SPEC: STRICT });
        await waitFor("A's first model request", () => callsOfA > 0 || a.process.exitCode !== null, CHILD_TIMEOUT);
        const b = start(threadId, { CHILD_REQUEST: "request B", CHILD_SPEC: LOOSE, CHILD_MAX_WAIT_MS: "120000" });
        await waitFor("B to say it waits for the thread", () => b.stdout().includes("QUEUED") || b.process.exitCode !== null, CHILD_TIMEOUT);
        expect(await heldThreadLocks([threadId])).toBe(1);
        a.process.kill("SIGKILL");
        expect(await a.exited).toEqual({ code: null, signal: "SIGKILL" });

        const doneB = await finished(b);
        expect(doneB.code, doneB.stderr).toBe(0);
        expect(doneB.result).toMatchObject({ success: true, value: { replicas: 50 } });
        expect(requestsOf(["A", "B"], since).join("")).toBe("AB");
        const { last } = await threadState(threadId);
        expect(last).toMatchObject({ request: "request B", spec: "loose", success: true, value: { replicas: 50 } });
        expect(await heldThreadLocks([threadId])).toBe(0);
      },
      TEST_TIMEOUT,
    );

    it(
      "the command line with --thread waits for a run another process holds, says so, then runs",
      async () => {
        const threadId = `cli-${randomUUID()}`;
        server.setResponder(() => DEPLOYMENT);
        const holder = await persistence.threads.acquire(threadId);
        const cli = runCli(["--spec", "deployment-config", "--thread", threadId, "request D"], {
          ...CLI_ENV,
          DATABASE_URL: db.url,
          OPENAI_BASE_URL: server.baseURL,
        });
        try {
          // The command line waits in PostgreSQL's lock queue for the thread.
          await waitForAdvisoryLockWaiter(db.url, "the command line to wait for the thread", CHILD_TIMEOUT);
        } finally {
          await holder.release();
        }
        const done = await cli;
        expect(done.code, done.stderr).toBe(0);
        expect(done.stderr).toContain(`thread ${threadId} is busy with another run: waiting for it to end`);
        expect(JSON.parse(done.stdout)).toEqual(JSON.parse(DEPLOYMENT));
        expect(await heldThreadLocks([threadId])).toBe(0);
      },
      TEST_TIMEOUT,
    );

    it("across pools: reject refuses at once, a wait past maxWaitMs ends in wait-timeout, an aborted wait leaves no lock behind", async () => {
      const threadId = `pools-${randomUUID()}`;
      const other = await openPersistence({ databaseUrl: db.url });
      try {
        const holder = await persistence.threads.acquire(threadId);
        await expect(other.threads.acquire(threadId, { strategy: "reject" })).rejects.toMatchObject({ name: "ThreadBusyError", reason: "running" });
        let queued = 0;
        await expect(other.threads.acquire(threadId, { maxWaitMs: 200, onQueued: () => queued++ })).rejects.toMatchObject({
          name: "ThreadBusyError",
          reason: "wait-timeout",
        });
        expect(queued).toBe(1);

        const controller = new AbortController();
        const waiting = other.threads.acquire(threadId, { signal: controller.signal }).then(
          () => "acquired",
          (e: unknown) => e,
        );
        await waitForAdvisoryLockWaiter(db.url, "the wait in PostgreSQL's lock queue");
        controller.abort(new Error("caller left"));
        expect(await waiting).toMatchObject({ message: "caller left" });
        await holder.release();
        // The aborted waiter got nothing: the thread is free for anyone, at once.
        await waitFor("the thread to be free", async () => (await heldThreadLocks([threadId])) === 0);
        const next = await other.threads.acquire(threadId, { strategy: "reject" });
        await next.release();
        expect(await heldThreadLocks([threadId])).toBe(0);
      } finally {
        await other.close();
      }
    });

    it("a lock whose connection dies stops its run with a ThreadLockLostError, and frees the thread", async () => {
      const threadId = `lost-${randomUUID()}`;
      const seen: unknown[] = [];
      const run = persistence.threads
        .run(
          threadId,
          (signal) =>
            new Promise((_, reject) =>
              signal.addEventListener("abort", () => {
                seen.push(signal.reason);
                reject(signal.reason);
              }),
            ),
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      await waitFor("the thread's lock", async () => (await heldThreadLocks([threadId])) === 1);
      const key = BigInt.asUintN(64, BigInt(threadLockKey(threadId)));
      const admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      try {
        await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid::text = $1 AND objid::text = $2",
          [(key >> 32n).toString(), (key & 0xffffffffn).toString()],
        );
      } finally {
        await admin.end();
      }
      const error = await run;
      expect(ThreadLockLostError.isInstance(error)).toBe(true);
      expect(ThreadLockLostError.isInstance(seen[0])).toBe(true);
      expect(await heldThreadLocks([threadId])).toBe(0);
      // The thread is free again, in this process too.
      await expect(persistence.threads.run(threadId, async () => "next", { strategy: "reject" })).resolves.toBe("next");
    });
  },
  { database: "shared" },
);
