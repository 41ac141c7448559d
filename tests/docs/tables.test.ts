/**
 * Every table row of the README and docs/ pages belongs to a table: a row that does not follow another row
 * opens a table (a separator line follows it). A row left after a paragraph renders as text.
 */
import { describe, expect, it } from "vitest";
import { documentationPages, readPage } from "./markdown.js";

/** Table rows outside code fences that follow no row and open no table, as "page:line". */
function strandedRows(page: string): string[] {
  const lines = readPage(page).split("\n");
  const stranded: string[] = [];
  let fenced = false;
  lines.forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced || !line.startsWith("|")) return;
    const afterRow = i > 0 && lines[i - 1].startsWith("|");
    const opensTable = /^\|(\s*:?-+:?\s*\|)+\s*$/.test(lines[i + 1] ?? "");
    if (!afterRow && !opensTable) stranded.push(`${page}:${i + 1}`);
  });
  return stranded;
}

describe("the documentation's tables", () => {
  it("have no row stranded outside a table", () => {
    expect(documentationPages().length).toBeGreaterThan(10);
    expect(documentationPages().flatMap(strandedRows)).toEqual([]);
  });
});
