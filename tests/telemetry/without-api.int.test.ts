/**
 * `@opentelemetry/api` is an optional peer: in a process where the package's modules cannot resolve it (a module
 * resolution hook hides it from src/), a validation run with a retry and a guarded tool's call work as ever.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const FIXTURES = join(import.meta.dirname, "fixtures");

describe("without @opentelemetry/api", () => {
  it("a run and a guarded tool's call work, and the package did not find the API", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", join(FIXTURES, "register-hide-otel-api.mjs"), "--import", "tsx", join(FIXTURES, "run-without-otel-api.ts")],
      { cwd: join(import.meta.dirname, "../.."), timeout: 60_000 },
    );
    expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual({ success: true, stopReason: "valid", attempts: 2, tool: "deployed", api: "not found" });
  });
});
