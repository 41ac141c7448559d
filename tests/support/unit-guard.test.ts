/** The unit project's guard (tests/support/unit-guard.ts): child processes, listening sockets and network connections are refused. */
import { execFile, spawn } from "node:child_process";
import { createServer } from "node:http";
import pg from "pg";
import { describe, expect, it } from "vitest";

const RENAME = /A unit test may not .*\*\.int\.test\.ts/;

describe("the unit project's guard", () => {
  it("refuses a child process, by named import and by namespace", async () => {
    expect(() => spawn(process.execPath, ["-e", "0"])).toThrow(/child_process\.spawn/);
    expect(() => execFile(process.execPath, ["-e", "0"])).toThrow(RENAME);
    const namespace = await import("node:child_process");
    expect(() => namespace.fork("x.js")).toThrow(/child_process\.fork/);
  });

  it("refuses to listen on a port", () => {
    expect(() => createServer().listen(0, "127.0.0.1")).toThrow(/listen on a port/);
  });

  it("refuses a network connection: HTTP and PostgreSQL", async () => {
    // Port 5432 would answer (PostgreSQL): only the guard stops the connection.
    const error = await fetch("http://127.0.0.1:5432/").then(
      () => undefined,
      (e: Error) => e,
    );
    expect(String((error?.cause as Error | undefined)?.message)).toMatch(RENAME);
    const client = new pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres" });
    client.on("error", () => undefined);
    await expect(client.connect()).rejects.toThrow(RENAME);
  });
});
