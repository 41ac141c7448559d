/**
 * A separate process running one graph through the persistence chooser, for
 * the durable-state tests where the process is the point: the one that is
 * killed mid-run, and the one whose memories another process reads.
 *
 *   node --import tsx tests/support/persistence-child.ts <mode>
 *
 * modes:
 *   validate-start   run CHILD_REQUEST on thread CHILD_THREAD_ID
 *   reflexion        run CHILD_TASKS (a JSON list) on thread CHILD_THREAD_ID for owner CHILD_OWNER
 *   validate-thread  generateValidated on thread CHILD_THREAD_ID, holding it: CHILD_REQUEST, the inline
 *                    spec CHILD_SPEC (JSON), CHILD_MAX_ATTEMPTS, CHILD_STRATEGY and CHILD_MAX_WAIT_MS;
 *                    prints `QUEUED` when it waits for the thread, `BUSY <json>` (exit 3) when refused
 *
 * The model and database come from the environment (OPENAI_BASE_URL,
 * DATABASE_URL, …) exactly as in production code. Prints `OPENED <kind>` once
 * persistence is open, and `RESULT <json>` with the final state.
 *
 * The tests start it with `startChild`/`runChild` below.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = resolve(HERE, "../..");
const SCRIPT = fileURLToPath(import.meta.url);

export type ChildMode = "validate-start" | "reflexion" | "validate-thread";

export interface ChildProcessHandle {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The final state printed by the child, or null. */
  result: Record<string, any> | null;
}

/** The environment a child gets: nothing from the test's own model or database settings. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const key of ["PATH", "HOME", "TMPDIR", "LANG"]) if (process.env[key] !== undefined) base[key] = process.env[key];
  return { ...base, OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0", ...env };
}

export function startChild(mode: ChildMode, env: Record<string, string>): ChildProcessHandle {
  const child = spawn(process.execPath, ["--import", "tsx", SCRIPT, mode], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolveExit({ code, signal }));
  });
  return { process: child, stdout: () => stdout, stderr: () => stderr, exited };
}

export function parseResult(stdout: string): Record<string, any> | null {
  const line = stdout.split("\n").find((l) => l.startsWith("RESULT "));
  return line ? (JSON.parse(line.slice("RESULT ".length)) as Record<string, any>) : null;
}

/** Run a child to the end. */
export async function runChild(mode: ChildMode, env: Record<string, string>): Promise<ChildRun> {
  const handle = startChild(mode, env);
  const { code, signal } = await handle.exited;
  return { code, signal, stdout: handle.stdout(), stderr: handle.stderr(), result: parseResult(handle.stdout()) };
}

// ---------------------------------------------------------------------------
// The child itself

async function main(mode: string): Promise<void> {
  const { openPersistence } = await import("../../src/persistence/open.js");
  const { buildValidationGraph } = await import("../../src/validation/graph.js");
  const { buildReflexionGraph } = await import("../../src/reflexion/graph.js");
  const { generateValidated } = await import("../../src/validation/generate.js");
  const { ThreadBusyError } = await import("../../src/errors.js");

  const threadId = process.env.CHILD_THREAD_ID;
  if (!threadId) throw new Error("CHILD_THREAD_ID is not set");
  const persistence = await openPersistence();
  process.stdout.write(`OPENED ${persistence.kind}\n`);
  try {
    const options = { checkpointer: persistence.checkpointer, store: persistence.store };
    let result: unknown;
    if (mode === "validate-start") {
      const graph = buildValidationGraph(options);
      result = await graph.invoke({ request: process.env.CHILD_REQUEST ?? "" }, { configurable: { thread_id: threadId }, durability: "sync" });
    } else if (mode === "validate-thread") {
      try {
        result = await generateValidated({
          checkpointer: persistence.checkpointer,
          threadId,
          request: process.env.CHILD_REQUEST ?? "",
          spec: JSON.parse(process.env.CHILD_SPEC ?? "null"),
          maxAttempts: Number(process.env.CHILD_MAX_ATTEMPTS ?? "3"),
          multitask: {
            strategy: process.env.CHILD_STRATEGY === "reject" ? "reject" : "enqueue",
            maxWaitMs: Number(process.env.CHILD_MAX_WAIT_MS ?? "60000"),
            onQueued: () => process.stdout.write("QUEUED\n"),
          },
        });
      } catch (error) {
        if (!ThreadBusyError.isInstance(error)) throw error;
        process.stdout.write(`BUSY ${JSON.stringify({ code: error.code, reason: error.reason, threadId: error.threadId })}\n`);
        process.exitCode = 3;
        return;
      }
    } else if (mode === "reflexion") {
      const graph = buildReflexionGraph(options);
      const tasks = JSON.parse(process.env.CHILD_TASKS ?? "[]") as string[];
      const maxLoops = Number(process.env.CHILD_MAX_LOOPS ?? "3");
      result = await graph.invoke(
        { tasks },
        { configurable: { thread_id: threadId, memoryOwner: process.env.CHILD_OWNER }, context: { maxLoops }, durability: "sync" },
      );
    } else {
      throw new Error(`unknown mode ${JSON.stringify(mode)}`);
    }
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  } finally {
    await persistence.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv[2] ?? "").then(
    () => process.exit(process.exitCode ?? 0),
    (error: unknown) => {
      process.stderr.write(`ERROR ${(error as Error)?.name ?? "Error"}: ${(error as Error)?.message ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
