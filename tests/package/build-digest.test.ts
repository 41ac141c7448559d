import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sourcesDigest } from "../../scripts/build.js";

describe("the build's digest of its inputs (lets the pack test skip a rebuild only when dist/ is current)", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "lto-digest-"));
    await mkdir(join(root, "src", "specs"), { recursive: true });
    for (const name of ["tsconfig.json", "tsconfig.build.json", "tsconfig.cjs.json", "package.json", "package-lock.json"])
      await writeFile(join(root, name), "{}");
    await writeFile(join(root, "src", "index.ts"), "export const a = 1;\n");
    await writeFile(join(root, "src", "specs", "spec.ts"), "export const b = 2;\n");
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("changes with any source file, a new or renamed file, a config file or the lockfile, and only then", async () => {
    const first = sourcesDigest(root);
    expect(sourcesDigest(root)).toBe(first);

    await writeFile(join(root, "src", "specs", "spec.ts"), "export const b = 3;\n");
    const edited = sourcesDigest(root);
    expect(edited).not.toBe(first);

    await writeFile(join(root, "src", "specs", "extra.ts"), "");
    const added = sourcesDigest(root);
    expect(added).not.toBe(edited);

    await rm(join(root, "src", "specs", "extra.ts"));
    await writeFile(join(root, "src", "extra.ts"), "");
    expect(sourcesDigest(root)).not.toBe(added);
    await rm(join(root, "src", "extra.ts"));
    expect(sourcesDigest(root)).toBe(edited);

    for (const name of ["tsconfig.build.json", "tsconfig.cjs.json", "package-lock.json"]) {
      await writeFile(join(root, name), '{"changed":true}');
      expect(sourcesDigest(root), name).not.toBe(edited);
      await writeFile(join(root, name), "{}");
    }
    expect(sourcesDigest(root)).toBe(edited);
  });
});
