/**
 * One run per thread at a time, across processes. A checkpointer keeps a
 * thread's state but does not serialise its runs: two runs on one thread at
 * once write interleaved checkpoints, and the thread can end with one run's
 * request beside the other's result. A run on a named thread therefore holds
 * the thread for its whole life:
 *
 * - in a process, a per-thread queue (every kind of persistence);
 * - across processes on PostgreSQL, also a session advisory lock on a
 *   connection of its own (from a small pool kept for these locks), keyed by a
 *   hash of the thread id in this package's namespace. PostgreSQL releases a
 *   session lock when its connection closes, so a process that dies (even
 *   `kill -9`) frees its threads as soon as the server sees the connection go.
 *
 * A run that finds its thread held follows a multitask strategy, named as the
 * LangGraph platform names them: "reject" (a ThreadBusyError at once) or
 * "enqueue" (wait for the thread, within a deadline and behind a bounded
 * number of others). The default is "enqueue": the platform's documented
 * default for runs, and what a caller of a function expects (the call takes
 * longer, it does not fail because of someone else's run).
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { ConfigurationError, ThreadBusyError, ThreadLockLostError } from "../errors.js";

/** How a run waits for its thread. */
export interface MultitaskOptions {
  /** What a run does when another run holds its thread: "enqueue" (default), wait its turn (bounded); "reject", a ThreadBusyError at once. */
  strategy?: "reject" | "enqueue";
  /** "enqueue": the longest wait for the thread, in milliseconds (default 60000); then a ThreadBusyError. */
  maxWaitMs?: number;
  /** "enqueue": the most runs waiting for one thread in this process (default 16); one more is refused. */
  maxQueued?: number;
  /** Called once when the run has to wait for the thread ("enqueue"), before it waits. */
  onQueued?: () => void;
}

/** What a run does when another run holds its thread: refuse at once, or wait its turn (bounded). */
export type MultitaskStrategy = NonNullable<MultitaskOptions["strategy"]>;

/** Options of ThreadLocks.acquire and run: the strategy, its bounds, and the caller's signal (it stops the wait and, through the lease's signal, the run). */
type ThreadRunOptions = MultitaskOptions & { signal?: AbortSignal };

/** A thread held by one run until `release()`. */
export interface ThreadLease {
  /**
   * Pass it to the run: aborted when the caller's signal aborts or when the lock is lost (its database
   * connection died); then its reason is a ThreadLockLostError and the run's result must not be reported.
   */
  readonly signal: AbortSignal;
  /** Whether the run waited for another run to leave the thread ("enqueue"). */
  readonly queued: boolean;
  /** Frees the thread for the next run (idempotent; never throws). */
  release(): Promise<void>;
}

/** One run per thread at a time: `openPersistence()` gives one as `persistence.threads`. */
export interface ThreadLocks {
  /** "postgres": across every process on the database; "memory": within this process. */
  readonly kind: "postgres" | "memory";
  /** Hold the thread; a ThreadBusyError when the strategy refuses, the signal's reason when it aborts first. */
  acquire(threadId: string, options?: MultitaskOptions & { signal?: AbortSignal }): Promise<ThreadLease>;
  /**
   * Run `fn` holding the thread, released on every path. `fn` gets the lease's signal: pass it to the graph
   * (`graph.invoke(input, { configurable: { thread_id }, signal })`). When the lock was lost during the run,
   * this throws a ThreadLockLostError whatever `fn` returned.
   */
  run<T>(threadId: string, fn: (signal: AbortSignal) => Promise<T>, options?: MultitaskOptions & { signal?: AbortSignal }): Promise<T>;
}

/** What a run does when its thread is held, unless told otherwise. */
export const MULTITASK_DEFAULTS = { strategy: "enqueue", maxWaitMs: 60_000, maxQueued: 16 } as const satisfies Required<Omit<MultitaskOptions, "onQueued">>;
/** setTimeout's longest delay. */
const MAX_WAIT_MS = 2_147_483_647;
const MAX_QUEUED = 10_000;
const STRATEGIES: readonly MultitaskStrategy[] = ["reject", "enqueue"];

interface Bounds {
  strategy: MultitaskStrategy;
  maxQueued: number;
  /** Date.now() after which an enqueued run stops waiting. */
  deadline: number;
  /** Set when the run first waits (and onQueued called then). */
  queued: boolean;
  onQueued?: () => void;
}

function markQueued(bounds: Bounds): void {
  if (bounds.queued) return;
  bounds.queued = true;
  bounds.onQueued?.();
}

function boundsOf(threadId: unknown, options: ThreadRunOptions): Bounds {
  const problems: string[] = [];
  if (typeof threadId !== "string" || threadId.length === 0) problems.push("The thread id must be a non-empty string.");
  const strategy: MultitaskStrategy = options.strategy ?? MULTITASK_DEFAULTS.strategy;
  if (!STRATEGIES.includes(strategy)) problems.push(`strategy must be one of ${STRATEGIES.join(", ")}; got ${JSON.stringify(strategy)}.`);
  const maxWaitMs = options.maxWaitMs ?? MULTITASK_DEFAULTS.maxWaitMs;
  if (!Number.isInteger(maxWaitMs) || maxWaitMs < 0 || maxWaitMs > MAX_WAIT_MS) {
    problems.push(`maxWaitMs must be a whole number of milliseconds from 0 to ${MAX_WAIT_MS}; got ${JSON.stringify(maxWaitMs)}.`);
  }
  const maxQueued = options.maxQueued ?? MULTITASK_DEFAULTS.maxQueued;
  if (!Number.isInteger(maxQueued) || maxQueued < 0 || maxQueued > MAX_QUEUED) {
    problems.push(`maxQueued must be a whole number from 0 to ${MAX_QUEUED}; got ${JSON.stringify(maxQueued)}.`);
  }
  if (problems.length > 0) throw new ConfigurationError(problems);
  return { strategy, maxQueued, deadline: Date.now() + maxWaitMs, queued: false, onQueued: options.onQueued };
}

// ---------------------------------------------------------------------------
// In a process: a queue per thread, present only while the thread is held.

interface Waiter {
  grant(): void;
}

/** Per-thread FIFO queues; a thread's entry exists only while a run holds it, so the map is empty when idle. */
class ThreadQueues {
  private readonly held = new Map<string, Waiter[]>();

  /** Resolves with the release once the thread is this caller's. */
  take(threadId: string, bounds: Bounds, signal: AbortSignal | undefined): Promise<() => void> {
    signal?.throwIfAborted();
    const release = this.releaser(threadId);
    const waiters = this.held.get(threadId);
    if (waiters === undefined) {
      this.held.set(threadId, []);
      return Promise.resolve(release);
    }
    if (bounds.strategy === "reject") return Promise.reject(new ThreadBusyError(threadId, "running", "another run is in progress on it."));
    if (waiters.length >= bounds.maxQueued) {
      return Promise.reject(new ThreadBusyError(threadId, "queue-full", `${waiters.length} run(s) already wait for it (maxQueued ${bounds.maxQueued}).`));
    }
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const at = waiters.indexOf(waiter);
        if (at >= 0) waiters.splice(at, 1);
      };
      const onAbort = () => {
        leave();
        reject(signal!.reason);
      };
      const timer = setTimeout(
        () => {
          leave();
          reject(new ThreadBusyError(threadId, "wait-timeout", "another run held it for the whole wait (maxWaitMs)."));
        },
        Math.max(0, bounds.deadline - Date.now()),
      );
      const waiter: Waiter = {
        grant: () => {
          leave();
          resolve(release);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      waiters.push(waiter);
      markQueued(bounds);
    });
  }

  /** The holder's release: hands the thread to the first waiter, or forgets the thread when none waits. */
  private releaser(threadId: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const waiters = this.held.get(threadId);
      const next = waiters?.shift();
      if (next) next.grant();
      else this.held.delete(threadId);
    };
  }

  /** How many threads are held or waited for (bounded by the runs in flight; 0 when idle). */
  get size(): number {
    return this.held.size;
  }
}

/** A lease's signal: the caller's abort or the lock's loss, with its listener removed on release. */
function leaseSignal(signal: AbortSignal | undefined, lost?: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const sources = [signal, lost].filter((s): s is AbortSignal => s !== undefined);
  const onAbort = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const source of sources) {
    if (source.aborted) controller.abort(source.reason);
    else source.addEventListener("abort", onAbort, { once: true });
  }
  return { signal: controller.signal, dispose: () => sources.forEach((source) => source.removeEventListener("abort", onAbort)) };
}

async function runHolding<T>(locks: ThreadLocks, threadId: string, fn: (signal: AbortSignal) => Promise<T>, options?: ThreadRunOptions): Promise<T> {
  const lease = await locks.acquire(threadId, options);
  try {
    return checkedLease(lease, await fn(lease.signal));
  } catch (error) {
    throw checkedLease(lease, error);
  } finally {
    await lease.release();
  }
}

/**
 * What a run produced (a value, or the error it threw), unless the lease's lock was lost during it: then the
 * lease's ThreadLockLostError, since another run may have taken the thread and the result is not surely the thread's.
 */
export function checkedLease<V>(lease: ThreadLease | undefined, produced: V): V {
  const reason = lease?.signal.aborted ? lease.signal.reason : undefined;
  if (ThreadLockLostError.isInstance(reason)) throw reason;
  return produced;
}

/** Thread locks within one process: a per-thread queue (state kept in memory lives in one process anyway). */
export class MemoryThreadLocks implements ThreadLocks {
  readonly kind = "memory" as const;
  private readonly queues = new ThreadQueues();

  async acquire(threadId: string, options: ThreadRunOptions = {}): Promise<ThreadLease> {
    const bounds = boundsOf(threadId, options);
    const release = await this.queues.take(threadId, bounds, options.signal);
    const { signal, dispose } = leaseSignal(options.signal);
    return {
      signal,
      queued: bounds.queued,
      release: async () => {
        dispose();
        release();
      },
    };
  }

  run<T>(threadId: string, fn: (signal: AbortSignal) => Promise<T>, options?: ThreadRunOptions): Promise<T> {
    return runHolding(this, threadId, fn, options);
  }

  /** Threads held or waited for in this process (0 when idle). */
  get size(): number {
    return this.queues.size;
  }
}

// ---------------------------------------------------------------------------
// Across processes: a session advisory lock per thread, over the in-process queue.

/** The advisory lock key of a thread: 64 bits of SHA-256 over the package's namespace and the thread id. */
export function threadLockKey(threadId: string): string {
  const digest = createHash("sha256").update("langgraph-trustworthy-output/thread\u0000").update(threadId, "utf8").digest();
  return digest.readBigInt64BE(0).toString();
}

/**
 * Thread locks across processes: the in-process queue first (a session lock is re-entrant on its own
 * connection, and one waiter per thread per process is enough to ask the database), then
 * `pg_try_advisory_lock` on a connection held for the run. A run that finds another process holding the
 * thread waits in PostgreSQL's own lock queue (`pg_advisory_lock` under `lock_timeout`) on that connection:
 * handed the lock the moment the holder's session lets go, in arrival order, with one connection per
 * waiting thread per process.
 */
export class PostgresThreadLocks implements ThreadLocks {
  readonly kind = "postgres" as const;
  private readonly queues = new ThreadQueues();

  constructor(private readonly pool: pg.Pool) {}

  async acquire(threadId: string, options: ThreadRunOptions = {}): Promise<ThreadLease> {
    const bounds = boundsOf(threadId, options);
    const releaseLocal = await this.queues.take(threadId, bounds, options.signal);
    try {
      return await this.lock(threadId, bounds, options.signal, releaseLocal);
    } catch (error) {
      releaseLocal();
      throw error;
    }
  }

  run<T>(threadId: string, fn: (signal: AbortSignal) => Promise<T>, options?: ThreadRunOptions): Promise<T> {
    return runHolding(this, threadId, fn, options);
  }

  /** Threads held or waited for in this process (0 when idle). */
  get size(): number {
    return this.queues.size;
  }

  private async lock(threadId: string, bounds: Bounds, signal: AbortSignal | undefined, releaseLocal: () => void): Promise<ThreadLease> {
    const key = threadLockKey(threadId);
    signal?.throwIfAborted();
    const client = await this.pool.connect();
    // Until the lease listens, a connection error is the pending query's to report (and must not crash the process).
    const quiet = () => undefined;
    client.on("error", quiet);
    try {
      const { rows } = await client.query<{ ok: boolean; pid: number }>("SELECT pg_try_advisory_lock($1) AS ok, pg_backend_pid() AS pid", [key]);
      if (rows[0]?.ok !== true) {
        if (bounds.strategy === "reject") throw new ThreadBusyError(threadId, "running", "a run in another process is in progress on it.");
        const left = bounds.deadline - Date.now();
        if (left <= 0) throw new ThreadBusyError(threadId, "wait-timeout", "a run in another process held it for the whole wait (maxWaitMs).");
        markQueued(bounds);
        await this.wait(client, rows[0]!.pid, key, left, threadId, signal);
      }
    } catch (error) {
      client.off("error", quiet);
      // A refusal leaves the connection as it was; anything else (an abort mid-wait included) closes it, and with it any lock it got.
      client.release(ThreadBusyError.isInstance(error) && error.reason === "running" ? undefined : true);
      throw error;
    }
    client.off("error", quiet);
    return this.lease(threadId, key, client, bounds, signal, releaseLocal);
  }

  /**
   * Wait in PostgreSQL's own queue for the lock (`pg_advisory_lock`): handed over the moment its holder's
   * session lets go, in arrival order across processes; bounded by `lock_timeout`. An abort cancels the wait.
   */
  private async wait(client: pg.PoolClient, pid: number, key: string, ms: number, threadId: string, signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    await client.query(`SET lock_timeout = ${Math.max(1, Math.ceil(ms))}`);
    const waiting = client.query("SELECT pg_advisory_lock($1)", [key]);
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          reject(signal!.reason);
          // Best effort: the caller closes the connection anyway, which ends the session and any lock it got.
          this.pool.query("SELECT pg_cancel_backend($1)", [pid]).catch(() => undefined);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        waiting.then(
          () => resolve(),
          (error: unknown) => reject(error),
        );
        void waiting.catch(() => undefined).finally(() => signal?.removeEventListener("abort", onAbort));
      });
    } catch (error) {
      if ((error as { code?: unknown })?.code === "55P03") {
        throw new ThreadBusyError(threadId, "wait-timeout", "a run in another process held it for the whole wait (maxWaitMs).");
      }
      throw error;
    }
    await client.query("RESET lock_timeout");
  }

  private lease(threadId: string, key: string, client: pg.PoolClient, bounds: Bounds, signal: AbortSignal | undefined, releaseLocal: () => void): ThreadLease {
    const lost = new AbortController();
    // A held connection that errors or ends has lost its session, and with it the lock.
    const onLost = (error?: unknown) => {
      if (!lost.signal.aborted) lost.abort(new ThreadLockLostError(threadId, { cause: error }));
    };
    const onEnd = () => onLost();
    client.on("error", onLost);
    client.on("end", onEnd);
    const combined = leaseSignal(signal, lost.signal);
    let released: Promise<void> | undefined;
    const release = async () => {
      combined.dispose();
      try {
        const { rows } = lost.signal.aborted ? { rows: [] } : await client.query<{ ok: boolean }>("SELECT pg_advisory_unlock($1) AS ok", [key]);
        client.off("error", onLost);
        client.off("end", onEnd);
        // A connection whose unlock did not answer true is closed rather than pooled: closing ends the session's locks.
        client.release(rows[0]?.ok === true ? undefined : true);
      } catch (error) {
        client.off("error", onLost);
        client.off("end", onEnd);
        client.release(error instanceof Error ? error : true);
      } finally {
        releaseLocal();
      }
    };
    return { signal: combined.signal, queued: bounds.queued, release: () => (released ??= release()) };
  }
}

// ---------------------------------------------------------------------------
// Which locks a checkpointer's runs take

const byCheckpointer = new WeakMap<object, ThreadLocks>();

/** Make `checkpointer`'s runs take `locks` (openPersistence registers its own). */
export function registerThreadLocks(checkpointer: object, locks: ThreadLocks): void {
  byCheckpointer.set(checkpointer, locks);
}

/**
 * The thread locks of a checkpointer: those of the persistence that made it (across processes on
 * PostgreSQL), else an in-process queue of its own, so that two runs through the same checkpointer
 * on one thread never overlap in this process.
 */
export function threadLocksFor(checkpointer: object): ThreadLocks {
  let locks = byCheckpointer.get(checkpointer);
  if (locks === undefined) {
    locks = new MemoryThreadLocks();
    byCheckpointer.set(checkpointer, locks);
  }
  return locks;
}
