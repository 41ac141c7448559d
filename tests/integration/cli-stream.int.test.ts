/** The command line shows an answer as it arrives (--stream, the default on a terminal): each error as soon as it is certain; stdout still one JSON document. */
import { describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runCli } from "../../testkit/cli.js";
import { scriptedServerPerFile } from "../support/scripted-server.js";

const EXAMPLE = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;

const scripted = scriptedServerPerFile();
const env = scripted.cliEnv;

describe("command line --stream", () => {
  it("streams the request, names an error while the answer arrives, and still prints one JSON document", async () => {
    const broken = JSON.stringify({ ...EXAMPLE, replicas: "eight" });
    scripted.server().setReplies([broken, JSON.stringify(EXAMPLE)]);
    const before = scripted.server().requests.length;
    const r = await runCli(["--stream", "--max-attempts", "2", "payments-api"], env());
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(EXAMPLE);
    expect(
      scripted
        .server()
        .requests.slice(before)
        .map((q) => q.body.stream),
    ).toEqual([true, true]);
    const found = r.stderr.indexOf('found while attempt 1 arrives: replicas is "eight" (string); it must be an integer');
    expect(found).toBeGreaterThanOrEqual(0);
    // Said before the attempt's verdict, which the validator gives on the whole answer.
    expect(found).toBeLessThan(r.stderr.indexOf("attempt 1 of 2: 1 error(s)"));
    expect(r.stderr).toContain("attempt 2 of 2: valid");
  });

  it("without --stream (and not on a terminal) the request is not streamed", async () => {
    scripted.server().setReplies([JSON.stringify(EXAMPLE)]);
    const before = scripted.server().requests.length;
    const r = await runCli(["payments-api"], env());
    expect(r.code).toBe(0);
    expect(
      scripted
        .server()
        .requests.slice(before)
        .map((q) => q.body.stream ?? false),
    ).toEqual([false]);
    expect(r.stderr).not.toContain("arrives");
  });
});
