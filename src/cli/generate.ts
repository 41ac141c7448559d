#!/usr/bin/env node
/**
 * Command line: generate one validated JSON object.
 *
 *   npx langgraph-trustworthy-output generate [--spec NAME|FILE] [--max-attempts N] [--model NAME] [--output-mode MODE] [--retry-with FORM] [--max-tokens N]
 *                          [--escalate-to NAME [--escalate-after N]] [--thread ID] "request"
 *   npx langgraph-trustworthy-output generate --thread ID            (resume an interrupted run)
 *
 * stdout carries exactly one JSON document, whatever happens: the valid object (exit 0), or an object
 * with `"success": false` saying what went wrong. Progress, messages and any library logging go to
 * stderr, with control characters shown as escapes (the model's and the provider's text must not act on
 * a terminal); stdout's JSON has them \u-escaped. Exit status: 0 valid, 1 not valid after the last
 * attempt, 2 bad usage or configuration, 3 the model provider failed, 4 the database is unreachable,
 * 5 internal error, 6 the thread is busy with another run, 130 interrupted.
 * A run on a named thread (--thread) holds it: another run on that thread, in any process on the same
 * database, waits for it (up to 60 s) or ends with exit status 6.
 * Settings come from the environment and the current directory's `.env` (the environment wins).
 * State is kept where openPersistence chooses: PostgreSQL with DATABASE_URL, else memory.
 */
import { randomUUID } from "node:crypto";
import { Console } from "node:console";
import { Writable } from "node:stream";
import { parseArgs } from "node:util";
import { Command } from "@langchain/langgraph";
import type { ReviewAnswer } from "../protocol/review.js";
import { DEFAULT_MAX_ATTEMPTS, ensureValidationConfig, validationStepLimit } from "../validation/configuration.js";
import { readEnvironment, SIMULATED_MODEL, type Environment } from "../environment.js";
import { ConfigurationError, ProviderError, redactSecrets, ThreadBusyError, ThreadLockLostError } from "../errors.js";
import { loadChatModel } from "../models.js";
import { DEFAULT_PROVIDER, MODEL_PROVIDERS, PROVIDER_HELP } from "../providers/index.js";
import { DatabaseUnavailableError, openPersistence, type Persistence } from "../persistence/open.js";
import { checkedLease, MULTITASK_DEFAULTS, type ThreadLease } from "../persistence/threads.js";
import { builtinSpecs } from "../specs/registry.js";
import { buildValidationGraph } from "../validation/graph.js";
import { OUTPUT_MODES } from "../validation/output-mode.js";
import { MAX_RUN_ATTEMPTS, RETRY_WITH } from "../settings.js";
import { withDotEnv } from "./env.js";
import { readSpecFile } from "./spec-file.js";
import { inert, lineReader, type LineReader } from "./terminal.js";
import { bound } from "../shared/text.js";
import type { StreamEvent } from "../streaming/attempt.js";

const EXIT = { valid: 0, invalid: 1, usage: 2, provider: 3, database: 4, internal: 5, busy: 6, interrupted: 130 } as const;

/** Said on stderr for every run whose answers come from the built-in simulated model, so none passes for a language model's. */
const SIMULATED_NOTICE =
  `model: ${SIMULATED_MODEL}: the answers come from the built-in simulated model (seeded rules: a built-in spec's example, or a value ` +
  "drawn from the spec's JSON Schema, with seeded defects, fixed when the validator names them), not from a language model\n";

const USAGE = `Usage: npx langgraph-trustworthy-output generate [options] "request"
       npx langgraph-trustworthy-output generate --thread ID    resume the thread's interrupted run, with the settings it started with
       (in a checkout of the repository: npm run -s generate -- [options] "request")

Generates one JSON object with an LLM, validates it against a spec and retries with the exact errors.

Options:
  --spec NAME|FILE       a built-in spec (${[...builtinSpecs.keys()].join(", ")}) or a JSON spec file
                         {"name", "description", "schema"} (default deployment-config)
  --max-attempts N       attempts before giving up, 1-${MAX_RUN_ATTEMPTS} (default ${DEFAULT_MAX_ATTEMPTS})
  --model NAME           chat model: provider/model (${PROVIDER_HELP.prefixes}) or a
                         bare name on the OpenAI-compatible server (default: LLM_MODEL, else gpt-4o-mini);
                         "simulated" is the built-in simulated model: seeded rules, not a language model
  --output-mode MODE     how the model is asked for JSON: text (the prompt asks for it), json_object (the
                         provider's JSON mode), json_schema (its structured output with the spec's schema) or
                         tool (a forced tool call), or auto (the provider's own structured output) (default:
                         auto for a provider/model name, else text); the validator judges the answer in every mode
  --max-tokens N         token budget of the run (input + output over every attempt): a model call whose
                         input (the prompt's characters ÷ 4) would take the tokens spent past N is not
                         made, and the run ends not valid with stopReason "budget" (default: no budget)
  --retry-with FORM      how a retry asks for the fix: answer (the whole answer again), corrections (only the
                         corrections, as a JSON Patch applied to the last answer, which is judged whole) or
                         auto (corrections when the errors are few for the answer's size) (default answer)
  --escalate-to NAME     after --escalate-after failed attempts of --model, the model NAME (any provider,
                         e.g. ${PROVIDER_HELP.examples[1]} after ${PROVIDER_HELP.examples[0]}) makes the remaining
                         attempts, with the same exact errors (the run setting models)
  --escalate-after N     attempts of the first model before escalating, 1-${MAX_RUN_ATTEMPTS} (default 1)
  --stop-on-no-progress  end early when an attempt repeats the previous attempt's errors
  --stream               show each answer on stderr as it arrives, with each error as soon as it is certain
                         (the default when stderr is a terminal); stdout still carries one JSON document
  --thread ID            the thread to run on (default: a new one); with no request, resume its interrupted run
  --interactive          when the model runs out of attempts, ask on the terminal: type the corrected JSON
                         (it must pass the same spec, or you are shown its errors and asked again),
                         ":request <a new request>" to let the model try again, or ":reject [reason]"
  -h, --help             this text

Output: stdout carries exactly one JSON document: the valid object (exit 0), or
{"success": false, ...} with the last errors and value (exit 1) or the error (other exits).
Progress and messages go to stderr. Use npx (or "npm run -s") so npm adds no banner to stdout.

Environment (also read from ./.env; a variable set in the environment wins over the file):
${PROVIDER_HELP.environment.map(([variable, says]) => `  ${variable.padEnd(23)}${says}\n`).join("")}  LLM_MODEL              default model name ("simulated": the built-in simulated model)
  LLM_TIMEOUT_MS         deadline of each model request, whole answer included (default 60000)
  LLM_MAX_RETRIES        client retries on 429, 5xx, connection faults and timeouts (default 2)
  DATABASE_URL           postgres://… keeps runs in PostgreSQL, so an interrupted run can be resumed

Exit status: 0 valid, 1 not valid after the last attempt, 2 bad usage or configuration,
3 the model provider failed, 4 the database is unreachable, 5 internal error,
6 the thread is busy (another run held --thread ID for 60 s), 130 interrupted.`;

interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** What the process gives the command: the real process by default; tests pass their own. */
interface CliContext {
  /** Environment variables (default process.env); `.env` in `cwd` fills in what is not set. */
  env?: NodeJS.ProcessEnv;
  /** Where `.env` is looked for (default the current directory). */
  cwd?: string;
  /** Aborting it interrupts the run (Ctrl-C): exit 130, the checkpoint kept for a resume. */
  signal?: AbortSignal;
  /** With --interactive: reads one line a person types (null at the end of input); default: standard input. */
  readLine?: (prompt: string) => Promise<string | null>;
  /** Stream each answer and show it arriving on stderr (default: whether stderr is a terminal; --stream forces it). */
  progress?: boolean;
}

/** The one JSON document of a run that did not end valid. */
interface FailureDocument {
  success: false;
  exitCode: number;
  error: { name: string; message: string; endpoint?: string };
  thread?: string;
}

/** Runs the command line; never throws and never rejects: every outcome is an exit status and one JSON document. */
export async function runGenerateCli(argv: string[], rawIO: CliIO, context: CliContext = {}): Promise<number> {
  const run: RunInfo = {};
  // Every message may carry text the model or the provider chose: shown inert, never acted on by a terminal.
  // stdout's JSON gets \u escapes, so it stays the same JSON value.
  const io: CliIO = { stdout: (text) => rawIO.stdout(inert(text, "json")), stderr: (text) => rawIO.stderr(inert(text)) };
  try {
    return await generate(argv, io, context, run);
  } catch (error) {
    const interrupted = context.signal?.aborted === true;
    const failure = describeFailure(interrupted ? new InterruptedError(run) : error, run);
    io.stderr(`${failure.error.message}${failure.error.endpoint ? `\n(model endpoint: ${failure.error.endpoint})` : ""}\n`);
    if (failure.exitCode === EXIT.usage && !(error instanceof ConfigurationError)) io.stderr(`\n${USAGE}\n`);
    io.stdout(`${JSON.stringify(failure, null, 2)}\n`);
    return failure.exitCode;
  }
}

/** What is known about the run so far, for the failure document. */
interface RunInfo {
  endpoint?: string;
  thread?: string;
  persistence?: Persistence["kind"];
}

class UsageError extends Error {
  override readonly name = "UsageError";
}

class InterruptedError extends Error {
  override readonly name = "Interrupted";
  constructor(run: RunInfo) {
    super(
      run.thread && run.persistence === "postgres"
        ? `Interrupted; the run's last finished step is kept: resume with --thread ${run.thread}`
        : "Interrupted" + (run.thread ? ` (state was kept in memory and ends with the process; set DATABASE_URL to make runs resumable)` : ""),
    );
  }
}

/** What the command line asks for. */
interface Invocation {
  /** The request, or undefined when resuming a thread's interrupted run. */
  request?: string;
  thread?: string;
  interactive: boolean;
  flags: Record<string, string | boolean | undefined>;
}

/** The whole command: read the arguments, fix the run's settings, run it (and its review), report. */
async function generate(argv: string[], io: CliIO, context: CliContext, run: RunInfo): Promise<number> {
  const command = parseCommand(argv);
  if (command === "help") {
    // Asked for, the usage text is the output.
    io.stdout(`${USAGE}\n`);
    return EXIT.valid;
  }
  const { env, file } = withDotEnv(context.env ?? process.env, context.cwd ?? process.cwd());
  const environment = readEnvironment(env);
  run.endpoint = endpointOf(environment);
  if (file) io.stderr(`settings from the environment and ${file}\n`);
  const settings = await runSettings(command, environment);

  let persistence: Persistence | undefined;
  let held: ThreadLease | undefined;
  let stdinLines: LineReader | undefined;
  const readLine = context.readLine ?? ((prompt: string) => (stdinLines ??= lineReader(process.stdin, process.stderr)).read(prompt, context.signal));
  try {
    persistence = await openPersistence({ env: environment });
    run.persistence = persistence.kind;
    // A named thread is held for the whole command (the run and its review): one run on it at a time, in every process.
    if (command.thread !== undefined) {
      const thread = command.thread;
      const onQueued = () => io.stderr(`thread ${thread} is busy with another run: waiting for it to end (up to ${MULTITASK_DEFAULTS.maxWaitMs / 1000} s)\n`);
      held = await persistence.threads.acquire(thread, { signal: context.signal, onQueued });
    }
    const progress = command.flags.stream === true || context.progress === true;
    const handle = await startRun(command, settings, environment, persistence, io, run, held?.signal ?? context.signal, progress);
    let final = await handle.stream(command.request === undefined ? null : { request: command.request });
    let rejection: string | undefined;
    if (await handle.pausedForReview()) ({ final, rejection } = await review(handle, command, io, readLine));
    return report(checkedLease(held, final), handle.threadId, io, rejection);
  } catch (error) {
    throw checkedLease(held, error);
  } finally {
    await held?.release();
    // The run is over: standard input (a terminal never ends on its own) must not keep the process alive.
    stdinLines?.close();
    try {
      await persistence?.close();
    } catch (error) {
      io.stderr(`closing the database connections failed: ${redactSecrets(String((error as Error)?.message ?? error))}\n`);
    }
  }
}

/** The arguments, checked: the request or a thread to resume, and the flags. */
function parseCommand(argv: string[]): Invocation | "help" {
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
        "output-mode": { type: "string" },
        "retry-with": { type: "string" },
        "max-tokens": { type: "string" },
        "escalate-to": { type: "string" },
        "escalate-after": { type: "string" },
        "stop-on-no-progress": { type: "boolean" },
        thread: { type: "string" },
        interactive: { type: "boolean" },
        stream: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return "help";
  if (values["escalate-after"] !== undefined && values["escalate-to"] === undefined)
    throw new UsageError("--escalate-after needs --escalate-to: the model to escalate to.");
  const thread = values.thread === undefined ? undefined : String(values.thread).trim();
  if (thread !== undefined && (thread.length === 0 || thread.length > 200)) {
    throw new UsageError("--thread must be a thread id of 1-200 characters.");
  }
  const resuming = thread !== undefined && positionals.length === 0;
  if (positionals.length !== 1 && !resuming) {
    throw new UsageError(`Give exactly one request (quote it); got ${positionals.length}.`);
  }
  return { request: resuming ? undefined : positionals[0], thread, interactive: values.interactive === true, flags: values };
}

/** The run's context from the flags, refused here (before the database is opened or any model called) when wrong. */
async function runSettings(
  command: Invocation,
  environment: Environment,
): Promise<{ context: Record<string, unknown>; maxAttempts?: number; model?: string; escalating?: boolean }> {
  const { flags } = command;
  const resuming = command.request === undefined;
  const context: Record<string, unknown> = {};
  if (command.interactive && !resuming) context.onFailure = "interrupt";
  if (flags["stop-on-no-progress"] !== undefined) context.stopOnNoProgress = flags["stop-on-no-progress"] === true;
  if (flags.spec !== undefined) {
    const spec = String(flags.spec);
    context.spec = builtinSpecs.has(spec) ? spec : readSpecFile(spec, [...builtinSpecs.keys()]);
  }
  if (flags["max-attempts"] !== undefined) context.maxAttempts = integerFlag(flags["max-attempts"]);
  if (flags["max-tokens"] !== undefined) context.maxTokens = integerFlag(flags["max-tokens"]);
  if (flags["output-mode"] !== undefined) {
    const mode = String(flags["output-mode"]);
    if (!(OUTPUT_MODES as readonly string[]).includes(mode))
      throw new UsageError(`--output-mode must be one of ${OUTPUT_MODES.map((m) => JSON.stringify(m)).join(", ")}; got ${JSON.stringify(bound(mode, 80))}.`);
    context.outputMode = mode;
  }
  if (flags["retry-with"] !== undefined) {
    const form = String(flags["retry-with"]);
    if (!(RETRY_WITH as readonly string[]).includes(form))
      throw new UsageError(`--retry-with must be one of ${RETRY_WITH.map((m) => JSON.stringify(m)).join(", ")}; got ${JSON.stringify(bound(form, 80))}.`);
    context.retryWith = form;
  }
  // The model name from the environment (LLM_MODEL, maybe from .env) is given explicitly: an escalation's
  // first step names it, and it is checked here, before the run; a resume keeps the model its run started with.
  if (flags.model !== undefined) context.model = flags.model;
  else if (!resuming) context.model = environment.model;
  if (flags["escalate-to"] !== undefined && !resuming) {
    // The run setting models: the first model for its attempts, then the one escalated to.
    const after = flags["escalate-after"] === undefined ? 1 : integerFlag(flags["escalate-after"]);
    context.models = [{ model: context.model, attempts: after }, { model: flags["escalate-to"] }];
    delete context.model;
  }
  if (resuming) return { context };
  const checked = ensureValidationConfig({ context }, { env: environment });
  // Every model the run may ask for is built now, so one that needs a provider nobody configured is refused
  // before the first call, not after the attempts of the model before it.
  for (const model of checked.models?.map((m) => m.model) ?? [checked.model]) await loadChatModel({ model, role: "generate" }, environment);
  return { context, maxAttempts: checked.maxAttempts, model: checked.model, escalating: checked.models !== undefined };
}

/** A whole number as a number; anything else as given, for the run's checks to refuse with their own message. */
function integerFlag(value: string | boolean): number | string {
  const raw = String(value);
  return /^\d+$/.test(raw) ? Number(raw) : raw;
}

/** A run on its thread: the graph, how to stream a step of it (printing each attempt), and whether it waits for review. */
interface RunHandle {
  threadId: string;
  stream(input: unknown): Promise<Record<string, any>>;
  pausedForReview(): Promise<boolean>;
  values(): Promise<Record<string, any>>;
}

async function startRun(
  command: Invocation,
  settings: Awaited<ReturnType<typeof runSettings>>,
  environment: Environment,
  persistence: Persistence,
  io: CliIO,
  run: RunInfo,
  signal: AbortSignal | undefined,
  progress: boolean,
): Promise<RunHandle> {
  const graph = buildValidationGraph({
    // The environment read with ./.env: the model's client and the operator's spec limits come from it.
    env: environment,
    checkpointer: persistence.checkpointer,
    store: persistence.store,
  });
  const threadId = command.thread ?? randomUUID();
  run.thread = threadId;
  const runConfig = { configurable: { thread_id: threadId } };
  let maxAttempts = settings.maxAttempts;
  let escalating = settings.escalating === true;
  if (command.request === undefined) {
    const saved = await graph.getState(runConfig);
    if (saved.next.length === 0) {
      throw new ConfigurationError(
        persistence.kind === "memory"
          ? `Nothing to resume on thread ${JSON.stringify(threadId)}: without DATABASE_URL, state is kept in memory and ends with the process.`
          : `Nothing to resume on thread ${JSON.stringify(threadId)}: it has no interrupted run${saved.values && Object.keys(saved.values).length > 0 ? " (its last run finished)" : ""}. Give a request to start one.`,
      );
    }
    // The run goes on with the settings it was started with.
    const started = (saved.values as { run?: { maxAttempts?: unknown; model?: unknown; models?: unknown } | null }).run;
    if (typeof started?.maxAttempts === "number") maxAttempts = started.maxAttempts;
    escalating = Array.isArray(started?.models);
    io.stderr(`resuming thread ${threadId} (${persistence.location})\n`);
    if (started?.model === SIMULATED_MODEL) io.stderr(SIMULATED_NOTICE);
  } else {
    if (persistence.kind === "postgres") io.stderr(`thread ${threadId} (${persistence.location}); if interrupted, resume with --thread ${threadId}\n`);
    if (settings.model === SIMULATED_MODEL) io.stderr(SIMULATED_NOTICE);
  }
  return {
    threadId,
    async stream(input) {
      let final: Record<string, any> = {};
      const stream = await graph.stream(input as never, {
        ...runConfig,
        context: settings.context,
        signal,
        // The run's own bound, as started (a resumed run's recorded maxAttempts); else the graph's default.
        ...(maxAttempts === undefined ? {} : { recursionLimit: validationStepLimit(maxAttempts) }),
        // With progress, the model's tokens are streamed ("messages") and the answer is checked as it arrives ("custom").
        streamMode: progress ? ["updates", "values", "custom", "messages"] : ["updates", "values"],
        // Each step's checkpoint is written before the next step starts: a crash loses at most the step in progress.
        durability: "sync",
      });
      const arriving = new ArrivalPrinter(io);
      for await (const [mode, chunk] of stream as AsyncIterable<[string, Record<string, any>]>) {
        if (mode === "values") final = chunk;
        else if (mode === "updates") printAttempt(chunk.validate?.history?.[0], maxAttempts, escalating, io);
        else if (mode === "custom") arriving.show(chunk as unknown as StreamEvent);
      }
      return final;
    },
    async pausedForReview() {
      return (await graph.getState(runConfig)).next.includes("review");
    },
    async values() {
      return (await graph.getState(runConfig)).values as Record<string, any>;
    },
  };
}

/**
 * An answer as it arrives, on stderr: the value so far (bounded, at most
 * every half second), each error as soon as it is certain, and where the
 * request was stopped. It informs only: the attempt's verdict is printed
 * when the validator has judged the whole answer.
 */
class ArrivalPrinter {
  private readonly shownErrors = new Set<string>();
  private lastShown = 0;
  private attempt = 0;

  constructor(private readonly io: CliIO) {}

  show(event: StreamEvent): void {
    if (event.attempt !== this.attempt) {
      this.attempt = event.attempt;
      this.shownErrors.clear();
      this.lastShown = 0;
    }
    for (const error of event.errors) {
      if (this.shownErrors.has(error)) continue;
      this.shownErrors.add(error);
      this.io.stderr(`  found while attempt ${event.attempt} arrives: ${error}\n`);
    }
    const now = Date.now();
    if (event.kind === "partial" && event.value !== undefined && now - this.lastShown >= 500) {
      this.lastShown = now;
      this.io.stderr(`  attempt ${event.attempt} so far: ${bound(JSON.stringify(event.value) ?? "", 200)}\n`);
    }
    if (event.kind === "final" && event.stopped) {
      this.io.stderr(`  attempt ${event.attempt}: request stopped after ${event.stopped.at} characters (${event.stopped.detail})\n`);
    }
  }
}

/** One attempt's line on stderr: valid, refused, or its errors; with escalation, which model made it. */
function printAttempt(
  record: { attempt: number; valid: boolean; errors: string[]; model?: string; refusal?: string; correction?: { applied: boolean } } | undefined,
  maxAttempts: number | undefined,
  escalating: boolean,
  io: CliIO,
): void {
  if (!record) return;
  const form = record.correction === undefined ? "" : record.correction.applied ? ", corrections applied" : ", corrections set aside";
  const head = `attempt ${record.attempt}${maxAttempts ? ` of ${maxAttempts}` : ""}${escalating && record.model ? ` (${record.model})` : ""}${form}`;
  if (record.valid) io.stderr(`${head}: valid\n`);
  else if (record.refusal !== undefined) io.stderr(`${head}: the provider refused: ${record.refusal}\n`);
  else io.stderr(`${head}: ${record.errors.length} error(s)\n${record.errors.map((e) => `  - ${e}`).join("\n")}\n`);
}

/** A run paused for review: with --interactive the person answers here, held to the same spec, until the run ends or input does. */
async function review(
  handle: RunHandle,
  command: Invocation,
  io: CliIO,
  readLine: (prompt: string) => Promise<string | null>,
): Promise<{ final: Record<string, any>; rejection?: string }> {
  let final = await handle.values();
  let rejection: string | undefined;
  while (await handle.pausedForReview()) {
    final = await handle.values();
    if (!command.interactive) {
      io.stderr(`the run is waiting for a person's review; answer it with --interactive --thread ${handle.threadId}\n`);
      break;
    }
    const last = (final.history as Array<{ output: string }> | undefined)?.at(-1);
    // Each line of the answer behind a margin, so none of it can pass for the command's own output.
    const shown = (last?.output ?? "")
      .split("\n")
      .map((line) => `  | ${line}`)
      .join("\n");
    io.stderr(`\nThe last answer:\n${shown}\nIts errors:\n${((final.errors as string[] | undefined) ?? []).map((e) => `  - ${e}`).join("\n")}\n`);
    const line = await readLine('Type the corrected JSON (one line), ":request <a new request>", or ":reject [reason]": ');
    if (line === null) {
      io.stderr("no answer (end of input); the run stays paused for review\n");
      break;
    }
    const answer = line.trim();
    const resume: ReviewAnswer = answer.startsWith(":request ")
      ? { type: "retry", request: answer.slice(9).trim() }
      : answer === ":reject" || answer.startsWith(":reject ")
        ? { type: "reject", message: answer.slice(7).trim() || undefined }
        : { type: "edit", value: answer };
    if (resume.type === "reject" && resume.message !== undefined) rejection = resume.message;
    await handle.stream(new Command({ resume }));
    final = await handle.values();
    // The verdict is the run's: valid ends it; otherwise it is paused again with this answer's errors.
    if ("value" in resume) {
      io.stderr(
        final.success === true
          ? "your value is valid\n"
          : `your value is not valid:\n${((final.errors as string[] | undefined) ?? []).map((e) => `  - ${e}`).join("\n")}\n`,
      );
    }
  }
  return { final, rejection };
}

/** The one JSON document on stdout, and the exit status; a person's rejection keeps the reason they gave. */
function report(final: Record<string, any>, threadId: string, io: CliIO, rejection?: string): number {
  if (final.success === true) {
    io.stdout(`${JSON.stringify(final.value, null, 2)}\n`);
    return EXIT.valid;
  }
  io.stderr(`not valid after ${final.attempts} attempt(s) (${final.stopReason})\n`);
  if (final.stopReason === "budget") io.stderr(`the next model call would have passed the token budget; ${final.usage?.totalTokens ?? 0} token(s) spent\n`);
  // Wrapped, so a pipeline that ignores the exit status cannot take the last (invalid) answer for a valid one.
  const document = {
    success: false,
    exitCode: EXIT.invalid,
    stopReason: final.stopReason,
    attempts: final.attempts,
    errors: final.errors ?? [],
    value: final.value ?? null,
    ...(typeof final.refusal === "string" ? { refusal: final.refusal } : {}),
    ...(final.stopReason === "rejected" && rejection !== undefined ? { reason: rejection } : {}),
    usage: final.usage,
    thread: threadId,
  };
  io.stdout(`${JSON.stringify(document, null, 2)}\n`);
  return EXIT.invalid;
}

/** The model endpoint a provider failure names: the default provider's configured base URL (or its own), without any credentials in it. */
function endpointOf(environment: Environment): string {
  const raw = environment.providers[DEFAULT_PROVIDER]?.baseUrl ?? MODEL_PROVIDERS[DEFAULT_PROVIDER].defaultBaseUrl;
  try {
    const url = new URL(raw);
    if (url.username || url.password) {
      url.username = "";
      url.password = "";
    }
    return redactSecrets(url.toString().replace(/\/$/, ""));
  } catch {
    return redactSecrets(raw);
  }
}

function describeFailure(error: unknown, run: RunInfo): FailureDocument {
  const message = redactSecrets(error instanceof Error ? error.message : String(error));
  const name = error instanceof Error ? error.name : "Error";
  const document = (exitCode: number, detail: FailureDocument["error"]): FailureDocument => ({
    success: false,
    exitCode,
    error: detail,
    ...(run.thread ? { thread: run.thread } : {}),
  });
  if (error instanceof InterruptedError) return document(EXIT.interrupted, { name, message });
  if (error instanceof UsageError || error instanceof ConfigurationError) return document(EXIT.usage, { name, message });
  if (error instanceof ProviderError) return document(EXIT.provider, { name, message, endpoint: run.endpoint });
  if (error instanceof DatabaseUnavailableError) return document(EXIT.database, { name, message });
  if (ThreadBusyError.isInstance(error) || ThreadLockLostError.isInstance(error)) return document(EXIT.busy, { name, message });
  return document(EXIT.internal, { name, message: `Internal error (please report it): ${message}` });
}

/**
 * The process around runGenerateCli: library logging (console.log/info/warn, e.g. LangGraph's
 * "Retrying task" lines) goes to stderr, so stdout holds only the JSON document; Ctrl-C interrupts
 * the run cleanly; a rejection or exception that escapes anything still ends in one JSON document
 * (when none was written yet) and exit status 5.
 */
async function main(): Promise<void> {
  // Library logging may quote a provider's answer: shown inert like the command's own messages.
  const inertStderr = new Writable({ decodeStrings: false, write: (chunk, _encoding, done) => void process.stderr.write(inert(String(chunk)), done) });
  const toStderr = new Console({ stdout: inertStderr, stderr: inertStderr });
  for (const method of [
    "log",
    "info",
    "debug",
    "warn",
    "dir",
    "dirxml",
    "table",
    "trace",
    "group",
    "groupCollapsed",
    "groupEnd",
    "count",
    "countReset",
    "time",
    "timeEnd",
    "timeLog",
    "assert",
  ] as const) {
    (console as unknown as Record<string, unknown>)[method] = (toStderr[method] as (...args: unknown[]) => void).bind(toStderr);
  }
  let wroteDocument = false;
  const io: CliIO = {
    stdout: (text) => {
      wroteDocument = true;
      process.stdout.write(text);
    },
    stderr: (text) => void process.stderr.write(text),
  };
  const fatal = (error: unknown) => {
    const message = redactSecrets(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.stderr.write(inert(`Internal error (please report it): ${message}\n`));
    if (!wroteDocument) {
      const failure: FailureDocument = {
        success: false,
        exitCode: EXIT.internal,
        error: { name: "InternalError", message: redactSecrets(error instanceof Error ? error.message : String(error)) },
      };
      process.stdout.write(inert(`${JSON.stringify(failure, null, 2)}\n`, "json"));
    } else {
      process.stderr.write("The output above was written before this error: do not trust it.\n");
    }
    process.exit(EXIT.internal);
  };
  // A reader that stops early (`| head`) is not an error of the run.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    fatal(error);
  });
  process.on("unhandledRejection", fatal);
  process.on("uncaughtException", fatal);
  const interrupt = new AbortController();
  // The first Ctrl-C stops the run and reports; a second one kills the process as usual.
  process.once("SIGINT", () => interrupt.abort());
  // The installed command is `langgraph-trustworthy-output generate …`; the subcommand word is optional.
  const args = process.argv.slice(2);
  if (args[0] === "generate") args.shift();
  const code = await runGenerateCli(args, io, { signal: interrupt.signal, progress: process.stderr.isTTY === true });
  process.exitCode = code;
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

if (await isMainModule()) await main();
