/**
 * Where graph state lives: the one function that chooses persistence from
 * configuration.
 *
 * - DATABASE_URL (or `databaseUrl`) is a postgres:// or postgresql:// URL:
 *   checkpoints in LangGraph's PostgresSaver and the long-term store in its
 *   PostgresStore. The tables are created on first use; concurrent first
 *   starts (several instances starting together) are serialised with a
 *   PostgreSQL advisory lock, because the library's own migrations are not
 *   safe to run concurrently.
 * - Unset: MemorySaver and InMemoryStore (state lives as long as the process).
 *
 * Either way `threads` keeps one run per thread at a time (src/persistence/threads.ts):
 * across every process on the database with PostgreSQL, within the process
 * in memory. generateValidated and streamValidated take it on their own when
 * given this checkpointer and a thread; a graph's own invoke or stream runs
 * inside `persistence.threads.run(threadId, (signal) => …)`.
 *
 * Pass the result to the graph builders:
 *   buildValidationGraph({ checkpointer, store }) / buildReflexionGraph({ checkpointer, store }).
 */
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import pg from "pg";
import { readEnvironment, type Environment } from "../environment.js";
import { ConfigurationError, TrustworthyOutputError } from "../errors.js";
import { MemoryThreadLocks, PostgresThreadLocks, registerThreadLocks, type ThreadLocks } from "./threads.js";

/** Connections kept open by the checkpointer's pool, per process. */
export const DEFAULT_CHECKPOINTER_POOL_SIZE = 10;
/** Connections kept open by the store's pool, per process. */
export const DEFAULT_STORE_POOL_SIZE = 5;
/**
 * Connections kept for thread locks, per process: each run on a named thread holds one for its
 * whole life (a session lock lives on its connection). As many as the checkpointer's, since a run
 * holding a thread also needs a checkpointer connection at each step.
 */
const DEFAULT_THREAD_LOCK_POOL_SIZE = 10;
/** The application_name of the thread locks' connections, as pg_stat_activity shows it. */
const THREAD_LOCK_APPLICATION_NAME = "langgraph-trustworthy-output thread locks";
/** How long to wait for a new database connection before giving up. */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/**
 * How long a query may wait for a pooled connection. pg's pool counts the wait
 * for a free connection against its connection timeout, so under load (more
 * runs than connections) the 10 s connect timeout would fail runs that are
 * merely queued; reachability is checked once, with the connect timeout.
 */
const DEFAULT_POOL_WAIT_MS = 60_000;

/**
 * Key of the advisory lock held while the tables are created or migrated
 * (an arbitrary constant: "LGTO" followed by "SETU" in ASCII).
 */
const SETUP_LOCK_KEY = 0x4c47544f_53455455n;

/** The database could not be reached or refused the connection. */
export class DatabaseUnavailableError extends TrustworthyOutputError {
  static override readonly kind: string = "DatabaseUnavailableError";
  override readonly code: string = "DATABASE_UNAVAILABLE";
  override readonly name = "DatabaseUnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Where graph state lives: a checkpointer and a store, with a way to check and close the database. */
export interface Persistence {
  kind: "postgres" | "memory";
  checkpointer: BaseCheckpointSaver;
  store: BaseStore;
  /**
   * One run per thread at a time: across every process on the database (PostgreSQL), or in this process
   * (memory). `threads.run(threadId, (signal) => graph.invoke(input, { configurable: { thread_id: threadId }, signal }))`.
   */
  threads: ThreadLocks;
  /** Where the state lives, without credentials: "postgres://host:port/db" or "memory". */
  location: string;
  /** Resolves when the database answers (always, for memory). */
  ping(): Promise<void>;
  /** Close the database pools (idempotent). */
  close(): Promise<void>;
}

/** Options of openPersistence: the database URL and the pools' sizes and timeouts. */
export interface PersistenceOptions {
  /** A postgres:// URL; defaults to DATABASE_URL from `env`. An empty string means memory. */
  databaseUrl?: string;
  /** Defaults to readEnvironment(). */
  env?: Environment;
  /** Most connections of the checkpointer's pool (default 10). */
  checkpointerPoolSize?: number;
  /** Most connections of the store's pool (default 5). */
  storePoolSize?: number;
  /** Most connections held for thread locks, one per run on a named thread (default 10). */
  threadLockPoolSize?: number;
  /** Milliseconds to wait for a connection (default 10000). */
  connectTimeoutMs?: number;
  /** Errors of idle pooled connections (e.g. the database restarted); defaults to a warning on stderr. */
  onPoolError?: (error: Error) => void;
}

interface Target {
  url: string;
  host: string;
  port: string;
  database: string;
  user: string;
  password: string;
}

/** Parse and check a database URL; the error never repeats credentials. */
function parseDatabaseUrl(raw: string): Target {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The value is not repeated: it may hold a password.
    throw new ConfigurationError(
      "DATABASE_URL is not a valid URL; expected postgres://user:password@host:5432/database (percent-encode special characters " +
        "in the user and password, e.g. @ as %40), or leave it unset for in-memory state.",
    );
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigurationError(
      `DATABASE_URL must start with postgres:// or postgresql://; got ${JSON.stringify(url.protocol.replace(/:$/, ""))}. ` +
        "Leave it unset for in-memory state.",
    );
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (database.includes("/")) {
    throw new ConfigurationError(
      `DATABASE_URL names the database ${JSON.stringify(database)}, which is not a database name; expected postgres://host:5432/database.`,
    );
  }
  const socketHost = url.searchParams.get("host");
  const host = url.hostname.replace(/^\[|\]$/g, "") || socketHost || "localhost";
  return {
    url: raw,
    host,
    port: url.port || "5432",
    database: database || decodeURIComponent(url.username) || "(default)",
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
}

/** The URL without user, password or query: safe to print. */
export function describeDatabaseUrl(raw: string): string {
  const target = parseDatabaseUrl(raw);
  const host = target.host.includes(":") ? `[${target.host}]` : target.host;
  return `postgres://${host}:${target.port}/${target.database}`;
}

/** A clear message for a failed connection: names host, port and database, never the password. */
function unavailable(target: Target, error: unknown): DatabaseUnavailableError {
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e?.code === "string" ? e.code : "";
  const where = `PostgreSQL at ${target.host}:${target.port}`;
  let said = typeof e?.message === "string" && e.message ? e.message : String(error);
  said = said.replaceAll(target.url, "<DATABASE_URL>");
  if (target.password) said = said.replaceAll(target.password, "***");
  let message: string;
  switch (code) {
    case "3D000":
      message = `${where} has no database ${JSON.stringify(target.database)}: create it (CREATE DATABASE "${target.database}") or point DATABASE_URL at an existing one.`;
      break;
    case "28P01":
    case "28000":
      message = `${where} refused the login${target.user ? ` of user ${JSON.stringify(target.user)}` : ""}: ${said}. Check the user and password in DATABASE_URL.`;
      break;
    case "ECONNREFUSED":
      message = `${where} is not reachable: connection refused. Is the server running, and is DATABASE_URL's host and port right?`;
      break;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      message = `${where} is not reachable: the host name ${JSON.stringify(target.host)} does not resolve.`;
      break;
    default:
      message = `${where} (database ${JSON.stringify(target.database)}) is not reachable: ${said}`;
  }
  return new DatabaseUnavailableError(message, { cause: error });
}

/**
 * Choose persistence: PostgreSQL when a postgres:// URL is configured, memory otherwise.
 *
 * @example
 * ```ts
 * import { buildValidationGraph, openPersistence } from "langgraph-trustworthy-output";
 *
 * const persistence = await openPersistence(); // DATABASE_URL, else memory
 * const graph = buildValidationGraph({ checkpointer: persistence.checkpointer, store: persistence.store });
 * await graph.invoke({ request: "A deployment config for payments-api" }, { configurable: { thread_id: "order-42" } });
 * await persistence.close();
 * ```
 */
export async function openPersistence(options: PersistenceOptions = {}): Promise<Persistence> {
  const raw = options.databaseUrl !== undefined ? options.databaseUrl.trim() : (options.env ?? readEnvironment()).databaseUrl;
  if (!raw) return openMemory();
  return openPostgres(parseDatabaseUrl(raw), options);
}

function openMemory(): Persistence {
  const checkpointer = new MemorySaver();
  const threads = new MemoryThreadLocks();
  registerThreadLocks(checkpointer, threads);
  return {
    kind: "memory",
    checkpointer,
    store: new InMemoryStore(),
    threads,
    location: "memory",
    ping: async () => undefined,
    close: async () => undefined,
  };
}

async function openPostgres(target: Target, options: PersistenceOptions): Promise<Persistence> {
  const connectionTimeoutMillis = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const onPoolError =
    options.onPoolError ?? ((error: Error) => process.stderr.write(`PostgreSQL connection error (${target.host}:${target.port}): ${error.message}\n`));

  // Reachability first, on a dedicated connection that then holds the setup lock.
  const lockClient = new pg.Client({ connectionString: target.url, connectionTimeoutMillis });
  lockClient.on("error", () => undefined);
  try {
    await lockClient.connect();
  } catch (error) {
    await lockClient.end().catch(() => undefined);
    throw unavailable(target, error);
  }

  const poolWait = Math.max(connectionTimeoutMillis, DEFAULT_POOL_WAIT_MS);
  const pool = new pg.Pool({
    connectionString: target.url,
    max: options.checkpointerPoolSize ?? DEFAULT_CHECKPOINTER_POOL_SIZE,
    connectionTimeoutMillis: poolWait,
    idleTimeoutMillis: 30_000,
  });
  pool.on("error", onPoolError);
  // Its own pool: locks held for whole runs must never take the connections the runs' checkpoints need.
  const lockPool = new pg.Pool({
    connectionString: target.url,
    max: options.threadLockPoolSize ?? DEFAULT_THREAD_LOCK_POOL_SIZE,
    connectionTimeoutMillis: poolWait,
    idleTimeoutMillis: 30_000,
    // A peer that vanishes without closing (a host lost, not a process) is found by TCP keepalive, which ends the session and its locks.
    keepAlive: true,
    // So that an operator (and a test) can tell the lock sessions apart in pg_stat_activity.
    application_name: THREAD_LOCK_APPLICATION_NAME,
  });
  lockPool.on("error", onPoolError);
  const threads = new PostgresThreadLocks(lockPool);
  const checkpointer = new PostgresSaver(pool);
  registerThreadLocks(checkpointer, threads);
  const store = new PostgresStore({
    connectionOptions: {
      connectionString: target.url,
      max: options.storePoolSize ?? DEFAULT_STORE_POOL_SIZE,
      connectionTimeoutMillis: poolWait,
      idleTimeoutMillis: 30_000,
    },
  });
  // The store builds its own pool; without a listener an idle connection's error (a database restart) would crash the process.
  // PostgresStore takes no pool and no error handler, so its own pool is reached here; fail closed if an upgrade moves it.
  const storePool = (store as unknown as { core?: { pool?: pg.Pool } }).core?.pool;
  if (!(storePool instanceof pg.Pool)) {
    await lockClient.end().catch(() => undefined);
    await pool.end().catch(() => undefined);
    await lockPool.end().catch(() => undefined);
    throw new TrustworthyOutputError(
      "PostgresStore no longer keeps its pool at store.core.pool: its connection errors could not be handled; update src/persistence/open.ts for this version.",
    );
  }
  storePool.on("error", onPoolError);

  let closed: Promise<void> | undefined;
  const close = () => (closed ??= Promise.allSettled([checkpointer.end(), store.stop(), lockPool.end()]).then(() => undefined));

  try {
    // Both libraries' migrations read the current version and then apply the rest: two processes starting
    // together would both apply them and fail on duplicate keys. One at a time, across every process.
    await lockClient.query("SELECT pg_advisory_lock($1)", [SETUP_LOCK_KEY.toString()]);
    try {
      await checkpointer.setup();
      await store.setup();
    } finally {
      await lockClient.query("SELECT pg_advisory_unlock($1)", [SETUP_LOCK_KEY.toString()]).catch(() => undefined);
    }
  } catch (error) {
    await close();
    const code = (error as { code?: unknown })?.code;
    if (typeof code === "string" && /^(08|28|3D|57P|E[A-Z])/.test(code)) throw unavailable(target, error);
    throw new DatabaseUnavailableError(
      `Could not create the LangGraph tables in PostgreSQL at ${target.host}:${target.port} (database ${JSON.stringify(target.database)}): ${(error as Error)?.message ?? String(error)}`,
      { cause: error },
    );
  } finally {
    await lockClient.end().catch(() => undefined);
  }

  return {
    kind: "postgres",
    checkpointer,
    store,
    threads,
    location: describeDatabaseUrl(target.url),
    async ping() {
      try {
        await pool.query("SELECT 1");
      } catch (error) {
        throw unavailable(target, error);
      }
    },
    close,
  };
}
