/**
 * Test files share worker processes and their loaded modules (vitest.config.ts: `isolate: false`). A module
 * mock (`vi.mock`, `vi.doMock`) registered by one file stays in its worker's module registry, so whichever file
 * runs next there may import the mock instead of the module: a failure that depends on which files share a
 * worker, which changes from run to run. Tests take their fakes through the package's own seams instead (a
 * model, a model factory, `ProviderClients` with importers of their own).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "fixtures" ? [] : testFiles(path);
    return /\.(ts|mts|cts)$/.test(name) ? [path] : [];
  });
}

/** The module mocks a source registers, as `vi.mock("…")` / `vi.doMock("…")` / `vi.unmock` calls. */
export function moduleMocksIn(text: string): string[] {
  return [...text.matchAll(/\bvi\s*\.\s*(?:mock|doMock|unmock|doUnmock)\s*\(/g)].map((m) => m[0].replace(/\s/g, ""));
}

describe("module mocks", () => {
  it("are found in a source", () => {
    expect(moduleMocksIn('vi.mock("@langchain/ollama", () => {});\nvi . doMock("x");\nvi.fn(); vi.mocked(f);')).toEqual(["vi.mock(", "vi.doMock("]);
  });

  it("are registered by no test file (they would reach the next file in the worker)", () => {
    const offenders = testFiles(join(ROOT, "tests"))
      .filter((file) => !file.endsWith("module-mocks.test.ts"))
      .flatMap((file) => moduleMocksIn(readFileSync(file, "utf8")).map((call) => `${relative(ROOT, file)}: ${call}`));
    expect(offenders).toEqual([]);
  });
});
