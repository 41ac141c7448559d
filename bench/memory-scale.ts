/**
 * Benchmark 4: long-term memory at scale. `LongTermMemory` insert (with
 * near-duplicate suppression) and `search`, at growing sizes, against the
 * reference algorithms that scan every entry: `scanRelevantMemories` for
 * retrieval and a Jaccard scan over all entries for dedup.
 *
 * Entries are synthetic: a ~5,000-word vocabulary with Zipf-distributed word
 * frequencies (a few words are everywhere, most are rare, as in text), tasks
 * and reflections of 8-15 words.
 */
import type { MemoryEntry } from "../src/reflexion/memory.js";

type MemoryModule = typeof import("../src/reflexion/memory.js");
import { compiled } from "./compiled.js";
import {
  compare,
  fmt,
  nowNs,
  rng,
  summarize,
  table,
  type BenchOptions,
  type BenchResult,
  type Comparison,
  outcomeBlocks,
  type Target,
} from "./common.js";

const VOCABULARY_SIZE = 5_000;

/** A seeded generator of Zipf-distributed text over a pseudo-word vocabulary. */
export function zipfText(seed: number) {
  const random = rng(seed);
  const syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "ve", "da", "xo", "ben", "tor", "qui", "sa", "ly", "gar", "fen", "ul", "zo"];
  const words = new Set<string>();
  while (words.size < VOCABULARY_SIZE) {
    const n = 1 + Math.floor(random() * 3);
    let w = "";
    for (let i = 0; i < n; i++) w += syllables[Math.floor(random() * syllables.length)];
    words.add(w + (random() < 0.3 ? String(Math.floor(random() * 10)) : ""));
  }
  const vocabulary = [...words];
  // Zipf with exponent 1: P(rank k) ∝ 1/k.
  const cumulative = new Float64Array(vocabulary.length);
  let total = 0;
  for (let k = 0; k < vocabulary.length; k++) cumulative[k] = total += 1 / (k + 1);
  const word = () => {
    const x = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return vocabulary[lo];
  };
  const sentence = () => Array.from({ length: 8 + Math.floor(random() * 8) }, word).join(" ");
  return { sentence, random };
}

/** Share of synthetic entries that are near-copies of an earlier one (one word changed), so that dedup has work to do. */
const NEAR_DUPLICATE_SHARE = 0.1;

/** Ids that sort in insertion order, as the package's `memoryId` makes them. */
function memoryId(sequence: number): string {
  return `m${String(sequence).padStart(12, "0")}`;
}

export function syntheticEntry(text: ReturnType<typeof zipfText>, sequence: number, earlier?: readonly MemoryEntry[]): MemoryEntry {
  if (earlier && earlier.length > 0 && text.random() < NEAR_DUPLICATE_SHARE) {
    const source = earlier[Math.floor(text.random() * earlier.length)];
    const words = source.reflection.split(" ");
    words[Math.floor(text.random() * words.length)] = text.sentence().split(" ")[0];
    return { ...source, id: memoryId(sequence), createdAt: sequence, reflection: words.join(" ") };
  }
  return {
    id: memoryId(sequence),
    createdAt: sequence,
    task: text.sentence(),
    reflection: text.sentence(),
    response: "response",
    evaluation: "evaluation",
    score: Math.round(text.random() * 100) / 100,
    iteration: 0,
  };
}

/** The reference insert: dedup by a Jaccard scan of every stored entry (token sets kept, so only the scan is counted). */
class ScanMemory {
  readonly entries: MemoryEntry[] = [];
  private readonly words: Set<string>[] = [];

  constructor(private readonly m: MemoryModule) {}

  /** Store an entry without the dedup check (to start from the same entries as the index). */
  load(entry: MemoryEntry): void {
    this.entries.push(entry);
    this.words.push(this.m.memoryWords(entry));
  }

  add(entry: MemoryEntry): boolean {
    const words = this.m.memoryWords(entry);
    for (const other of this.words) if (this.m.jaccard(words, other) > this.m.DEDUP_THRESHOLD) return false;
    this.entries.push(entry);
    this.words.push(words);
    return true;
  }
}

interface ScaleResult {
  size: number;
  insert: ReturnType<typeof summarize>;
  insertScan: ReturnType<typeof summarize>;
  search: ReturnType<typeof summarize>;
  scan: ReturnType<typeof summarize>;
  mismatches: number;
  compared: number;
  duplicatesSkipped: number;
  dedupMismatches: number;
  timedDuplicates: number;
}

const us = (ns: number) => ns / 1000;

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const sizes = opts.quick ? [200, 1_000] : [1_000, 10_000, 100_000];
  const text = zipfText(42);
  const queryText = zipfText(4242);
  // The package's memory module as compiled JavaScript (see bench/compiled.ts).
  const m = await compiled<MemoryModule>("src/reflexion/memory");
  const memory = new m.LongTermMemory({ capacity: Number.POSITIVE_INFINITY });
  let sequence = 0;
  let duplicatesSkipped = 0;
  const generated: MemoryEntry[] = [];
  const next = () => {
    const entry = syntheticEntry(text, sequence++, generated);
    generated.push(entry);
    return entry;
  };
  const results: ScaleResult[] = [];

  for (const size of sizes) {
    while (memory.size < size) {
      if (!memory.add(next()).added) duplicatesSkipped++;
    }
    const entries = memory.entries();
    const insertsMeasured = opts.quick ? 50 : 1_000;
    const scanInsertsMeasured = opts.quick ? 20 : size >= 100_000 ? 40 : 200;
    const queries = opts.quick ? 30 : 500;
    const scanQueries = opts.quick ? 20 : size >= 100_000 ? 40 : 200;

    // Reference store with the same entries.
    const reference = new ScanMemory(m);
    for (const e of entries) reference.load(e);

    // Inserts at this size: the same new entries into both (each added entry is removed again from the index, so the size stays put).
    const fresh = Array.from({ length: Math.max(insertsMeasured, scanInsertsMeasured) }, next);
    const insertNs: number[] = [];
    let dedupMismatches = 0;
    const indexAdded: boolean[] = [];
    for (let i = 0; i < insertsMeasured; i++) {
      const t0 = nowNs();
      const r = memory.add(fresh[i]);
      insertNs.push(nowNs() - t0);
      indexAdded.push(r.added);
    }
    const scanInsertNs: number[] = [];
    for (let i = 0; i < scanInsertsMeasured; i++) {
      const t0 = nowNs();
      const added = reference.add(fresh[i]);
      scanInsertNs.push(nowNs() - t0);
      // Both stores saw the same earlier entries (up to the fresh ones before i), so their dedup verdicts must agree.
      if (i < indexAdded.length && added !== indexAdded[i]) dedupMismatches++;
    }
    for (let i = 0; i < insertsMeasured; i++) if (indexAdded[i]) memory.remove(fresh[i].id);

    // Retrieval.
    const qs = Array.from({ length: queries }, () => queryText.sentence());
    const searchNs: number[] = [];
    const found: MemoryEntry[][] = [];
    for (const q of qs) {
      const t0 = nowNs();
      const r = memory.search(q, 5);
      searchNs.push(nowNs() - t0);
      found.push(r);
    }
    const scanNs: number[] = [];
    let mismatches = 0;
    const current = memory.entries();
    for (let i = 0; i < scanQueries; i++) {
      const t0 = nowNs();
      const r = m.scanRelevantMemories(qs[i], current, 5);
      scanNs.push(nowNs() - t0);
      if (r.length !== found[i].length || r.some((e, k) => e.id !== found[i][k].id)) mismatches++;
    }
    results.push({
      size,
      insert: summarize(insertNs.map(us)),
      insertScan: summarize(scanInsertNs.map(us)),
      search: summarize(searchNs.map(us)),
      scan: summarize(scanNs.map(us)),
      mismatches,
      compared: scanQueries,
      duplicatesSkipped,
      dedupMismatches,
      timedDuplicates: indexAdded.filter((a) => !a).length,
    });
  }

  const comparisons: Comparison[] = [];
  for (const r of results) {
    comparisons.push(compare(`search p50 at ${r.size.toLocaleString("en-US")} entries`, r.search.p50, r.scan.p50, "µs", "scanRelevantMemories p50", "reference/value"));
    comparisons.push(compare(`insert p50 at ${r.size.toLocaleString("en-US")} entries`, r.insert.p50, r.insertScan.p50, "µs", "Jaccard scan insert p50", "reference/value"));
  }
  const largest = results[results.length - 1];
  const largestSearch = comparisons.find((c) => c.label === `search p50 at ${largest.size.toLocaleString("en-US")} entries`) as Comparison;
  const targets: Target[] = [
    {
      description: `p50 retrieval under 2 ms at ${largest.size.toLocaleString("en-US")} entries`,
      met: opts.quick ? null : largest.search.p50 < 2000,
      detail: `${fmt(largest.search.p50)} µs${opts.quick ? " (quick mode: the target is for 100,000 entries)" : ""}`,
    },
    {
      description: `retrieval ≥ 20× faster than the scan at ${largest.size.toLocaleString("en-US")} entries`,
      met: opts.quick ? null : largestSearch.ratio >= 20,
      detail: `${fmtX(largestSearch.ratio)} (p50 ${fmt(largest.search.p50)} µs vs ${fmt(largest.scan.p50)} µs)`,
    },
  ];
  const checks = [
    {
      description: "search returns exactly the entries, in the same order, that scanRelevantMemories returns, on every query compared",
      ok: results.every((r) => r.mismatches === 0),
      detail: results.map((r) => `${r.size}: ${r.compared - r.mismatches}/${r.compared}`).join(", "),
    },
    {
      description: "the index's dedup and the Jaccard scan agree on which new entries are duplicates",
      ok: results.every((r) => r.dedupMismatches === 0),
      detail: `${results.reduce((n, r) => n + r.dedupMismatches, 0)} disagreements`,
    },
  ];
  const rows = results.flatMap((r) => [
    { label: `insert p50 @${r.size}`, value: r.insert.p50, unit: "µs" },
    { label: `insert p95 @${r.size}`, value: r.insert.p95, unit: "µs" },
    { label: `scan insert p50 @${r.size}`, value: r.insertScan.p50, unit: "µs" },
    { label: `search p50 @${r.size}`, value: r.search.p50, unit: "µs" },
    { label: `search p95 @${r.size}`, value: r.search.p95, unit: "µs" },
    { label: `scan p50 @${r.size}`, value: r.scan.p50, unit: "µs" },
    { label: `scan p95 @${r.size}`, value: r.scan.p95, unit: "µs" },
  ]);

  const markdown = [
    "## 4. Long-term memory at scale",
    "",
    `Synthetic entries: a ${VOCABULARY_SIZE.toLocaleString("en-US")}-word vocabulary with Zipf word frequencies (exponent 1), tasks and reflections of 8-15 words, ${NEAR_DUPLICATE_SHARE * 100}% of them near-copies of an earlier entry (one word of the reflection changed); queries are new tasks from the same distribution. ` +
      "`LongTermMemory.add` (dedup: Jaccard > 0.8 on task + reflection words, the reference's whitespace words, through an inverted index) and `LongTermMemory.search` (top 5, the reference's relevance with zero-relevance fill) " +
      "against the reference algorithms that scan every entry: `scanRelevantMemories` for retrieval, a Jaccard scan of every stored entry (token sets precomputed) for dedup. " +
      "Inserts are timed one by one at the given size (the inserted entries are removed again from the index).",
    "",
    table(
      ["entries", "insert p50 / p95 µs", "scan insert p50 / p95 µs", "search p50 / p95 µs", "scan search p50 / p95 µs", "search speed-up (p50)", "queries (index / scan)"],
      results.map((r) => [
        r.size.toLocaleString("en-US"),
        `${fmt(r.insert.p50)} / ${fmt(r.insert.p95)}`,
        `${fmt(r.insertScan.p50)} / ${fmt(r.insertScan.p95)}`,
        `${fmt(r.search.p50)} / ${fmt(r.search.p95)}`,
        `${fmt(r.scan.p50)} / ${fmt(r.scan.p95)}`,
        fmtX(r.scan.p50 / r.search.p50),
        `${r.search.n} / ${r.scan.n}`,
      ]),
    ),
    "",
    outcomeBlocks(comparisons, targets, checks),
    "",
    `Near-duplicates skipped while filling the store: ${duplicatesSkipped.toLocaleString("en-US")}; among the timed inserts: ${results.map((r) => `${r.size.toLocaleString("en-US")}: ${r.timedDuplicates}`).join(", ")}.`,
  ].join("\n");

  return { id: "memory", title: "Memory at scale", rows, comparisons, targets, checks, markdown };
}

function fmtX(x: number): string {
  return `${x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(1)}×`;
}
