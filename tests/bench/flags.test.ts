/** `npm run bench` options: --help prints the options and runs nothing; an unknown option or benchmark is refused before anything runs or is written. */
import { describe, expect, it } from "vitest";
import { BENCHMARKS, main, parseBenchArgs } from "../../bench/run.js";

describe("npm run bench options", () => {
  it("--help prints the options and runs nothing", async () => {
    let written = "";
    await main(["--help"], (text) => (written += text));
    expect(written).toMatch(/^Usage: npm run bench -- /);
    for (const b of BENCHMARKS) expect(written).toContain(b.id);
    expect(parseBenchArgs(["-h"])).toBe("help");
  });

  it("an unknown benchmark in --only, or an unknown option, is refused naming it", async () => {
    await expect(main(["--only", "validator,bogus"])).rejects.toThrow(/--only: no benchmark "bogus"; the benchmarks are validator, /);
    expect(() => parseBenchArgs(["--quik"])).toThrow(/Unknown option '--quik'/);
    expect(parseBenchArgs(["--quick", "--only", "validator"])).toEqual({ quick: true, out: undefined, only: ["validator"] });
    expect(parseBenchArgs([])).toEqual({ quick: false, out: "BENCHMARKS.md", only: undefined });
  });
});
