/**
 * The CommonJS build (tsconfig.cjs.json, what `require("langgraph-trustworthy-output")` loads) is compiled
 * from the same sources as the ES modules. `import.meta` is an ES module's alone: in a CommonJS file it is a
 * SyntaxError when the file loads, so one use anywhere the entry points reach breaks require() of the whole
 * package. Each module the build's entry points reach (following their relative imports, as tsc does for
 * files of src/) is compiled here in memory with the build's options, one file at a time (ts.transpileModule,
 * no type check: the build emits with `noCheck`), and read: no dist/ is written or needed.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/** The CommonJS build's modules as tsc emits them, by source path. */
function emitCommonJs(): Map<string, string> {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, "tsconfig.cjs.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
      },
    },
  );
  if (parsed === undefined) throw new Error("tsconfig.cjs.json could not be read");
  const out = new Map<string, string>();
  const pending = [...parsed.fileNames];
  while (pending.length > 0) {
    const file = pending.pop()!;
    const path = relative(ROOT, file);
    if (out.has(path)) continue;
    const source = readFileSync(file, "utf8");
    out.set(path, ts.transpileModule(source, { compilerOptions: parsed.options, fileName: file }).outputText);
    for (const { fileName } of ts.preProcessFile(source, true, true).importedFiles) {
      if (fileName.startsWith(".")) pending.push(resolve(dirname(file), fileName.replace(/\.js$/, ".ts")));
    }
  }
  return out;
}

describe("the CommonJS build", () => {
  it("is CommonJS, reaches the modules the entry points import, and has no import.meta in any module", () => {
    const modules = emitCommonJs();
    expect([...modules.keys()]).toEqual(expect.arrayContaining(["src/index.ts", "src/agents/index.ts", "src/server/index.ts", "src/specs/standard.ts"]));
    expect(modules.get("src/index.ts")).toMatch(/^"use strict";/);
    expect(modules.get("src/specs/standard.ts")).toMatch(/\bexports\.\w+ = /);
    const withImportMeta = [...modules].filter(([, text]) => /\bimport\s*\.\s*meta\b/.test(text)).map(([path]) => path);
    expect(withImportMeta).toEqual([]);
    // The command line, run as a script, may say import.meta in the ES build: the CommonJS build does not reach it.
    expect([...modules.keys()].filter((path) => path.startsWith("src/cli/"))).toEqual([]);
  });
});
