/** Runs a Node program of the package (the CLI, an example) in a child process, with only the given environment. */
import { spawn } from "node:child_process";

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node <nodeArgs…>` with tsx loaded; PATH and HOME are passed through, nothing else but `env`. */
export function runNode(nodeArgs: string[], env: Record<string, string>): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", ...nodeArgs], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The command line: `npm run generate -- <args…>`. */
export function runCli(args: string[], env: Record<string, string>): Promise<ChildResult> {
  return runNode(["src/cli/generate.ts", ...args], env);
}
