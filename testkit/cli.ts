/**
 * Runs the command line for tests: in-process through the exported `runGenerateCli` (fast; what most
 * cases need), or as a real child process through `tsx` where the process is the point (exit status
 * wiring, stdout of a real process, handlers of the process). Also runs other Node programs of the
 * package (an example) in a child process.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { runGenerateCli } from "../src/cli/generate.js";

/** tsx's loader by absolute URL, so a child can run from any directory. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * CPU seconds a child may use (the shell's `ulimit -t`): an example or a docs sample takes about 2 s of CPU.
 * CPU time is what bounds a child here, not wall time, which a busy machine stretches without limit.
 */
export const CHILD_CPU_SECONDS = 60;

/** A running `node <nodeArgs…>` with tsx loaded; PATH and HOME are passed through, nothing else but `env`. */
export function startNode(nodeArgs: string[], env: Record<string, string>, options: { cwd?: string; stdin?: string; cpuSeconds?: number } = {}) {
  const cpu = options.cpuSeconds ?? CHILD_CPU_SECONDS;
  // `exec` replaces the shell, so the child's pid (and a signal sent to it) is node's own.
  const child = spawn("/bin/sh", ["-c", `ulimit -t ${cpu} && exec "$0" "$@"`, process.execPath, "--import", TSX, ...nodeArgs], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    cwd: options.cwd,
    stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const result = new Promise<ChildResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, result };
}

/** `node <nodeArgs…>` with tsx loaded, to its end. */
export function runNode(nodeArgs: string[], env: Record<string, string>, options: { cwd?: string } = {}): Promise<ChildResult> {
  return startNode(nodeArgs, env, options).result;
}

/** An empty directory, so no developer's `.env` reaches a test run. */
let emptyDir: string | undefined;
function noDotEnvDir(): string {
  emptyDir ??= mkdtempSync(join(tmpdir(), "cli-cwd-"));
  return emptyDir;
}

/**
 * The command line in-process: `npm run generate -- <args…>` with only `env` as its environment and
 * `cwd` (default: an empty directory) as the place its `.env` is read from.
 */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; signal?: AbortSignal; readLine?: (prompt: string) => Promise<string | null> } = {},
): Promise<ChildResult> {
  let stdout = "";
  let stderr = "";
  const code = await runGenerateCli(
    args,
    { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) },
    { env, cwd: options.cwd ?? noDotEnvDir(), signal: options.signal, readLine: options.readLine },
  );
  return { code, stdout, stderr };
}

/** The command line as a real process (`node --import tsx src/cli/generate.ts <args…>`), from an empty directory. */
export function startCliProcess(args: string[], env: Record<string, string>, options: { nodeArgs?: string[]; stdin?: string } = {}) {
  const cli = join(import.meta.dirname, "../src/cli/generate.ts");
  return startNode([...(options.nodeArgs ?? []), cli, ...args], env, { cwd: noDotEnvDir(), stdin: options.stdin });
}

export function runCliProcess(args: string[], env: Record<string, string>, options: { nodeArgs?: string[]; stdin?: string } = {}): Promise<ChildResult> {
  return startCliProcess(args, env, options).result;
}
