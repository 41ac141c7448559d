/**
 * docs/streaming.md's examples run as written (each in its own Node process,
 * the package's name resolved to its source) and print what the page says.
 * The server example needs a running server; tests/server/streaming.int.test.ts
 * does what it does against the dev server.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runNode } from "../../testkit/cli.js";
import { REPO_ROOT } from "../../testkit/dev-server.js";
import { readPage, typescriptBlocks } from "../docs/markdown.js";

// Inside the repository (git-ignored), so the examples' imports resolve from its node_modules and its own name.
const dir = join(REPO_ROOT, `.docs-check-streaming-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const page = "docs/streaming.md";

/** The text block that follows a TypeScript block on the page: what it prints. */
function printedAfter(code: string): string | undefined {
  const text = readPage(page);
  const rest = text.slice(text.indexOf(code) + code.length);
  const next = /```(ts|text)\n([\s\S]*?)```/.exec(rest);
  return next?.[1] === "text" ? next[2] : undefined;
}

describe("docs/streaming.md", () => {
  const blocks = typescriptBlocks(page);
  const runnable = blocks.filter((code) => !code.includes("@langchain/langgraph-sdk"));

  it("has its examples", () => {
    expect(blocks).toHaveLength(5);
    expect(runnable).toHaveLength(4);
  });

  runnable.forEach((code, i) => {
    it(`example ${i + 1} runs as written and prints what the page shows`, async () => {
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `example-${i + 1}.ts`);
      writeFileSync(file, code);
      const result = await runNode(["--conditions=langgraph-trustworthy-output-source", file], {});
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const shown = printedAfter(code);
      // Every line the page shows is printed, in order ("…" stands for lines left out).
      const lines = (shown ?? "").split("\n").filter((line) => line !== "" && line !== "…");
      let from = 0;
      for (const line of lines) {
        const at = result.stdout.indexOf(line, from);
        expect(at, `${line}\n--- printed ---\n${result.stdout}`).toBeGreaterThanOrEqual(0);
        from = at + line.length;
      }
      if (shown === undefined) expect(result.stdout).toMatch(/released 2\.4\.0 with 2 changes/);
    }, 120_000);
  });
});
