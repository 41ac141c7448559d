/**
 * Benchmark 9: what the validation graph's attempt history costs in
 * checkpoints. One run of N attempts with answers of S characters (the
 * in-process scripted model; N − 1 answers break a rule, the last is valid)
 * through MemorySaver and PostgreSQL, for these variants:
 *
 *   (a) today      the package's graph: `history` is an appending channel whose whole value is stored at every checkpoint that changes it
 *   (b) delta      `history` as LangGraph's DeltaChannel (beta): each checkpoint stores the step's writes only, and a read rebuilds the
 *                  value from the ancestors' writes through the saver's `getDeltaChannelHistory` (stock PostgresSaver: one `getTuple` per ancestor)
 *   (c) delta, one query   as (b), with a PostgresSaver whose `getDeltaChannelHistory` reads the chain in one query (bench/delta-history-saver.ts)
 *   (e) delta, answers too as (c), with `draft` and `result` (the other channels that carry an answer) as DeltaChannels too
 *   (d) floor      the minimal two-node LangGraph graph (bench/peer-clients.ts `minimalValidationGraph`) keeping only the last answer
 *
 * (b), (c) and (e) are the package's compiled graph with channels replaced
 * (a prototype of the change, measured before it is made). Figures: bytes
 * written per run (PostgreSQL: checkpoints with metadata, channel blobs and
 * writes of the thread; MemorySaver: its stored checkpoints and writes), CPU
 * per run (interleaved in one process: each variant once per cycle, in random
 * order; median of per-cycle ratios), and the cost of reads (`getState` and a
 * full `getStateHistory` listing per thread, wall time, interleaved the same
 * way). Target: bytes and CPU per run ≤ 1.2× the floor's at 10 attempts × 10 KB.
 *
 *   npx tsx bench/checkpoint-bytes.ts [--quick]
 *
 * Needs PostgreSQL for its PostgreSQL half: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
 * Tables go to a schema of their own, dropped afterwards.
 */
import { isDeepStrictEqual } from "node:util";
import { loadavg } from "node:os";
import { BaseCheckpointSaver, DeltaChannel, MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import {
  checkLines,
  cpuUs,
  fmt,
  fmtLoad,
  median,
  nowNs,
  ratioStats,
  rng,
  shuffled,
  table,
  type BenchOptions,
  type BenchResult,
  type Comparison,
  type Target,
  targetLines,
} from "./common.js";
import { compiled } from "./compiled.js";

const SPEC = {
  name: "bench-notes",
  description: "A count and free-form notes",
  schema: {
    type: "object",
    required: ["n", "notes"],
    additionalProperties: false,
    properties: { n: { type: "integer", minimum: 1 }, notes: { type: "string" } },
  },
};

type Kind = "memory" | "postgres";
type VariantId = "today" | "delta" | "delta-one-query" | "delta-answers" | "floor";
const LABELS: Record<VariantId, string> = {
  today: "(a) today",
  delta: "(b) DeltaChannel history, stock saver",
  "delta-one-query": "(c) DeltaChannel history, one-query saver",
  "delta-answers": "(e) (c) + draft and value as DeltaChannels",
  floor: "(d) floor (minimal two-node graph)",
};

/** N − 1 answers that break the minimum, then a valid one; each about `size` characters. */
function answers(attempts: number, size: number): string[] {
  return Array.from({ length: attempts }, (_, i) => {
    const head = JSON.stringify({ n: i === attempts - 1 ? 1 : 0, notes: `attempt ${i + 1}: ` });
    return head.replace(/"}$/, `${"lorem ipsum dolor sit amet ".repeat(Math.ceil(size / 27)).slice(0, Math.max(0, size - head.length))}"}`);
  });
}

const appendAll = (list: unknown[], writes: unknown[][]) => list.concat(...writes);
const lastOf = (_current: unknown, writes: unknown[]) => writes[writes.length - 1];

interface Variant {
  id: VariantId;
  /** One run on a new thread; resolves to the thread id. */
  run: () => Promise<string>;
  graph: { getState: (config: object) => Promise<{ values: unknown }>; getStateHistory: (config: object) => AsyncIterable<unknown> };
}

let threadSeq = 0;

/** The timed code as compiled JavaScript (see bench/compiled.ts), loaded once by run(). */
async function loadModules() {
  return {
    ...(await compiled<typeof import("../src/specs/registry.js")>("src/specs/registry")),
    ...(await compiled<typeof import("../src/validation/graph.js")>("src/validation/graph")),
    ...(await compiled<typeof import("../src/validation/prompts.js")>("src/validation/prompts")),
    ...(await compiled<typeof import("../testkit/scripted-model.js")>("testkit/scripted-model")),
    ...(await compiled<typeof import("./delta-history-saver.js")>("bench/delta-history-saver")),
    ...(await compiled<typeof import("./peer-clients.js")>("bench/peer-clients")),
  };
}
let modules: Awaited<ReturnType<typeof loadModules>>;

function makeVariant(id: VariantId, saver: BaseCheckpointSaver, attempts: number, size: number): Variant {
  const { ScriptedChatModel, resolveSpec, minimalValidationGraph, generationSystemPrompt, buildValidationGraph } = modules;
  const model = new ScriptedChatModel({ answers: answers(attempts, size), repeat: true, record: false });
  if (id === "floor") {
    const spec = resolveSpec(SPEC as never);
    const graph = minimalValidationGraph(model, spec, generationSystemPrompt(spec), attempts, saver);
    return {
      id,
      graph: graph as unknown as Variant["graph"],
      run: async () => {
        const thread_id = `${id}-${threadSeq++}`;
        const out = await graph.invoke({ request: "Notes" }, { configurable: { thread_id } });
        if (out.attempts !== attempts || !out.valid) throw new Error(`floor: expected ${attempts} attempts ending valid`);
        return thread_id;
      },
    };
  }
  const graph = buildValidationGraph({ model, checkpointer: saver });
  // The prototype: the compiled graph's channels replaced (what the change would declare in the state).
  const channels = graph.channels as Record<string, unknown>;
  if (id !== "today") channels.history = new DeltaChannel(appendAll as never, { initialValueFactory: () => [] });
  if (id === "delta-answers") {
    channels.draft = new DeltaChannel(lastOf as never, { initialValueFactory: () => null });
    channels.value = new DeltaChannel(lastOf as never, { initialValueFactory: () => null });
  }
  const context = { spec: SPEC, maxAttempts: attempts, stopOnNoProgress: false };
  return {
    id,
    graph: graph as unknown as Variant["graph"],
    run: async () => {
      const thread_id = `${id}-${threadSeq++}`;
      const out = await graph.invoke({ request: "Notes" }, { configurable: { thread_id }, context: context as never });
      if (out.attempts !== attempts || !out.success || out.history.length !== attempts) throw new Error(`${id}: expected ${attempts} attempts ending valid`);
      return thread_id;
    },
  };
}

/** Bytes a MemorySaver holds: its checkpoints with metadata, and its writes. */
function memoryBytes(saver: MemorySaver): number {
  let bytes = 0;
  for (const namespaces of Object.values(saver.storage))
    for (const checkpoints of Object.values(namespaces))
      for (const [checkpoint, metadata] of Object.values(checkpoints)) bytes += checkpoint.length + metadata.length;
  for (const writes of Object.values(saver.writes)) for (const [, , value] of Object.values(writes)) bytes += value.length;
  return bytes;
}

async function postgresBytes(pool: pg.Pool, schema: string, threadId: string): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>(
    `select (select coalesce(sum(octet_length(checkpoint::text) + octet_length(metadata::text)), 0) from ${schema}.checkpoints where thread_id = $1)
          + (select coalesce(sum(octet_length(blob)), 0) from ${schema}.checkpoint_blobs where thread_id = $1)
          + (select coalesce(sum(octet_length(blob)), 0) from ${schema}.checkpoint_writes where thread_id = $1) as bytes`,
    [threadId],
  );
  return Number(rows[0].bytes);
}

interface Savers {
  kind: Kind;
  /** The saver variant `id` writes and reads through. */
  saver: (id: VariantId) => BaseCheckpointSaver;
  bytes: (saver: BaseCheckpointSaver, threadId: string) => Promise<number>;
  ids: VariantId[];
}

function memorySavers(): Savers {
  return {
    kind: "memory",
    // A fresh saver per variant, so a saver's bytes are one variant's.
    saver: () => new MemorySaver(),
    bytes: async (saver) => memoryBytes(saver as MemorySaver),
    // MemorySaver rebuilds DeltaChannels from its own storage: (b) and (c) are the same there.
    ids: ["today", "delta", "delta-answers", "floor"],
  };
}

function postgresSavers(pool: pg.Pool, schema: string): Savers {
  const stock = new PostgresSaver(pool, undefined, { schema });
  const oneQuery = new modules.OneQueryPostgresSaver(pool, { schema });
  return {
    kind: "postgres",
    saver: (id) => (id === "delta-one-query" || id === "delta-answers" ? oneQuery : stock),
    bytes: (_saver, threadId) => postgresBytes(pool, schema, threadId),
    ids: ["today", "delta", "delta-one-query", "delta-answers", "floor"],
  };
}

interface BytesRow {
  kind: Kind;
  attempts: number;
  size: number;
  bytes: Partial<Record<VariantId, number>>;
}

async function measureBytes(savers: Savers, attempts: number, size: number): Promise<BytesRow> {
  const bytes: BytesRow["bytes"] = {};
  for (const id of savers.ids) {
    const saver = savers.saver(id);
    const thread = await makeVariant(id, saver, attempts, size).run();
    bytes[id] = await savers.bytes(saver, thread);
  }
  return { kind: savers.kind, attempts, size, bytes };
}

interface CpuRow {
  kind: Kind;
  attempts: number;
  size: number;
  perRun: Partial<Record<VariantId, number>>;
  vsFloor: Partial<Record<VariantId, ReturnType<typeof ratioStats>>>;
  load: [number, number];
}

/** CPU per run, each variant once per cycle in random order. */
async function measureCpu(savers: Savers, attempts: number, size: number, cycles: number, runsPerCycle: number): Promise<CpuRow> {
  // (b) writes exactly as (c) (only their reads differ): PostgreSQL times (c) alone.
  const ids = savers.kind === "postgres" ? savers.ids.filter((id) => id !== "delta") : savers.ids;
  const variants = ids.map((id) => makeVariant(id, savers.saver(id), attempts, size));
  for (const v of variants) for (let i = 0; i < 3; i++) await v.run(); // warm-up
  const samples: Record<string, number[]> = Object.fromEntries(ids.map((id) => [id, []]));
  const random = rng(7);
  const before = loadavg()[0];
  for (let cycle = 0; cycle < cycles; cycle++) {
    for (const v of shuffled(variants, random)) {
      const start = process.cpuUsage();
      for (let i = 0; i < runsPerCycle; i++) await v.run();
      samples[v.id].push(cpuUs(start) / runsPerCycle);
    }
  }
  const perRun = Object.fromEntries(ids.map((id) => [id, median(samples[id])]));
  const vsFloor = Object.fromEntries(ids.filter((id) => id !== "floor").map((id) => [id, ratioStats(samples[id], samples.floor)]));
  return { kind: savers.kind, attempts, size, perRun, vsFloor, load: [before, loadavg()[0]] };
}

interface ReadRow {
  kind: Kind;
  /** Median wall time per thread, µs. */
  getState: Partial<Record<VariantId, number>>;
  history: Partial<Record<VariantId, number>>;
  /** Per-cycle ratios against (a). */
  getStateVsToday: Partial<Record<VariantId, ReturnType<typeof ratioStats>>>;
  historyVsToday: Partial<Record<VariantId, ReturnType<typeof ratioStats>>>;
  /** Whether every variant's state read back equals (a)'s, history included. */
  same: boolean;
  /** PostgreSQL: whether the one-query saver's history equals the base class's walk at every checkpoint of (c)'s threads. */
  sameWalk?: boolean;
  load: [number, number];
}

async function measureReads(savers: Savers, attempts: number, size: number, threads: number, cycles: number): Promise<ReadRow> {
  const variants = savers.ids.map((id) => makeVariant(id, savers.saver(id), attempts, size));
  const threadIds: Record<string, string[]> = {};
  for (const v of variants) {
    threadIds[v.id] = [];
    for (let i = 0; i < threads; i++) threadIds[v.id].push(await v.run());
  }
  // Each delta variant reads its own threads and (a)'s values must match what it reads back.
  const valuesOf = async (v: Variant) =>
    ((await v.graph.getState({ configurable: { thread_id: threadIds[v.id][0] } })).values as Record<string, unknown>) ?? {};
  const today = await valuesOf(variants.find((v) => v.id === "today")!);
  let same = true;
  for (const v of variants) if (v.id !== "floor" && v.id !== "today") same &&= isDeepStrictEqual(await valuesOf(v), today);

  let sameWalk: boolean | undefined;
  if (savers.kind === "postgres") {
    const saver = savers.saver("delta-one-query");
    sameWalk = true;
    for (const thread_id of threadIds["delta-one-query"])
      for await (const tuple of saver.list({ configurable: { thread_id } })) {
        const options = { config: tuple.config, channels: ["history", "draft", "value"] };
        const walked = await BaseCheckpointSaver.prototype.getDeltaChannelHistory.call(saver, options);
        sameWalk &&= isDeepStrictEqual(await saver.getDeltaChannelHistory(options), walked);
      }
  }

  const getState: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v.id, []]));
  const history: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v.id, []]));
  const random = rng(11);
  const before = loadavg()[0];
  for (let cycle = 0; cycle < cycles + 1; cycle++) {
    for (const v of shuffled(variants, random)) {
      let t0 = nowNs();
      for (const thread_id of threadIds[v.id]) await v.graph.getState({ configurable: { thread_id } });
      const stateUs = (nowNs() - t0) / 1000 / threads;
      t0 = nowNs();
      for (const thread_id of threadIds[v.id]) for await (const _ of v.graph.getStateHistory({ configurable: { thread_id } }));
      const historyUs = (nowNs() - t0) / 1000 / threads;
      if (cycle === 0) continue; // warm-up
      getState[v.id].push(stateUs);
      history[v.id].push(historyUs);
    }
  }
  const ids = variants.map((v) => v.id);
  const against = (samples: Record<string, number[]>) =>
    Object.fromEntries(ids.filter((id) => id !== "today").map((id) => [id, ratioStats(samples[id], samples.today)]));
  return {
    kind: savers.kind,
    getState: Object.fromEntries(ids.map((id) => [id, median(getState[id])])),
    history: Object.fromEntries(ids.map((id) => [id, median(history[id])])),
    getStateVsToday: against(getState),
    historyVsToday: against(history),
    same,
    sameWalk,
    load: [before, loadavg()[0]],
  };
}

const kb = (size: number) => `${size / 1000} KB`;
const ratioCell = (r: ReturnType<typeof ratioStats> | undefined) => (r ? `${r.median.toFixed(2)}× (${r.min.toFixed(2)}–${r.max.toFixed(2)}×)` : "–");

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const attemptsList = opts.quick ? [1, 3] : [1, 3, 10];
  const sizes = opts.quick ? [500, 10_000] : [500, 10_000, 20_000];
  const headline = { attempts: opts.quick ? 3 : 10, size: 10_000 };
  const cycles = opts.quick ? 3 : 15;
  const runsPerCycle = opts.quick ? 1 : 3;
  // A full listing through the stock saver takes seconds per thread (one getTuple per ancestor, per checkpoint listed): few threads, few cycles.
  const readThreads = opts.quick ? 1 : 2;
  const readCycles = opts.quick ? 3 : 7;
  modules = await loadModules();
  const base = { id: "history", title: "Attempt history in checkpoints", checks: [] as BenchResult["checks"] };

  const url = process.env.DATABASE_URL?.trim() || "postgres://postgres@127.0.0.1:5432/postgres";
  const schema = `bench_history_${process.pid}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const notRun: string[] = [];
  const kinds: Savers[] = [memorySavers()];
  try {
    await pool.query("select 1");
    await pool.query(`create schema if not exists ${schema}`);
    await new PostgresSaver(pool, undefined, { schema }).setup();
    kinds.push(postgresSavers(pool, schema));
  } catch (error) {
    notRun.push(`PostgreSQL half: not reachable (${(error as Error).message})`);
  }

  try {
    const bytes: BytesRow[] = [];
    const cpu: CpuRow[] = [];
    const reads: ReadRow[] = [];
    for (const savers of kinds) {
      for (const attempts of attemptsList) for (const size of sizes) bytes.push(await measureBytes(savers, attempts, size));
      cpu.push(await measureCpu(savers, headline.attempts, headline.size, cycles, runsPerCycle));
      reads.push(await measureReads(savers, headline.attempts, headline.size, readThreads, readCycles));
    }
    return render(base, { bytes, cpu, reads, headline, notRun });
  } finally {
    if (kinds.some((k) => k.kind === "postgres")) await pool.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await pool.end();
  }
}

function render(
  base: Pick<BenchResult, "id" | "title" | "checks">,
  m: { bytes: BytesRow[]; cpu: CpuRow[]; reads: ReadRow[]; headline: { attempts: number; size: number }; notRun: string[] },
): BenchResult {
  const { headline } = m;
  const targets: Target[] = [];
  const comparisons: Comparison[] = [];
  const checks = [...base.checks];
  const variantCols = (ids: VariantId[]) => ids.map((id) => LABELS[id]);
  const sections: string[] = [
    "## 9. Attempt history in checkpoints",
    "",
    `One run of N attempts with answers of S characters (scripted in-process model; N − 1 answers break a rule, the last is valid) on a new thread. ` +
      "Variants: " +
      (Object.keys(LABELS) as VariantId[]).map((id) => `**${LABELS[id]}**`).join(", ") +
      ". The package ships (a); (b), (c) and (e) are its compiled graph with channels replaced, a prototype of what the change would cost (bench/checkpoint-bytes.ts); (c)'s saver is bench/delta-history-saver.ts. " +
      "Bytes: PostgreSQL — checkpoints with metadata, channel blobs and writes of the thread; MemorySaver — its stored checkpoints and writes.",
  ];
  for (const kind of ["memory", "postgres"] as Kind[]) {
    const rows = m.bytes.filter((r) => r.kind === kind);
    if (rows.length === 0) continue;
    const ids = (Object.keys(rows[0].bytes) as VariantId[]).filter((id) => id !== "delta-one-query");
    sections.push(
      "",
      `### Bytes written per run, ${kind === "memory" ? "MemorySaver" : "PostgreSQL"}`,
      "",
      kind === "postgres" ? "(b) and (c) write the same rows (they differ in how they read), so (c) is not repeated.\n" : "",
      table(
        ["attempts", "answer", ...variantCols(ids), ...ids.filter((id) => id !== "floor").map((id) => `${LABELS[id].split(" ")[0]} ÷ floor`)],
        rows.map((r) => [
          r.attempts,
          kb(r.size),
          ...ids.map((id) => r.bytes[id]!.toLocaleString("en-US")),
          ...ids.filter((id) => id !== "floor").map((id) => `${(r.bytes[id]! / r.bytes.floor!).toFixed(2)}×`),
        ]),
      ),
    );
    const at = rows.find((r) => r.attempts === headline.attempts && r.size === headline.size);
    if (at) {
      for (const id of ids.filter((i) => i !== "floor")) {
        const c = {
          label: `${kind} bytes per run, ${LABELS[id]}, ${headline.attempts} × ${kb(headline.size)}`,
          value: at.bytes[id]!,
          reference: at.bytes.floor!,
        };
        comparisons.push({ ...c, unit: "B", referenceLabel: LABELS.floor, ratios: [c.value / c.reference], ratio: c.value / c.reference });
      }
      const best = Math.min(...ids.filter((i) => i !== "floor" && i !== "today").map((id) => at.bytes[id]! / at.bytes.floor!));
      targets.push({
        description: `${kind}: bytes per run ≤ 1.2× the floor's at ${headline.attempts} attempts × ${kb(headline.size)} (DeltaChannel history)`,
        met: at.bytes.delta! / at.bytes.floor! <= 1.2,
        detail: `today ${(at.bytes.today! / at.bytes.floor!).toFixed(2)}×, DeltaChannel history ${(at.bytes.delta! / at.bytes.floor!).toFixed(2)}×, best prototype ${best.toFixed(2)}×`,
      });
    }
  }
  for (const c of m.cpu) {
    const ids = Object.keys(c.perRun) as VariantId[];
    sections.push(
      "",
      `### CPU per run, ${c.kind === "memory" ? "MemorySaver" : "PostgreSQL"}, ${c.attempts} attempts × ${kb(c.size)}`,
      "",
      `*Load average ${c.load[0].toFixed(2)} → ${c.load[1].toFixed(2)}.* Interleaved, each variant once per cycle in random order; ratio: median (min–max) of per-cycle ratios to the floor. ` +
        (c.kind === "postgres" ? "The process's CPU only (the database server's is not counted)." : ""),
      "",
      table(
        ["variant", "CPU per run (µs, median)", "÷ floor"],
        ids.map((id) => [LABELS[id], fmt(c.perRun[id]!), id === "floor" ? "1" : ratioCell(c.vsFloor[id])]),
      ),
    );
    const delta = c.vsFloor[c.kind === "memory" ? "delta" : "delta-one-query"];
    if (delta) {
      comparisons.push({
        label: `${c.kind} CPU per run, DeltaChannel history, ${c.attempts} × ${kb(c.size)}`,
        value: c.perRun[c.kind === "memory" ? "delta" : "delta-one-query"]!,
        reference: c.perRun.floor!,
        unit: "µs",
        referenceLabel: LABELS.floor,
        ratios: delta.ratios,
        ratio: delta.median,
      });
      targets.push({
        description: `${c.kind}: CPU per run ≤ 1.2× the floor's at ${c.attempts} attempts × ${kb(c.size)} (DeltaChannel history)`,
        met: delta.median <= 1.2,
        detail: `today ${ratioCell(c.vsFloor.today)}, DeltaChannel history ${ratioCell(delta)}, (e) ${ratioCell(c.vsFloor["delta-answers"])}`,
      });
    }
  }
  for (const r of m.reads) {
    const ids = Object.keys(r.getState) as VariantId[];
    checks.push({ description: `${r.kind}: every DeltaChannel variant reads back the same state as (a), history included`, ok: r.same });
    if (r.sameWalk !== undefined)
      checks.push({
        description: "postgres: the one-query saver's getDeltaChannelHistory equals the base class's walk at every checkpoint of (c)'s threads",
        ok: r.sameWalk,
      });
    sections.push(
      "",
      `### Reads, ${r.kind === "memory" ? "MemorySaver" : "PostgreSQL"}, threads of ${headline.attempts} attempts × ${kb(headline.size)}`,
      "",
      `*Load average ${r.load[0].toFixed(2)} → ${r.load[1].toFixed(2)}.* Wall time per thread: \`graph.getState\`, and a full \`getStateHistory\` listing. Interleaved; ratio to (a): median (min–max) of per-cycle ratios.`,
      "",
      table(
        ["variant", "getState (µs)", "÷ (a)", "getStateHistory, all (µs)", "÷ (a)"],
        ids.map((id) => [
          LABELS[id],
          fmt(r.getState[id]!),
          id === "today" ? "1" : ratioCell(r.getStateVsToday[id]),
          fmt(r.history[id]!),
          id === "today" ? "1" : ratioCell(r.historyVsToday[id]),
        ]),
      ),
    );
    const delta = r.kind === "memory" ? "delta" : "delta-one-query";
    const gs = r.getStateVsToday[delta];
    const hist = r.historyVsToday[delta];
    if (gs && hist)
      targets.push({
        description: `${r.kind}: reads with the DeltaChannel history ≤ ~1.2× today's (getState and a full history listing)`,
        met: gs.median <= 1.2 && hist.median <= 1.2,
        detail: `getState ${ratioCell(gs)}, getStateHistory ${ratioCell(hist)}${r.kind === "postgres" ? `; stock saver: getState ${ratioCell(r.getStateVsToday.delta)}, getStateHistory ${ratioCell(r.historyVsToday.delta)}` : ""}`,
      });
  }
  sections.push("", "Targets:", targetLines(targets), "", "Checks:", checkLines(checks));
  if (m.notRun.length > 0) sections.push("", `Not run: ${m.notRun.join("; ")}.`);
  sections.push("", `*Load average at the end: ${fmtLoad()}.*`);
  const rows = m.bytes.flatMap((r) =>
    (Object.keys(r.bytes) as VariantId[]).map((id) => ({
      label: `${r.kind} bytes per run, ${LABELS[id]}, ${r.attempts} × ${kb(r.size)}`,
      value: r.bytes[id]!,
      unit: "B",
    })),
  );
  return { ...base, checks, rows, comparisons, targets, markdown: sections.join("\n"), notRun: m.notRun };
}

// Run on its own: npx tsx bench/checkpoint-bytes.ts [--quick]
if (import.meta.url === `file://${process.argv[1]}`) {
  run({ quick: process.argv.includes("--quick") }).then((r) => console.log(r.markdown));
}
