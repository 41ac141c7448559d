/** What the documentation tests read: the README and docs/ pages, their TypeScript blocks and their relative links. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../testkit/dev-server.js";

/** README.md and every docs/*.md page, as paths relative to the repository root. */
export function documentationPages(): string[] {
  return ["README.md", ...readdirSync(join(REPO_ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
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
