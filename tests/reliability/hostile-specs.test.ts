import { describe, expect, it } from "vitest";
import { HOSTILE_SPECS, measureSpecHeap, runHostileSpecSuite } from "../../reliability/hostile-specs.js";
import { INLINE_SPEC_CACHE_SIZE } from "../../src/specs/registry.js";

describe("hostile specs supplied at run time", () => {
  it("each is refused with its reason, or accepted and judges every answer as it deserves within budget", async () => {
    const results = await runHostileSpecSuite();
    expect(results).toHaveLength(HOSTILE_SPECS.length);
    for (const r of results) expect({ name: r.name, held: r.held, detail: r.detail }).toMatchObject({ name: r.name, held: true });
  }, 240_000);

  it("memory stays bounded however many distinct specs arrive (evicted specs are freed)", async () => {
    // The cache keeps 64 compiled specs and drops the rest; every dropped spec must then be collected (held
    // through a WeakRef, checked after full GCs), so nothing else keeps it alive. Without the eviction none is
    // freed. `npm run reliability` reports the heap after 1,000 and 5,000 specs.
    const heap = await measureSpecHeap(200);
    expect(heap.evicted).toBe(200 - INLINE_SPEC_CACHE_SIZE);
    expect(heap.freed).toBe(heap.evicted);
    expect(heap.growthMb).toBeLessThan(16);
  }, 240_000);
});
