#!/usr/bin/env node
/**
 * Command line: generate one validated JSON object.
 *
 *   npm run generate -- [--spec NAME|FILE] [--max-attempts N] [--model NAME] [--thread ID] "request"
 *   npm run generate -- --thread ID            (resume an interrupted run)
 *
 * Progress goes to stderr, the final JSON to stdout. Exit status: 0 valid,
 * 1 not valid after the last attempt, 2 bad usage or configuration,
 * 3 the model provider failed, 4 the database is unreachable.
 * State is kept where openPersistence chooses: PostgreSQL with DATABASE_URL,
 * else memory.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ensureValidationConfig } from "../configuration.js";
import { ConfigurationError, ProviderError } from "../errors.js";
import { DatabaseUnavailableError, openPersistence, type Persistence } from "../persistence.js";
import { builtinSpecs } from "../specs/registry.js";
import { buildValidationGraph } from "../validation/graph.js";

export const EXIT = { valid: 0, invalid: 1, usage: 2, provider: 3, database: 4 } as const;

const USAGE = `Usage: npm run generate -- [--spec NAME|FILE] [--max-attempts N] [--model NAME] [--stop-on-no-progress] [--thread ID] "request"
       npm run generate -- --thread ID [--spec …] [--max-attempts N]    resume the thread's interrupted run

  --spec NAME|FILE     a built-in spec (${[...builtinSpecs.keys()].join(", ")}) or a JSON spec file
  --max-attempts N     attempts before giving up, 1-10 (default 3)
  --model NAME         chat model (default: LLM_MODEL, else gpt-4o-mini)
  --stop-on-no-progress  end early when an attempt repeats the previous attempt's errors
  --thread ID          the thread to run on (default: a new one); with no request, resume its interrupted run

The model is whatever OPENAI_BASE_URL / OPENAI_API_KEY point to. With DATABASE_URL (postgres://…) runs are
checkpointed in PostgreSQL, so a run cut short (crash, Ctrl-C) can be resumed with --thread.
Exit status: 0 valid, 1 not valid after the last attempt, 2 bad usage or configuration, 3 provider failure,
4 database unreachable.`;

export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export async function runGenerateCli(argv: string[], io: CliIO): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        spec: { type: "string" },
        "max-attempts": { type: "string" },
        model: { type: "string" },
        "stop-on-no-progress": { type: "boolean" },
        thread: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    io.stderr(`${(error as Error).message}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return EXIT.valid;
  }
  const threadArg = values.thread === undefined ? undefined : String(values.thread).trim();
  if (threadArg !== undefined && (threadArg.length === 0 || threadArg.length > 200)) {
    io.stderr(`--thread must be a thread id of 1-200 characters.\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  const resuming = threadArg !== undefined && positionals.length === 0;
  if (positionals.length !== 1 && !resuming) {
    io.stderr(`Give exactly one request (quote it); got ${positionals.length}.\n\n${USAGE}\n`);
    return EXIT.usage;
  }

  let persistence: Persistence | undefined;
  try {
    const context: Record<string, unknown> = { stopOnNoProgress: values["stop-on-no-progress"] === true };
    if (values.spec !== undefined) context.spec = loadSpecArgument(String(values.spec));
    if (values["max-attempts"] !== undefined) {
      const raw = String(values["max-attempts"]);
      context.maxAttempts = /^\d+$/.test(raw) ? Number(raw) : raw;
    }
    if (values.model !== undefined) context.model = values.model;
    const config = ensureValidationConfig({ context });

    persistence = await openPersistence();
    const graph = buildValidationGraph({ checkpointer: persistence.checkpointer, store: persistence.store });
    const threadId = threadArg ?? randomUUID();
    const runConfig = { configurable: { thread_id: threadId } };
    if (resuming) {
      const saved = await graph.getState(runConfig);
      if (saved.next.length === 0) {
        throw new ConfigurationError(
          persistence.kind === "memory"
            ? `Nothing to resume on thread ${JSON.stringify(threadId)}: without DATABASE_URL, state is kept in memory and ends with the process.`
            : `Nothing to resume on thread ${JSON.stringify(threadId)}: it has no interrupted run${saved.values && Object.keys(saved.values).length > 0 ? " (its last run finished)" : ""}. Give a request to start one.`,
        );
      }
      io.stderr(`resuming thread ${threadId} (${persistence.location})\n`);
    } else if (persistence.kind === "postgres") {
      io.stderr(`thread ${threadId} (${persistence.location}); if interrupted, resume with --thread ${threadId}\n`);
    }
    let final: Record<string, any> = {};
    const stream = await graph.stream(resuming ? null : { request: positionals[0] }, {
      ...runConfig,
      context,
      streamMode: ["updates", "values"],
      // Each step's checkpoint is written before the next step starts: a crash loses at most the step in progress.
      durability: "sync",
    });
    for await (const [mode, chunk] of stream as AsyncIterable<[string, Record<string, any>]>) {
      if (mode === "values") {
        final = chunk;
        continue;
      }
      const update = chunk.validate;
      if (!update) continue;
      const record = update.history?.[0];
      if (!record) continue;
      const head = `attempt ${record.attempt} of ${config.maxAttempts}`;
      if (record.valid) io.stderr(`${head}: valid\n`);
      else io.stderr(`${head}: ${record.errors.length} error(s)\n${record.errors.map((e: string) => `  - ${e}`).join("\n")}\n`);
    }
    if (final.success) {
      io.stdout(`${JSON.stringify(final.result, null, 2)}\n`);
      return EXIT.valid;
    }
    io.stderr(`not valid after ${final.attempts} attempt(s) (${final.stopReason})\n`);
    if (final.result !== null && final.result !== undefined) io.stdout(`${JSON.stringify(final.result, null, 2)}\n`);
    return EXIT.invalid;
  } catch (error) {
    if (error instanceof ConfigurationError) {
      io.stderr(`${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof ProviderError) {
      io.stderr(`${error.message}\n`);
      return EXIT.provider;
    }
    if (error instanceof DatabaseUnavailableError) {
      io.stderr(`${error.message}\n`);
      return EXIT.database;
    }
    throw error;
  } finally {
    await persistence?.close();
  }
}

/** A built-in name stays a name; anything else is read as a JSON spec file. */
function loadSpecArgument(value: string): string {
  if (builtinSpecs.has(value)) return value;
  let text: string;
  try {
    text = readFileSync(value, "utf8");
  } catch {
    throw new ConfigurationError(`--spec ${JSON.stringify(value)} is neither a built-in spec (${[...builtinSpecs.keys()].join(", ")}) nor a readable file.`);
  }
  return text;
}

/** True when this file is the program being run, also through a symlink such as the package's bin link in node_modules/.bin. */
async function isMainModule(): Promise<boolean> {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  const [{ realpathSync }, { pathToFileURL }] = await Promise.all([import("node:fs"), import("node:url")]);
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

if (await isMainModule()) {
  // The installed command is `langgraph-trustworthy-output generate …`; the subcommand word is optional.
  const args = process.argv.slice(2);
  if (args[0] === "generate") args.shift();
  const code = await runGenerateCli(args, {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
  });
  process.exitCode = code;
}
