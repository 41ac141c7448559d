/**
 * Long-term memory kept in a LangGraph Store, so it survives threads, runs,
 * restarts and is shared by every process using the same store (e.g. the
 * Postgres store). Each entry is one store item; an in-process word index
 * (LongTermMemory) answers queries without scanning. A version token in the
 * store tells a process when another one has changed the memory, and the
 * index is then rebuilt from the store.
 */
import type { BaseStore } from "@langchain/langgraph";
import { randomUUID } from "node:crypto";
import { LongTermMemory, memoryId, type MemoryEntry, type StepRecord } from "./memory.js";

const PAGE = 1_000;

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
  memory: LongTermMemory;
  version: string | null;
  /** Serialises this process's operations on one namespace. */
  queue: Promise<unknown>;
}

const caches = new WeakMap<BaseStore, Map<string, Cached>>();
let lastSequence = 0;

/** Ids that sort in insertion order across processes: microseconds since the epoch, kept strictly increasing. */
function nextId(): string {
  lastSequence = Math.max(lastSequence + 1, Date.now() * 1000);
  return memoryId(lastSequence);
}

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
    this.metaNs = [...namespace, "meta"];
    let perStore = caches.get(store);
    if (!perStore) caches.set(store, (perStore = new Map()));
    const key = namespace.join("\u0000");
    let cached = perStore.get(key);
    if (!cached) perStore.set(key, (cached = { memory: new LongTermMemory({ capacity }), version: null, queue: Promise.resolve() }));
    this.cached = cached;
  }

  /** Run `fn` after this namespace's earlier operations in this process. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.cached.queue.then(fn, fn);
    this.cached.queue = run.catch(() => undefined);
    return run;
  }

  /** Bring the index up to date with the store; rebuild it when another process changed the memory. */
  private async sync(): Promise<LongTermMemory> {
    const meta = await this.store.get(this.metaNs, "version");
    const version = (meta?.value?.token as string | undefined) ?? null;
    if (version !== this.cached.version || this.cached.memory.capacity !== this.capacity) {
      const memory = new LongTermMemory({ capacity: Number.POSITIVE_INFINITY });
      const items: MemoryEntry[] = [];
      for (let offset = 0; ; offset += PAGE) {
        const page = await this.store.search(this.entriesNs, { limit: PAGE, offset });
        for (const item of page) items.push(item.value as MemoryEntry);
        if (page.length < PAGE) break;
      }
      items.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      for (const entry of items) memory.add(entry);
      const evicted = memory.setCapacity(this.capacity);
      await Promise.all(evicted.map((e) => this.store.delete(this.entriesNs, e.id)));
      this.cached.memory = memory;
      this.cached.version = version;
    }
    return this.cached.memory;
  }

  /** Add a step: skipped as a near-duplicate, else stored, evicting the oldest beyond capacity. */
  add(step: StepRecord): Promise<{ added: boolean; evicted: number }> {
    return this.serial(async () => {
      const memory = await this.sync();
      const entry: MemoryEntry = {
        task: step.task,
        response: step.response,
        evaluation: step.evaluation,
        reflection: step.reflection,
        score: step.score,
        iteration: step.iteration,
        id: nextId(),
        createdAt: Date.now(),
      };
      const result = memory.add(entry);
      if (!result.added) return { added: false, evicted: 0 };
      // The entry is written before the version changes, so a reader that sees the new version finds it.
      await this.store.put(this.entriesNs, entry.id, { ...entry }, false);
      await Promise.all(result.evicted.map((e) => this.store.delete(this.entriesNs, e.id)));
      const token = randomUUID();
      await this.store.put(this.metaNs, "version", { token }, false);
      this.cached.version = token;
      return { added: true, evicted: result.evicted.length };
    });
  }

  /** The most relevant long-term entries for a task (word overlap with the entry's task). */
  search(task: string, limit: number): Promise<MemoryEntry[]> {
    return this.serial(async () => (await this.sync()).search(task, limit));
  }

  /** The current long-term index (synchronised with the store). */
  index(): Promise<LongTermMemory> {
    return this.serial(() => this.sync());
  }

  /** Every entry, oldest first. */
  async entries(): Promise<MemoryEntry[]> {
    return (await this.index()).entries();
  }
}
