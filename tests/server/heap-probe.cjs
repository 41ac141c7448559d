/**
 * Preloaded (NODE_OPTIONS=--require) into the dev server's processes by
 * new-id-memory.ts: on SIGUSR2, collect garbage and write this process's
 * heap in use to $HEAP_PROBE_DIR/<pid>.json, so the measurement sees what a
 * workload left behind rather than garbage not yet collected.
 */
const { writeFileSync } = require("node:fs");
const { join } = require("node:path");
const v8 = require("node:v8");
const vm = require("node:vm");

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");
const dir = process.env.HEAP_PROBE_DIR;
if (dir) {
  process.on("SIGUSR2", () => {
    gc();
    gc();
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify({ pid: process.pid, heapUsed: process.memoryUsage().heapUsed, at: Date.now() }));
  });
}
