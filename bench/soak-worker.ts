/**
 * The soak benchmark's client (bench/soak.ts), in its own process so that its heap, RSS, timers and handles
 * are its own: the package's validation graph, through the ChatOpenAI that `createChatModel` builds, against
 * the scripted server (bench/model-server.ts, invalid-then-valid: one retry per run), `concurrency` runs in
 * flight for `durationMs`. Every `sampleMs` a sample: a look at the runs in flight, then no new run starts until
 * those have finished, and with every run settled the heap after a forced full GC, RSS, the live timers and the
 * other resources; then the runs resume. Counted between runs, the heap is what stays, not what runs in flight hold.
 *
 *   node --expose-gc --import tsx bench/soak-worker.ts --base-url URL --duration-ms 180000 --sample-ms 10000 [--concurrency 8]
 *
 * Prints one line `RESULT {json}` (a SoakWorkerResult).
 */
import { compiled } from "./compiled.js";
import { flagValue, runIfMain } from "./common.js";
import { activeHandles, refTimers, trackTimers } from "../testkit/live-timers.js";

/** One look at the process. */
export interface SoakSample {
  /** Seconds since the first run started. */
  seconds: number;
  /** Runs finished so far. */
  runs: number;
  /** `heapUsed` after a forced full GC, MB. */
  heapMb: number;
  rssMb: number;
  /** Timers that keep the process alive, as `process.getActiveResourcesInfo()` lists them. */
  refTimers: number;
  /** The package's timers (its model client's deadlines) that are live, ref'd or not: one per request in flight. */
  packageTimers: number;
  /** The other resources `process.getActiveResourcesInfo()` lists (sockets, pipes…), by kind. */
  handles: Record<string, number>;
  /** The look just before the sample: the runs in flight, and the timers they held. */
  inFlight?: { inFlight: number; refTimers: number; packageTimers: number };
}

export interface SoakWorkerResult {
  concurrency: number;
  durationMs: number;
  sampleMs: number;
  /** Before the first run (modules loaded, the graph built), after a forced GC. */
  baseline: SoakSample;
  /** Taken every sampleMs while the runs go on: no run starts until the runs in flight have finished and the sample is taken. */
  samples: SoakSample[];
  /** After the last run settled, after a forced GC. */
  end: SoakSample;
  runs: number;
  /** Runs that ended valid after exactly two attempts (the scripted server's invalid-then-valid). */
  validAfterTwoAttempts: number;
  /** The first few errors of runs that rejected, if any. */
  errors: string[];
  wallMs: number;
  cpuMs: number;
}

/** Whatever a finished request handed to the event loop (a cleared timer's destroy hook, a socket back in its pool) runs first. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const gc = (globalThis as { gc?: () => void }).gc;

function fullGc(): void {
  if (!gc) throw new Error("run with --expose-gc");
  gc();
  gc();
}

async function soak(baseUrl: string, opts: { durationMs: number; sampleMs: number; concurrency: number }): Promise<SoakWorkerResult> {
  const { makePeer } = await compiled<typeof import("./peer-clients.js")>("bench/peer-clients");
  const { compiledDir } = await import("./compiled.js");
  const packageSource = `${await compiledDir()}/src/`;
  const graphRun = makePeer("package-graph", baseUrl);
  // Every timer, ref'd or not, with the stack that made it: the deadline timers of the package's model client are unref'd.
  const tracker = trackTimers();
  let runs = 0;
  let validAfterTwoAttempts = 0;
  const errors: string[] = [];
  const t0 = performance.now();
  const packageTimers = () => tracker.liveTimers().filter((timer) => timer.stack.includes(packageSource)).length;
  const sample = (): SoakSample => {
    fullGc();
    const memory = process.memoryUsage();
    return {
      seconds: (performance.now() - t0) / 1000,
      runs,
      heapMb: memory.heapUsed / 2 ** 20,
      rssMb: memory.rss / 2 ** 20,
      refTimers: refTimers(),
      packageTimers: packageTimers(),
      handles: activeHandles(),
    };
  };

  const baseline = sample();
  const samples: SoakSample[] = [];
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const stopAt = start + opts.durationMs;
  // A sample closes the gate: no run starts until the runs in flight have finished and the sample is taken.
  let gate: Promise<void> | undefined;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let next = 0;
  const lane = async () => {
    for (;;) {
      while (gate) await gate;
      if (performance.now() >= stopAt) return;
      inFlight++;
      try {
        const out = await graphRun(next++);
        if (out.success && out.attempts === 2) validAfterTwoAttempts++;
      } catch (error) {
        if (errors.length < 5) errors.push(String((error as Error)?.message ?? error).slice(0, 300));
      }
      runs++;
      if (--inFlight === 0) drained?.();
    }
  };
  const takeSample = async () => {
    if (gate) return;
    const inFlightLook = { refTimers: refTimers(), packageTimers: packageTimers(), inFlight };
    let open!: () => void;
    gate = new Promise<void>((resolve) => (open = resolve));
    if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
    drained = undefined;
    await settled();
    samples.push({ ...sample(), inFlight: inFlightLook });
    gate = undefined;
    open();
  };
  // Unref'd: the sampler's own timer is not one of those the samples count (the runs keep the process alive).
  const sampler = setInterval(() => void takeSample(), opts.sampleMs).unref();
  await Promise.all(Array.from({ length: opts.concurrency }, lane));
  clearInterval(sampler);
  while (gate) await gate;
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  await settled();
  const end = sample();
  tracker.stop();
  return {
    ...opts,
    baseline,
    samples,
    end,
    runs,
    validAfterTwoAttempts,
    errors,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string) => flagValue(argv, name);
  const baseUrl = arg("--base-url");
  if (!baseUrl) throw new Error("--base-url is required");
  const result = await soak(baseUrl, {
    durationMs: Number(arg("--duration-ms") ?? 180_000),
    sampleMs: Number(arg("--sample-ms") ?? 10_000),
    concurrency: Number(arg("--concurrency") ?? 8),
  });
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

runIfMain(import.meta.url, main, { exitWhenDone: true });
