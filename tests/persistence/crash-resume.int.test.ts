/**
 * Crash and resume on PostgreSQL: a process running a validation thread is
 * killed (SIGKILL) while its second model call is in flight; another process
 * (this one, which never ran the thread: all it knows comes from PostgreSQL)
 * resumes the thread from the last checkpoint and finishes it. Nothing is
 * lost, nothing is done twice. The same through the command line's --thread.
 * Only the process that crashes is a child process: the crash is the point.
 */
import { randomUUID } from "node:crypto";
import { spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel } from "../../src/models.js";
import { openPersistence, type Persistence } from "../../src/persistence/open.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { runCli } from "../../testkit/cli.js";
import { startChild } from "../support/persistence-child.js";
import { describeWithPostgres, waitFor } from "../support/postgres.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const BROKEN = JSON.stringify({ ...(builtinSpecs.get("deployment-config")!.example as object), replicas: 8 });
const BROKEN_ERROR = RULES.replicasNeedCpu(0.5, 8);
const REQUEST = "A deployment config for payments-api with 8 replicas";
/** Each test: up to 51 s measured with every core kept busy and the load average near 18 (scripts/busy.sh). */
const TEST_TIMEOUT = 240_000;
/** How long the child process may take to reach its second model call (it starts through tsx). */
const CHILD_START_TIMEOUT = 180_000;

// Thread ids are unique per test, so the shared test database is enough.
describeWithPostgres(
  "crash and resume on PostgreSQL",
  (db) => {
    let server: ScriptedServer;
    let persistence: Persistence;

    beforeAll(async () => {
      server = await startScriptedOpenAIServer();
      persistence = await openPersistence({ databaseUrl: db.url });
    });
    afterAll(async () => {
      await persistence?.close();
      await server?.close();
    });

    const env = (threadId: string) => ({ DATABASE_URL: db.url, OPENAI_BASE_URL: server.baseURL, CHILD_THREAD_ID: threadId, CHILD_REQUEST: REQUEST });

    it(
      "a killed process's thread is resumed by a fresh process: attempt 1 kept once, attempt 2 completed",
      async () => {
        const threadId = `crash-${randomUUID()}`;
        const before = server.requests.length;
        // Attempt 1 is answered (invalid); attempt 2 never gets an answer.
        server.setReplies([BROKEN, { fault: "hang" }]);

        const first = startChild("validate-start", env(threadId));
        let exitedEarly = false;
        void first.exited.then(() => (exitedEarly = true));
        await waitFor(
          "the second model request of the first process",
          () => {
            if (exitedEarly) throw new Error(`the first process exited early:\n${first.stdout()}\n${first.stderr()}`);
            return server.requests.length - before >= 2;
          },
          CHILD_START_TIMEOUT,
        );
        first.process.kill("SIGKILL");
        expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

        // What the crash left behind: attempt 1 checkpointed, generate next.
        const graph = buildValidationGraph({ ...persistence });
        const config = { configurable: { thread_id: threadId } };
        const left = await graph.getState(config);
        expect(left.next).toEqual(["generate"]);
        expect(left.values.attempts).toBe(1);
        expect(left.values.history.map((h: { attempt: number }) => h.attempt)).toEqual([1]);
        expect(left.values.stopReason).toBeNull();

        // Another process resumes the thread with a connection pool of its own; the model now answers a valid config.
        server.setReplies([VALID]);
        const modelEnv = { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
        const resumer = await openPersistence({ databaseUrl: db.url });
        let out: Record<string, any>;
        try {
          const resumed = buildValidationGraph({ ...resumer, model: (request) => createChatModel(request, modelEnv) });
          out = await resumed.invoke(null, { ...config, durability: "sync" });
        } finally {
          await resumer.close();
        }
        expect(out.success).toBe(true);
        expect(out.stopReason).toBe("valid");
        expect(out.attempts).toBe(2);
        expect(out.history.map((h: { attempt: number }) => h.attempt)).toEqual([1, 2]);
        expect(out.history[0].output).toBe(BROKEN);
        expect(out.history[0].errors.join("\n")).toContain(BROKEN_ERROR);
        expect(out.history[1].valid).toBe(true);
        expect(out.value).toEqual(JSON.parse(VALID));
        // Two answered model calls; the one cut by the crash is not counted.
        expect(out.usage.calls).toBe(2);
        expect(out.usage.totalTokens).toBe(out.history[0].usage.totalTokens + out.history[1].usage.totalTokens);

        // The model saw: attempt 1, attempt 2 (cut), attempt 2 again carrying attempt 1's exact errors.
        const sent = server.requests.slice(before);
        expect(sent).toHaveLength(3);
        expect(sent[0].messages.at(-1)!.content).not.toContain("A validator rejected it");
        for (const retry of [sent[1], sent[2]]) {
          expect(retry.messages.at(-1)!.content).toContain("A validator rejected it");
          expect(retry.messages.at(-1)!.content).toContain(BROKEN_ERROR);
        }

        // The checkpoint history is one unbroken chain: no step twice, none missing, no fork.
        const history = [];
        for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
        history.reverse(); // oldest first
        const steps = history.map((s) => s.metadata?.step);
        expect(steps).toEqual(Array.from({ length: history.length }, (_, i) => i - 1));
        const ids = history.map((s) => s.config.configurable?.checkpoint_id);
        expect(new Set(ids).size).toBe(ids.length);
        for (let i = 1; i < history.length; i++) {
          expect(history[i].parentConfig?.configurable?.checkpoint_id).toBe(ids[i - 1]);
        }
        const recorded = history.map((s) => (s.values.history ?? []).map((h: { attempt: number }) => h.attempt).join(","));
        expect([...new Set(recorded)]).toEqual(["", "1", "1,2"]);
        const last = history.at(-1)!;
        expect(last.next).toEqual([]);
        expect(last.values.success).toBe(true);
      },
      TEST_TIMEOUT,
    );

    it(
      "the command line resumes an interrupted run with --thread",
      async () => {
        const threadId = `cli-${randomUUID()}`;
        const before = server.requests.length;
        server.setReplies([BROKEN, { fault: "hang" }]);
        const cliEnv = { DATABASE_URL: db.url, OPENAI_BASE_URL: server.baseURL };

        const first = startCli(["--thread", threadId, REQUEST], cliEnv);
        let exitedEarly = false;
        void first.exited.then(() => (exitedEarly = true));
        await waitFor(
          "the second model request of the command line",
          () => {
            if (exitedEarly) throw new Error(`the command line exited early:\n${first.stderr()}`);
            return server.requests.length - before >= 2;
          },
          CHILD_START_TIMEOUT,
        );
        first.child.kill("SIGKILL");
        await first.exited;
        expect(first.stderr()).toContain(`resume with --thread ${threadId}`);

        // The resume, through the command line's entry function in this process.
        server.setReplies([VALID]);
        const resumed = await runCli(["--thread", threadId], { ...cliEnv, ...CLI_ENV });
        expect(resumed.code, resumed.stderr).toBe(0);
        expect(JSON.parse(resumed.stdout)).toEqual(JSON.parse(VALID));
        expect(resumed.stderr).toContain(`resuming thread ${threadId}`);
        expect(resumed.stderr).toContain("attempt 2 of 3: valid");
        expect(server.requests.length - before).toBe(3);

        // Finished: nothing left to resume.
        const again = await runCli(["--thread", threadId], { ...cliEnv, ...CLI_ENV });
        expect(again.code).toBe(2);
        expect(again.stderr).toContain("Nothing to resume");
      },
      TEST_TIMEOUT,
    );
  },
  { database: "shared" },
);

const CLI_ENV = { OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0" };

function startCli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/generate.ts", ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...CLI_ENV, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise<{ code: number | null }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code }));
  });
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}
