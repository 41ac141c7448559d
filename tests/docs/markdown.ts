/** What the documentation tests read: the README and docs/ pages, their TypeScript blocks and their relative links. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../testkit/dev-server.js";

/** README.md and every docs/*.md page, as paths relative to the repository root. */
export function documentationPages(): string[] {
  return [
    "README.md",
    ...readdirSync(join(REPO_ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .sort()
      .map((f) => `docs/${f}`),
  ];
}

export function readPage(page: string): string {
  return readFileSync(join(REPO_ROOT, page), "utf8");
}

/** The ```ts blocks of a page, in order. */
export function typescriptBlocks(page: string): string[] {
  return [...readPage(page).matchAll(/```(?:ts|typescript)\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a page's headings (outside code blocks). */
export function anchors(page: string): Set<string> {
  const text = readPage(page).replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])));
}

/** Relative links of a page (outside code blocks): [text](target), with no scheme. */
export function relativeLinks(page: string): string[] {
  const text = readPage(page).replace(/```[\s\S]*?```/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Every file under src/, relative to the repository root. */
function sourceFiles(dir = "src"): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(`${dir}/${entry.name}`) : entry.name.endsWith(".ts") ? [`${dir}/${entry.name}`] : [],
  );
}

/** The ```ts blocks of the JSDoc `@example`s in src/, with the file each is in. */
export function jsdocExamples(): Array<{ file: string; code: string }> {
  const examples: Array<{ file: string; code: string }> = [];
  for (const file of sourceFiles()) {
    for (const comment of readPage(file).matchAll(/\/\*\*[\s\S]*?\*\//g)) {
      const text = comment[0]
        .split("\n")
        .map((line) => line.replace(/^\s*\*\s?/, ""))
        .join("\n");
      for (const block of text.matchAll(/@example\s*\n```(?:ts|typescript)\n([\s\S]*?)```/g)) examples.push({ file, code: block[1] });
    }
  }
  return examples;
}
