/**
 * The writing process of the memory benchmark's two-process case: it opens
 * the same Postgres store and namespace as the reader, loads the memory once,
 * prints READY, then adds synthetic steps through StoreMemory (dedup, write,
 * announce) as fast as it can until its stdin closes, and prints one line
 * `RESULT {"writes": n, "added": n, "ms": n}`.
 *
 *   node --import tsx bench/memory-writer.ts --url URL --schema S --capacity N
 */
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import { parseArgs } from "node:util";
import { StoreMemory } from "../src/reflexion/memory-store.js";
import { syntheticEntry, zipfText, BENCH_NAMESPACE } from "./memory-scale.js";

const { values } = parseArgs({ options: { url: { type: "string" }, schema: { type: "string" }, capacity: { type: "string" } } });
const store = new PostgresStore({ connectionOptions: values.url!, schema: values.schema!, ensureTables: false });
const memory = new StoreMemory(store, BENCH_NAMESPACE, Number(values.capacity));
await memory.entries();
process.stdout.write("READY\n");

let stop = false;
process.stdin.on("end", () => (stop = true));
process.stdin.on("data", () => undefined);
process.stdin.resume();

const text = zipfText(99);
const started = performance.now();
let writes = 0;
let added = 0;
while (!stop) {
  const entry = syntheticEntry(text, writes);
  if ((await memory.add({ ...entry, task: `${entry.task} writer${writes}` })).added) added++;
  writes++;
}
process.stdout.write(`RESULT ${JSON.stringify({ writes, added, ms: performance.now() - started })}\n`);
await store.stop();
process.exit(0);
