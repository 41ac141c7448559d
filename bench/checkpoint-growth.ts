/**
 * Benchmark 6: Reflexion checkpoint growth. One run of 10 tasks × 5 loops
 * through the Postgres checkpointer (instant in-process models, responses of
 * ~600 characters), then the bytes the checkpointer stored, per task: the
 * task's own loop (its checkpoints, channel blobs and writes, under its own
 * checkpoint namespace) divided by its steps. Target: every task's bytes per
 * step within 1.5× of the first task's (state grows by appending, so a step
 * stores what it changed, not the run so far). The run's own namespace (one
 * write per finished task, the outputs once at the end) is reported apart.
 *
 * Needs PostgreSQL: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
 * Tables go to a schema of their own, dropped afterwards.
 */
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { buildReflexionGraph } from "../src/reflexion/graph.js";
import type { ModelRequest } from "../src/models.js";
import { fmt, table, type BenchOptions, type BenchResult, type Target } from "./common.js";
import { ScriptedChatModel } from "../testkit/scripted-model.js";

const TASKS = 10;
const LOOPS = 5;

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const tasks = opts.quick ? 3 : TASKS;
  const loops = opts.quick ? 2 : LOOPS;
  const url = process.env.DATABASE_URL?.trim() || "postgres://postgres@127.0.0.1:5432/postgres";
  const schema = `bench_checkpoints_${process.pid}`;
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const base = { id: "checkpoints", title: "Reflexion checkpoint growth", comparisons: [], checks: [] as BenchResult["checks"] };
  try {
    await pool.query("select 1");
  } catch (error) {
    await pool.end();
    const reason = `PostgreSQL not reachable (${(error as Error).message})`;
    return { ...base, rows: [], targets: [], markdown: `## 6. Reflexion checkpoint growth\n\nNot run: ${reason}.`, notRun: [reason] };
  }
  try {
    await pool.query(`create schema if not exists ${schema}`);
    const saver = new PostgresSaver(pool, undefined, { schema });
    await saver.setup();
    const text = (what: string, n: number) => `${what} ${n}: ` + "lorem ipsum dolor sit amet ".repeat(22);
    let call = 0;
    const model = (request: ModelRequest) =>
      new ScriptedChatModel({
        answers: [() => (request.role === "evaluator" ? `${text("evaluation", call++)}\nFinal score: 6` : text(request.role, call++))],
        repeat: true,
        record: false,
      });
    const graph = buildReflexionGraph({ model, checkpointer: saver });
    const threadId = `growth-${Date.now()}`;
    const out = await graph.invoke(
      { tasks: Array.from({ length: tasks }, (_, i) => `Task ${i}: explain topic number ${i}`) },
      { configurable: { thread_id: threadId }, context: { maxLoops: loops, useMemory: true } },
    );
    if (out.outcomes.some((o) => o.iterations !== loops)) throw new Error("every task should run all its loops");

    const perNs = await pool.query<{ ns: string; first: string; steps: string; bytes: string }>(
      `select c.checkpoint_ns as ns, min(c.checkpoint_id) as first, count(*) as steps,
              sum(octet_length(c.checkpoint::text) + octet_length(c.metadata::text))
              + coalesce((select sum(octet_length(b.blob)) from ${schema}.checkpoint_blobs b where b.thread_id = $1 and b.checkpoint_ns = c.checkpoint_ns), 0)
              + coalesce((select sum(octet_length(w.blob)) from ${schema}.checkpoint_writes w where w.thread_id = $1 and w.checkpoint_ns = c.checkpoint_ns), 0) as bytes
         from ${schema}.checkpoints c where c.thread_id = $1 group by c.checkpoint_ns order by first`,
      [threadId],
    );
    const outer = perNs.rows.find((r) => r.ns === "");
    const inner = perNs.rows.filter((r) => r.ns !== "");
    if (inner.length !== tasks) throw new Error(`expected ${tasks} task namespaces, found ${inner.length}`);
    const perStep = inner.map((r) => Number(r.bytes) / Number(r.steps));
    const worst = Math.max(...perStep) / perStep[0];
    const targets: Target[] = [
      {
        description: `checkpoint bytes per step within 1.5× of the first task's, across ${tasks} tasks × ${loops} loops (Postgres)`,
        met: worst <= 1.5,
        detail: `largest/first ${worst.toFixed(3)}× (first ${fmt(perStep[0])} B/step, largest ${fmt(Math.max(...perStep))} B/step)`,
      },
    ];
    const markdown = [
      "## 6. Reflexion checkpoint growth",
      "",
      `One run of ${tasks} tasks × ${loops} loops through \`PostgresSaver\` (instant in-process models; responses, evaluations and reflections of ~600 characters). ` +
        "Per task: the bytes its own loop stored (checkpoints with metadata, channel blobs and writes under the task's checkpoint namespace) divided by its checkpoints.",
      "",
      table(
        ["task", "checkpoints", "bytes", "bytes per step", "vs task 1"],
        inner.map((r, i) => [i + 1, Number(r.steps), Number(r.bytes).toLocaleString("en-US"), fmt(perStep[i]), `${(perStep[i] / perStep[0]).toFixed(3)}×`]),
      ),
      "",
      outer
        ? `The run's own namespace: ${Number(outer.steps)} checkpoints, ${Number(outer.bytes).toLocaleString("en-US")} bytes in all (one write per finished task with that task's result, and the outputs once when the run ends).`
        : "",
      "",
      targets.map((t) => `- Target: ${t.description}: **${t.met ? "met" : "not met"}** (${t.detail})`).join("\n"),
    ].join("\n");
    const rows = inner.map((r, i) => ({ label: `bytes per step, task ${i + 1}`, value: perStep[i], unit: "B" }));
    return { ...base, rows, targets, markdown };
  } finally {
    await pool.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await pool.end();
  }
}

// Run on its own: npx tsx bench/checkpoint-growth.ts
if (import.meta.url === `file://${process.argv[1]}`) {
  run({ quick: process.argv.includes("--quick") }).then((r) => console.log(r.markdown));
}
