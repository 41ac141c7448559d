/** Bad requests and configuration through code and through the command line's entry function: refused before any model call. */
import { describe, expect, it } from "vitest";
import { BAD_INPUTS, runBadInputsThroughCli, runBadInputsThroughCode } from "../../reliability/bad-input.js";

describe("bad requests and configuration", () => {
  it("through code: every case refused before any model call with a message that says what to change", async () => {
    const results = await runBadInputsThroughCode();
    expect(results).toHaveLength(BAD_INPUTS.length);
    expect(results.filter((r) => !r.held).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  });

  it("through the command line's entry function: exit status 2 and the message on stderr", async () => {
    const results = await runBadInputsThroughCli();
    expect(results).toHaveLength(13);
    expect(results.filter((r) => !r.held).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  });
});
