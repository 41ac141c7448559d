/**
 * The command line with the built-in simulated model and no provider: a real process with only
 * LLM_MODEL=simulated exits 0 with a valid value and says on stderr that the answers are not a language
 * model's; `--model simulated` does the same in process; an inline spec is answered from its JSON Schema.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkValue } from "../../src/specs/check.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runCli, runCliProcess } from "../../testkit/cli.js";

const NOTICE = /model: simulated: the answers come from the built-in simulated model .*not from a language model/;
const dir = mkdtempSync(join(tmpdir(), "cli-simulated-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the command line with LLM_MODEL=simulated and no key", () => {
  it("a real process: exit 0, a valid value on stdout, the simulated model named on stderr", async () => {
    const r = await runCliProcess(["--spec", "api-request", "POST a new order to https://api.example.com/v1/orders"], { LLM_MODEL: "simulated" });
    expect(r.code, r.stderr).toBe(0);
    expect((await checkValue(builtinSpecs.get("api-request")!, JSON.parse(r.stdout))).valid).toBe(true);
    expect(r.stderr).toMatch(NOTICE);
    expect(r.stderr).toMatch(/attempt 1 of 3: \d+ error\(s\)/);
  }, 120_000); // a child process through tsx: ~5 s quiet, 30 s measured under load

  it("--model simulated in process: the same, whatever LLM_MODEL says", async () => {
    const r = await runCli(["--model", "simulated", "A deployment config for payments-api with 8 replicas"], { LLM_MODEL: "gpt-4o-mini" });
    expect(r.code, r.stderr).toBe(0);
    expect((await checkValue(builtinSpecs.get("deployment-config")!, JSON.parse(r.stdout))).valid).toBe(true);
    expect(r.stderr).toMatch(NOTICE);
  });

  it("an inline spec: answered from its JSON Schema, the first answer's seeded defects named and fixed (exit 0)", async () => {
    const file = join(dir, "discount.json");
    const spec = {
      name: "discount",
      description: "A discount code.",
      schema: {
        type: "object",
        required: ["code", "percent"],
        properties: { code: { type: "string", pattern: "^VIP-[A-Z0-9]{4}$" }, percent: { type: "integer", minimum: 1, maximum: 90 } },
      },
    };
    writeFileSync(file, JSON.stringify(spec));
    const r = await runCli(["--spec", file, "--max-attempts", "3", "A discount code"], { LLM_MODEL: "simulated" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(NOTICE);
    expect(r.stderr).toMatch(/attempt 1 of 3: \d+ error\(s\)/);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: expect.stringMatching(/^VIP-[A-Z0-9]{4}$/) });
  });

  it("without LLM_MODEL=simulated and without a provider, nothing is simulated: exit 2 naming the variables", async () => {
    const r = await runCli(["A deployment config"], {});
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(NOTICE);
    expect(JSON.parse(r.stdout).error.message).toMatch(/OPENAI_API_KEY.*OPENAI_BASE_URL/s);
  });
});
