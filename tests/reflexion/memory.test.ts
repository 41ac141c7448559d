/** Reflexion memory: each of the reference's rules at its boundaries, the index against the scans, and the store across instances. */
import { BaseStore, InMemoryStore, type Operation, type OperationResults } from "@langchain/langgraph";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ReflexionAgent } from "../../src/reflexion/agent.js";
import {
  admitsToLongTerm,
  getRelevantMemories,
  jaccard,
  LongTermMemory,
  relevance,
  scanRelevantMemories,
  ShortTermMemory,
  words,
  type MemoryEntry,
  type StepRecord,
} from "../../src/reflexion/memory.js";
import { StoreMemory } from "../../src/reflexion/memory-store.js";
import { seededRandom as rng } from "../../testkit/random.js";
import { promptOf } from "../../testkit/scripted-model.js";
import { roleModels } from "../../testkit/role-models.js";

const step = (task: string, reflection: string, extra: Partial<StepRecord> = {}): StepRecord => ({
  task,
  reflection,
  response: "r",
  evaluation: "e",
  score: 0.5,
  iteration: 0,
  ...extra,
});
let seq = 0;
const entry = (task: string, reflection: string): MemoryEntry => ({ ...step(task, reflection), id: `e${seq++}`, createdAt: seq });
const reflections = (list: readonly StepRecord[]) => list.map((s) => s.reflection);

describe("words: the reference's text.lower().split()", () => {
  it("splits on whitespace only; punctuation stays attached", () => {
    expect([...words("Alpha, beta\tGAMMA\n\n delta-x  ")]).toEqual(["alpha,", "beta", "gamma", "delta-x"]);
    expect(words("alpha,").has("alpha")).toBe(false);
    expect(words("   ").size).toBe(0);
  });
});

describe("relevance: |q ∩ (task + reflection)| / min(|q|, |m|)", () => {
  it("counts words of the memory's reflection, normalised by the smaller set", () => {
    const q = words("explain dns caching");
    // through the reflection only
    expect(relevance(q, step("unrelated", "mention caching"))).toBe(1 / 3);
    // 3 shared of min(3, 20) → 1; 2 shared of min(3, 2) → 1: a short memory is not outranked by a long one
    expect(relevance(q, step("explain dns caching " + "x ".repeat(17), ""))).toBe(1);
    expect(relevance(q, step("dns caching", ""))).toBe(1);
    expect(relevance(q, step("explain,", "dns."))).toBe(0); // punctuation attached
  });

  it("is 0 when either side has no words", () => {
    expect(relevance(words(""), step("dns", "x"))).toBe(0);
    expect(relevance(words("dns"), step(" ", ""))).toBe(0);
  });
});

describe("retrieval", () => {
  it("short-term then long-term, stable on ties (oldest first), zero-relevance entries filling up to the limit", () => {
    const short = [step("cats", "s0"), step("dns zone", "s1")];
    const long = [entry("dns records", "l0"), entry("dogs", "l1"), entry("dns ttl", "l2")];
    expect(reflections(getRelevantMemories("dns question", short, long, 5))).toEqual(["s1", "l0", "l2", "s0", "l1"]);
    expect(reflections(getRelevantMemories("nothing shared", short, long, 3))).toEqual(["s0", "s1", "l0"]);
    expect(getRelevantMemories("dns", short, long, 0)).toEqual([]);
    // the same through the index
    const index = new LongTermMemory({ capacity: 100 });
    for (const e of long) index.add(e);
    expect(reflections(getRelevantMemories("dns question", short, index, 5))).toEqual(["s1", "l0", "l2", "s0", "l1"]);
    expect(reflections(getRelevantMemories("nothing shared", short, index, 3))).toEqual(["s0", "s1", "l0"]);
  });

  it("scores a step that is in both memories once, as its short-term copy", () => {
    const s = step("dns", "lesson");
    const index = new LongTermMemory({ capacity: 10 });
    index.add({ ...s, id: "x", createdAt: 1 });
    expect(reflections(getRelevantMemories("dns", [s], index, 5))).toEqual(["lesson"]);
  });

  it("the index returns exactly what the scan returns (randomized)", () => {
    const random = rng(7);
    const vocab = ["a", "b", "c", "d", "e", "f", "g", "h", "a,", "B"];
    const text = (n: number) => Array.from({ length: n }, () => vocab[Math.floor(random() * vocab.length)]).join(" ");
    const index = new LongTermMemory({ capacity: 40 });
    const all: MemoryEntry[] = [];
    for (let i = 0; i < 300; i++) {
      const e = entry(text(1 + Math.floor(random() * 4)), text(Math.floor(random() * 4)));
      if (index.add(e).added) all.push(e);
      const kept = index.entries();
      expect(kept.length).toBeLessThanOrEqual(40);
      const q = text(1 + Math.floor(random() * 3));
      const limit = 1 + Math.floor(random() * 8);
      expect(index.search(q, limit).map((m) => m.id)).toEqual(scanRelevantMemories(q, kept, limit).map((m) => m.id));
      const short = [step(text(2), text(2)), step(text(2), text(2))];
      expect(getRelevantMemories(q, short, index, limit)).toEqual(getRelevantMemories(q, short, kept, limit));
    }
  });
});

describe("the index at a size where common words go to bit sets", () => {
  it("search and dedup agree with the scans over 3,000 entries into 600 places, through bit sets and renumbering", () => {
    const random = rng(11);
    const vocab = Array.from({ length: 300 }, (_, i) => `w${i}`);
    // Skewed: low-numbered words are far more frequent, so some are in more than 1/64 of the entries.
    const word = () => vocab[Math.floor(vocab.length * random() ** 3)];
    const text = (n: number) => Array.from({ length: n }, word).join(" ");
    const index = new LongTermMemory({ capacity: 600 });
    const stored: MemoryEntry[] = [];
    const cachedWords = new Map<string, ReturnType<typeof words>>();
    const wordsOf = (k: MemoryEntry) => {
      let w = cachedWords.get(k.id);
      if (w === undefined) cachedWords.set(k.id, (w = words(`${k.task} ${k.reflection}`)));
      return w;
    };
    let dedupChecked = 0;
    let bitSetsSeen = 0;
    for (let i = 0; i < 3_000; i++) {
      const e =
        i % 7 === 0 && stored.length > 0
          ? { ...stored[Math.floor(random() * stored.length)], id: `d${i}`, createdAt: i }
          : entry(text(3 + Math.floor(random() * 5)), text(6 + Math.floor(random() * 10)));
      if (i % 10 === 0 || i % 7 === 0) {
        // The brute-force check, only where it is compared (each entry's words computed once).
        const mine = words(`${e.task} ${e.reflection}`);
        const expectedDuplicate = index.entries().some((k) => jaccard(wordsOf(k), mine) > 0.8);
        expect(index.duplicateOf(e) !== null).toBe(expectedDuplicate);
        dedupChecked++;
      }
      const r = index.add(e);
      if (r.added) stored.push(e);
      // Internals read only to prove the test reaches them: common words kept as bit sets.
      bitSetsSeen = Math.max(bitSetsSeen, (index as unknown as { bits: Map<string, Uint32Array> }).bits.size);
      // The scan recomputes every entry's words for each query, so it is compared every 40 entries.
      if (i % 40 === 0) {
        const all = index.entries();
        for (let k = 0; k < 5; k++) {
          const q = text(k === 0 ? 1 + Math.floor(random() * 3) : 6 + Math.floor(random() * 10));
          expect(index.search(q, 5).map((m) => m.id)).toEqual(scanRelevantMemories(q, all, 5).map((m) => m.id));
        }
      }
    }
    expect(index.size).toBe(600);
    expect(dedupChecked).toBeGreaterThan(500);
    expect(bitSetsSeen).toBeGreaterThan(0);
    // Holes came to outnumber the live entries by 1,024, so positions were renumbered and the postings rebuilt.
    expect((index as unknown as { slots: unknown[] }).slots.length).toBeLessThan(2_000);
  }, 120_000);
});

describe("long-term memory", () => {
  it("drops the oldest beyond capacity", () => {
    const m = new LongTermMemory({ capacity: 2 });
    m.add(entry("one", "alpha"));
    m.add(entry("two", "beta"));
    expect(m.add(entry("three", "gamma")).evicted.map((e) => e.reflection)).toEqual(["alpha"]);
    expect(reflections(m.entries())).toEqual(["beta", "gamma"]);
  });

  it("skips an entry whose task + reflection words have Jaccard > 0.8 with an existing one; exactly 0.8 is kept", () => {
    const m = new LongTermMemory({ capacity: 100 });
    m.add(entry("a b c d", "e f g h"));
    // 8 shared of 9 → 0.889: duplicate
    expect(m.add(entry("a b c d", "e f g h i")).added).toBe(false);
    // 8 shared of 10 → 0.8 exactly: not above, kept
    expect(jaccard(words("a b c d e f g h"), words("a b c d e f g h i j"))).toBe(0.8);
    expect(m.add(entry("a b c d", "e f g h i j")).added).toBe(true);
    // punctuation makes different words: "a," is not "a"
    expect(m.add(entry("a, b, c, d,", "e f g h")).added).toBe(true);
  });

  it("never treats word-less entries as duplicates (Jaccard 0 when a side is empty)", () => {
    expect(jaccard(new Set(), new Set())).toBe(0);
    const m = new LongTermMemory({ capacity: 10 });
    expect(m.add(entry(" ", "")).added).toBe(true);
    expect(m.add(entry("", " ")).added).toBe(true);
  });

  it("admits score > 0.8 or iteration == maxLoops - 1 (not >=)", () => {
    expect(admitsToLongTerm({ score: 0.8, iteration: 0 }, 3)).toBe(false);
    expect(admitsToLongTerm({ score: 0.81, iteration: 0 }, 3)).toBe(true);
    expect(admitsToLongTerm({ score: 0, iteration: 2 }, 3)).toBe(true);
    expect(admitsToLongTerm({ score: 0, iteration: 1 }, 3)).toBe(false);
    expect(admitsToLongTerm({ score: 0, iteration: 5 }, 3)).toBe(false);
  });
});

describe("short-term memory", () => {
  it("keeps the 10 most recent steps, oldest first", () => {
    const m = new ShortTermMemory();
    for (let i = 0; i < 12; i++) m.add(step("t", `s${i}`));
    expect(reflections(m.entries())).toEqual(Array.from({ length: 10 }, (_, i) => `s${i + 2}`));
  });
});

describe("ReflexionAgent.step and run, as the reference", () => {
  it("step at iteration > 0 without a previous response retrieves memories for the actor; at iteration 0 it does not", async () => {
    const m = roleModels({ actor: ["a0", "a1"], evaluator: ["Final score: 5", "Final score: 5"], reflector: ["Lesson: mention TTL.", "r"] });
    const agent = new ReflexionAgent({ model: m.factory, maxLoops: 3, store: new InMemoryStore() });
    await agent.step("Explain DNS caching", 0);
    expect(promptOf(m.actor, 0)).not.toContain("Lesson");
    await agent.step("Explain DNS caching", 1);
    expect(promptOf(m.actor, 1)).toContain("Lesson: mention TTL.");
  });

  it("step(t, 5) with maxLoops 3 is not admitted to long-term memory; step(t, 2) is", async () => {
    const m = roleModels({ actor: ["a", "b"], evaluator: ["Final score: 5", "Final score: 5"], reflector: ["r5", "r2"] });
    const agent = new ReflexionAgent({ model: m.factory, maxLoops: 3, store: new InMemoryStore() });
    await agent.step("t", 5);
    await agent.step("t", 2);
    expect(reflections(await agent.memory.longTermEntries())).toEqual(["r2"]);
  });

  it("run([]) is []", async () => {
    const m = roleModels({});
    const agent = new ReflexionAgent({ model: m.factory });
    expect(await agent.run([])).toEqual([]);
    expect(await agent.run([], { includeIntermediates: true })).toEqual([]);
  });
});

/** Another process's view of the same store: the same data, its own cache. */
class OtherProcess extends BaseStore {
  searches = 0;
  constructor(private readonly inner: BaseStore) {
    super();
  }
  batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    for (const op of operations) if ("namespacePrefix" in op && op.namespacePrefix.at(-1) === "entries") this.searches++;
    return this.inner.batch(operations);
  }
}

describe("StoreMemory across instances", () => {
  afterEach(() => vi.useRealTimers());
  /** A process notices a writer it has not seen before when it next lists the writers (at most a second later). */
  const aSecondLater = () => vi.setSystemTime(Date.now() + 1_500);
  it("sees what another instance writes without rebuilding: only new entries are fetched", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const shared = new InMemoryStore();
    const a = new OtherProcess(shared);
    const b = new OtherProcess(shared);
    const ns = ["reflexion", "u", "agent"];
    const writer = new StoreMemory(a, ns, 100);
    const reader = new StoreMemory(b, ns, 100);
    await writer.add(step("explain dns caching", "lesson one"));
    expect(reflections(await reader.search("dns", 5))).toEqual(["lesson one"]);
    const loads = b.searches;
    for (let i = 0; i < 5; i++) await writer.add(step(`topic ${i} dns`, `lesson ${i} different words here ${i}`));
    expect(reflections(await reader.search("topic 3", 1))).toEqual(["lesson 3 different words here 3"]);
    expect((await reader.entries()).length).toBe(6);
    // the reader listed the entries once (its first load), and fetched the new ones by key since
    expect(b.searches).toBe(loads);
    // and the writer sees the reader's writes too
    await reader.add(step("a reader's own task", "its lesson"));
    aSecondLater();
    expect(reflections(await writer.search("reader's own", 1))).toEqual(["its lesson"]);
  });

  it("starts over when the store is cleared under it", async () => {
    const shared = new InMemoryStore();
    const ns = ["reflexion", "u", "reset"];
    const memory = new StoreMemory(new OtherProcess(shared), ns, 10);
    await memory.add(step("old topic", "old lesson"));
    for (const n of [
      [...ns, "entries"],
      [...ns, "writers"],
    ])
      for (const item of await shared.search(n, { limit: 100 })) await shared.delete(n, item.key);
    expect(await memory.entries()).toEqual([]);
    await memory.add(step("new topic", "new lesson"));
    expect(reflections(await new StoreMemory(new OtherProcess(shared), ns, 10).entries())).toEqual(["new lesson"]);
  });

  it("applies the capacity on every instance, dropping the oldest", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const shared = new InMemoryStore();
    const ns = ["reflexion", "u", "cap"];
    const writer = new StoreMemory(new OtherProcess(shared), ns, 2);
    const reader = new StoreMemory(new OtherProcess(shared), ns, 2);
    await reader.entries();
    for (const r of ["first lesson", "second thing", "third idea"]) await writer.add(step(r, r));
    aSecondLater();
    expect(reflections(await reader.entries())).toEqual(["second thing", "third idea"]);
    expect((await shared.search([...ns, "entries"], { limit: 10 })).length).toBe(2);
  });
});
