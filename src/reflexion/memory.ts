/**
 * Memory for a Reflexion agent.
 *
 * - Short-term memory: a sliding window over the steps of the current run.
 * - Long-term memory: a bounded store of past steps that is kept across runs,
 *   with near-duplicate suppression (Jaccard similarity on words) and
 *   word-overlap retrieval backed by inverted indexes.
 *
 * Retrieval rule (shared by `LongTermMemory.search`, `scanRelevantMemories`
 * and `getRelevantMemories`): an entry's relevance is the number of distinct
 * words it shares with the query task (`tokenize` on both tasks). Entries
 * sharing no word are never returned. Higher relevance first; ties go to the
 * more recent entry (later insertion / later position in the input list).
 */

export interface StepRecord {
  task: string;
  response: string;
  evaluation: string;
  reflection: string;
  score: number;
  iteration: number;
}

/**
 * A step stored in long-term memory. `id` is assigned by the caller and is
 * expected to sort in insertion order (see `memoryId`).
 */
export interface MemoryEntry extends StepRecord {
  id: string;
  createdAt: number;
}

/** Number of steps kept in short-term memory. */
export const SHORT_TERM_SIZE = 10;
/** A new long-term entry is a duplicate when its Jaccard similarity with an existing one is strictly above this. */
export const DEDUP_THRESHOLD = 0.8;
/** A step enters long-term memory when its score is strictly above this (or it is the last iteration). */
export const LONG_TERM_SCORE_THRESHOLD = 0.8;
/** Default number of memories returned by retrieval. */
export const DEFAULT_RETRIEVAL_LIMIT = 5;

const NON_WORD = /[^\p{L}\p{N}]+/u;

/**
 * Lower-cased words of `text`: the text is split on every run of characters
 * that are not Unicode letters or numbers; empty pieces are dropped.
 */
export function tokenize(text: string): Set<string> {
  const words = new Set<string>();
  for (const piece of text.split(NON_WORD)) {
    if (piece.length > 0) words.add(piece.toLowerCase());
  }
  return words;
}

/**
 * Jaccard similarity |A ∩ B| / |A ∪ B|. Two empty sets have similarity 0 (not
 * 1), so entries without any word are never considered duplicates of each
 * other.
 */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const word of small) if (large.has(word)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Whether a step is stored in long-term memory: score > 0.8, or the run's last iteration. */
export function admitsToLongTerm(step: StepRecord, isLastIteration: boolean): boolean {
  return isLastIteration || step.score > LONG_TERM_SCORE_THRESHOLD;
}

/** Zero-padded id that sorts lexicographically in sequence order: `memoryId(42)` -> "m000000000042". */
export function memoryId(sequence: number): string {
  if (!Number.isSafeInteger(sequence) || sequence < 0) {
    throw new RangeError(`memory sequence must be a non-negative integer, got ${sequence}`);
  }
  return `m${String(sequence).padStart(12, "0")}`;
}

/** The words that dedup compares: task and reflection together. */
function dedupTokens(step: Pick<StepRecord, "task" | "reflection">): Set<string> {
  return tokenize(`${step.task} ${step.reflection}`);
}

/** Identity of a step, used to recognise the same step in short- and long-term memory. */
function stepKey(step: StepRecord): string {
  return JSON.stringify([step.task, step.iteration, step.reflection, step.response]);
}

/** 0 for NaN / non-positive limits, Infinity stays Infinity, otherwise floored. */
function normalizeLimit(limit: number): number {
  if (typeof limit !== "number" || Number.isNaN(limit) || limit <= 0) return 0;
  return Math.floor(limit);
}

function countShared(query: ReadonlySet<string>, words: ReadonlySet<string>): number {
  let shared = 0;
  for (const word of words) if (query.has(word)) shared++;
  return shared;
}

/* ------------------------------------------------------------------------ */
/* Short-term memory                                                         */
/* ------------------------------------------------------------------------ */

/** The last `size` steps of the current run, oldest first. */
export class ShortTermMemory {
  readonly size: number;
  private items: StepRecord[];

  constructor(entries: StepRecord[] = [], size: number = SHORT_TERM_SIZE) {
    if (!Number.isInteger(size) || size < 1) {
      throw new RangeError(`short-term memory size must be an integer >= 1, got ${size}`);
    }
    this.size = size;
    this.items = entries.slice(-size);
  }

  add(step: StepRecord): void {
    this.items.push(step);
    if (this.items.length > this.size) this.items.splice(0, this.items.length - this.size);
  }

  /** Oldest first; at most `size` steps. */
  entries(): StepRecord[] {
    return this.items.slice();
  }

  get length(): number {
    return this.items.length;
  }
}

/* ------------------------------------------------------------------------ */
/* Long-term memory                                                          */
/* ------------------------------------------------------------------------ */

export interface LongTermMemoryOptions {
  /** Maximum number of entries (integer >= 1, or Infinity). The oldest are evicted first. */
  capacity: number;
}

export interface LongTermAddResult {
  /** False when the entry was skipped as a duplicate. */
  added: boolean;
  /** Entries evicted (oldest first) to stay within capacity. */
  evicted: MemoryEntry[];
  /** Id of the existing entry the new one duplicates (only when `added` is false). */
  duplicateOf?: string;
}

interface Slot {
  entry: MemoryEntry;
  /** Distinct words of `entry.task` (retrieval). */
  taskWords: string[];
  /** Distinct words of task + reflection (dedup). */
  dedupWords: Set<string>;
}

function validateCapacity(capacity: number): number {
  if (capacity === Infinity || (Number.isInteger(capacity) && capacity >= 1)) return capacity;
  throw new RangeError(`long-term memory capacity must be an integer >= 1, got ${capacity}`);
}

/** Dead slots tolerated before the slot space and indexes are compacted. */
const MIN_DEAD_BEFORE_COMPACTION = 1024;

/** Bits in a slot's word signature (a one-hash Bloom filter of its dedup words). */
const SIGNATURE_BITS = 128;
const SIGNATURE_INTS = SIGNATURE_BITS / 32;

/**
 * Layout of the per-slot dedup record in `dedupData`: probe stamp, number of
 * dedup words, signature ints, padding to 8 ints (two records per cache line).
 */
const DEDUP_STAMP = 0;
const DEDUP_SIZE = 1;
const DEDUP_SIGNATURE = 2;
const DEDUP_STRIDE = 8;
if (DEDUP_SIGNATURE + SIGNATURE_INTS > DEDUP_STRIDE) throw new Error("dedup record layout overflow");

/** Signature bit of a word (FNV-1a over UTF-16 code units, then mixed). */
function signatureBit(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h & (SIGNATURE_BITS - 1);
}

/**
 * Smallest number of shared words two sets of sizes `a` and `b` need for
 * Jaccard > DEDUP_THRESHOLD: |A ∩ B| > t·(a + b) / (1 + t). Rounded down
 * slightly so that floating-point error can only make filters more permissive.
 */
function minSharedForDuplicate(a: number, b: number): number {
  const t = DEDUP_THRESHOLD;
  return Math.max(1, Math.ceil((t * (a + b)) / (1 + t) - 1e-9));
}

/**
 * Bounded, insertion-ordered store of past steps.
 *
 * Internally every entry occupies a slot; slot numbers increase with
 * insertion, so "more recent" is "larger slot" and the oldest live entry is
 * the smallest live slot (eviction is amortised O(1)). Two inverted indexes
 * map words to ascending slot lists: task words (retrieval) and task +
 * reflection words (dedup). Removal leaves a dead slot that index readers
 * skip; once dead slots outnumber live ones, slots are renumbered and the
 * indexes rebuilt, which keeps every operation amortised O(words of the entry).
 */
export class LongTermMemory {
  private cap: number;
  private readonly slotById = new Map<string, number>();
  private slots: (Slot | undefined)[] = [];
  /** Smallest slot that may still be live. */
  private head = 0;
  private deadCount = 0;
  private taskIndex = new Map<string, number[]>();
  private dedupIndex = new Map<string, number[]>();

  // Per-slot arrays, grown together (see ensureSlotCapacity).
  /** Dedup record of each slot, DEDUP_STRIDE ints per slot. */
  private dedupData = new Int32Array(0);
  /** Search scratch counters; all zero between calls. */
  private counts8 = new Uint8Array(0);
  private counts32 = new Uint32Array(0);
  /** Search scratch list of touched slots. */
  private touched = new Int32Array(0);
  /** Stamp marking the candidates already checked by the current dedup probe. */
  private probeGeneration = 0;

  constructor(opts: LongTermMemoryOptions) {
    this.cap = validateCapacity(opts.capacity);
  }

  get capacity(): number {
    return this.cap;
  }

  get size(): number {
    return this.slotById.size;
  }

  has(id: string): boolean {
    return this.slotById.has(id);
  }

  get(id: string): MemoryEntry | undefined {
    const slot = this.slotById.get(id);
    return slot === undefined ? undefined : this.slots[slot]?.entry;
  }

  /** All entries, oldest first. */
  entries(): MemoryEntry[] {
    const out: MemoryEntry[] = [];
    for (let s = this.head; s < this.slots.length; s++) {
      const slot = this.slots[s];
      if (slot !== undefined) out.push(slot.entry);
    }
    return out;
  }

  /**
   * Adds an entry unless it duplicates a stored one (see `findDuplicate`),
   * then evicts the oldest entries while the store is over capacity. The store
   * keeps a shallow copy of the entry. Adding an id that is already stored is
   * a no-op reported as a duplicate of itself.
   */
  add(entry: MemoryEntry): LongTermAddResult {
    if (this.slotById.has(entry.id)) return { added: false, evicted: [], duplicateOf: entry.id };
    const words = dedupTokens(entry);
    const duplicate = this.findDuplicateOf(words);
    if (duplicate !== undefined) return { added: false, evicted: [], duplicateOf: duplicate.id };
    this.insert({ entry: { ...entry }, taskWords: [...tokenize(entry.task)], dedupWords: words });
    return { added: true, evicted: this.evictOverflow() };
  }

  /**
   * The stored entry that `step` would duplicate: among stored entries whose
   * Jaccard similarity with it (words of task + reflection) is strictly above
   * `DEDUP_THRESHOLD`, the most similar one (ties: the most recent).
   * Undefined when there is none.
   *
   * Exact, without a full scan. Prefix filter: J(A, B) > t implies
   * |A ∩ B| > t·|A|, so B contains one of the first |A| - ceil(t·|A|) + 1 words
   * of A under any order; A's words are taken rarest first (by posting length)
   * and only entries in those postings are candidates. Candidates are then
   * pruned by size (J <= min/max), by a word signature (A's words whose bit
   * is absent from B's signature are certainly missing from B), and finally
   * counted exactly.
   */
  findDuplicate(step: Pick<StepRecord, "task" | "reflection">): MemoryEntry | undefined {
    return this.findDuplicateOf(dedupTokens(step));
  }

  /** Removes an entry; unknown ids are ignored. */
  remove(id: string): void {
    const slot = this.slotById.get(id);
    if (slot === undefined) return;
    this.kill(slot);
    this.maybeCompact();
  }

  /** Changes the capacity and returns the entries evicted (oldest first) to fit it. */
  setCapacity(n: number): MemoryEntry[] {
    this.cap = validateCapacity(n);
    return this.evictOverflow();
  }

  /**
   * Entries sharing at least one task word with `task`, by number of shared
   * words (descending), ties most recent first; at most `limit`.
   *
   * Only the index postings of the query's words are read: shared-word counts
   * are accumulated in a per-slot counter array, then the best `limit` are
   * selected with a bounded heap.
   */
  search(task: string, limit: number = DEFAULT_RETRIEVAL_LIMIT): MemoryEntry[] {
    const k = normalizeLimit(limit);
    if (k === 0 || this.slotById.size === 0) return [];
    const postings: number[][] = [];
    let total = 0;
    for (const word of tokenize(task)) {
      const posting = this.taskIndex.get(word);
      if (posting !== undefined) {
        postings.push(posting);
        total += posting.length;
      }
    }
    if (postings.length === 0) return [];

    // One byte per slot is enough unless more than 255 query words are indexed.
    const counts = postings.length <= 255 ? this.counts8 : this.counts32;
    const slots = this.slots;
    const heap = new TopK(Math.min(k, total));

    if (total * 4 < slots.length) {
      // Few postings: remember the touched slots rather than scanning all slots.
      const touched = this.touched;
      let touchedCount = 0;
      for (const posting of postings) {
        for (let i = 0; i < posting.length; i++) {
          const slot = posting[i];
          if (counts[slot]++ === 0) touched[touchedCount++] = slot;
        }
      }
      for (let i = 0; i < touchedCount; i++) {
        const slot = touched[i];
        const count = counts[slot];
        counts[slot] = 0;
        if (slots[slot] !== undefined) heap.offer(count, slot);
      }
    } else {
      for (const posting of postings) {
        for (let i = 0; i < posting.length; i++) counts[posting[i]]++;
      }
      // Most recent first: once the heap is full only strictly higher counts get in.
      let floor = 0;
      for (let slot = slots.length - 1; slot >= 0; slot--) {
        const count = counts[slot];
        if (count === 0) continue;
        counts[slot] = 0;
        if (count > floor && slots[slot] !== undefined) {
          heap.offer(count, slot);
          if (heap.full) floor = heap.worstCount;
        }
      }
    }
    return heap.sortedSlots().map((slot) => (slots[slot] as Slot).entry);
  }

  /* -------------------------------- internals ------------------------------- */

  private findDuplicateOf(words: Set<string>): MemoryEntry | undefined {
    const a = words.size;
    if (a === 0 || this.slotById.size === 0) return undefined;
    const t = DEDUP_THRESHOLD;
    // Rounded down slightly so that floating-point error can only lengthen the prefix.
    const prefixLength = a - Math.max(1, Math.ceil(t * a - 1e-9)) + 1;
    const ordered = [...words].map((word) => ({ word, df: this.dedupIndex.get(word)?.length ?? 0 }));
    ordered.sort((x, y) => x.df - y.df || (x.word < y.word ? -1 : x.word > y.word ? 1 : 0));
    const orderedWords = ordered.map((o) => o.word);

    // A's signature bits with the number of A's words on each bit.
    const bitCounts = new Map<number, number>();
    for (const word of orderedWords) {
      const bit = signatureBit(word);
      bitCounts.set(bit, (bitCounts.get(bit) ?? 0) + 1);
    }
    const bits = [...bitCounts.keys()];
    const bitWeights = bits.map((bit) => bitCounts.get(bit) as number);

    // Misses of A's words allowed in a duplicate of size b (-1: no duplicate of
    // that size is possible, since J <= min(a, b) / max(a, b)). Sizes beyond
    // the table exceed a / t and are ruled out the same way.
    const allowedMissesBySize = new Int32Array(Math.ceil(a / t) + 2);
    for (let b = 0; b < allowedMissesBySize.length; b++) {
      allowedMissesBySize[b] = b === 0 || Math.min(a, b) / Math.max(a, b) <= t ? -1 : a - minSharedForDuplicate(a, b);
    }

    if (this.probeGeneration >= 0x7fffffff) {
      for (let i = DEDUP_STAMP; i < this.dedupData.length; i += DEDUP_STRIDE) this.dedupData[i] = 0;
      this.probeGeneration = 0;
    }
    const stamp = ++this.probeGeneration;
    const { dedupData, slots } = this;
    let best: Slot | undefined;
    let bestSlot = -1;
    let bestSimilarity = t;
    for (let p = 0; p < prefixLength; p++) {
      const posting = this.dedupIndex.get(orderedWords[p]);
      if (posting === undefined) continue;
      candidates: for (let i = 0; i < posting.length; i++) {
        const slotNumber = posting[i];
        const base = slotNumber * DEDUP_STRIDE;
        if (dedupData[base + DEDUP_STAMP] === stamp) continue;
        dedupData[base + DEDUP_STAMP] = stamp;
        const b = dedupData[base + DEDUP_SIZE];
        const allowedMisses = b < allowedMissesBySize.length ? allowedMissesBySize[b] : -1;
        if (allowedMisses < 0) continue;
        let misses = 0;
        for (let j = 0; j < bits.length; j++) {
          const bit = bits[j];
          if ((dedupData[base + DEDUP_SIGNATURE + (bit >>> 5)] & (1 << (bit & 31))) === 0) {
            misses += bitWeights[j];
            if (misses > allowedMisses) continue candidates;
          }
        }
        const slot = slots[slotNumber];
        if (slot === undefined) continue;
        misses = 0;
        for (let j = 0; j < a; j++) {
          if (!slot.dedupWords.has(orderedWords[j]) && ++misses > allowedMisses) continue candidates;
        }
        const shared = a - misses;
        const similarity = shared / (a + b - shared); // === jaccard(words, slot.dedupWords)
        if (similarity > bestSimilarity || (similarity === bestSimilarity && best !== undefined && slotNumber > bestSlot)) {
          best = slot;
          bestSlot = slotNumber;
          bestSimilarity = similarity;
        }
      }
    }
    return best?.entry;
  }

  private insert(slot: Slot): void {
    const slotNumber = this.slots.length;
    this.ensureSlotCapacity(slotNumber + 1);
    this.slots.push(slot);
    this.slotById.set(slot.entry.id, slotNumber);
    for (const word of slot.taskWords) appendPosting(this.taskIndex, word, slotNumber);
    const base = slotNumber * DEDUP_STRIDE;
    this.dedupData.fill(0, base, base + DEDUP_STRIDE);
    this.dedupData[base + DEDUP_SIZE] = slot.dedupWords.size;
    for (const word of slot.dedupWords) {
      appendPosting(this.dedupIndex, word, slotNumber);
      const bit = signatureBit(word);
      this.dedupData[base + DEDUP_SIGNATURE + (bit >>> 5)] |= 1 << (bit & 31);
    }
  }

  private kill(slotNumber: number): MemoryEntry {
    const slot = this.slots[slotNumber] as Slot;
    this.slots[slotNumber] = undefined;
    this.slotById.delete(slot.entry.id);
    this.deadCount++;
    while (this.head < this.slots.length && this.slots[this.head] === undefined) this.head++;
    return slot.entry;
  }

  private evictOverflow(): MemoryEntry[] {
    const evicted: MemoryEntry[] = [];
    while (this.slotById.size > this.cap) evicted.push(this.kill(this.head));
    this.maybeCompact();
    return evicted;
  }

  private maybeCompact(): void {
    if (this.deadCount < MIN_DEAD_BEFORE_COMPACTION || this.deadCount <= this.slotById.size) return;
    const live: Slot[] = [];
    for (let s = this.head; s < this.slots.length; s++) {
      const slot = this.slots[s];
      if (slot !== undefined) live.push(slot);
    }
    this.slots = [];
    this.slotById.clear();
    this.taskIndex = new Map();
    this.dedupIndex = new Map();
    this.head = 0;
    this.deadCount = 0;
    for (const slot of live) this.insert(slot);
  }

  private ensureSlotCapacity(needed: number): void {
    const current = this.touched.length;
    if (current >= needed) return;
    const size = Math.max(needed, current * 2, 64);
    const dedupData = new Int32Array(size * DEDUP_STRIDE);
    dedupData.set(this.dedupData);
    this.dedupData = dedupData;
    // Search scratch is all zero between calls, so it is simply reallocated.
    this.counts8 = new Uint8Array(size);
    this.counts32 = new Uint32Array(size);
    this.touched = new Int32Array(size);
  }
}

function appendPosting(index: Map<string, number[]>, word: string, slot: number): void {
  const posting = index.get(word);
  if (posting === undefined) index.set(word, [slot]);
  else posting.push(slot);
}

/**
 * Keeps the best `capacity` (count, slot) pairs: higher count first, then
 * higher slot. A binary min-heap whose root is the worst kept pair.
 */
class TopK {
  private readonly counts: number[] = [];
  private readonly slots: number[] = [];

  constructor(private readonly capacity: number) {}

  get full(): boolean {
    return this.counts.length >= this.capacity;
  }

  /** Count of the worst kept pair (the heap root); meaningful when not empty. */
  get worstCount(): number {
    return this.counts[0];
  }

  /** Whether (c1, s1) ranks below (c2, s2). */
  private static worse(c1: number, s1: number, c2: number, s2: number): boolean {
    return c1 < c2 || (c1 === c2 && s1 < s2);
  }

  offer(count: number, slot: number): void {
    const { counts, slots } = this;
    if (counts.length < this.capacity) {
      counts.push(count);
      slots.push(slot);
      this.siftUp(counts.length - 1);
    } else if (this.capacity > 0 && TopK.worse(counts[0], slots[0], count, slot)) {
      counts[0] = count;
      slots[0] = slot;
      this.siftDown(0);
    }
  }

  /** Kept slots, best first. */
  sortedSlots(): number[] {
    const order = this.counts.map((_, i) => i);
    order.sort((a, b) => this.counts[b] - this.counts[a] || this.slots[b] - this.slots[a]);
    return order.map((i) => this.slots[i]);
  }

  private siftUp(i: number): void {
    const { counts, slots } = this;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!TopK.worse(counts[i], slots[i], counts[parent], slots[parent])) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const { counts, slots } = this;
    const n = counts.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < n && TopK.worse(counts[left], slots[left], counts[worst], slots[worst])) worst = left;
      if (right < n && TopK.worse(counts[right], slots[right], counts[worst], slots[worst])) worst = right;
      if (worst === i) return;
      this.swap(i, worst);
      i = worst;
    }
  }

  private swap(i: number, j: number): void {
    const { counts, slots } = this;
    [counts[i], counts[j]] = [counts[j], counts[i]];
    [slots[i], slots[j]] = [slots[j], slots[i]];
  }
}

/* ------------------------------------------------------------------------ */
/* Retrieval                                                                 */
/* ------------------------------------------------------------------------ */

/**
 * Reference retrieval: tokenizes every entry's task and ranks them with the
 * retrieval rule (shared words desc, then later position in `entries` first).
 * Linear in the total size of `entries`.
 */
export function scanRelevantMemories<T extends StepRecord>(
  task: string,
  entries: readonly T[],
  limit: number = DEFAULT_RETRIEVAL_LIMIT,
): T[] {
  const k = normalizeLimit(limit);
  if (k === 0) return [];
  const query = tokenize(task);
  if (query.size === 0) return [];
  const scored: { index: number; shared: number }[] = [];
  for (let index = 0; index < entries.length; index++) {
    const shared = countShared(query, tokenize(entries[index].task));
    if (shared > 0) scored.push({ index, shared });
  }
  scored.sort((a, b) => b.shared - a.shared || b.index - a.index);
  return scored.slice(0, k).map(({ index }) => entries[index]);
}

/**
 * The most relevant steps among the current run's short-term steps and the
 * long-term store, at most `limit`.
 *
 * Short-term steps belong to the current run, so on equal relevance they rank
 * before long-term entries (and later short-term steps before earlier ones).
 * A long-term entry that is the same step as a short-term one (same task,
 * iteration, reflection and response) is left out, so each step is returned
 * once, as its short-term record.
 *
 * Equivalent to `scanRelevantMemories(task, [...longTermWithoutShortTermSteps,
 * ...shortTerm], limit)`.
 */
export function getRelevantMemories(
  task: string,
  shortTerm: readonly StepRecord[],
  longTerm: LongTermMemory | readonly MemoryEntry[],
  limit: number = DEFAULT_RETRIEVAL_LIMIT,
): StepRecord[] {
  const k = normalizeLimit(limit);
  if (k === 0) return [];
  const shortKeys = new Set(shortTerm.map(stepKey));
  const notShort = (entry: MemoryEntry): boolean => !shortKeys.has(stepKey(entry));

  if (!(longTerm instanceof LongTermMemory)) {
    const combined: StepRecord[] = [...longTerm.filter(notShort), ...shortTerm];
    return scanRelevantMemories(task, combined, k);
  }

  // Ask the index for enough entries to survive removal of the short-term steps.
  let want = k === Infinity ? Infinity : k + shortKeys.size;
  let fromLong: MemoryEntry[];
  for (;;) {
    const raw = longTerm.search(task, want);
    fromLong = raw.filter(notShort);
    if (fromLong.length >= k || raw.length < want) break;
    want *= 2;
  }
  const fromShort = scanRelevantMemories(task, shortTerm, k);

  const query = tokenize(task);
  const relevance = (step: StepRecord): number => countShared(query, tokenize(step.task));
  const merged: StepRecord[] = [];
  let i = 0;
  let j = 0;
  let shortRelevance = i < fromShort.length ? relevance(fromShort[i]) : 0;
  let longRelevance = j < fromLong.length ? relevance(fromLong[j]) : 0;
  while (merged.length < k && (i < fromShort.length || j < fromLong.length)) {
    if (j >= fromLong.length || (i < fromShort.length && shortRelevance >= longRelevance)) {
      merged.push(fromShort[i++]);
      shortRelevance = i < fromShort.length ? relevance(fromShort[i]) : 0;
    } else {
      merged.push(fromLong[j++]);
      longRelevance = j < fromLong.length ? relevance(fromLong[j]) : 0;
    }
  }
  return merged;
}
