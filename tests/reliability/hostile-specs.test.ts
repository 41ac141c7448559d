import { describe, expect, it } from "vitest";
import { HOSTILE_SPECS, measureSpecHeap, runHostileSpecSuite } from "../../reliability/hostile-specs.js";

describe("hostile specs supplied at run time", () => {
  it("each is refused with its reason, or accepted and judges every answer as it deserves within budget", async () => {
    const results = await runHostileSpecSuite();
    expect(results).toHaveLength(HOSTILE_SPECS.length);
    for (const r of results) expect({ name: r.name, held: r.held, detail: r.detail }).toMatchObject({ name: r.name, held: true });
  }, 240_000);

  it("memory stays bounded however many distinct specs arrive (evicted specs are freed)", async () => {
    // The cache keeps 64 compiled specs and frees the rest: 800 distinct specs leave the heap within a few MB of where it was.
    const heap = await measureSpecHeap(800);
    expect(heap.growthMb).toBeLessThan(16);
  }, 240_000);
});
