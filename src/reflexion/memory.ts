/**
 * Memory for a Reflexion agent, with the reference's rules (swarms'
 * `ReflexionMemory`):
 *
 * - Words are `text.lower().split()`: lower-cased, split on whitespace only,
 *   punctuation stays attached (`"alpha,"` and `"alpha"` are different words).
 * - Short-term memory keeps the 10 most recent steps.
 * - Long-term memory keeps at most `capacity` entries, dropping the oldest
 *   first, and skips a new entry whose task + reflection words have a Jaccard
 *   similarity above 0.8 with an existing entry's.
 * - Relevance of a memory to a task: |task words ∩ words of (memory task + " " +
 *   memory reflection)| ÷ min(|task words|, |memory words|); 0 when either is empty.
 * - Retrieval scores every short-term entry, then every long-term entry, sorts
 *   by relevance with a stable sort (ties keep that order: short-term first,
 *   then oldest first) and returns the top `limit`, zero-relevance entries
 *   filling the list when fewer match.
 *
 * One deliberate difference: a step that is in both memories is scored once
 * (as its short-term copy), so the actor never sees the same lesson twice.
 *
 * `LongTermMemory` answers with an inverted index (word → entries) so that
 * retrieval and dedup touch only the entries that share a word; the results
 * are exactly those of the scans (`scanRelevantMemories`, a Jaccard scan).
 */

export interface StepRecord {
  task: string;
  response: string;
  evaluation: string;
  reflection: string;
  score: number;
  iteration: number;
}

/** A step stored in long-term memory, with the id it is stored under. */
export interface MemoryEntry extends StepRecord {
  id: string;
  createdAt: number;
}

/** Number of steps kept in short-term memory. */
export const SHORT_TERM_SIZE = 10;
/** A new long-term entry is a duplicate when its Jaccard similarity with an existing one is strictly above this. */
export const DEDUP_THRESHOLD = 0.8;
/** A step enters long-term memory when its score is strictly above this (or it is the last iteration). */
const LONG_TERM_SCORE_THRESHOLD = 0.8;
/** Default number of memories returned by retrieval. */
export const DEFAULT_RETRIEVAL_LIMIT = 5;

/** The reference's words: `set(text.lower().split())`. */
export function words(text: string): Set<string> {
  const out = new Set<string>();
  for (const piece of text.toLowerCase().split(/\s+/u)) if (piece.length > 0) out.add(piece);
  return out;
}

/** The words a memory is matched and deduplicated on: its task and its reflection. */
export function memoryWords(step: Pick<StepRecord, "task" | "reflection">): Set<string> {
  return words(`${step.task} ${step.reflection}`);
}

function shared(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let n = 0;
  for (const w of small) if (large.has(w)) n++;
  return n;
}

/** Jaccard similarity |A ∩ B| / |A ∪ B|; 0 when either set is empty. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const n = shared(a, b);
  return n / (a.size + b.size - n);
}

/** The reference's relevance of a memory to a task's words (0-1). */
export function relevance(taskWords: ReadonlySet<string>, memory: Pick<StepRecord, "task" | "reflection">): number {
  const m = memoryWords(memory);
  if (taskWords.size === 0 || m.size === 0) return 0;
  return shared(taskWords, m) / Math.min(taskWords.size, m.size);
}

/** Whether a step enters long-term memory: score > 0.8, or the task's last iteration (`iteration == maxLoops - 1`). */
export function admitsToLongTerm(step: Pick<StepRecord, "score" | "iteration">, maxLoops: number): boolean {
  return step.score > LONG_TERM_SCORE_THRESHOLD || step.iteration === maxLoops - 1;
}

/** A retrieval limit as a count: non-numbers and negatives give 0, fractions are floored. */
function countOf(limit: number): number {
  return typeof limit === "number" && limit > 0 ? Math.floor(limit) : 0;
}

/** Identity of a step, to recognise the same step in short- and long-term memory. */
function stepKey(step: StepRecord): string {
  return JSON.stringify([step.task, step.iteration, step.reflection, step.response]);
}

/** The reference's retrieval over a list, in the list's order: top `limit` by relevance, stable on ties. */
export function scanRelevantMemories<T extends StepRecord>(task: string, memories: readonly T[], limit = DEFAULT_RETRIEVAL_LIMIT): T[] {
  const q = words(task);
  return memories
    .map((memory, position) => ({ memory, position, score: relevance(q, memory) }))
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .slice(0, countOf(limit))
    .map((s) => s.memory);
}

/* ------------------------------------------------------------------------ */

/** The last `size` steps, oldest first. */
export class ShortTermMemory {
  private items: StepRecord[];

  constructor(
    entries: readonly StepRecord[] = [],
    readonly size: number = SHORT_TERM_SIZE,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`short-term memory size must be an integer >= 1, got ${size}`);
    this.items = entries.slice(-size);
  }

  add(step: StepRecord): void {
    this.items.push(step);
    if (this.items.length > this.size) this.items.splice(0, this.items.length - this.size);
  }

  entries(): StepRecord[] {
    return this.items.slice();
  }

  get length(): number {
    return this.items.length;
  }
}

/* ------------------------------------------------------------------------ */

interface LongTermAddResult {
  /** False when the entry was skipped as a near-duplicate (or its id is already stored). */
  added: boolean;
  /** Entries dropped, oldest first, to stay within capacity. */
  evicted: MemoryEntry[];
}

/** A growable list of positions. */
class Postings {
  ids = new Int32Array(4);
  n = 0;
  push(position: number): void {
    if (this.n === this.ids.length) {
      const grown = new Int32Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.n++] = position;
  }
}

/**
 * Long-term memory: entries oldest first, at most `capacity`, with an
 * inverted index from each word to the positions of the entries that have it.
 * A dropped entry leaves a hole at its position until the positions are
 * renumbered (when holes outnumber live entries).
 */
export class LongTermMemory {
  private capacityValue: number;
  /** By position, oldest first; undefined where an entry was dropped. */
  private slots: (MemoryEntry | undefined)[] = [];
  /** By position: the entry's number of words (0 once dropped: a dropped position matches nothing). */
  private sizes = new Int32Array(1024);
  private first = 0;
  private live = 0;
  private readonly byId = new Map<string, number>();
  private postings = new Map<string, Postings>();
  /** Shared-word counters by position, reused (and left at zero) between queries. */
  private counts = new Uint16Array(1024);
  /**
   * Bit sets by position for the words in more than 1/64 of the entries.
   * Queries count the other (rarer) words through their postings, then add the
   * common words of the entries found by bit lookups; an entry that shares no
   * rare word can share at most the common ones, which bounds its score, so
   * the common words' long postings are only walked when that bound is not
   * enough to decide (then everything is counted, as for a small memory).
   */
  private bits = new Map<string, Uint32Array>();
  /** How many live entries have each number of words (for the smallest, which bounds scores). */
  private sizeCounts = new Map<number, number>();

  constructor(options: { capacity: number }) {
    this.capacityValue = LongTermMemory.checkCapacity(options.capacity);
  }

  private static checkCapacity(capacity: number): number {
    if (capacity !== Number.POSITIVE_INFINITY && (!Number.isInteger(capacity) || capacity < 1)) {
      throw new RangeError(`memory capacity must be an integer >= 1 or Infinity, got ${capacity}`);
    }
    return capacity;
  }

  get capacity(): number {
    return this.capacityValue;
  }

  get size(): number {
    return this.live;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Entries oldest first. */
  entries(): MemoryEntry[] {
    const out: MemoryEntry[] = [];
    for (let p = this.first; p < this.slots.length; p++) {
      const entry = this.slots[p];
      if (entry) out.push(entry);
    }
    return out;
  }

  /** Live positions sharing a word with `query`; `counts[p]` holds how many (the caller resets them to 0). */
  private overlap(query: Iterable<string>): number[] {
    const counts = this.counts;
    const sizes = this.sizes;
    const positions: number[] = [];
    for (const word of query) {
      const list = this.postings.get(word);
      if (!list) continue;
      const ids = list.ids;
      for (let i = 0, n = list.n; i < n; i++) {
        const p = ids[i];
        if (sizes[p] === 0) continue;
        if (counts[p]++ === 0) positions.push(p);
      }
    }
    return positions;
  }

  /** Split words into those counted through postings and the bit sets of the common ones. */
  private split(query: ReadonlySet<string>): { rare: string[]; common: Uint32Array[] } {
    const rare: string[] = [];
    const common: Uint32Array[] = [];
    for (const word of query) {
      const b = this.bits.get(word);
      if (b) common.push(b);
      else rare.push(word);
    }
    return { rare, common };
  }

  /** Positions sharing a rare word with the query, with `counts` completed by the common words' bits. */
  private overlapWithBits(rare: string[], common: Uint32Array[]): number[] {
    const positions = this.overlap(rare);
    const counts = this.counts;
    for (const p of positions) {
      const word = p >>> 5;
      const bit = 1 << (p & 31);
      for (const b of common) if (b[word] & bit) counts[p]++;
    }
    return positions;
  }

  private smallestSize(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const [size, n] of this.sizeCounts) if (n > 0 && size < min) min = size;
    return min;
  }

  /** The first existing entry of which `entry` would be a near-duplicate (Jaccard > 0.8), else null. */
  duplicateOf(entry: Pick<StepRecord, "task" | "reflection">): MemoryEntry | null {
    const w = memoryWords(entry);
    if (w.size === 0) return null;
    // A duplicate shares more than 0.8·|w| words; with at most 0.8·|w| common ones it shares a rare one too.
    const { rare, common } = this.split(w);
    const positions = common.length > 0 && common.length <= DEDUP_THRESHOLD * w.size ? this.overlapWithBits(rare, common) : this.overlap(w);
    const counts = this.counts;
    let found = -1;
    for (const p of positions) {
      const n = counts[p];
      counts[p] = 0;
      if (n / (w.size + this.sizes[p] - n) > DEDUP_THRESHOLD && (found === -1 || p < found)) found = p;
    }
    return found === -1 ? null : this.slots[found]!;
  }

  /** Add an entry unless it is a near-duplicate; drop the oldest beyond capacity. */
  add(entry: MemoryEntry): LongTermAddResult {
    if (this.byId.has(entry.id) || this.duplicateOf(entry) !== null) return { added: false, evicted: [] };
    return this.insert(entry);
  }

  /** Add an entry already admitted elsewhere (e.g. by another process), without the duplicate check; drop the oldest beyond capacity. */
  insert(entry: MemoryEntry): LongTermAddResult {
    if (this.byId.has(entry.id)) return { added: false, evicted: [] };
    this.place({ ...entry });
    this.live++;
    return { added: true, evicted: this.trim() };
  }

  /** Put an entry at the next position and index its words. */
  private place(entry: MemoryEntry): void {
    const w = memoryWords(entry);
    const position = this.slots.length;
    this.slots.push(entry);
    if (position >= this.sizes.length) {
      const sizes = new Int32Array(this.sizes.length * 2);
      sizes.set(this.sizes);
      this.sizes = sizes;
      this.counts = new Uint16Array(this.sizes.length);
      for (const [word, b] of this.bits) {
        const grown = new Uint32Array(this.sizes.length >>> 5);
        grown.set(b);
        this.bits.set(word, grown);
      }
    }
    this.sizes[position] = w.size;
    this.sizeCounts.set(w.size, (this.sizeCounts.get(w.size) ?? 0) + 1);
    this.byId.set(entry.id, position);
    for (const word of w) {
      let list = this.postings.get(word);
      if (!list) this.postings.set(word, (list = new Postings()));
      list.push(position);
      const b = this.bits.get(word);
      if (b) b[position >>> 5] |= 1 << (position & 31);
      else if (list.n >= 256 && list.n * 64 >= this.slots.length) {
        const fresh = new Uint32Array(this.sizes.length >>> 5);
        for (let i = 0; i < list.n; i++) fresh[list.ids[i] >>> 5] |= 1 << (list.ids[i] & 31);
        this.bits.set(word, fresh);
      }
    }
  }

  /** Change the capacity; returns the entries dropped, oldest first. */
  setCapacity(capacity: number): MemoryEntry[] {
    this.capacityValue = LongTermMemory.checkCapacity(capacity);
    return this.trim();
  }

  remove(id: string): boolean {
    const position = this.byId.get(id);
    if (position === undefined) return false;
    this.drop(position);
    this.renumberIfSparse();
    return true;
  }

  private drop(position: number): MemoryEntry {
    const entry = this.slots[position]!;
    this.slots[position] = undefined;
    this.sizeCounts.set(this.sizes[position], this.sizeCounts.get(this.sizes[position])! - 1);
    this.sizes[position] = 0;
    this.live--;
    this.byId.delete(entry.id);
    while (this.first < this.slots.length && this.slots[this.first] === undefined) this.first++;
    return entry;
  }

  private trim(): MemoryEntry[] {
    const evicted: MemoryEntry[] = [];
    while (this.live > this.capacityValue) evicted.push(this.drop(this.first));
    this.renumberIfSparse();
    return evicted;
  }

  /** Renumber the live entries 0… and rebuild the postings once holes outnumber them. */
  private renumberIfSparse(): void {
    if (this.slots.length - this.live <= this.live + 1024) return;
    const kept = this.slots.filter((e): e is MemoryEntry => e !== undefined);
    this.slots = [];
    this.sizes.fill(0);
    this.first = 0;
    this.byId.clear();
    this.postings = new Map();
    this.bits = new Map();
    this.sizeCounts = new Map();
    for (const entry of kept) this.place(entry);
  }

  /** The top `limit` entries for a task by the reference's relevance; ties and fill oldest first. */
  search(task: string, limit = DEFAULT_RETRIEVAL_LIMIT): MemoryEntry[] {
    return this.rank(words(task), countOf(limit), new Set()).map((r) => r.entry);
  }

  /**
   * Entries sharing a word with the query by relevance (ties oldest first),
   * then zero-relevance entries oldest first, up to `limit`; steps whose key
   * is in `skipKeys` are left out.
   */
  rank(query: ReadonlySet<string>, limit: number, skipKeys: ReadonlySet<string>): { entry: MemoryEntry; score: number }[] {
    if (limit <= 0) return [];
    const { rare, common } = this.split(query);
    if (common.length > 0) {
      const top = this.top(query.size, this.overlapWithBits(rare, common), limit, skipKeys);
      // An entry sharing no rare word shares at most the common ones: decided when that cannot reach the last score kept.
      if (top.length === limit && common.length / Math.min(query.size, this.smallestSize()) < top[limit - 1].score) {
        return top.map((t) => ({ entry: this.slots[t.position]!, score: t.score }));
      }
    }
    const positions = query.size > 0 ? this.overlap(query) : [];
    const top = this.top(query.size, positions, limit, skipKeys);
    const out = top.map((t) => ({ entry: this.slots[t.position]!, score: t.score }));
    // Fewer than `limit` matched, so every matching entry is in `top`: fill with the rest, oldest first.
    if (out.length < limit) {
      const taken = new Set(top.map((t) => t.position));
      for (let p = this.first; p < this.slots.length && out.length < limit; p++) {
        const entry = this.slots[p];
        if (!entry || taken.has(p) || (skipKeys.size > 0 && skipKeys.has(stepKey(entry)))) continue;
        out.push({ entry, score: 0 });
      }
    }
    return out;
  }

  /** The best `limit` of `positions` by score (descending), then position (ascending); resets their counters. */
  private top(q: number, positions: number[], limit: number, skipKeys: ReadonlySet<string>): { position: number; score: number }[] {
    const counts = this.counts;
    const sizes = this.sizes;
    const top: { position: number; score: number }[] = [];
    let floor = -1;
    for (const p of positions) {
      const n = counts[p];
      counts[p] = 0;
      const size = sizes[p];
      const score = n / (q < size ? q : size);
      if (score < floor) continue;
      if (top.length === limit) {
        const last = top[limit - 1];
        if (score === last.score && p > last.position) continue;
      }
      if (skipKeys.size > 0 && skipKeys.has(stepKey(this.slots[p]!))) continue;
      let i = top.length;
      while (i > 0 && (top[i - 1].score < score || (top[i - 1].score === score && top[i - 1].position > p))) i--;
      top.splice(i, 0, { position: p, score });
      if (top.length > limit) top.pop();
      if (top.length === limit) floor = top[limit - 1].score;
    }
    return top;
  }
}

/**
 * The reference's `get_relevant_memories`: short-term entries, then long-term
 * entries (oldest first), ranked by relevance with ties in that order, top
 * `limit`. A step in both is scored once, as its short-term copy.
 */
export function getRelevantMemories(
  task: string,
  shortTerm: readonly StepRecord[],
  longTerm: LongTermMemory | readonly MemoryEntry[],
  limit = DEFAULT_RETRIEVAL_LIMIT,
): StepRecord[] {
  const n = countOf(limit);
  if (n === 0) return [];
  if (Array.isArray(longTerm)) return scanRelevantMemories(task, uniqueSteps([...shortTerm, ...longTerm]), n);
  const q = words(task);
  const shortKeys = new Set(shortTerm.map(stepKey));
  const short = shortTerm.map((memory, position) => ({ memory, position, score: relevance(q, memory) }));
  const long = (longTerm as LongTermMemory).rank(q, n, shortKeys);
  // Merge: higher score first; on ties short-term (earlier in the combined list) first.
  const merged = [
    ...short.map((s) => ({ memory: s.memory, order: s.position, score: s.score })),
    ...long.map((l, i) => ({ memory: l.entry as StepRecord, order: shortTerm.length + i, score: l.score })),
  ];
  return merged
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, n)
    .map((m) => m.memory);
}

function uniqueSteps(list: readonly StepRecord[]): StepRecord[] {
  const seen = new Set<string>();
  return list.filter((s) => {
    const key = stepKey(s);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
