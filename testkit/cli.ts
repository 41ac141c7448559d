/** The command line's entry function (`npm run generate`) run in this process, with only the given environment, as a child process started with it would see it. */
import { runGenerateCli } from "../src/cli/generate.js";

export interface CliRun {
  /** The exit status the command line would end with. */
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `runGenerateCli(args)` with `process.env` replaced by PATH, HOME and `env` for the duration of the call.
 * Only one such run at a time: the environment is the process's. A real process adds only its start-up time,
 * so tests start one only where the process itself is the point (its exit, a crash).
 */
export async function runCliInProcess(args: string[], env: Record<string, string>): Promise<CliRun> {
  const saved = process.env;
  process.env = { PATH: saved.PATH ?? "", HOME: saved.HOME ?? "", ...env };
  let stdout = "";
  let stderr = "";
  try {
    const code = await runGenerateCli(args, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
    return { code, stdout, stderr };
  } finally {
    process.env = saved;
  }
}
