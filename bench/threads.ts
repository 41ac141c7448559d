/**
 * Benchmark: one run per thread across instances. The example service
 * (examples/service.ts) runs as 1, 2 and 4 instances on one fresh PostgreSQL
 * database, against the scripted model server (bench/model-server.ts, its own
 * process; every run needs 2 attempts). Clients post POST /validate round-robin
 * over the instances, a fixed number at once:
 *   - one thread: every run names the same thread, so the runs take turns
 *     (the default strategy, enqueue) across every instance;
 *   - many threads: every run names a thread of its own, so each takes an
 *     uncontended lock;
 *   - no thread named: the service makes a new thread per run and takes no lock.
 * Reported per set-up: runs per second, p50/p99 of a run's answer time, and
 * the runs lost or mixed, read back from the database: every 200 answer must be
 * a finished checkpoint of its own request holding the valid value with its
 * two attempts, and every finished checkpoint one run's whole (request,
 * history, verdict). The ratios beside them, runs per second in the same
 * repetition: one thread ÷ many threads (what serialising a thread costs) and
 * many threads ÷ no thread named (what taking an uncontended lock costs).
 *
 * Needs PostgreSQL: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres
 * (a database of its own is created there and dropped afterwards).
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { openPersistence } from "../src/persistence/open.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { compareRepeated, fmt, outcomeBlocks, percentile, table, type BenchOptions, type BenchResult, type Comparison, type Target } from "./common.js";
import { lineStartingWith, spawnTs } from "./concurrency.js";
import { VALID_REPLY } from "./model-server.js";

export interface ThreadsOptions extends BenchOptions {
  /** Runs per set-up and repetition. */
  runs?: number;
  /** Requests in flight at once. */
  inFlight?: number;
  repetitions?: number;
  latencyMs?: number;
  instances?: number[];
}

type Scenario = "one thread" | "many threads" | "no thread named";
const SCENARIOS: Scenario[] = ["one thread", "many threads", "no thread named"];

interface Sample {
  instances: number;
  scenario: Scenario;
  repetition: number;
  runsPerSecond: number;
  latenciesMs: number[];
  ok: number;
  /** Answers other than 200 (a 409 would be a refused run: none is expected with enqueue). */
  refused: number;
  lost: number;
  mixed: number;
  queued: number;
}

const START_TIMEOUT_MS = 180_000;

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function stop(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
}

/** Post `runs` requests, `inFlight` at a time, round-robin over `urls`; each names its thread, if any. */
async function drive(urls: string[], runs: number, inFlight: number, threadOf: (i: number) => string | undefined, tag: string) {
  const latencies: number[] = [];
  const answers: Array<{ i: number; status: number; body: Record<string, any> }> = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < runs; i = next++) {
        const t0 = performance.now();
        const res = await fetch(`${urls[i % urls.length]}/validate`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ request: `A deployment config for ${tag}-${i}`, threadId: threadOf(i) }), // undefined: not sent
        });
        const body = (await res.json()) as Record<string, any>;
        latencies.push(performance.now() - t0);
        answers.push({ i, status: res.status, body });
      }
    }),
  );
  return { wallMs: performance.now() - started, latencies, answers };
}

export async function run(opts: ThreadsOptions): Promise<BenchResult> {
  const runs = opts.runs ?? (opts.quick ? 8 : 48);
  const inFlight = opts.inFlight ?? (opts.quick ? 4 : 8);
  const repetitions = opts.repetitions ?? (opts.quick ? 1 : 4);
  const latencyMs = opts.latencyMs ?? 20;
  const instanceCounts = opts.instances ?? [1, 2, 4];
  const title = "Threads: one run per thread across service instances";
  const base = process.env.DATABASE_URL?.trim() || "postgres://postgres@127.0.0.1:5432/postgres";

  const admin = new pg.Client({ connectionString: base });
  try {
    await admin.connect();
  } catch (error) {
    await admin.end().catch(() => undefined);
    const reason = `PostgreSQL is not reachable at DATABASE_URL (${(error as Error).message})`;
    return { id: "threads", title, rows: [], comparisons: [], targets: [], checks: [], markdown: `## ${title}\n\nNot run: ${reason}.`, notRun: [reason] };
  }
  const database = `bench_threads_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const databaseUrl = withDatabase(base, database);
  const children: ChildProcess[] = [];
  const samples: Sample[] = [];
  try {
    const model = spawnTs("./model-server.ts", ["--port", "0", "--latency-ms", String(latencyMs), "--mode", "invalid-then-valid"]);
    children.push(model);
    const modelUrl = await lineStartingWith(model, "READY", START_TIMEOUT_MS);
    const reader = await openPersistence({ databaseUrl });
    try {
      const graph = buildValidationGraph({ ...reader });
      for (const instances of instanceCounts) {
        const services = await Promise.all(
          Array.from({ length: instances }, async () => {
            const child = spawnTs("../examples/service.ts", [], [], {
              DATABASE_URL: databaseUrl,
              OPENAI_BASE_URL: modelUrl,
              OPENAI_API_KEY: "bench-key",
              LLM_MAX_RETRIES: "0",
              PORT: "0",
            });
            children.push(child);
            const line = await lineStartingWith(child, "service listening on ", START_TIMEOUT_MS);
            return { child, url: line.split(" ")[0]! };
          }),
        );
        const urls = services.map((s) => s.url);
        // Warm-up: each instance's first run compiles what it needs.
        await drive(urls, instances, instances, () => randomUUID(), "warm-up");
        for (let repetition = 0; repetition < repetitions; repetition++) {
          for (const scenario of repetition % 2 === 0 ? SCENARIOS : [...SCENARIOS].reverse()) {
            const tag = `${instances}-${scenario.replace(" ", "-")}-${repetition}-${randomUUID().slice(0, 8)}`;
            const shared = `${tag}-thread`;
            const threadOf = scenario === "one thread" ? () => shared : scenario === "many threads" ? (i: number) => `${tag}-${i}` : () => undefined;
            const { wallMs, latencies, answers } = await drive(urls, runs, inFlight, threadOf, tag);
            samples.push({
              instances,
              scenario,
              repetition,
              runsPerSecond: runs / (wallMs / 1000),
              latenciesMs: latencies.sort((a, b) => a - b),
              ok: answers.filter((a) => a.status === 200).length,
              refused: answers.filter((a) => a.status !== 200).length,
              queued: answers.filter((a) => a.body.queued === true).length,
              ...(await audit(graph, answers, tag)),
            });
          }
        }
        await stop(services.map((s) => s.child));
      }
    } finally {
      await reader.close();
    }
  } finally {
    await stop(children);
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
  return report(samples, { runs, inFlight, repetitions, latencyMs, instanceCounts, title });
}

/**
 * Lost: a run answered 200 with no finished checkpoint of its own request holding the valid value and its two
 * attempts. Mixed: a finished checkpoint that is not one run's whole (its history's attempts, verdict and value
 * disagree), or a 200 answer whose own history is not two attempts.
 */
async function audit(
  graph: ReturnType<typeof buildValidationGraph>,
  answers: Array<{ i: number; status: number; body: Record<string, any> }>,
  tag: string,
): Promise<{ lost: number; mixed: number }> {
  const valid = JSON.parse(VALID_REPLY);
  const finalsByThread = new Map<string, Array<Record<string, any>>>();
  const threadOf = (answer: { body: Record<string, any> }) => String(answer.body.threadId);
  for (const thread of new Set(answers.filter((a) => a.status === 200).map(threadOf))) {
    const finals: Array<Record<string, any>> = [];
    for await (const snapshot of graph.getStateHistory({ configurable: { thread_id: thread } })) if (snapshot.next.length === 0) finals.push(snapshot.values);
    finalsByThread.set(thread, finals);
  }
  const whole = (v: Record<string, any>) =>
    v.success === true &&
    v.attempts === 2 &&
    JSON.stringify(v.value) === JSON.stringify(valid) &&
    JSON.stringify(v.history?.map((h: { attempt: number }) => h.attempt)) === "[1,2]" &&
    v.history?.[1]?.valid === true;
  let lost = 0;
  let mixed = 0;
  for (const answer of answers.filter((a) => a.status === 200)) {
    const request = `A deployment config for ${tag}-${answer.i}`;
    const own = finalsByThread.get(threadOf(answer))!.filter((v) => v.request === request);
    if (!own.some(whole)) lost++;
    if (JSON.stringify(answer.body.history?.map((h: { attempt: number }) => h.attempt)) !== "[1,2]" || answer.body.success !== true) mixed++;
  }
  for (const finals of finalsByThread.values()) mixed += finals.filter((v) => v.request !== undefined && !whole(v)).length;
  return { lost, mixed };
}

function report(
  samples: Sample[],
  s: { runs: number; inFlight: number; repetitions: number; latencyMs: number; instanceCounts: number[]; title: string },
): BenchResult {
  const rows: string[][] = [];
  const comparisons: Comparison[] = [];
  for (const instances of s.instanceCounts) {
    for (const scenario of SCENARIOS) {
      const mine = samples.filter((x) => x.instances === instances && x.scenario === scenario);
      const latencies = mine.flatMap((x) => x.latenciesMs).sort((a, b) => a - b);
      const rates = mine.map((x) => x.runsPerSecond);
      rows.push([
        String(instances),
        scenario,
        `${fmt(rates.reduce((a, b) => a + b, 0) / rates.length)} (${rates.map((r) => fmt(r)).join(", ")})`,
        fmt(percentile(latencies, 50)),
        fmt(percentile(latencies, 99)),
        String(mine.reduce((n, x) => n + x.ok, 0)),
        String(mine.reduce((n, x) => n + x.queued, 0)),
        String(mine.reduce((n, x) => n + x.refused, 0)),
        String(mine.reduce((n, x) => n + x.lost, 0)),
        String(mine.reduce((n, x) => n + x.mixed, 0)),
      ]);
    }
    const one = samples.filter((x) => x.instances === instances && x.scenario === "one thread").map((x) => x.runsPerSecond);
    const many = samples.filter((x) => x.instances === instances && x.scenario === "many threads").map((x) => x.runsPerSecond);
    const none = samples.filter((x) => x.instances === instances && x.scenario === "no thread named").map((x) => x.runsPerSecond);
    const where = `${instances} instance${instances === 1 ? "" : "s"}`;
    if (one.length > 0 && one.length === many.length)
      comparisons.push(compareRepeated(`runs per second on one thread, ${where}`, one, many, "runs/s", "many threads"));
    if (many.length > 0 && many.length === none.length) {
      comparisons.push(compareRepeated(`runs per second on many threads (a lock each), ${where}`, many, none, "runs/s", "no thread named (no lock)"));
    }
  }
  const total = (f: (x: Sample) => number) => samples.reduce((n, x) => n + f(x), 0);
  const checks = [
    { description: "every run answered 200 (none refused, none failed)", ok: total((x) => x.refused) === 0, detail: `${total((x) => x.refused)} not 200` },
    {
      description: "0 lost runs: every success told is a finished checkpoint of its own request",
      ok: total((x) => x.lost) === 0,
      detail: `${total((x) => x.lost)} lost`,
    },
    {
      description: "0 mixed runs: every finished checkpoint and every answer is one run's whole",
      ok: total((x) => x.mixed) === 0,
      detail: `${total((x) => x.mixed)} mixed`,
    },
  ];
  const targets: Target[] = [];
  const markdown = [
    `## ${s.title}`,
    "",
    `The example service (examples/service.ts) as 1, 2 and 4 instances on one fresh PostgreSQL database; the scripted model server in its own process (${s.latencyMs} ms per answer; every run needs 2 attempts). ` +
      `${s.runs} runs per set-up and repetition, ${s.inFlight} in flight at once, posted round-robin over the instances; ${s.repetitions} repetition(s), each repetition runs the three scenarios, in reverse order every other repetition. ` +
      "On one thread the runs take turns across every instance (enqueue, the default); on many threads each run holds a thread of its own; with no thread named the service makes a new thread per run and takes no lock. " +
      "Lost and mixed runs are read back from the database (every success told must be a finished checkpoint of its own request holding the valid value with its two attempts; every finished checkpoint one run's whole).",
    "",
    table(["instances", "threads", "runs/s (mean; per repetition)", "p50 ms", "p99 ms", "200", "queued", "not 200", "lost", "mixed"], rows),
    "",
    outcomeBlocks(comparisons, targets, checks),
  ].join("\n");
  return {
    id: "threads",
    title: s.title,
    rows: samples.map((x) => ({ label: `${x.instances} instance(s), ${x.scenario}, repetition ${x.repetition + 1}`, value: x.runsPerSecond, unit: "runs/s" })),
    comparisons,
    targets,
    checks,
    markdown,
  };
}
