/**
 * One async source, several readers (src/validation/fan-out.ts): each reader gets
 * every item from its first read on, the source is pulled once per item, a
 * failure reaches every reader, and the source is closed when the last reader
 * leaves early.
 */
import { describe, expect, it } from "vitest";
import { fanOut } from "../../src/validation/fan-out.js";

/** A source of 1..n that counts its pulls and notes whether it was closed. */
function counting(n: number, failAt?: number) {
  const seen = { pulls: 0, closed: false, finished: false };
  const source = (async function* () {
    try {
      for (let i = 1; i <= n; i++) {
        seen.pulls++;
        if (i === failAt) throw new Error(`failed at ${i}`);
        yield i;
      }
      seen.finished = true;
    } finally {
      seen.closed = true;
    }
  })();
  return { source, seen };
}

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("fanOut", () => {
  it("gives two readers read side by side every item, pulling the source once per item", async () => {
    const { source, seen } = counting(5);
    const hub = fanOut(source);
    const [a, b] = await Promise.all([all(hub.subscribe()), all(hub.subscribe())]);
    expect(a).toEqual([1, 2, 3, 4, 5]);
    expect(b).toEqual([1, 2, 3, 4, 5]);
    expect(seen.pulls).toBe(5);
    expect(hub.ended).toBe(true);
  });

  it("gives a reader the items from its first read on; one that does not keep items only drives the source", async () => {
    const { source, seen } = counting(4);
    const hub = fanOut(source);
    const first = hub.subscribe();
    expect(await first.next()).toEqual({ value: 1, done: false });
    const late = hub.subscribe();
    await hub.subscribe({ keep: false }).next(); // drives the source to its end, keeping nothing
    expect(seen.finished).toBe(true);
    expect(await all(first)).toEqual([2, 3, 4]);
    expect(await all(late)).toEqual([]); // it started reading after the end
  });

  it("gives every reader the source's failure", async () => {
    const hub = fanOut(counting(5, 3).source);
    const results = await Promise.allSettled([all(hub.subscribe()), all(hub.subscribe())]);
    expect(results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "fulfilled"))).toEqual(["failed at 3", "failed at 3"]);
  });

  it("closes the source when its last reader leaves early, not before", async () => {
    const { source, seen } = counting(100);
    const hub = fanOut(source);
    const a = hub.subscribe();
    const b = hub.subscribe();
    expect((await a.next()).value).toBe(1);
    expect((await b.next()).value).toBe(2); // b reads from its first next() on
    await a.return();
    expect(seen.closed).toBe(false);
    expect((await b.next()).value).toBe(3);
    await b.return();
    expect(seen.closed).toBe(true);
    expect(seen.pulls).toBe(3);
    expect(hub.ended).toBe(true);
  });
});
