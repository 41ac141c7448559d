/**
 * The README's quick start, as a newcomer meets it: `npm start` without a `.env` says nothing about the missing
 * file (langgraph.json names none: the CLI warns on every start when the file it names is missing; the start
 * script reads `.env` when there is one), and the time the README gives for `npm test` is the one measured in
 * docs/development.md.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../testkit/dev-server.js";
import { readPage } from "./markdown.js";

describe("the quick start", () => {
  it("npm start reads .env itself, and langgraph.json names no env file for the CLI to warn about", () => {
    const config = JSON.parse(readFileSync(join(REPO_ROOT, "langgraph.json"), "utf8")) as Record<string, unknown>;
    expect(config).not.toHaveProperty("env");
    const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe("tsx scripts/start.ts");
    expect(readFileSync(join(REPO_ROOT, "scripts/start.ts"), "utf8")).toMatch(/withDotEnv\(process\.env, root\)/);
  });

  it("the README gives npm test's time, the one docs/development.md measured", () => {
    const measured = /passed in (\d+) s in all/.exec(readPage("docs/development.md"))?.[1];
    expect(measured).toBeDefined();
    expect(readPage("README.md")).toContain(`npm ci && npm test     # the test suite (no network, key or LLM; ${measured} s, 2 cores)`);
  });
});
