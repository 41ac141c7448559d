/**
 * `npm start`: the LangGraph dev server with both graphs on http://127.0.0.1:8123. Its settings come from the
 * environment and, when there is one, `./.env` (a variable already set wins), read here as the command line
 * reads it (src/cli/env.ts) rather than named in langgraph.json: `.env` is optional, and the CLI warns on every
 * start when the file a langgraph.json names is missing. (A change to `.env` takes a restart.)
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { withDotEnv } from "../src/cli/env.js";

const root = join(import.meta.dirname, "..");
const { env } = withDotEnv(process.env, root);
const child = spawn(
  join(root, "node_modules", ".bin", "langgraphjs"),
  ["dev", "--host", "127.0.0.1", "--port", "8123", "--no-browser", ...process.argv.slice(2)],
  {
    cwd: root,
    env: { ...env, LANGGRAPH_CLI_NO_ANALYTICS: "1" },
    stdio: "inherit",
  },
);
// Ctrl-C reaches both processes through the terminal; a signal sent to this one alone is passed on.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
