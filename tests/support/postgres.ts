/**
 * PostgreSQL for the durable-state tests.
 *
 * The server is TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/langgraph_test).
 * Reachability is checked once per test file when this module loads:
 *   - reachable: a `describeWithPostgres` block gets a fresh database of its own
 *     (langgraph_test_<time>_<random>, created from that connection and dropped afterwards)
 *     when its tests need one: an empty database, or no other file's connections or rows.
 *     Blocks whose tests use unique thread ids and owners say `{ database: "shared" }` and
 *     use TEST_DATABASE_URL's database itself, which saves creating, migrating and dropping
 *     one. When the user may not create databases, every block shares that database;
 *   - unreachable and REQUIRE_POSTGRES=1 (CI): the blocks fail, saying why;
 *   - unreachable otherwise: the blocks are skipped, with one warning per test run.
 */
import { closeSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isMainThread } from "node:worker_threads";
import pg from "pg";
import { afterAll, beforeAll, describe, it } from "vitest";

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL?.trim() || "postgres://postgres@127.0.0.1:5432/langgraph_test";
const REQUIRED = process.env.REQUIRE_POSTGRES === "1";
const DATABASE_PREFIX = "langgraph_test_";
/** Per-run databases older than this are leftovers of killed runs and are dropped. */
const STALE_AFTER_MS = 6 * 60 * 60 * 1000;

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || "localhost"}:${u.port || "5432"}`;
  } catch {
    return "an unparseable TEST_DATABASE_URL";
  }
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 30_000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
}

/** Connect to TEST_DATABASE_URL, creating its database when the server exists but the database does not. */
async function connectAdmin(): Promise<pg.Client> {
  try {
    return await connect(TEST_DATABASE_URL);
  } catch (error) {
    if ((error as { code?: string }).code !== "3D000") throw error;
    const name = decodeURIComponent(new URL(TEST_DATABASE_URL).pathname.slice(1));
    const maintenance = await connect(withDatabase(TEST_DATABASE_URL, "postgres"));
    try {
      await maintenance.query(`CREATE DATABASE ${quote(name)}`).catch((e: { code?: string }) => {
        if (e.code !== "42P04") throw e; // created meanwhile by another test file
      });
    } finally {
      await maintenance.end().catch(() => undefined);
    }
    return connect(TEST_DATABASE_URL);
  }
}

interface Probe {
  ok: boolean;
  reason: string;
}

async function probe(): Promise<Probe> {
  try {
    const client = await connectAdmin();
    await client.query("SELECT 1");
    await client.end();
    return { ok: true, reason: "" };
  } catch (error) {
    const e = error as { code?: string; message?: string };
    return { ok: false, reason: `${e.code ? `${e.code}: ` : ""}${e.message ?? String(error)}` };
  }
}

export const postgres: Probe = await probe();

/** One warning per test run (not per test file): files run in workers of one vitest process. */
function warnOnce(message: string): void {
  const runKey = isMainThread ? process.ppid : process.pid;
  try {
    closeSync(openSync(join(tmpdir(), `langgraph-postgres-skip-${runKey}`), "wx"));
  } catch {
    return;
  }
  console.warn(message);
}

export interface TestDatabase {
  /** Connection URL of the database the tests use. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, empty database on the test server (or TEST_DATABASE_URL's own when databases cannot be created). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = await connectAdmin();
  try {
    await dropStaleDatabases(admin);
    const name = `${DATABASE_PREFIX}${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${quote(name)}`);
        break;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === "42501") {
          // No CREATEDB privilege: share the configured database (tests use unique ids).
          const shared = decodeURIComponent(new URL(TEST_DATABASE_URL).pathname.slice(1));
          return { url: TEST_DATABASE_URL, name: shared, drop: async () => undefined };
        }
        // "source database is being accessed by other users": another session is copying template1.
        if (code === "55006" && attempt < 20) {
          await new Promise((r) => setTimeout(r, 100 + attempt * 50));
          continue;
        }
        throw error;
      }
    }
    return {
      url: withDatabase(TEST_DATABASE_URL, name),
      name,
      drop: () => dropDatabase(name),
    };
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** TEST_DATABASE_URL's own database (created when missing), never dropped. */
async function sharedTestDatabase(): Promise<TestDatabase> {
  const admin = await connectAdmin();
  await admin.end().catch(() => undefined);
  const name = decodeURIComponent(new URL(TEST_DATABASE_URL).pathname.slice(1));
  return { url: TEST_DATABASE_URL, name, drop: async () => undefined };
}

async function dropDatabase(name: string): Promise<void> {
  const admin = await connectAdmin();
  try {
    // Plain DROP waits a few seconds for closing connections to go; FORCE ends any that remain.
    await admin.query(`DROP DATABASE IF EXISTS ${quote(name)}`).catch(() => admin.query(`DROP DATABASE IF EXISTS ${quote(name)} WITH (FORCE)`));
  } finally {
    await admin.end().catch(() => undefined);
  }
}

async function dropStaleDatabases(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [`${DATABASE_PREFIX}%`]);
  for (const { datname } of rows) {
    const created = parseInt(datname.slice(DATABASE_PREFIX.length).split("_")[0] ?? "", 36);
    if (Number.isFinite(created) && Date.now() - created > STALE_AFTER_MS) {
      await admin.query(`DROP DATABASE IF EXISTS ${quote(datname)} WITH (FORCE)`).catch(() => undefined);
    }
  }
}

export interface PostgresBlockOptions {
  /**
   * "own" (default): a fresh database for the block, dropped afterwards. "shared": TEST_DATABASE_URL's
   * database, for tests that need no isolation because their thread ids and owners are unique.
   */
  database?: "own" | "shared";
}

/**
 * A describe block that needs PostgreSQL: it gets a database (`db.url`, valid
 * inside hooks and tests; see PostgresBlockOptions), is skipped when PostgreSQL
 * is unreachable, and fails instead when REQUIRE_POSTGRES=1.
 */
export function describeWithPostgres(name: string, body: (db: { readonly url: string }) => void, options: PostgresBlockOptions = {}): void {
  const message = `PostgreSQL not reachable at ${where(TEST_DATABASE_URL)} (${postgres.reason}): durable-state tests skipped; set TEST_DATABASE_URL`;
  if (!postgres.ok && REQUIRED) {
    describe(name, () => {
      it("needs PostgreSQL (REQUIRE_POSTGRES=1)", () => {
        throw new Error(`PostgreSQL not reachable at ${where(TEST_DATABASE_URL)} (${postgres.reason}); REQUIRE_POSTGRES=1 requires it. Set TEST_DATABASE_URL.`);
      });
    });
    return;
  }
  if (!postgres.ok) warnOnce(message);
  describe.skipIf(!postgres.ok)(name, () => {
    let database: TestDatabase | undefined;
    beforeAll(async () => {
      database = options.database === "shared" ? await sharedTestDatabase() : await createTestDatabase();
    });
    afterAll(async () => {
      await database?.drop();
    });
    body({
      get url() {
        if (!database) throw new Error("the test database is not ready (used outside a hook or test?)");
        return database.url;
      },
    });
  });
}

/** Poll `check` until it returns true; never a fixed sleep. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000, intervalMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Waits until a session on `url`'s database waits in PostgreSQL's lock queue for an advisory lock (a run waiting for its thread). */
export async function waitForAdvisoryLockWaiter(url: string, what: string, timeoutMs = 60_000): Promise<void> {
  const watcher = await connect(url);
  try {
    const waiting = async () =>
      (
        await watcher.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
        )
      ).rows[0].n >= 1;
    await waitFor(what, waiting, timeoutMs, 50);
  } finally {
    await watcher.end();
  }
}
