/**
 * One run per thread at a time, in a process: the per-thread queue's strategies (reject, enqueue), its bounds
 * (how many wait, how long), its release on every path (return, throw, abort), that it forgets a thread no run
 * holds, and generateValidated / streamValidated holding a named thread so that two runs on it never mix.
 */
import { MemorySaver } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { ConfigurationError, ThreadBusyError } from "../../src/errors.js";
import { defineSpec } from "../../src/specs/spec.js";
import { MemoryThreadLocks, threadLockKey } from "../../src/persistence/threads.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated } from "../../src/validation/stream.js";
import { ScriptedChatModel } from "../../testkit/scripted-model.js";

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("MemoryThreadLocks", () => {
  it("reject: a second run on a held thread is refused at once, runs nothing, and the thread is free after the first", async () => {
    const locks = new MemoryThreadLocks();
    const first = gate();
    const running = locks.run("t", () => first.opened);
    await tick();
    let ran = false;
    const refused = await locks.run("t", async () => void (ran = true), { strategy: "reject" }).catch((e: unknown) => e);
    expect(ThreadBusyError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ code: "THREAD_BUSY", threadId: "t", reason: "running" });
    expect(ran).toBe(false);
    // Another thread is not held by it.
    await expect(locks.run("u", async () => "other", { strategy: "reject" })).resolves.toBe("other");
    first.open();
    await running;
    await expect(locks.run("t", async () => "after", { strategy: "reject" })).resolves.toBe("after");
    expect(locks.size).toBe(0);
  });

  it("enqueue (the default): runs on one thread take turns in arrival order, never overlapping, and say they waited", async () => {
    const locks = new MemoryThreadLocks();
    const log: string[] = [];
    let inside = 0;
    let most = 0;
    const queuedCalls: string[] = [];
    const leases: boolean[] = [];
    const runs = ["a", "b", "c", "d"].map((name) =>
      locks.run(
        "t",
        async () => {
          most = Math.max(most, ++inside);
          log.push(`start ${name}`);
          await tick();
          await tick();
          log.push(`end ${name}`);
          inside--;
          return name;
        },
        { onQueued: () => queuedCalls.push(name) },
      ),
    );
    expect(await Promise.all(runs)).toEqual(["a", "b", "c", "d"]);
    expect(most).toBe(1);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c", "start d", "end d"]);
    expect(queuedCalls).toEqual(["b", "c", "d"]);
    for (const queued of [false, true]) {
      const holder = await locks.acquire("q");
      const waiting = locks.acquire("q");
      leases.push(holder.queued);
      await holder.release();
      const next = await waiting;
      leases.push(next.queued);
      await next.release();
      void queued;
    }
    expect(leases).toEqual([false, true, false, true]);
    expect(locks.size).toBe(0);
  });

  it("enqueue is bounded: one run more than maxQueued is refused, and a wait past maxWaitMs ends in a ThreadBusyError", async () => {
    const locks = new MemoryThreadLocks();
    const holder = await locks.acquire("t");
    const waiting = locks.acquire("t", { maxQueued: 1 });
    const full = await locks.acquire("t", { maxQueued: 1 }).catch((e: unknown) => e);
    expect(full).toMatchObject({ name: "ThreadBusyError", reason: "queue-full", threadId: "t" });
    const timedOut = await locks.acquire("t", { maxQueued: 5, maxWaitMs: 5 }).catch((e: unknown) => e);
    expect(timedOut).toMatchObject({ name: "ThreadBusyError", reason: "wait-timeout" });
    // maxQueued 0 is "reject when held".
    expect(await locks.acquire("t", { maxQueued: 0 }).catch((e: unknown) => e)).toMatchObject({ reason: "queue-full" });
    await holder.release();
    const next = await waiting;
    expect(next.queued).toBe(true);
    await next.release();
    await next.release(); // idempotent: it does not free the thread for someone else twice
    expect(locks.size).toBe(0);
  });

  it("a run that throws frees the thread for the next one, and its error is the caller's", async () => {
    const locks = new MemoryThreadLocks();
    const failing = locks.run("t", async () => {
      await tick();
      throw new Error("model down");
    });
    const next = locks.run("t", async () => "next");
    await expect(failing).rejects.toThrow("model down");
    await expect(next).resolves.toBe("next");
    expect(locks.size).toBe(0);
  });

  it("abort: a waiting run leaves the queue with the signal's reason; a running run's signal aborts and the thread is freed", async () => {
    const locks = new MemoryThreadLocks();
    const holder = await locks.acquire("t");
    const controller = new AbortController();
    const waiting = locks.acquire("t", { signal: controller.signal });
    controller.abort(new Error("caller left"));
    await expect(waiting).rejects.toThrow("caller left");
    // Its place is gone: releasing the holder frees the thread entirely.
    await holder.release();
    expect(locks.size).toBe(0);

    const running = new AbortController();
    const seen: unknown[] = [];
    const run = locks.run(
      "t",
      (signal) =>
        new Promise((_, reject) =>
          signal.addEventListener("abort", () => {
            seen.push(signal.reason);
            reject(signal.reason);
          }),
        ),
      { signal: running.signal },
    );
    await tick();
    running.abort(new Error("stop"));
    await expect(run).rejects.toThrow("stop");
    expect(seen).toHaveLength(1);
    expect(locks.size).toBe(0);
    // An already aborted signal never takes the thread.
    await expect(locks.acquire("t", { signal: AbortSignal.abort(new Error("gone")) })).rejects.toThrow("gone");
    expect(locks.size).toBe(0);
  });

  it("refuses bad options with a ConfigurationError", async () => {
    const locks = new MemoryThreadLocks();
    for (const options of [{ strategy: "interrupt" }, { maxWaitMs: -1 }, { maxWaitMs: 1.5 }, { maxQueued: -1 }, { maxQueued: Number.NaN }]) {
      await expect(locks.acquire("t", options as never)).rejects.toSatisfy((e: unknown) => ConfigurationError.isInstance(e));
    }
    await expect(locks.acquire("")).rejects.toSatisfy((e: unknown) => ConfigurationError.isInstance(e));
    expect(locks.size).toBe(0);
  });

  it("memory stays bounded: many threads used and released leave nothing behind", async () => {
    const locks = new MemoryThreadLocks();
    await Promise.all(Array.from({ length: 500 }, (_, i) => locks.run(`t${i % 50}`, async () => tick())));
    expect(locks.size).toBe(0);
  });
});

describe("thread lock keys", () => {
  it("are 64-bit integers, the same for the same thread, different for different threads", () => {
    const key = threadLockKey("order-42");
    expect(key).toBe(threadLockKey("order-42"));
    expect(BigInt(key)).toBeGreaterThanOrEqual(-(2n ** 63n));
    expect(BigInt(key)).toBeLessThan(2n ** 63n);
    const keys = new Set(Array.from({ length: 10_000 }, (_, i) => threadLockKey(`thread-${i}`)));
    expect(keys.size).toBe(10_000);
  });
});

// Two runs on one thread, as in the reported race: A (spec "strict") answers 30, 31, then 5; B (spec "loose") answers 50.
const strict = defineSpec({
  name: "strict",
  description: "",
  schema: { type: "object", required: ["replicas"], properties: { replicas: { type: "integer", maximum: 10 } } },
});
const loose = defineSpec({
  name: "loose",
  description: "",
  schema: { type: "object", required: ["replicas"], properties: { replicas: { type: "integer" } } },
});

/** Answers by the request the prompt carries: B always 50; A 30, 31, then 5 (counted over A's calls). */
function raceModel(): ScriptedChatModel & { order: string[] } {
  let callsOfA = 0;
  const order: string[] = [];
  const model = new ScriptedChatModel({
    repeat: true,
    latencyMs: 5,
    answers: [
      (messages: BaseMessage[]) => {
        const text = messages.map((m) => String(m.content)).join("\n");
        order.push(text.includes("request B") ? "B" : "A");
        if (text.includes("request B")) return JSON.stringify({ replicas: 50 });
        return JSON.stringify({ replicas: [30, 31, 5][Math.min(callsOfA++, 2)] });
      },
    ],
  });
  return Object.assign(model, { order });
}

describe("generateValidated and streamValidated on a named thread", () => {
  it("two runs at once on one thread take turns: each caller's success is a checkpoint of its own request, the last state is one run's", async () => {
    const checkpointer = new MemorySaver();
    const model = raceModel();
    const [a, b] = await Promise.all([
      generateValidated({ model, checkpointer, threadId: "race", spec: strict, request: "request A", maxAttempts: 3 }),
      generateValidated({ model, checkpointer, threadId: "race", spec: loose, request: "request B", maxAttempts: 3 }),
    ]);
    expect(a).toMatchObject({ success: true, value: { replicas: 5 }, attempts: 3 });
    expect(b).toMatchObject({ success: true, value: { replicas: 50 }, attempts: 1 });
    // One run after the other: no model call of one run falls between two of the other's.
    expect(["AAAB", "BAAA"]).toContain(model.order.join(""));

    const graph = buildValidationGraph({ checkpointer });
    const config = { configurable: { thread_id: "race" } };
    const finals: Array<Record<string, any>> = [];
    for await (const snapshot of graph.getStateHistory(config)) if (snapshot.next.length === 0) finals.push(snapshot.values);
    // Every success told is a finished checkpoint of its own request holding that value.
    expect(finals.some((v) => v.request === "request A" && v.success && v.value?.replicas === 5 && v.spec === "strict")).toBe(true);
    expect(finals.some((v) => v.request === "request B" && v.success && v.value?.replicas === 50 && v.spec === "loose")).toBe(true);
    // The thread's state is one run's, whole.
    const last = (await graph.getState(config)).values as Record<string, any>;
    const own = last.request === "request A" ? { spec: "strict", replicas: 5, answers: [30, 31, 5] } : { spec: "loose", replicas: 50, answers: [50] };
    expect(last.spec).toBe(own.spec);
    expect(last.value).toEqual({ replicas: own.replicas });
    expect(last.history.map((h: { output: string }) => JSON.parse(h.output).replicas)).toEqual(own.answers);
  });

  it("reject: the second run on a busy thread is refused with a ThreadBusyError and the thread keeps the first run whole", async () => {
    const checkpointer = new MemorySaver();
    const model = raceModel();
    const [a, b] = await Promise.allSettled([
      generateValidated({ model, checkpointer, threadId: "race", spec: strict, request: "request A", maxAttempts: 3 }),
      generateValidated({ model, checkpointer, threadId: "race", spec: loose, request: "request B", multitask: { strategy: "reject" } }),
    ]);
    expect(a).toMatchObject({ status: "fulfilled", value: { success: true, value: { replicas: 5 } } });
    expect(b.status).toBe("rejected");
    expect((b as PromiseRejectedResult).reason).toMatchObject({ name: "ThreadBusyError", reason: "running", threadId: "race" });
    const last = (await buildValidationGraph({ checkpointer }).getState({ configurable: { thread_id: "race" } })).values as Record<string, any>;
    expect([last.request, last.spec, last.value, last.history.length]).toEqual(["request A", "strict", { replicas: 5 }, 3]);
  });

  it("streamValidated holds the thread until its stream ends, also when the reader leaves early", async () => {
    const checkpointer = new MemorySaver();
    const model = raceModel();
    const stream = streamValidated({ model, checkpointer, threadId: "s", spec: strict, request: "request A", maxAttempts: 3 });
    const first = await stream.next();
    expect(first.done).toBe(false);
    // While it is read, the thread is held.
    await expect(
      generateValidated({ model, checkpointer, threadId: "s", spec: loose, request: "request B", multitask: { strategy: "reject" } }),
    ).rejects.toMatchObject({
      name: "ThreadBusyError",
    });
    await stream.return(undefined as never);
    // Left early: the thread is free again.
    await expect(
      generateValidated({ model, checkpointer, threadId: "s", spec: loose, request: "request B", multitask: { strategy: "reject" } }),
    ).resolves.toMatchObject({
      success: true,
      value: { replicas: 50 },
    });
  });
});
