/**
 * The package compiled to plain JavaScript for timing.
 *
 * The benchmarks run under tsx, whose esbuild transform keeps function names
 * by wrapping every function created at run time in a `__name(...)` call.
 * That is not the code users run (tsc's output in dist/ has no such helper),
 * and on small hot functions it is a large share of the time. So the timed
 * code is compiled once, file by file, with esbuild and no keepNames (the
 * same module structure as tsc's output), into bench/.cache/, and imported
 * from there. Dependencies resolve from the repository's node_modules as usual.
 */
import { build } from "esbuild";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Benchmark and testkit files that are timed along with the package's code. */
const BENCH_FILES = [
  "bench/handwritten-checker.ts",
  "bench/plain-loop.ts",
  "testkit/scripted-model.ts",
  "bench/peer-clients.ts",
  "bench/delta-history-saver.ts",
];

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

let ready: Promise<string> | undefined;

/** Compile (once per source state) and return the output directory. */
export function compiledDir(): Promise<string> {
  return (ready ??= (async () => {
    const entries = [...tsFiles(join(ROOT, "src")), ...BENCH_FILES.map((f) => join(ROOT, f))];
    let h = 0x811c9dc5;
    for (const file of entries) {
      const s = statSync(file);
      for (const c of `${relative(ROOT, file)}:${s.size}:${s.mtimeMs};`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193);
    }
    const outdir = join(ROOT, "bench", ".cache", `js-${(h >>> 0).toString(16)}`);
    if (existsSync(outdir)) return outdir;
    const staging = `${outdir}.${process.pid}.tmp`;
    mkdirSync(staging, { recursive: true });
    await build({
      entryPoints: entries,
      outdir: staging,
      outbase: ROOT,
      bundle: false,
      format: "esm",
      platform: "node",
      target: "node20",
      keepNames: false,
      sourcemap: false,
      logLevel: "error",
    });
    try {
      renameSync(staging, outdir);
    } catch {
      // Another process compiled the same sources first.
      rmSync(staging, { recursive: true, force: true });
    }
    // Builds of earlier source states are not needed any more.
    const cache = join(ROOT, "bench", ".cache");
    for (const name of readdirSync(cache)) {
      if (/^js-[0-9a-f]+$/.test(name) && join(cache, name) !== outdir) rmSync(join(cache, name), { recursive: true, force: true });
    }
    return outdir;
  })());
}

/** Import a module of the compiled package, e.g. `compiled<typeof import("../src/specs/validate.js")>("src/specs/validate")`. */
export async function compiled<T>(modulePath: string): Promise<T> {
  const dir = await compiledDir();
  return (await import(pathToFileURL(join(dir, `${modulePath}.js`)).href)) as T;
}
