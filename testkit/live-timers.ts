/**
 * Counts the process's live timers and sockets, for the tests and the soak benchmark that check a finished
 * request keeps none.
 *
 * `process.getActiveResourcesInfo()` lists only the timers that keep the process alive: an unref'd timer
 * (the model client's deadline timer is one) is missing from it, live or not. So the tracker also watches
 * every timer through an async hook, ref'd or not, from its creation to its clearing or firing, with the
 * stack that created it; and every TCP handle, so a caller can wait until the sockets a phase opened are
 * closed (a keep-alive socket holds timers of its own, on both ends, for as long as it stays open).
 */
import { createHook } from "node:async_hooks";

/** Timers that keep the process alive (ref'd), as `process.getActiveResourcesInfo()` lists them. */
export function refTimers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === "Timeout").length;
}

/** The other resources keeping the process alive, by kind (sockets, servers, pipes…): `process.getActiveResourcesInfo()` without the timers. */
export function activeHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const resource of process.getActiveResourcesInfo()) if (resource !== "Timeout") counts[resource] = (counts[resource] ?? 0) + 1;
  return counts;
}

export interface LiveTimer {
  /** The stack that created it (its first lines are the hook's and Node's timer internals). */
  stack: string;
  /** Whether it keeps the process alive (and so is listed by `process.getActiveResourcesInfo()`). */
  refed: boolean;
}

export interface TimerTracker {
  /** The timers created since the tracker started (or `reset()`) that have neither fired nor been cleared. */
  liveTimers(): LiveTimer[];
  /** TCP handles (sockets, listening servers) created since then that are not closed yet. */
  openSockets(): number;
  /** Wait until every TCP handle counted by openSockets() is closed, and the hooks of what closed with them have run. */
  socketsClosed(): Promise<void>;
  /** Count from now on: what exists already is forgotten. */
  reset(): void;
  /** Disable the hook. */
  stop(): void;
}

/**
 * Start watching timers and TCP handles. While it runs every promise of the process passes through the hook
 * (Node enables its promise hooks for any async hook), which costs CPU: start it for a measurement, stop it after.
 */
export function trackTimers(): TimerTracker {
  const timers = new Map<number, { stack: string; timer: NodeJS.Timeout }>();
  const sockets = new Set<number>();
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type === "Timeout") {
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 40;
        timers.set(id, { stack: new Error().stack ?? "", timer: resource as NodeJS.Timeout });
        Error.stackTraceLimit = limit;
      } else if (type === "TCPWRAP" || type === "TCPSERVERWRAP") sockets.add(id);
    },
    destroy(id) {
      timers.delete(id);
      sockets.delete(id);
    },
  }).enable();
  return {
    liveTimers: () => [...timers.values()].map(({ stack, timer }) => ({ stack, refed: timer.hasRef() })),
    openSockets: () => sockets.size,
    async socketsClosed() {
      // A closed handle's destroy hook runs on a later turn of the event loop: wait for it, turn by turn.
      while (sockets.size > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setImmediate(resolve));
    },
    reset() {
      timers.clear();
      sockets.clear();
    },
    stop: () => void hook.disable(),
  };
}
