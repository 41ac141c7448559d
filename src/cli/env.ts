/**
 * The command line's environment, read the way the dev server reads it: the current directory's
 * `.env` when there is one, with the process environment winning over the file.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";

interface DotEnv {
  env: NodeJS.ProcessEnv;
  /** Where the variables came from, for the progress line; undefined without a `.env`. */
  file?: string;
}

export function withDotEnv(env: NodeJS.ProcessEnv, cwd: string): DotEnv {
  const file = join(cwd, ".env");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { env };
  }
  // Like dotenv's populate() in `langgraphjs dev`: a variable already set is kept.
  return { env: { ...parseEnv(text), ...definedOnly(env) }, file };
}

function definedOnly(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));
}
