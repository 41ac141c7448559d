/** The command line's --interactive review: a person answers on the terminal and is held to the same spec. */
import { describe, expect, it } from "vitest";
import { deploymentConfigMessages } from "../../src/specs/builtin/deployment-config.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runCli, runCliProcess } from "../../testkit/cli.js";
import { scriptedServerPerFile } from "../support/scripted-server.js";

const EXAMPLE = builtinSpecs.get("deployment-config")!.example as Record<string, any>;
const BROKEN = JSON.stringify({ ...EXAMPLE, replicas: 8 });
const FIXED = { ...EXAMPLE, replicas: 8, resources: { cpu_limit: 2, memory_limit_mb: 512 } };

const scripted = scriptedServerPerFile();
const env = scripted.cliEnv;

describe("command line --interactive", () => {
  it("shows the errors, refuses an invalid value with its errors, asks again, and takes a valid one (exit 0)", async () => {
    scripted.server().setReplies([BROKEN]);
    const answers = [JSON.stringify({ ...FIXED, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } }), JSON.stringify(FIXED)];
    const prompts: string[] = [];
    const r = await runCli(["--interactive", "--max-attempts", "1", "payments with 8 replicas"], env(), {
      readLine: async (prompt) => {
        prompts.push(prompt);
        return answers.shift() ?? null;
      },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(FIXED);
    expect(prompts).toHaveLength(2);
    expect(r.stderr).toContain(`your value is not valid:\n  - ${deploymentConfigMessages.replicasNeedCpu(0.5, 8)}`);
    expect(r.stderr).toContain("your value is valid");
  });

  it(":reject ends with exit 1 and stopReason rejected; end of input leaves the run paused", async () => {
    scripted.server().setReplies([BROKEN]);
    const rejected = await runCli(["--interactive", "--max-attempts", "1", "x"], env(), { readLine: async () => ":reject not now" });
    expect(rejected.code).toBe(1);
    expect(JSON.parse(rejected.stdout)).toMatchObject({ success: false, stopReason: "rejected" });

    scripted.server().setReplies([BROKEN]);
    const eof = await runCli(["--interactive", "--max-attempts", "1", "x"], env(), { readLine: async () => null });
    expect(eof.code).toBe(1);
    expect(eof.stderr).toContain("the run stays paused for review");
  });

  it(":request lets the model try again with a fresh budget", async () => {
    scripted.server().setReplies([BROKEN, JSON.stringify(EXAMPLE)]);
    const r = await runCli(["--interactive", "--max-attempts", "1", "x"], env(), { readLine: async () => ":request A deployment config with 3 replicas" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(EXAMPLE);
  });

  it("as a process with answers piped on stdin: stdout is exactly the valid JSON", async () => {
    scripted.server().setReplies([BROKEN]);
    const stdin = `${JSON.stringify({ ...FIXED, replicas: 30 })}\n${JSON.stringify(FIXED)}\n`;
    const r = await runCliProcess(["--interactive", "--max-attempts", "1", "payments with 8 replicas"], env(), { stdin });
    expect(r.stderr).toContain("your value is not valid:\n  - replicas is 30; it must be <= 20");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(FIXED);
  }, 120_000);
});
