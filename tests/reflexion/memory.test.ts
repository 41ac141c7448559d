import { describe, expect, it } from "vitest";
import { seededRandom as rng } from "../../testkit/random.js";
import {
  DEDUP_THRESHOLD,
  LONG_TERM_SCORE_THRESHOLD,
  LongTermMemory,
  SHORT_TERM_SIZE,
  ShortTermMemory,
  admitsToLongTerm,
  getRelevantMemories,
  jaccard,
  memoryId,
  scanRelevantMemories,
  tokenize,
  type MemoryEntry,
  type StepRecord,
} from "../../src/reflexion/memory.js";

/* ------------------------------------------------------------------ helpers */

function step(task: string, overrides: Partial<StepRecord> = {}): StepRecord {
  return { task, response: "response", evaluation: "evaluation", reflection: "", score: 0.5, iteration: 0, ...overrides };
}

let nextSequence = 0;
function entry(task: string, overrides: Partial<MemoryEntry> = {}): MemoryEntry {
  const sequence = nextSequence++;
  return { ...step(task), id: memoryId(sequence), createdAt: sequence, ...overrides };
}


function words(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}`);
}

const ids = (entries: { id: string }[]): string[] => entries.map((e) => e.id);
const tasks = (entries: StepRecord[]): string[] => entries.map((e) => e.task);

/** Brute-force dedup oracle: most similar entry strictly above the threshold, ties most recent. */
function bruteForceDuplicate(memory: LongTermMemory, task: string, reflection: string): string | undefined {
  const mine = tokenize(`${task} ${reflection}`);
  let best: string | undefined;
  let bestSimilarity = DEDUP_THRESHOLD;
  for (const existing of memory.entries()) {
    const similarity = jaccard(mine, tokenize(`${existing.task} ${existing.reflection}`));
    if (similarity > DEDUP_THRESHOLD && similarity >= bestSimilarity) {
      best = existing.id; // entries() is oldest first, so ">=" keeps the most recent on ties
      bestSimilarity = similarity;
    }
  }
  return best;
}

/* ------------------------------------------------------------------ basics */

describe("tokenize", () => {
  it("lower-cases and splits on anything that is not a letter or digit", () => {
    expect([...tokenize("Hello, World! hello-again 42x")]).toEqual(["hello", "world", "again", "42x"]);
    expect([...tokenize("Straße ÜBER café_au_lait 日本語")]).toEqual(["straße", "über", "café", "au", "lait", "日本語"]);
    expect(tokenize("").size).toBe(0);
    expect(tokenize(" --- !!! ").size).toBe(0);
  });
});

describe("jaccard", () => {
  it("is |A ∩ B| / |A ∪ B|, with 0 for two empty sets", () => {
    expect(jaccard(new Set(["a", "b"]), new Set(["b", "c"]))).toBeCloseTo(1 / 3);
    expect(jaccard(new Set(["a"]), new Set(["a"]))).toBe(1);
    expect(jaccard(new Set(["a"]), new Set())).toBe(0);
    expect(jaccard(new Set(), new Set())).toBe(0);
  });
});

describe("admitsToLongTerm", () => {
  it("admits scores strictly above 0.8, or any score on the last iteration", () => {
    expect(LONG_TERM_SCORE_THRESHOLD).toBe(0.8);
    expect(admitsToLongTerm(step("t", { score: 0.8 }), false)).toBe(false);
    expect(admitsToLongTerm(step("t", { score: 0.81 }), false)).toBe(true);
    expect(admitsToLongTerm(step("t", { score: 1 }), false)).toBe(true);
    expect(admitsToLongTerm(step("t", { score: 0 }), true)).toBe(true);
    expect(admitsToLongTerm(step("t", { score: 0.8 }), true)).toBe(true);
    expect(admitsToLongTerm(step("t", { score: Number.NaN }), false)).toBe(false);
  });
});

describe("memoryId", () => {
  it("sorts in sequence order", () => {
    const generated = [0, 9, 10, 99, 100, 123456].map(memoryId);
    expect([...generated].sort()).toEqual(generated);
    expect(() => memoryId(-1)).toThrow(RangeError);
  });
});

/* -------------------------------------------------------------- short term */

describe("ShortTermMemory", () => {
  it("keeps the last 10 steps, oldest first", () => {
    expect(SHORT_TERM_SIZE).toBe(10);
    const memory = new ShortTermMemory();
    for (let i = 0; i < 12; i++) memory.add(step(`task ${i}`, { iteration: i }));
    expect(memory.entries().map((s) => s.iteration)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(memory.length).toBe(10);
  });

  it("trims initial entries and honours a custom size", () => {
    const initial = Array.from({ length: 15 }, (_, i) => step(`t${i}`, { iteration: i }));
    expect(new ShortTermMemory(initial).entries().map((s) => s.iteration)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    const small = new ShortTermMemory(initial.slice(0, 2), 3);
    small.add(initial[2]);
    small.add(initial[3]);
    expect(small.entries().map((s) => s.iteration)).toEqual([1, 2, 3]);
    expect(() => new ShortTermMemory([], 0)).toThrow(RangeError);
  });

  it("returns a copy of its window", () => {
    const memory = new ShortTermMemory([step("a")]);
    memory.entries().push(step("b"));
    expect(memory.entries()).toHaveLength(1);
  });
});

/* --------------------------------------------------------------- long term */

describe("LongTermMemory: capacity", () => {
  it("evicts the oldest entries first", () => {
    const memory = new LongTermMemory({ capacity: 3 });
    const added = ["alpha", "bravo", "charlie", "delta", "echo"].map((t) => entry(t));
    const results = added.map((e) => memory.add(e));
    expect(results.map((r) => r.added)).toEqual([true, true, true, true, true]);
    expect(results.map((r) => ids(r.evicted))).toEqual([[], [], [], [added[0].id], [added[1].id]]);
    expect(tasks(memory.entries())).toEqual(["charlie", "delta", "echo"]);
    expect(memory.size).toBe(3);

    expect(tasks(memory.setCapacity(1))).toEqual(["charlie", "delta"]);
    expect(tasks(memory.entries())).toEqual(["echo"]);
    expect(memory.setCapacity(5)).toEqual([]);
    expect(memory.capacity).toBe(5);
  });

  it("removes entries by id and keeps eviction order afterwards", () => {
    const memory = new LongTermMemory({ capacity: 3 });
    const [a, b, c, d] = ["alpha", "bravo", "charlie", "delta"].map((t) => entry(t));
    memory.add(a);
    memory.add(b);
    memory.add(c);
    memory.remove(b.id);
    memory.remove("no-such-id");
    expect(memory.size).toBe(2);
    expect(memory.has(b.id)).toBe(false);
    expect(memory.add(d).evicted).toEqual([]);
    expect(ids(memory.add(entry("echo")).evicted)).toEqual([a.id]);
    expect(tasks(memory.entries())).toEqual(["charlie", "delta", "echo"]);
  });

  it("rejects invalid capacities", () => {
    expect(() => new LongTermMemory({ capacity: 0 })).toThrow(RangeError);
    expect(() => new LongTermMemory({ capacity: 1.5 })).toThrow(RangeError);
    expect(() => new LongTermMemory({ capacity: Number.NaN })).toThrow(RangeError);
    expect(() => new LongTermMemory({ capacity: 1 }).setCapacity(-1)).toThrow(RangeError);
    expect(new LongTermMemory({ capacity: Infinity }).capacity).toBe(Infinity);
  });

  it("stores a copy and treats a repeated id as a duplicate of itself", () => {
    const memory = new LongTermMemory({ capacity: 10 });
    const original = entry("deploy the service");
    memory.add(original);
    original.task = "something else entirely";
    expect(memory.get(original.id)?.task).toBe("deploy the service");
    expect(memory.add(original)).toEqual({ added: false, evicted: [], duplicateOf: original.id });
    expect(memory.size).toBe(1);
  });

  it("stays consistent through many evictions (slot compaction)", () => {
    const memory = new LongTermMemory({ capacity: 50 });
    for (let i = 0; i < 5000; i++) memory.add(entry(`unique${i} common`, { reflection: `note${i}` }));
    expect(memory.size).toBe(50);
    expect(tasks(memory.entries())).toEqual(Array.from({ length: 50 }, (_, i) => `unique${4950 + i} common`));
    expect(tasks(memory.search("unique4999 common", 2))).toEqual(["unique4999 common", "unique4998 common"]);
    expect(memory.search("unique10")).toEqual([]);
    expect(memory.findDuplicate({ task: "unique4990 common", reflection: "note4990" })?.task).toBe("unique4990 common");
    expect(memory.findDuplicate({ task: "unique10 common", reflection: "note10" })).toBeUndefined();
  });
});

describe("LongTermMemory: dedup", () => {
  /** Builds task/reflection pairs with `shared` common words and `onlyA`/`onlyB` distinct words. */
  function pair(shared: number, onlyA: number, onlyB: number) {
    const common = words("common", shared);
    const a = [...common, ...words("onlya", onlyA)];
    const b = [...common, ...words("onlyb", onlyB)];
    const split = (ws: string[]) => ({ task: ws.slice(0, 3).join(" "), reflection: ws.slice(3).join(", ") });
    return { a: split(a), b: split(b), similarity: shared / (shared + onlyA + onlyB) };
  }

  const cases: Array<[string, number, number, number, boolean]> = [
    ["exactly 0.8 (8/10)", 8, 1, 1, false],
    ["exactly 0.8 (12/15)", 12, 2, 1, false],
    ["exactly 0.8 (4/5, subset)", 4, 1, 0, false],
    ["just above 0.8 (17/21)", 17, 2, 2, true],
    ["just above 0.8 (9/11)", 9, 1, 1, true],
    ["just below 0.8 (15/19)", 15, 2, 2, false],
    ["just below 0.8 (7/9)", 7, 1, 1, false],
    ["identical", 6, 0, 0, true],
  ];

  it.each(cases)("%s", (_name, shared, onlyA, onlyB, duplicate) => {
    const { a, b, similarity } = pair(shared, onlyA, onlyB);
    expect(jaccard(tokenize(`${a.task} ${a.reflection}`), tokenize(`${b.task} ${b.reflection}`))).toBe(similarity);
    const memory = new LongTermMemory({ capacity: 10 });
    const first = entry(a.task, { reflection: a.reflection });
    expect(memory.add(first).added).toBe(true);
    const result = memory.add(entry(b.task, { reflection: b.reflection }));
    if (duplicate) {
      expect(result).toEqual({ added: false, evicted: [], duplicateOf: first.id });
      expect(memory.size).toBe(1);
    } else {
      expect(result).toEqual({ added: true, evicted: [] });
      expect(memory.size).toBe(2);
    }
  });

  it("compares task and reflection together", () => {
    const memory = new LongTermMemory({ capacity: 10 });
    memory.add(entry("fix the login bug", { reflection: "check the session token expiry first" }));
    // Same task, different lesson: not a duplicate.
    expect(memory.add(entry("fix the login bug", { reflection: "write a regression test before changing code" })).added).toBe(true);
    // Same words, different split and punctuation: a duplicate.
    expect(memory.add(entry("Fix the login bug check", { reflection: "the SESSION token; expiry first!" })).added).toBe(false);
  });

  it("never treats word-less entries as duplicates", () => {
    const memory = new LongTermMemory({ capacity: 10 });
    expect(memory.add(entry("", { reflection: "" })).added).toBe(true);
    expect(memory.add(entry("!!!", { reflection: "--" })).added).toBe(true);
    expect(memory.size).toBe(2);
  });

  it("reports the most similar duplicate, ties going to the most recent", () => {
    const all = words("w", 40); // the new entry: w0..w39
    const without = (drop: (i: number) => boolean) => all.filter((_, i) => !drop(i)).join(" ");
    const x = without((i) => i < 4); // J(new, x) = 36/40 = 0.9
    const y = without((i) => i >= 36); // J(new, y) = 36/40 = 0.9, J(x, y) = 32/40 = 0.8
    const w = without((i) => i >= 34); // J(new, w) = 34/40 = 0.85, J(x, w) = 30/40 = 0.75

    const similar = new LongTermMemory({ capacity: 10 });
    const ex = entry(x);
    similar.add(ex);
    expect(similar.add(entry(w)).added).toBe(true);
    expect(similar.add(entry(all.join(" "))).duplicateOf).toBe(ex.id);

    for (const order of [[x, y], [y, x]]) {
      const tied = new LongTermMemory({ capacity: 10 });
      const stored = order.map((t) => entry(t));
      for (const e of stored) expect(tied.add(e).added).toBe(true);
      expect(tied.findDuplicate({ task: all.join(" "), reflection: "" })?.id).toBe(stored[1].id);
      expect(tied.add(entry(all.join(" "))).duplicateOf).toBe(stored[1].id);
    }
  });

  it("matches a brute-force scan on random near-duplicates", () => {
    const random = rng(42);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    for (const vocabularySize of [12, 60, 400]) {
      const vocabulary = words("v", vocabularySize);
      const memory = new LongTermMemory({ capacity: 300 });
      const history: string[][] = [];
      let duplicates = 0;
      let admitted = 0;
      for (let i = 0; i < 2500; i++) {
        let ws: string[];
        if (history.length > 0 && random() < 0.7) {
          // Mutate an earlier entry: drop and add a few words.
          ws = [...pick(history)].filter(() => random() > 0.08);
          const additions = Math.floor(random() * 3);
          for (let j = 0; j < additions; j++) ws.push(pick(vocabulary));
        } else {
          const n = Math.floor(random() * 14);
          ws = Array.from({ length: n }, () => pick(vocabulary));
        }
        history.push(ws);
        const cut = Math.floor(random() * (ws.length + 1));
        const task = ws.slice(0, cut).join(" ");
        const reflection = ws.slice(cut).join(random() < 0.5 ? " " : ", ");
        const expected = bruteForceDuplicate(memory, task, reflection);
        expect(memory.findDuplicate({ task, reflection })?.id).toBe(expected);
        const result = memory.add(entry(task, { reflection }));
        expect(result.added).toBe(expected === undefined);
        expect(result.duplicateOf).toBe(expected);
        if (result.added) admitted++;
        else duplicates++;
        if (random() < 0.05 && memory.size > 0) memory.remove(pick(memory.entries()).id);
      }
      // The generator must exercise both outcomes.
      expect(duplicates).toBeGreaterThan(100);
      expect(admitted).toBeGreaterThan(100);
    }
  });
});

/* --------------------------------------------------------------- retrieval */

describe("retrieval ranking", () => {
  const stored = [
    entry("deploy web service to staging"), // 0
    entry("write unit tests for parser"), // 1
    entry("deploy database migration"), // 2
    entry("deploy web frontend"), // 3
    entry("unrelated gardening notes"), // 4
    entry("Deploy the WEB service!"), // 5
  ];

  it("ranks by shared words, ties most recent first, zero overlap excluded", () => {
    const query = "deploy the web service";
    // Shared words: 0 -> 3 (deploy web service), 2 -> 1, 3 -> 2, 5 -> 4, 1 and 4 -> 0.
    const expected = [stored[5], stored[0], stored[3], stored[2]];
    expect(scanRelevantMemories(query, stored, 10)).toEqual(expected);
    const memory = new LongTermMemory({ capacity: 100 });
    for (const e of stored) memory.add(e);
    expect(ids(memory.search(query, 10))).toEqual(ids(expected));
    expect(ids(memory.search(query))).toEqual(ids(expected)); // default limit 5

    // Ties: every "deploy" entry shares exactly one word with "deploy", newest first.
    expect(ids(memory.search("deploy", 10))).toEqual(ids([stored[5], stored[3], stored[2], stored[0]]));
    expect(scanRelevantMemories("deploy", stored, 10)).toEqual([stored[5], stored[3], stored[2], stored[0]]);
  });

  it("honours the limit", () => {
    const memory = new LongTermMemory({ capacity: 100 });
    for (const e of stored) memory.add(e);
    expect(ids(memory.search("deploy web", 2))).toEqual([stored[5].id, stored[3].id]);
    expect(scanRelevantMemories("deploy web", stored, 2)).toEqual([stored[5], stored[3]]);
    expect(memory.search("deploy", 0)).toEqual([]);
    expect(scanRelevantMemories("deploy", stored, -1)).toEqual([]);
    expect(memory.search("deploy", Infinity)).toHaveLength(4);
    expect(memory.search("", 5)).toEqual([]);
    expect(memory.search("nothing matches", 5)).toEqual([]);
    const many = Array.from({ length: 8 }, (_, i) => entry(`shared word ${i}`));
    expect(scanRelevantMemories("shared", many)).toHaveLength(5);
  });

  it("search returns exactly what the linear scan returns (randomized)", () => {
    const random = rng(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    // Small vocabularies give dense postings and many ties; large ones give sparse postings.
    for (const [vocabularySize, capacity] of [
      [25, 5000],
      [25, 900],
      [300, 1200],
      [20000, 5000],
    ] as const) {
      const vocabulary = words("q", vocabularySize);
      const sentence = () => Array.from({ length: 1 + Math.floor(random() * 10) }, () => pick(vocabulary)).join(" ");
      const memory = new LongTermMemory({ capacity });
      const check = (queries: number) => {
        const all = memory.entries();
        for (let q = 0; q < queries; q++) {
          const query = random() < 0.1 ? `${sentence()} zzz-unknown` : sentence();
          const limit = pick([1, 3, 5, 5, 17, 100, Infinity]);
          expect(ids(memory.search(query, limit))).toEqual(ids(scanRelevantMemories(query, all, limit)));
        }
      };
      // Interleave searches with additions, removals, evictions and compactions.
      for (let i = 0; i < 4000; i++) {
        memory.add(entry(sentence(), { reflection: `r${i}` }));
        if (random() < 0.1 && memory.size > 0) memory.remove(pick(memory.entries()).id);
        if (i % 40 === 0) check(2);
      }
      check(300);
    }
  });
});

describe("getRelevantMemories", () => {
  it("merges short- and long-term memories, each step once, short-term first on ties", () => {
    const memory = new LongTermMemory({ capacity: 100 });
    const old = entry("parse the config file", { iteration: 1, reflection: "validate keys" });
    const sameAsShort = entry("parse the yaml config", { iteration: 2, reflection: "handle anchors", response: "r2" });
    memory.add(old);
    memory.add(sameAsShort);
    const current = step("parse the yaml config", { iteration: 2, reflection: "handle anchors", response: "r2" });
    const other = step("parse json config", { iteration: 3 });

    const result = getRelevantMemories("parse the yaml config", [current, other], memory, 5);
    // Shared words: current 4, sameAsShort 4 (same step: dropped), old 3, other 2.
    expect(result).toEqual([current, old, other]);
    expect(getRelevantMemories("parse the yaml config", [current, other], memory.entries(), 5)).toEqual(result);
    expect(getRelevantMemories("parse the yaml config", [current, other], memory, 2)).toEqual([current, old]);

    // Same relevance: short-term (current run) before long-term, later before earlier.
    const tie = getRelevantMemories("config", [current, other], memory, 5);
    expect(tie).toEqual([other, current, old]);
    expect(getRelevantMemories("config", [], memory, 5)).toEqual([sameAsShort, old].map((e) => memory.get(e.id)));
    expect(getRelevantMemories("config", [current], [], 5)).toEqual([current]);
    expect(getRelevantMemories("config", [current], memory, 0)).toEqual([]);
  });

  it("equals a scan over long-term (minus short-term steps) followed by short-term (randomized)", () => {
    const random = rng(99);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    const vocabulary = words("g", 30);
    const sentence = () => Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(vocabulary)).join(" ");
    const memory = new LongTermMemory({ capacity: 500 });
    for (let i = 0; i < 800; i++) memory.add(entry(sentence(), { reflection: `lesson ${i}`, iteration: i % 4 }));
    const stored = memory.entries();
    const key = (s: StepRecord) => JSON.stringify([s.task, s.iteration, s.reflection, s.response]);
    for (let round = 0; round < 300; round++) {
      // Short-term: some copies of long-term steps, some new steps.
      const shortTerm = Array.from({ length: Math.floor(random() * 11) }, (_, i) => {
        if (random() < 0.5) {
          const { id: _id, createdAt: _createdAt, ...copy } = pick(stored);
          return copy;
        }
        return step(sentence(), { reflection: `new ${round}.${i}` });
      });
      const query = sentence();
      const limit = pick([1, 2, 5, 10, 40]);
      const shortKeys = new Set(shortTerm.map(key));
      const expected = scanRelevantMemories(query, [...stored.filter((e) => !shortKeys.has(key(e))), ...shortTerm], limit);
      expect(getRelevantMemories(query, shortTerm, memory, limit)).toEqual(expected);
      expect(getRelevantMemories(query, shortTerm, stored, limit)).toEqual(expected);
    }
  });
});
