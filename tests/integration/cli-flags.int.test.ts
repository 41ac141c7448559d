/**
 * The command line's smaller promises: its help names the installed command, a bad --output-mode names the
 * flag, an escalation to a model no provider serves is refused before any call, and a person's
 * `:reject reason` keeps the reason in stdout's JSON.
 */
import { describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runCli } from "../../testkit/cli.js";
import { scriptedServerPerFile } from "../support/scripted-server.js";

const scripted = scriptedServerPerFile();
const BROKEN = JSON.stringify({ ...(builtinSpecs.get("deployment-config")!.example as Record<string, unknown>), replicas: 8 });

describe("command line flags", () => {
  it("--help names the command as an installed package runs it, and the checkout's npm script", async () => {
    const r = await runCli(["--help"], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: npx langgraph-trustworthy-output generate \[options\] "request"$/m);
    expect(r.stdout).toContain("in a checkout of the repository: npm run -s generate --");
  });

  it("--output-mode bogus: exit 2, the message names the flag and the modes, before any model call", async () => {
    const before = scripted.server().requests.length;
    const r = await runCli(["--output-mode", "bogus", "x"], scripted.cliEnv());
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toBe('--output-mode must be one of "auto", "text", "json_object", "json_schema", "tool"; got "bogus".');
    expect(scripted.server().requests.length).toBe(before);
  });

  it("--retry-with corrections: the retry answers with corrections, applied and said on stderr; a bad form is refused naming the flag", async () => {
    const r = await runCli(
      [
        "--model",
        "simulated",
        "--retry-with",
        "corrections",
        "--spec",
        "deployment-config",
        "--max-attempts",
        "5",
        "A deployment config for payments-api with 8 replicas and a canary",
      ],
      {},
    );
    expect(r.stderr).toMatch(/model: simulated/);
    expect(r.stderr).toMatch(/^attempt 2 of 5, corrections applied: valid$/m);
    expect(r.code).toBe(0);
    const bad = await runCli(["--retry-with", "patch", "x"], scripted.cliEnv());
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error.message).toBe('--retry-with must be one of "answer", "corrections", "auto"; got "patch".');
  });

  it("--model simulated --escalate-to gpt-4o without a provider: exit 2 naming the variables, before any attempt", async () => {
    const r = await runCli(["--model", "simulated", "--escalate-to", "gpt-4o", "A deployment config for payments-api"], {});
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toMatch(/No model provider is configured.*OPENAI_API_KEY/s);
    expect(r.stderr).not.toMatch(/attempt 1/);
  });

  it(":reject with a reason: exit 1, stopReason rejected, the reason in stdout's JSON", async () => {
    scripted.server().setReplies([BROKEN]);
    const r = await runCli(["--interactive", "--max-attempts", "1", "x"], scripted.cliEnv(), { readLine: async () => ":reject the budget was cut" });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ success: false, stopReason: "rejected", reason: "the budget was cut" });
  });
});
