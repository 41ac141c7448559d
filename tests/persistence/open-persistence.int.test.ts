/**
 * The persistence chooser: memory without DATABASE_URL, a clear refusal of a
 * bad URL or an unreachable server (never showing the password), and on
 * PostgreSQL a safe first start when several processes start at once.
 */
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { ConfigurationError } from "../../src/errors.js";
import { DatabaseUnavailableError, describeDatabaseUrl, openPersistence } from "../../src/persistence/open.js";
import { createTestDatabase, describeWithPostgres } from "../support/postgres.js";

describe("choosing persistence", () => {
  it("without DATABASE_URL: MemorySaver and InMemoryStore", async () => {
    const p = await openPersistence({ env: readEnvironment({}) });
    expect(p.kind).toBe("memory");
    expect(p.checkpointer).toBeInstanceOf(MemorySaver);
    expect(p.store).toBeInstanceOf(InMemoryStore);
    await p.ping();
    await p.close();
  });

  it("reads DATABASE_URL from the environment", async () => {
    const env = readEnvironment({ DATABASE_URL: "mysql://app:s3cret@db:3306/app" });
    await expect(openPersistence({ env })).rejects.toThrow(ConfigurationError);
  });

  it.each([
    ["mysql://app:s3cret@db:3306/app", /must start with postgres:\/\/ or postgresql:\/\/; got "mysql"/],
    ["app:s3cret@db:5432/app", /must start with postgres:\/\//],
    ["not a url s3cret", /DATABASE_URL is not a valid URL/],
    ["postgres://app:s3cret@db:5432/a/b", /not a database name/],
  ])("a bad URL (%s) is a ConfigurationError without the password", async (url, message) => {
    const error = await openPersistence({ databaseUrl: url }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain("s3cret");
  });

  it("an unreachable server: a DatabaseUnavailableError naming host and port, not the password", async () => {
    const error = await openPersistence({ databaseUrl: "postgresql://app:s3cret@127.0.0.1:1/app", connectTimeoutMs: 3_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as Error).message).toContain("PostgreSQL at 127.0.0.1:1 is not reachable");
    expect((error as Error).message).not.toContain("s3cret");
  });

  it("describes a URL without credentials", () => {
    expect(describeDatabaseUrl("postgres://app:s3cret@db.internal:6543/app?sslmode=require")).toBe("postgres://db.internal:6543/app");
    expect(describeDatabaseUrl("postgresql://[::1]/app")).toBe("postgres://[::1]:5432/app");
  });
});

// The server is all the first test needs, and the second makes its own empty database.
describeWithPostgres(
  "PostgreSQL persistence",
  (db) => {
    it("a missing database is named in the error", async () => {
      const url = new URL(db.url);
      url.pathname = "/no_such_database_for_langgraph_tests";
      const error = await openPersistence({ databaseUrl: url.toString() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as Error).message).toMatch(/has no database "no_such_database_for_langgraph_tests"/);
    });

    it("eight processes' worth of first starts at once on an empty database: all succeed, the schema is created once", async () => {
      const fresh = await createTestDatabase();
      try {
        const opened = await Promise.all(Array.from({ length: 8 }, () => openPersistence({ databaseUrl: fresh.url })));
        try {
          for (const p of opened) {
            expect(p.kind).toBe("postgres");
            expect(p.checkpointer).toBeInstanceOf(PostgresSaver);
            expect(p.store).toBeInstanceOf(PostgresStore);
            await p.ping();
          }
          const client = new pg.Client({ connectionString: fresh.url });
          await client.connect();
          try {
            const versions = async (table: string) => (await client.query(`SELECT v FROM ${table} ORDER BY v`)).rows.map((r) => r.v);
            const checkpointVersions = await versions("checkpoint_migrations");
            const storeVersions = await versions("store_migrations");
            expect(checkpointVersions).toEqual(Array.from({ length: checkpointVersions.length }, (_, i) => i));
            expect(storeVersions).toEqual(Array.from({ length: storeVersions.length }, (_, i) => i));
            expect(checkpointVersions.length).toBeGreaterThanOrEqual(4);
            expect(storeVersions.length).toBeGreaterThanOrEqual(3);
          } finally {
            await client.end();
          }
          // What one instance writes, another reads.
          await opened[0].store.put(["shared"], "key", { from: 0 });
          expect((await opened[7].store.get(["shared"], "key"))?.value).toEqual({ from: 0 });
        } finally {
          await Promise.all(opened.map((p) => p.close()));
        }
        // Closing twice is harmless; opening again finds the schema in place.
        await opened[0].close();
        const again = await openPersistence({ databaseUrl: fresh.url });
        expect((await again.store.get(["shared"], "key"))?.value).toEqual({ from: 0 });
        await again.close();
      } finally {
        await fresh.drop();
      }
    }, 120_000);
  },
  { database: "shared" },
);
