/**
 * Every TypeScript file is formatted by Prettier with the repository's settings (.prettierrc.json): one style,
 * so a diff shows what changed and nothing else. `npx prettier --write "**\/*.ts"` formats a file that fails.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import * as prettier from "prettier";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SKIP = new Set(["node_modules", "dist", ".git", ".langgraph_api", "fixtures"]);

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    // The documentation tests write blocks into .docs-check-* folders while they run.
    if (SKIP.has(name) || name.startsWith(".docs-check")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (/\.(ts|mts|cts)$/.test(name)) out.push(path);
  }
  return out;
}

describe("formatting", () => {
  it("every TypeScript file is formatted as Prettier formats it", async () => {
    const files = tsFiles(ROOT);
    expect(files.length).toBeGreaterThan(200);
    const unformatted: string[] = [];
    for (const path of files) {
      const options = await prettier.resolveConfig(path);
      if (!(await prettier.check(readFileSync(path, "utf8"), { ...options, filepath: path }))) unformatted.push(relative(ROOT, path));
    }
    expect(unformatted).toEqual([]);
  });
});
