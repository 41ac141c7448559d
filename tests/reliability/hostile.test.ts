/** Hostile model output through the validation graph: every case ends as its content deserves. */
import { describe, expect, it } from "vitest";
import { hostileFixtures } from "../../reliability/hostile-fixtures.js";
import { runHostileSuite } from "../../reliability/hostile.js";

describe("hostile model output", () => {
  it("at least 40 cases; every one ends as its content deserves, with bounded feedback and no prototype pollution", async () => {
    expect(hostileFixtures.length).toBeGreaterThanOrEqual(40);
    const results = await runHostileSuite();
    const broken = results.filter((r) => !r.held).map((r) => `${r.name}: ${r.detail}`);
    expect(broken).toEqual([]);
    expect(results.filter((r) => r.success === true).length).toBe(hostileFixtures.filter((f) => f.valid).length);
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted");
  }, 120_000);
});
