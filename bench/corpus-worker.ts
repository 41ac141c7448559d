/**
 * The whole-corpus benchmark's worker (bench/corpus.ts): judges the schemas it is sent, one at a time, and
 * says before each step which validator is about to run, so that the main thread can stop a step that never
 * comes back (the reference validator runs patterns on JavaScript's RegExp, where a schema's pattern can
 * backtrack for hours on a mutated instance) and say which validator it was.
 */
import { parentPort } from "node:worker_threads";
import { judgeEntry, readCorpusEntry } from "../testkit/conformance.js";

parentPort!.on("message", async ({ dir, file }: { dir: string; file: string }) => {
  const outcome = await judgeEntry(readCorpusEntry(dir, file), {
    onPhase: (phase, sofar) => parentPort!.postMessage({ type: "phase", phase, modes: sofar.modes }),
  });
  parentPort!.postMessage({ type: "outcome", outcome });
});
