/**
 * `npm run build`: removes dist/, compiles src/ twice, and writes dist/.sources-digest.
 *   - dist/src/: the ES modules and their declarations (tsconfig.build.json, type-checked);
 *   - dist/cjs/src/: the same modules as CommonJS (tsconfig.cjs.json: the modules the three entry points reach,
 *     emitted without a second type check), beside a copy of each one's declarations, under a package.json that
 *     says `"type": "commonjs"`, which makes Node and TypeScript read both the .js and the .d.ts files there as
 *     CommonJS (package.json "exports" names them under its `require` condition).
 * The digest is a SHA-256 over every input of those compilations (the files
 * under src/, the tsconfig files, package.json and package-lock.json). The digest
 * lets a caller tell whether dist/ is the build of the sources as they are now
 * (the pack test packs without rebuilding when it is). It is not in the tarball:
 * package.json `files` ships dist/src and dist/cjs only.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIGEST_FILE = join(ROOT, "dist", ".sources-digest");
const CONFIG_FILES = ["tsconfig.json", "tsconfig.build.json", "tsconfig.cjs.json", "package.json", "package-lock.json"];
/** Where the CommonJS build goes (tsconfig.cjs.json's outDir). */
const CJS_DIR = join(ROOT, "dist", "cjs");

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : entry.isFile() ? [path] : [];
  });
}

/** The digest of the build's inputs as they are on disk now. */
export function sourcesDigest(root = ROOT): string {
  const hash = createHash("sha256");
  const files = [...filesUnder(join(root, "src")), ...CONFIG_FILES.map((name) => join(root, name))];
  for (const file of files.map((f) => relative(root, f)).sort()) {
    const bytes = readFileSync(join(root, file));
    hash.update(`${file}\0${bytes.length}\0`).update(bytes);
  }
  return hash.digest("hex");
}

/** Whether dist/ was built from the sources as they are now. */
export function distIsCurrent(): boolean {
  try {
    return readFileSync(DIGEST_FILE, "utf8").trim() === sourcesDigest();
  } catch {
    return false;
  }
}

export function build(): number {
  // The digest is taken before compiling, so an edit made during the build leaves dist/ marked stale.
  const digest = sourcesDigest();
  rmSync(join(ROOT, "dist"), { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  for (const config of ["tsconfig.build.json", "tsconfig.cjs.json"]) {
    const result = spawnSync(process.execPath, [tsc, "-p", config], { cwd: ROOT, stdio: "inherit" });
    if (result.status !== 0) return result.status ?? 1;
  }
  writeFileSync(join(CJS_DIR, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
  // The declarations do not depend on the module format: each CommonJS module gets its ES module's copy.
  for (const file of filesUnder(join(CJS_DIR, "src")).filter((f) => f.endsWith(".js"))) {
    copyFileSync(join(ROOT, "dist", relative(CJS_DIR, file)).replace(/\.js$/, ".d.ts"), file.replace(/\.js$/, ".d.ts"));
  }
  writeFileSync(DIGEST_FILE, `${digest}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = build();
