/**
 * A small Node HTTP service (node:http, no framework) that embeds both graphs.
 *
 *   npx tsx examples/service.ts          (or: npm run service)
 *
 *   POST /validate   { "request": string, "spec"?, "maxAttempts"?, "threadId"?, "multitaskStrategy"? }
 *                    → the final validation state
 *   POST /validate   { "threadId": string, "multitaskStrategy"? }   (no request)
 *                    → finishes that thread's interrupted run (cut by a shutdown or a
 *                      client that left), with the settings it started with
 *
 * One run per thread at a time, across every instance on the database: a
 * run on a named thread holds it (persistence.threads). A run that finds its
 * thread held waits its turn ("multitaskStrategy": "enqueue", the default; up
 * to 60 s behind at most 16 others per instance; its answer then says
 * "queued": true) or is refused at once ("reject"); a refused run answers
 * 409 and runs nothing.
 *   POST /reflexion  { "tasks": string[], "maxLoops"?, "owner"? }
 *                    → { results, steps, outcomes, usage }
 *   GET  /healthz    → 200 when the service and its database answer
 *
 * Callers: with SERVICE_API_KEYS="key1:alice,key2:bob" (the form of the
 * LangGraph server's LANGGRAPH_API_KEYS), POST routes need a known key in
 * `x-api-key` or `Authorization: Bearer <key>` (else 401); the caller's user
 * is then the memory owner (a body `owner` is refused) and owns the threads
 * it names: a `threadId` is the caller's own, so two users' "t1" are two
 * threads. Without keys the service is single-tenant and says so at start-up:
 * anyone who reaches it may name any owner and any thread.
 *
 * State goes where openPersistence chooses: with DATABASE_URL=postgres://…
 * checkpoints and long-term memory live in PostgreSQL, so any number of
 * instances can serve the same threads and share Reflexion's memory; without
 * it, in memory. Environment: PORT (default 3000), HOST (default 127.0.0.1),
 * DATABASE_URL, and the model settings of the README (OPENAI_API_KEY or
 * OPENAI_BASE_URL, LLM_MODEL, …; LLM_MODEL=simulated needs no provider).
 *
 * Status codes: 400 bad JSON, bad fields or bad run configuration; 401
 * missing or unknown key; 404 unknown route; 405 wrong method; 409 nothing to
 * resume on the thread, or the thread is busy with another run (the body's
 * "reason" says why: "running", "queue-full" or "wait-timeout"); 413 body over
 * 1 MiB (answered at once, whatever the body's size; the rest is read and
 * dropped, so the client receives the answer); 502 the model provider failed;
 * 503 the database is unavailable, or a run lost its thread's lock (its
 * database connection died; run it again); 500 anything else. Errors are
 * { "error": "<message>" }. No request can stop the service: a failure it did
 * not foresee is answered 500 and logged, and a stray promise rejection is
 * logged ("unhandled rejection: …") instead of ending the process.
 * SIGTERM/SIGINT: stop accepting, finish the requests in flight (up to
 * SHUTDOWN_GRACE_MS), close the database, exit 0.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { readEnvironment, SIMULATED_MODEL } from "../src/environment.js";
import { ConfigurationError, ProviderError, ThreadBusyError, ThreadLockLostError } from "../src/errors.js";
import { DatabaseUnavailableError, openPersistence } from "../src/persistence/open.js";
import { buildReflexionGraph } from "../src/reflexion/graph.js";
import { apiKeyOf, INVALID_API_KEY, MISSING_API_KEY, parseApiKeys, userLookup } from "../src/server/api-keys.js";
import type { MultitaskStrategy } from "../src/persistence/threads.js";
import { buildValidationGraph } from "../src/validation/graph.js";

const MAX_BODY_BYTES = 1024 * 1024;
/** How long in-flight requests may take to finish after SIGTERM before they are cut. */
const SHUTDOWN_GRACE_MS = 30_000;
const MAX_ID_CHARS = 200;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** More fields of the error's body. */
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

// ---------------------------------------------------------------------------
// Start-up: configuration and persistence, refused with a clear message.

function listenAddress(): { host: string; port: number } {
  const host = process.env.HOST?.trim() || "127.0.0.1";
  const raw = process.env.PORT?.trim() || "3000";
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65_535) fail(`PORT must be a port number from 0 to 65535; got ${JSON.stringify(raw)}.`);
  return { host, port };
}

const { host, port } = listenAddress();
let env: ReturnType<typeof readEnvironment>;
try {
  env = readEnvironment();
} catch (error) {
  fail((error as Error).message);
}
let apiKeys: Map<string, string>;
try {
  apiKeys = parseApiKeys(process.env.SERVICE_API_KEYS, "SERVICE_API_KEYS");
} catch (error) {
  fail((error as Error).message);
}
/** The user of a presented key; with no keys configured there are no users (single-tenant). */
const userOf = userLookup(apiKeys);
const authOn = apiKeys.size > 0;
const simulated = env.model === SIMULATED_MODEL;
if (!simulated && !env.providers.openai?.apiKey && !env.providers.openai?.baseUrl) {
  fail(
    "No model provider is configured: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (any OpenAI-compatible server), " +
      `or LLM_MODEL=${SIMULATED_MODEL} for the built-in simulated model (seeded rules, not a language model).`,
  );
}

const persistence = await openPersistence({ env }).catch((error: unknown) => {
  if (error instanceof ConfigurationError || error instanceof DatabaseUnavailableError) fail(error.message);
  throw error;
});
const graphs = {
  validation: buildValidationGraph({ checkpointer: persistence.checkpointer, store: persistence.store }),
  reflexion: buildReflexionGraph({ checkpointer: persistence.checkpointer, store: persistence.store }),
};

// ---------------------------------------------------------------------------
// Requests

const tooLarge = () => new HttpError(413, `The body is larger than ${MAX_BODY_BYTES} bytes.`);

/**
 * The body's bytes, at most MAX_BODY_BYTES; beyond that, 413. The rest of an
 * oversized body is read and dropped (never buffered) rather than cut off: a
 * connection closed while the client is still sending reaches it as a reset,
 * not as the 413.
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
      req.resume();
      return reject(tooLarge());
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      req.off("data", onData);
      req.resume(); // drop the rest
      reject(tooLarge());
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
  });
}

/** The body as a JSON object; 413 beyond MAX_BODY_BYTES, 400 when it is not a JSON object. */
async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = (await readBody(req)).toString("utf8");
  if (text.trim().length === 0) throw new HttpError(400, "The body is empty; send a JSON object.");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `The body is not valid JSON: ${(error as Error).message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new HttpError(400, `The body must be a JSON object; got ${body === null ? "null" : Array.isArray(body) ? "an array" : typeof body}.`);
  }
  return body as Record<string, unknown>;
}

function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new HttpError(
      400,
      `Unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")}; the fields are ${allowed.join(", ")}.`,
    );
  }
}

function optionalId(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim().length === 0 || value.length > MAX_ID_CHARS) {
    throw new HttpError(400, `${field} must be a non-empty string of at most ${MAX_ID_CHARS} characters.`);
  }
  // PostgreSQL refuses NUL in text, and other control characters make ids that logs and terminals mangle.
  if (/[\u0000-\u001f\u007f]/.test(value)) {
    throw new HttpError(400, `${field} must not contain control characters (such as NUL, a tab or a line break).`);
  }
  return value;
}

interface RunControl {
  signal: AbortSignal;
  /** The authenticated caller; undefined when the service is single-tenant. */
  user?: string;
}

/** The checkpointer's thread id for a caller's thread: per user when auth is on (the encoding keeps users apart). */
const threadKey = (threadId: string, user: string | undefined) => (user === undefined ? threadId : `${encodeURIComponent(user)}:${threadId}`);

const MULTITASK_STRATEGIES: readonly MultitaskStrategy[] = ["enqueue", "reject"];

function multitaskStrategy(body: Record<string, unknown>): MultitaskStrategy | undefined {
  const value = body.multitaskStrategy;
  if (value === undefined || MULTITASK_STRATEGIES.includes(value as MultitaskStrategy)) return value as MultitaskStrategy | undefined;
  throw new HttpError(400, `multitaskStrategy must be ${MULTITASK_STRATEGIES.map((s) => JSON.stringify(s)).join(" or ")}; got ${JSON.stringify(value)}.`);
}

/**
 * Run `fn` holding the caller's named thread, across every instance on the database; a busy thread is
 * a 409 that names the caller's thread id (never the key it is stored under).
 */
async function onThread<T extends object>(
  threadId: string,
  strategy: MultitaskStrategy | undefined,
  run: RunControl,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T & { queued?: true }> {
  let queued = false;
  try {
    const answer = await persistence.threads.run(threadKey(threadId, run.user), fn, { strategy, signal: run.signal, onQueued: () => (queued = true) });
    // A run that waited for another one says so.
    return queued ? { ...answer, queued: true } : answer;
  } catch (error) {
    if (!ThreadBusyError.isInstance(error)) throw error;
    const why =
      error.reason === "running"
        ? "another run is in progress on it"
        : error.reason === "queue-full"
          ? "too many runs already wait for it"
          : "another run held it for the whole wait";
    throw new HttpError(409, `Thread ${JSON.stringify(threadId)} is busy: ${why}; nothing was run. Try again later.`, { threadId, reason: error.reason });
  }
}

async function postValidate(body: Record<string, unknown>, run: RunControl) {
  onlyFields(body, ["request", "spec", "maxAttempts", "threadId", "multitaskStrategy"]);
  const named = optionalId(body, "threadId");
  const strategy = multitaskStrategy(body);
  if (body.request === undefined) {
    if (named !== undefined) return onThread(named, strategy, run, (signal) => resumeValidate(named, body, { ...run, signal }));
    throw new HttpError(
      400,
      'request is required: say what to generate, e.g. {"request": "A deployment config for payments-api"}; to finish an interrupted run, send its {"threadId"} alone.',
    );
  }
  const context: Record<string, unknown> = {};
  if (body.spec !== undefined) context.spec = body.spec;
  if (body.maxAttempts !== undefined) context.maxAttempts = body.maxAttempts;
  const start = async (threadId: string, signal: AbortSignal) =>
    validationAnswer(
      threadId,
      await graphs.validation.invoke(
        { request: body.request as string },
        // durability "sync": each step's checkpoint is committed before the next step starts.
        { configurable: { thread_id: threadKey(threadId, run.user) }, context, durability: "sync", signal },
      ),
    );
  // A new thread is nobody else's: only a named one is held.
  return named === undefined ? start(randomUUID(), run.signal) : onThread(named, strategy, run, (signal) => start(named, signal));
}

/**
 * A thread's interrupted run, finished from its last checkpoint with the request and settings it started
 * with (as the command line's `--thread ID` does): a step cut short is run again, a finished attempt never.
 */
async function resumeValidate(threadId: string, body: Record<string, unknown>, run: RunControl) {
  if (body.spec !== undefined || body.maxAttempts !== undefined) {
    throw new HttpError(400, 'A resumed run keeps the spec and maxAttempts it started with; send {"threadId"} alone, or a request to start a new run.');
  }
  const config = { configurable: { thread_id: threadKey(threadId, run.user) } };
  const saved = await graphs.validation.getState(config);
  if (saved.next.length === 0) {
    const finished = saved.values && Object.keys(saved.values).length > 0;
    throw new HttpError(
      409,
      `Nothing to resume on thread ${JSON.stringify(threadId)}: ${finished ? "its last run finished" : "it has no run"}` +
        `${persistence.kind === "memory" ? " (state is kept in memory and ends with the service)" : ""}. Send a request to start one.`,
    );
  }
  const out = await graphs.validation.invoke(null, { ...config, durability: "sync", signal: run.signal });
  return validationAnswer(threadId, out);
}

function validationAnswer(threadId: string, out: Awaited<ReturnType<typeof graphs.validation.invoke>>) {
  const { success, value, errors, attempts, stopReason, spec, history, usage } = out;
  return { threadId, success, value, errors, attempts, stopReason, spec, history, usage };
}

async function postReflexion(body: Record<string, unknown>, run: RunControl) {
  onlyFields(body, ["tasks", "maxLoops", "owner"]);
  if (body.tasks === undefined) throw new HttpError(400, 'tasks is required: a list of task strings, e.g. {"tasks": ["Explain recursion"]}.');
  // With keys the owner is the caller, never the body; single-tenant, the body may name one.
  if (run.user !== undefined && body.owner !== undefined) {
    throw new HttpError(400, "owner is taken from your API key; remove the owner field.");
  }
  const owner = run.user ?? optionalId(body, "owner");
  const threadId = randomUUID();
  const context: Record<string, unknown> = {};
  if (body.maxLoops !== undefined) context.maxLoops = body.maxLoops;
  const out = await graphs.reflexion.invoke(
    { tasks: body.tasks as string[] },
    { configurable: { thread_id: threadId, ...(owner ? { memoryOwner: owner } : {}) }, context, durability: "sync", signal: run.signal },
  );
  const { results, steps, outcomes, usage } = out;
  return { threadId, results, steps, outcomes, usage };
}

const routes: Record<string, { method: string; handle: (body: Record<string, unknown>, run: RunControl) => Promise<unknown> }> = {
  "/validate": { method: "POST", handle: postValidate },
  "/reflexion": { method: "POST", handle: postReflexion },
};

function send(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(payload);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function errorResponse(error: unknown): { status: number; message: string; detail?: Record<string, unknown> } {
  if (error instanceof HttpError) return { status: error.status, message: error.message, detail: error.detail };
  if (ThreadLockLostError.isInstance(error))
    return { status: 503, message: "The run lost its thread's lock (its database connection closed) and was stopped; run it again." };
  if (error instanceof ConfigurationError) return { status: 400, message: error.message };
  if (error instanceof ProviderError) return { status: 502, message: error.message };
  if (error instanceof DatabaseUnavailableError) return { status: 503, message: error.message };
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && /^(ECONNREFUSED|ETIMEDOUT|57P|08)/.test(code)) return { status: 503, message: "The database is unavailable; try again." };
  process.stderr.write(`internal error: ${(error as Error)?.stack ?? String(error)}\n`);
  return { status: 500, message: "Internal error." };
}

let shuttingDown = false;
const inFlight = new Set<AbortController>();

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? "/").split("?", 1)[0]!;
  if (path === "/healthz") {
    req.resume();
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, { error: "Use GET /healthz." }, { allow: "GET, HEAD" });
    if (shuttingDown) return send(res, 503, { status: "shutting down" });
    try {
      await persistence.ping();
      return send(res, 200, { status: "ok", persistence: persistence.kind });
    } catch (error) {
      return send(res, 503, { status: "unavailable", error: (error as Error).message });
    }
  }
  const route = routes[path];
  if (!route) {
    req.resume();
    return send(res, 404, { error: `No route ${req.method} ${path}; the routes are POST /validate, POST /reflexion and GET /healthz.` });
  }
  if (req.method !== route.method) {
    req.resume();
    return send(res, 405, { error: `Use ${route.method} ${path}.` }, { allow: route.method });
  }
  let user: string | undefined;
  if (authOn) {
    const key = apiKeyOf(new Headers(Object.entries(req.headers).flatMap(([k, v]) => (typeof v === "string" ? [[k, v]] : []))));
    user = userOf(key);
    if (user === undefined) {
      req.resume();
      return send(res, 401, { error: key === undefined ? MISSING_API_KEY : INVALID_API_KEY }, { "www-authenticate": "Bearer" });
    }
  }
  // A client that goes away stops its run (its thread keeps the last checkpoint).
  const control = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) control.abort(new Error("client disconnected"));
  });
  inFlight.add(control);
  try {
    const body = await readJsonObject(req);
    send(res, 200, await route.handle(body, { signal: control.signal, user }));
  } catch (error) {
    if (control.signal.aborted && res.destroyed) return;
    const { status, message, detail } = errorResponse(error);
    send(res, status, { error: message, ...detail });
  } finally {
    inFlight.delete(control);
  }
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    process.stderr.write(`internal error: ${(error as Error)?.stack ?? String(error)}\n`);
    send(res, 500, { error: "Internal error." });
  });
});
server.requestTimeout = 0; // model calls can take minutes; LLM_TIMEOUT_MS bounds each one.

server.on("error", (error: NodeJS.ErrnoException) => {
  void persistence.close();
  fail(
    error.code === "EADDRINUSE" ? `Port ${port} on ${host} is already in use; set PORT to another port.` : `Cannot listen on ${host}:${port}: ${error.message}`,
  );
});

server.listen(port, host, () => {
  const address = server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  const shown = host.includes(":") ? `[${host}]` : host;
  process.stdout.write(`service listening on http://${shown}:${actual} (state: ${persistence.location})\n`);
  process.stdout.write(
    authOn
      ? `auth on: ${apiKeys.size} API key(s) from SERVICE_API_KEYS; memory owner and threads are per key's user\n`
      : "single-tenant: SERVICE_API_KEYS is not set, so every caller may name any memory owner and any thread id\n",
  );
  if (simulated)
    process.stdout.write(`model: ${SIMULATED_MODEL}: the answers come from the built-in simulated model (seeded rules), not from a language model\n`);
});

// A promise rejection nobody handles is a bug to fix, but not a reason to drop every request in flight.
process.on("unhandledRejection", (reason) => {
  process.stderr.write(`unhandled rejection: ${(reason as Error)?.stack ?? String(reason)}\n`);
});

// ---------------------------------------------------------------------------
// Graceful shutdown

async function shutdown(signal: string): Promise<void> {
  if (shuttingDown) {
    process.stderr.write(`${signal} again: exiting now\n`);
    process.exit(1);
  }
  shuttingDown = true;
  process.stderr.write(`${signal}: finishing ${inFlight.size} request(s) in flight, then closing\n`);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  let cut = false;
  const grace = setTimeout(() => {
    cut = true;
    for (const control of inFlight) control.abort(new Error("service shutting down"));
    server.closeAllConnections();
  }, SHUTDOWN_GRACE_MS);
  await closed;
  clearTimeout(grace);
  await persistence.close();
  // Only a run whose thread the caller named can be found again; a POST /reflexion thread id is never given out before the run ends.
  const resumable =
    persistence.kind === "postgres"
      ? 'a POST /validate run that named its threadId can be finished by any instance with POST /validate {"threadId": …}; a cut POST /reflexion run is lost'
      : "their state was kept in memory and ends with the service";
  process.stderr.write(cut ? `stopped (requests in flight were cut; ${resumable})\n` : "stopped\n");
  process.exit(0);
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
