/**
 * What each LangGraph durability mode costs the validation graph, against no
 * checkpointer: a two-attempt run with the in-process scripted model and a
 * MemorySaver, the four variants interleaved in one process (each once per
 * cycle, in random order), CPU time per run. Prints median (min–max) of the
 * per-cycle ratios and the load average; docs/production.md quotes it.
 *
 *   npx tsx bench/durability.ts [cycles=15] [runsPerCycle=30]
 */
import { loadavg } from "node:os";
import { MemorySaver } from "@langchain/langgraph";
import { builtinSpecs } from "../src/specs/registry.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { ScriptedChatModel } from "../testkit/scripted-model.js";

const cycles = Number(process.argv[2] ?? 15);
const runsPerCycle = Number(process.argv[3] ?? 30);

const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
// An answer that breaks a cross-field rule, then the valid one: every run takes two attempts.
const model = new ScriptedChatModel({ answers: [JSON.stringify({ ...example, replicas: 8 }), JSON.stringify(example)], repeat: true, record: false });
const context = { spec: "deployment-config", maxAttempts: 2 };
const plain = buildValidationGraph({ model });
const checkpointed = buildValidationGraph({ model, checkpointer: new MemorySaver() });
let thread = 0;

const variants: Record<string, () => Promise<unknown>> = {
  none: () => plain.invoke({ request: "x" }, { context }),
  sync: () => checkpointed.invoke({ request: "x" }, { context, configurable: { thread_id: `t${thread++}` }, durability: "sync" }),
  async: () => checkpointed.invoke({ request: "x" }, { context, configurable: { thread_id: `t${thread++}` }, durability: "async" }),
  exit: () => checkpointed.invoke({ request: "x" }, { context, configurable: { thread_id: `t${thread++}` }, durability: "exit" }),
};

const cpu: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const loadBefore = loadavg()[0];
for (let i = 0; i < 30; i++) for (const run of Object.values(variants)) await run(); // warm-up
for (let cycle = 0; cycle < cycles; cycle++) {
  for (const name of Object.keys(variants).sort(() => Math.random() - 0.5)) {
    const start = process.cpuUsage();
    for (let i = 0; i < runsPerCycle; i++) await variants[name]();
    const used = process.cpuUsage(start);
    cpu[name].push((used.user + used.system) / runsPerCycle);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`no checkpointer: ${median(cpu.none).toFixed(0)} µs CPU per run; load average ${loadBefore.toFixed(2)} → ${loadavg()[0].toFixed(2)}`);
for (const name of ["sync", "async", "exit"]) {
  const ratios = cpu[name].map((value, i) => value / cpu.none[i]);
  console.log(`${name} ÷ none: ${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×)`);
}
