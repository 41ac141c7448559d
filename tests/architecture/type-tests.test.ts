/**
 * The type tests mean something in `npm test`: vitest runs `expectTypeOf` as a no-op at run time, so every
 * test file that uses it is type-checked here, with the project's own compiler options, and must compile
 * without a diagnostic. A type assertion that no longer holds fails this test.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : testFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

// A backstop only: the check takes about 10 s of CPU, and a busy machine stretches wall time without limit.
const BACKSTOP_MS = 900_000;

it(
  "every test file with type assertions compiles under the project's compiler options",
  () => {
    const files = testFiles(join(ROOT, "tests")).filter((file) => readFileSync(file, "utf8").includes("expectTypeOf"));
    expect(files.length).toBeGreaterThanOrEqual(3);
    const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const program = ts.createProgram(files, { ...options, noEmit: true });
    const diagnostics = files.flatMap((file) => {
      const source = program.getSourceFile(file)!;
      return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    });
    const text = ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => "\n" });
    expect(text).toBe("");
  },
  BACKSTOP_MS,
);
