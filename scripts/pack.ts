/**
 * What `npm pack` and `npm publish` run before and after packing (package.json `prepack` and `postpack`).
 * The tarball's package.json is the checkout's without what only the checkout uses: its scripts (npm,
 * installing the tarball, would list its `prepare` as an install script to approve) and `allowScripts`.
 *
 * `prepack`: builds dist/ unless it is already the build of the sources as they are (npm does not run
 * `prepare` once the package.json it reads has none), keeps the checkout's package.json byte for byte in
 * BACKUP, and writes the packed one in its place. `postpack`: puts the checkout's back. A pack stopped
 * between the two leaves BACKUP behind; the next `prepack` or `postpack` restores it first.
 * `npm pack --ignore-scripts` runs neither, so it packs the checkout's package.json as it is.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, distIsCurrent } from "./build.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MANIFEST = join(ROOT, "package.json");
const BACKUP = join(ROOT, ".package.json.packing");

/** Fields of package.json that only the checkout uses. */
export const CHECKOUT_ONLY_FIELDS = ["scripts", "allowScripts"] as const;

/** The package.json the tarball carries: the checkout's without CHECKOUT_ONLY_FIELDS. */
function packedManifest(text: string): string {
  const manifest = JSON.parse(text) as Record<string, unknown>;
  for (const field of CHECKOUT_ONLY_FIELDS) delete manifest[field];
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

function restore(): void {
  if (existsSync(BACKUP)) renameSync(BACKUP, MANIFEST);
}

function prepack(): number {
  restore();
  if (!distIsCurrent()) {
    const status = build();
    if (status !== 0) return status;
  }
  const text = readFileSync(MANIFEST, "utf8");
  writeFileSync(BACKUP, text);
  writeFileSync(MANIFEST, packedManifest(text));
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const step = process.argv[2];
  if (step === "prepack") process.exitCode = prepack();
  else if (step === "postpack") restore();
  else {
    console.error(`usage: tsx scripts/pack.ts prepack|postpack (got ${JSON.stringify(step)})`);
    process.exitCode = 2;
  }
}
