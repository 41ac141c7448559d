/**
 * `npm run build`: removes dist/, compiles src/ with tsconfig.build.json, and writes
 * dist/.sources-digest, a SHA-256 over every input of that compilation (the files
 * under src/, the tsconfig files, package.json and package-lock.json). The digest
 * lets a caller tell whether dist/ is the build of the sources as they are now
 * (the pack test packs without rebuilding when it is). It is not in the tarball:
 * package.json `files` ships dist/src only.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIGEST_FILE = join(ROOT, "dist", ".sources-digest");
const CONFIG_FILES = ["tsconfig.json", "tsconfig.build.json", "package.json", "package-lock.json"];

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
  const result = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0) return result.status ?? 1;
  writeFileSync(DIGEST_FILE, `${digest}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = build();
