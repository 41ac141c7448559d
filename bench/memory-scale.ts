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
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import pg from "pg";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { MemoryEntry } from "../src/reflexion/memory.js";
import { StoreMemory } from "../src/reflexion/memory-store.js";

type MemoryModule = typeof import("../src/reflexion/memory.js");
import { compiled } from "./compiled.js";
import {
  compareRepeated,
  fmt,
  nowNs,
  rng,
  summarize,
  table,
  type BenchOptions,
  type BenchResult,
  type Comparison,
  outcomeBlocks,
  percentile,
  median,
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
  /** Per query (and per inserted entry), the scan's time and the index's on the same input, µs: the pairs the ratios are taken from. */
  paired: { scanSearch: number[]; search: number[]; scanInsert: number[]; insert: number[] };
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
      paired: {
        scanSearch: scanNs.map(us),
        search: searchNs.slice(0, scanNs.length).map(us),
        scanInsert: scanInsertNs.map(us),
        insert: insertNs.slice(0, scanInsertNs.length).map(us),
      },
      mismatches,
      compared: scanQueries,
      duplicatesSkipped,
      dedupMismatches,
      timedDuplicates: indexAdded.filter((a) => !a).length,
    });
  }

  const two = await twoProcessCase(opts.quick ? 1_000 : 100_000, opts.quick ? 30 : 500);

  const comparisons: Comparison[] = [];
  // The scan is the figure and the index the reference, so each ratio reads value ÷ reference: how many times the index's time the scan takes, query by query.
  const searchLabel = (size: number) => `search at ${size.toLocaleString("en-US")} entries: scanRelevantMemories vs LongTermMemory.search`;
  for (const r of results) {
    comparisons.push(compareRepeated(searchLabel(r.size), r.paired.scanSearch, r.paired.search, "µs", "LongTermMemory.search"));
    comparisons.push(
      compareRepeated(
        `insert at ${r.size.toLocaleString("en-US")} entries: Jaccard scan vs LongTermMemory.add`,
        r.paired.scanInsert,
        r.paired.insert,
        "µs",
        "LongTermMemory.add",
      ),
    );
  }
  const largest = results[results.length - 1];
  const largestSearch = comparisons.find((c) => c.label === searchLabel(largest.size)) as Comparison;
  const targets: Target[] = [
    {
      description: `p50 retrieval under 2 ms at ${largest.size.toLocaleString("en-US")} entries`,
      met: opts.quick ? null : largest.search.p50 < 2000,
      detail: `${fmt(largest.search.p50)} µs${opts.quick ? " (quick mode: the target is for 100,000 entries)" : ""}`,
    },
    {
      description: `retrieval ≥ 20× faster than the scan at ${largest.size.toLocaleString("en-US")} entries`,
      met: opts.quick ? null : largestSearch.ratio >= 20,
      detail: `${fmtX(largestSearch.ratio)} (${fmtX(Math.min(...largestSearch.ratios))}–${fmtX(Math.max(...largestSearch.ratios))} over ${largestSearch.ratios.length} queries; p50 ${fmt(largest.scan.p50)} µs vs ${fmt(largest.search.p50)} µs)`,
    },
  ];
  if (typeof two !== "string") {
    targets.push({
      description: `p50 retrieval under 2 ms at ${two.size.toLocaleString("en-US")} entries in Postgres while another process writes`,
      met: opts.quick ? null : two.busy.p50 < 2000,
      detail: `p50 ${fmt(two.busy.p50)} µs, p99 ${fmt(two.busy.p99)} µs`,
    });
  }
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
    ...(typeof two === "string"
      ? []
      : [
          {
            description: "the reading process indexed every entry the writing process added",
            ok: two.seenByReader === two.added,
            detail: `${two.seenByReader} of ${two.added}`,
          },
        ]),
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
  if (typeof two !== "string") {
    rows.push(
      { label: `two-process search p50 @${two.size}`, value: two.busy.p50, unit: "µs" },
      { label: `two-process search p99 @${two.size}`, value: two.busy.p99, unit: "µs" },
    );
  }
  const twoProcessMarkdown =
    typeof two === "string"
      ? `Two processes: not run: ${two}.`
      : [
          `**Two processes on one Postgres store.** ${two.size.toLocaleString("en-US")} entries preloaded (as one writer's); this process loads them once (${fmt(two.coldLoadMs)} ms), then times \`StoreMemory.search\` (top 5), which reads the known writers' counts by key (listing the writers, to notice new ones, at most once a second), fetches what is new by key and queries its index: first alone, then while a child process adds steps through \`StoreMemory.add\` (dedup, write, announce) as fast as it can.`,
          "",
          table(
            ["case", "search p50 µs", "search p95 µs", "search p99 µs", "queries"],
            [
              ["alone", fmt(two.idle.p50), fmt(two.idle.p95), fmt(two.idle.p99), two.idle.n],
              ["while the other process writes", fmt(two.busy.p50), fmt(two.busy.p95), fmt(two.busy.p99), two.busy.n],
            ],
          ),
          "",
          `The writer made ${two.writes.toLocaleString("en-US")} adds (${fmt(two.writesPerSecond)} per second; ${two.added.toLocaleString("en-US")} stored, the rest near-duplicates); the reader's index holds all ${two.seenByReader.toLocaleString("en-US")} of them.`,
        ].join("\n");

  const markdown = [
    "## 4. Long-term memory at scale",
    "",
    `Synthetic entries: a ${VOCABULARY_SIZE.toLocaleString("en-US")}-word vocabulary with Zipf word frequencies (exponent 1), tasks and reflections of 8-15 words, ${NEAR_DUPLICATE_SHARE * 100}% of them near-copies of an earlier entry (one word of the reflection changed); queries are new tasks from the same distribution. ` +
      "`LongTermMemory.add` (dedup: Jaccard > 0.8 on task + reflection words, the reference's whitespace words, through an inverted index) and `LongTermMemory.search` (top 5, the reference's relevance with zero-relevance fill) " +
      "against the reference algorithms that scan every entry: `scanRelevantMemories` for retrieval, a Jaccard scan of every stored entry (token sets precomputed) for dedup. " +
      "Inserts are timed one by one at the given size (the inserted entries are removed again from the index). " +
      "The scan and the index answer the same queries and insert the same entries, so each ratio is taken per query (per entry), the scan's time ÷ the index's, and the median of those is reported.",
    "",
    table(
      [
        "entries",
        "insert p50 / p95 µs",
        "scan insert p50 / p95 µs",
        "search p50 / p95 µs",
        "scan search p50 / p95 µs",
        "scan ÷ index, per query (median)",
        "queries (index / scan)",
      ],
      results.map((r) => [
        r.size.toLocaleString("en-US"),
        `${fmt(r.insert.p50)} / ${fmt(r.insert.p95)}`,
        `${fmt(r.insertScan.p50)} / ${fmt(r.insertScan.p95)}`,
        `${fmt(r.search.p50)} / ${fmt(r.search.p95)}`,
        `${fmt(r.scan.p50)} / ${fmt(r.scan.p95)}`,
        fmtX(median(r.paired.scanSearch.map((x, i) => x / r.paired.search[i]))),
        `${r.search.n} / ${r.scan.n}`,
      ]),
    ),
    "",
    outcomeBlocks(comparisons, targets, checks),
    "",
    `Near-duplicates skipped while filling the store: ${duplicatesSkipped.toLocaleString("en-US")}; among the timed inserts: ${results.map((r) => `${r.size.toLocaleString("en-US")}: ${r.timedDuplicates}`).join(", ")}.`,
    "",
    twoProcessMarkdown,
  ].join("\n");

  return { id: "memory", title: "Memory at scale", rows, comparisons, targets, checks, markdown };
}

function withP99(values: number[]) {
  return {
    ...summarize(values),
    p99: percentile(
      [...values].sort((a, b) => a - b),
      99,
    ),
  };
}

/** The store namespace the two-process case uses. */
export const BENCH_NAMESPACE = ["reflexion", "bench", "memory"];

interface TwoProcessResult {
  size: number;
  coldLoadMs: number;
  idle: ReturnType<typeof withP99>;
  busy: ReturnType<typeof withP99>;
  writes: number;
  added: number;
  writesPerSecond: number;
  seenByReader: number;
}

/**
 * Two processes on one Postgres store: this one retrieves (StoreMemory.search:
 * list the writers' counts, fetch what is new, query the index) while a child
 * process adds steps. `size` entries are preloaded, as one writer's.
 */
async function twoProcessCase(size: number, queries: number): Promise<TwoProcessResult | string> {
  const url = process.env.DATABASE_URL?.trim() || "postgres://postgres@127.0.0.1:5432/postgres";
  const schema = `bench_memory_${process.pid}`;
  const store = new PostgresStore({ connectionOptions: url, schema, ensureTables: false });
  try {
    await store.setup();
  } catch (error) {
    return `PostgreSQL not reachable (${(error as Error).message})`;
  }
  const capacity = size * 2;
  const entriesNs = [...BENCH_NAMESPACE, "entries"];
  try {
    const text = zipfText(42);
    const generated: MemoryEntry[] = [];
    // Seeded straight into the store's table, 5,000 rows a statement (through store.put it takes minutes); the layout is PostgresStore's.
    const seed = new pg.Pool({ connectionString: url, max: 1 });
    for (let offset = 0; offset < size; offset += 5_000) {
      const chunk: MemoryEntry[] = [];
      for (let n = offset + 1; n <= Math.min(size, offset + 5_000); n++) {
        const e = { ...syntheticEntry(text, n, generated.length > 0 ? generated : undefined), id: `preload-${n}`, createdAt: n };
        if (generated.length < 1_000) generated.push(e);
        chunk.push(e);
      }
      await seed.query(`insert into "${schema}".store (namespace_path, key, value) select $1, x->>'id', x from jsonb_array_elements($2::jsonb) x`, [
        entriesNs.join(":"),
        JSON.stringify(chunk),
      ]);
    }
    await seed.end();
    await store.put([...BENCH_NAMESPACE, "writers"], "preload", { count: size }, false);

    const reader = new StoreMemory(store, BENCH_NAMESPACE, capacity);
    const t0 = nowNs();
    await reader.entries();
    const coldLoadMs = (nowNs() - t0) / 1e6;
    const queryText = zipfText(4242);
    const timeQueries = async () => {
      const ns: number[] = [];
      for (let i = 0; i < queries; i++) {
        const q = queryText.sentence();
        const start = nowNs();
        await reader.search(q, 5);
        ns.push(nowNs() - start);
      }
      return withP99(ns.map(us));
    };
    const idle = await timeQueries();

    const child = spawn(
      process.execPath,
      ["--import", "tsx", fileURLToPath(new URL("./memory-writer.ts", import.meta.url)), "--url", url, "--schema", schema, "--capacity", String(capacity)],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    const lines = createInterface({ input: child.stdout! });
    const next = (prefix: string) =>
      new Promise<string>((resolve, reject) => {
        lines.on("line", (line) => line.startsWith(prefix) && resolve(line));
        child.on("exit", (code) => reject(new Error(`memory writer exited with ${code}`)));
      });
    await next("READY");
    const busy = await timeQueries();
    const result = next("RESULT");
    child.stdin!.end();
    const { writes, added, ms } = JSON.parse((await result).slice("RESULT ".length)) as { writes: number; added: number; ms: number };
    // Every entry the writer added reached the reader's index (the preloaded ones are indexed as they are),
    // once the reader has listed the writers again (at most a second after the last listing).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const seenByReader = (await reader.entries()).length - size;
    return { size, coldLoadMs, idle, busy, writes, added, writesPerSecond: (writes / ms) * 1000, seenByReader };
  } finally {
    await store.stop().catch(() => undefined);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await pool.query(`drop schema if exists "${schema}" cascade`).catch(() => undefined);
    await pool.end();
  }
}

function fmtX(x: number): string {
  return `${x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(1)}×`;
}
