/**
 * Starts the LangGraph dev server (`langgraphjs dev`) on this repository's
 * graphs as a child process, for end-to-end tests through the official SDK.
 *
 * Each instance runs from its own temporary directory holding a copy of
 * langgraph.json whose paths point back into the repository, so that
 *   - instances never share `.langgraph_api/` (the in-memory server's state),
 *   - the repository's own `.env` is never read (the environment is exactly
 *     what the test passes).
 * A test that restarts a server passes the directory of the first instance
 * (`dir`) to the next one: it then reads the state the first one wrote.
 * The server listens on a free loopback port; readiness is `GET /ok`, polled.
 * Its output is captured for failure messages; `stop()` ends the whole process
 * group (the CLI and the server it spawns).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface DevServerOptions {
  /** Extra environment for the server, e.g. OPENAI_BASE_URL, LANGGRAPH_API_KEYS. */
  env?: Record<string, string>;
  /** How long to wait for `GET /ok` (default 150 s). */
  startTimeoutMs?: number;
  /** Repository holding langgraph.json (default: this repository). */
  repoRoot?: string;
  /**
   * The project directory to run in (default: a new temporary one). One given
   * here is the caller's: `stop()` leaves it, with the state the server wrote
   * in `.langgraph_api/`, for another instance to start from.
   */
  dir?: string;
  /**
   * A project's own langgraph.json, used as it is: the server runs in its folder (which holds its
   * `.langgraph_api/` and is left in place) with the `langgraphjs` of that project (`bin`), not this repository's.
   */
  project?: { config: string; bin: string };
}

export interface DevServer {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** The process group of the CLI and the server it spawns. */
  pid: number;
  /** The temporary project directory (holds langgraph.json and .langgraph_api/). */
  dir: string;
  /** Everything the server printed so far (stdout and stderr, interleaved). */
  output(): string;
  /** The last `chars` characters of the output, for failure messages. */
  tail(chars?: number): string;
  /** Stop the server and its children (it writes its state as it exits), and remove the temporary directory unless the caller gave it. */
  stop(): Promise<void>;
}

/** Environment variables of the calling process that must not leak into the server. */
const SCRUBBED = /^(OPENAI_|LLM_|LANGSMITH_|LANGCHAIN_|LANGGRAPH_API_KEYS$|DATABASE_URL$)/;

/** A free TCP port on 127.0.0.1 (asked from the OS; never a fixed number). */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen({ host: "127.0.0.1", port: 0 }, () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => (port ? resolvePort(port) : reject(new Error("no port assigned"))));
    });
  });
}

/**
 * langgraph.json for a project directory `dir`: every path points back into the
 * repository (relative to `dir`: the server joins paths onto the project
 * directory, so absolute ones do not work), and no env file.
 */
async function projectConfig(repoRoot: string, dir: string): Promise<string> {
  const config = JSON.parse(await readFile(join(repoRoot, "langgraph.json"), "utf8")) as Record<string, unknown>;
  const fromDir = (spec: string): string => {
    const [file, symbol] = spec.split(":");
    const path = relative(dir, isAbsolute(file) ? file : resolve(repoRoot, file));
    return symbol ? `${path}:${symbol}` : path;
  };
  const graphs = Object.fromEntries(Object.entries(config.graphs as Record<string, string>).map(([id, spec]) => [id, fromDir(spec)]));
  const out: Record<string, unknown> = { ...config, graphs, env: {} };
  const auth = config.auth as { path?: string } | undefined;
  if (auth?.path) out.auth = { ...auth, path: fromDir(auth.path) };
  const http = config.http as { app?: string } | undefined;
  if (http?.app) out.http = { ...http, app: fromDir(http.app) };
  return JSON.stringify(out, null, 2);
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await delay(50);
  }
  return condition();
}

async function killGroup(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  signalGroup(pid, "SIGTERM");
  if (!(await waitUntil(() => !groupAlive(pid), 10_000))) {
    signalGroup(pid, "SIGKILL");
    await waitUntil(() => !groupAlive(pid), 5_000);
  }
}

async function isReady(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer().catch(() => undefined);
    return res.ok;
  } catch {
    return false;
  }
}

/** Start one dev server and wait until it answers `GET /ok`. */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const repoRoot = options.repoRoot ?? REPO_ROOT;
  const project = options.project;
  const dir = project ? dirname(project.config) : (options.dir ?? (await mkdtemp(join(tmpdir(), "langgraph-dev-"))));
  const removeDir = () => (options.dir === undefined && !project ? rm(dir, { recursive: true, force: true }).catch(() => undefined) : Promise.resolve());
  const configPath = project?.config ?? join(dir, "langgraph.json");
  if (!project) await writeFile(configPath, await projectConfig(repoRoot, dir));
  // The CLI appends `.langgraph_api` to the project's .gitignore when it is missing; give it one.
  await writeFile(join(dir, ".gitignore"), ".langgraph_api/\n");

  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !SCRUBBED.test(key)) env[key] = value;
  Object.assign(env, { LANGGRAPH_CLI_NO_ANALYTICS: "1", LANGSMITH_TRACING: "false", BROWSER: "none" }, options.env ?? {});

  const bin = project?.bin ?? join(repoRoot, "node_modules", ".bin", "langgraphjs");
  const timeoutMs = options.startTimeoutMs ?? 150_000;
  let lastFailure = "";

  // A port found free can be taken before the server binds it: try again with another one.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let output = "";
    const child = spawn(bin, ["dev", "--port", String(port), "--host", "127.0.0.1", "--no-browser", "--no-reload", "--config", configPath], {
      cwd: dir,
      env,
      detached: true, // its own process group, so stop() reaches the server the CLI spawns
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    let exited: string | undefined;
    child.once("exit", (code, signal) => (exited = `exited with ${signal ?? `code ${code}`}`));
    child.once("error", (err) => (exited = `failed to start: ${err.message}`));

    const tail = (chars = 4_000) => output.slice(-chars);
    const deadline = Date.now() + timeoutMs;
    let ready = false;
    while (!ready && exited === undefined && !/EADDRINUSE/.test(output) && Date.now() < deadline) {
      ready = await isReady(url);
      if (!ready) await delay(200);
    }
    if (ready) {
      let stopped: Promise<void> | undefined;
      return {
        url,
        port,
        pid: child.pid!,
        dir,
        output: () => output,
        tail,
        stop() {
          stopped ??= (async () => {
            await killGroup(child);
            await removeDir();
          })();
          return stopped;
        },
      };
    }
    await killGroup(child);
    lastFailure = `langgraphjs dev on port ${port} ${exited ?? `did not answer GET /ok within ${timeoutMs} ms`}.\n--- server output ---\n${tail()}`;
    if (!/EADDRINUSE/.test(output)) break;
  }
  await removeDir();
  throw new Error(lastFailure);
}
