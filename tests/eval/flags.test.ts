/** `npm run eval` options: an unknown option or strategy is refused before any request runs. */
import { describe, expect, it } from "vitest";
import { main } from "../../eval/run.js";

describe("npm run eval options", () => {
  it("an unknown option is refused naming it", async () => {
    const log: string[] = [];
    await expect(main(["--strategy", "validation"], (line) => log.push(line))).rejects.toThrow(/Unknown option '--strategy'/);
    expect(log).toEqual([]);
  });

  it("an unknown strategy is refused naming it, even beside a known one", async () => {
    const log: string[] = [];
    await expect(main(["--strategies", "validation,bogus"], (line) => log.push(line))).rejects.toThrow(/--strategies: no strategy "bogus"; use validation, /);
    expect(log).toEqual([]);
  });
});
