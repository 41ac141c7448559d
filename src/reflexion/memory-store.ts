/**
 * Long-term memory kept in a LangGraph Store, so it survives threads, runs and
 * restarts and is shared by every process using the same store (e.g. the
 * Postgres store). Each entry is one store item; each process keeps a
 * LongTermMemory index of them and brings it up to date incrementally:
 *
 * - every process (a "writer": one per store object and namespace) numbers the entries it writes 1, 2, 3… under
 *   keys `<writer>-<n>`, and after each entry records its count in one meta
 *   item of its own (no two processes ever write the same meta item);
 * - before each read, a process reads the known writers' counts by key (one
 *   batch of lookups; the writers are listed, to notice new ones, at most once
 *   a second) and fetches only the entries numbered above what it has already
 *   seen. Nothing is rebuilt when another process writes (only
 *   when the store itself was cleared: a writer's count went missing).
 *
 * Capacity is applied by every process to its own index (oldest first, in the
 * order the entries reached it) and by the writer to the store. Two processes
 * adding near-duplicates at the same moment may both keep theirs: dedup sees
 * what was written before the add.
 */
import type { BaseStore } from "@langchain/langgraph";
import { randomUUID } from "node:crypto";
import { LongTermMemory, type MemoryEntry, type StepRecord } from "./memory.js";

const PAGE = 10_000;
/** How often the writers are listed to notice new ones; in between, the known writers' counts are read by key. */
const DISCOVERY_MS = 1_000;

/**
 * A store namespace label for any string, reversibly: letters, digits and "-"
 * stay as they are, every other character becomes "~<hex code>~". Labels may
 * not contain "." or ":", and the Postgres store matches namespace prefixes
 * with SQL LIKE, where "%" and "_" are wildcards: with neither in a label,
 * "my_agent" can never read "my-agent"'s memories.
 */
export function namespaceLabel(value: string): string {
  const label = value.replace(/[^A-Za-z0-9-]/gu, (c) => `~${c.codePointAt(0)!.toString(16)}~`);
  return label.length > 0 ? label : "~~";
}

/** The store namespace of one owner's memories of one agent. */
export function memoryNamespace(owner: string, agentName: string): string[] {
  return ["reflexion", namespaceLabel(owner), namespaceLabel(agentName)];
}

interface Cached {
  /** This cache's writer name (one per store object and namespace in a process): its entries are numbered under it. */
  writer: string;
  memory: LongTermMemory;
  /** Per writer: how many of its entries this process has seen. */
  seen: Map<string, number>;
  /** How many entries this process has written to this namespace. */
  written: number;
  loaded: boolean;
  /** When the writers were last listed (ms since the epoch). */
  listedAt: number;
  /** Serialises this process's operations on one namespace. */
  queue: Promise<unknown>;
}

const caches = new WeakMap<BaseStore, Map<string, Cached>>();

const entryKey = (writer: string, n: number) => `${writer}-${n}`;

export class StoreMemory {
  private readonly entriesNs: string[];
  private readonly metaNs: string[];
  private readonly cached: Cached;

  constructor(
    private readonly store: BaseStore,
    namespace: string[],
    private readonly capacity: number,
  ) {
    this.entriesNs = [...namespace, "entries"];
    this.metaNs = [...namespace, "writers"];
    let perStore = caches.get(store);
    if (!perStore) caches.set(store, (perStore = new Map()));
    const key = namespace.join("\u0000");
    let cached = perStore.get(key);
    if (!cached) {
      cached = {
        writer: randomUUID().replace(/-/g, ""),
        memory: new LongTermMemory({ capacity }),
        seen: new Map(),
        written: 0,
        loaded: false,
        listedAt: 0,
        queue: Promise.resolve(),
      };
      perStore.set(key, cached);
    }
    this.cached = cached;
  }

  /** Run `fn` after this namespace's earlier operations in this process. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.cached.queue.then(fn, fn);
    this.cached.queue = run.catch(() => undefined);
    return run;
  }

  private async writerCounts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const c = this.cached;
    const now = Date.now();
    if (c.loaded && now - c.listedAt < DISCOVERY_MS) {
      const writers = [...c.seen.keys()];
      // One lookup per known writer, made together (the server's store batches them into one call).
      const items = await Promise.all(writers.map((key) => this.store.get(this.metaNs, key)));
      items.forEach((item, i) => counts.set(writers[i], Number((item?.value as { count?: unknown } | undefined)?.count) || 0));
      return counts;
    }
    c.listedAt = now;
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.store.search(this.metaNs, { limit: PAGE, offset });
      for (const item of page) counts.set(item.key, Number((item.value as { count?: unknown }).count) || 0);
      if (page.length < PAGE) break;
    }
    return counts;
  }

  /** Index an entry that is in the store: its writer already checked it for duplicates. */
  private index(entry: MemoryEntry): MemoryEntry[] {
    return this.cached.memory.insert(entry).evicted;
  }

  /** Bring this process's index up to date with the store: only what is new since the last call. */
  private async sync(): Promise<LongTermMemory> {
    const c = this.cached;
    if (c.memory.capacity !== this.capacity) c.memory.setCapacity(this.capacity);
    const counts = await this.writerCounts();
    // A writer gone or counting backwards means the store was cleared or replaced (e.g. truncated): start over.
    for (const [writer, seen] of c.seen) {
      if (seen > 0 && (counts.get(writer) ?? 0) < seen) {
        c.memory = new LongTermMemory({ capacity: this.capacity });
        c.seen.clear();
        c.loaded = false;
        break;
      }
    }
    if (!c.loaded) {
      // First use in this process: everything there is, oldest first.
      const items: MemoryEntry[] = [];
      for (let offset = 0; ; offset += PAGE) {
        const page = await this.store.search(this.entriesNs, { limit: PAGE, offset });
        for (const item of page) items.push(item.value as MemoryEntry);
        if (page.length < PAGE) break;
      }
      items.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      for (const entry of items) this.index(entry);
      for (const [writer, count] of counts) c.seen.set(writer, count);
      c.loaded = true;
      return c.memory;
    }
    const fetches: Promise<MemoryEntry | null>[] = [];
    for (const [writer, count] of counts) {
      const seen = c.seen.get(writer) ?? 0;
      for (let n = seen + 1; n <= count; n++) {
        fetches.push(this.store.get(this.entriesNs, entryKey(writer, n)).then((item) => (item ? (item.value as MemoryEntry) : null)));
      }
      if (count > seen) c.seen.set(writer, count);
    }
    // Evicted meanwhile (null) entries are skipped; the others are indexed in the order they were written.
    const fresh = (await Promise.all(fetches)).filter((e): e is MemoryEntry => e !== null && !c.memory.has(e.id));
    fresh.sort((a, b) => a.createdAt - b.createdAt);
    for (const entry of fresh) this.index(entry);
    return c.memory;
  }

  /** Add a step: skipped as a near-duplicate, else stored, dropping the oldest beyond capacity. */
  add(step: StepRecord): Promise<{ added: boolean; evicted: number }> {
    return this.serial(async () => {
      const memory = await this.sync();
      if (memory.duplicateOf(step) !== null) return { added: false, evicted: 0 };
      const c = this.cached;
      const n = c.written + 1;
      const entry: MemoryEntry = {
        task: step.task,
        response: step.response,
        evaluation: step.evaluation,
        reflection: step.reflection,
        score: step.score,
        iteration: step.iteration,
        id: entryKey(c.writer, n),
        createdAt: Date.now(),
      };
      // The entry is written before the count that announces it, so a reader that sees the count finds it.
      await this.store.put(this.entriesNs, entry.id, { ...entry }, false);
      await this.store.put(this.metaNs, c.writer, { count: n }, false);
      c.written = n;
      c.seen.set(c.writer, n);
      const evicted = this.index(entry);
      await Promise.all(evicted.map((e) => this.store.delete(this.entriesNs, e.id)));
      return { added: true, evicted: evicted.length };
    });
  }

  /** The most relevant long-term entries for a task (the reference's relevance). */
  search(task: string, limit: number): Promise<MemoryEntry[]> {
    return this.serial(async () => (await this.sync()).search(task, limit));
  }

  /** The long-term index, up to date with the store. */
  current(): Promise<LongTermMemory> {
    return this.serial(() => this.sync());
  }

  /** Every entry, oldest first. */
  async entries(): Promise<MemoryEntry[]> {
    return (await this.current()).entries();
  }
}
