/**
 * Every export of src/ is used by another module (of src/, the graphs, the
 * examples, the benchmarks, the evaluation, the scripts or the tests), or is
 * part of the package's public surface (its entry points) or of what
 * langgraph.json serves. An export nothing else imports is a name the module
 * did not need to publish: it is made local, or removed when nothing uses it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const DIRS = ["src", "graphs", "examples", "testkit", "reliability", "bench", "eval", "scripts", "tests"];
/** Modules whose exports are read by name from outside the code: the entry points and what langgraph.json names. */
const SERVED = ["src/index.ts", "src/agents/index.ts", "src/server/index.ts", "src/server/auth.ts", "src/server/http.ts"];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "fixtures" || name === "node_modules" ? [] : sources(path);
    return /\.(ts|mts|cts|mjs)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Declarations exported by name (`export function f`, `export const x`, `export interface I`, …). */
export function exportedNames(text: string): string[] {
  return [...text.matchAll(/^export (?:declare )?(?:async )?(?:function\*? |const |let |class |abstract class |interface |type |enum )(\w+)/gm)].map(
    (m) => m[1],
  );
}

describe("exports", () => {
  const files = DIRS.flatMap((dir) => sources(join(ROOT, dir))).map((file) => relative(ROOT, file));
  const texts = new Map(files.map((file) => [file, readFileSync(join(ROOT, file), "utf8")]));

  it("reads the declarations a module exports", () => {
    expect(exportedNames("export const A = 1;\nexport async function b() {}\nexport interface C {}\nconst d = 2;\nexport type E = string;")).toEqual([
      "A",
      "b",
      "C",
      "E",
    ]);
  });

  it("every export of src/ is used by another module or is part of the public surface", () => {
    const unused: string[] = [];
    for (const file of files.filter((f) => f.startsWith("src/") && !SERVED.includes(f))) {
      for (const name of exportedNames(texts.get(file)!)) {
        const word = new RegExp(`\\b${name}\\b`);
        if (![...texts].some(([other, text]) => other !== file && word.test(text))) unused.push(`${file}: ${name}`);
      }
    }
    expect(unused).toEqual([]);
  });
});
