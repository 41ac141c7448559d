/**
 * The package's public surface, read from its entry points with the TypeScript
 * checker: every export, its kind and the first sentence of its doc comment.
 * `npx tsx scripts/api-docs.ts` writes docs/api.md from it;
 * tests/architecture/public-types.test.ts checks that the page is current and
 * that every type a user receives is among the exports.
 */
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const API_PAGE = join(ROOT, "docs", "api.md");
export const ENTRIES = [
  { specifier: "langgraph-trustworthy-output", file: join(ROOT, "src", "index.ts") },
  { specifier: "langgraph-trustworthy-output/agents", file: join(ROOT, "src", "agents", "index.ts") },
  { specifier: "langgraph-trustworthy-output/server", file: join(ROOT, "src", "server", "index.ts") },
];

export interface PublicExport {
  entry: string;
  name: string;
  /** The exported symbol, aliases resolved. */
  symbol: ts.Symbol;
  /** Exported as a type only (`export type { … }`). */
  typeOnly: boolean;
  kind: "class" | "function" | "constant" | "interface" | "type";
  summary: string;
}

export interface PublicSurface {
  program: ts.Program;
  checker: ts.TypeChecker;
  exports: PublicExport[];
}

export function publicSurface(): PublicSurface {
  const program = ts.createProgram(
    ENTRIES.map((entry) => entry.file),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: ["node"],
    },
  );
  const checker = program.getTypeChecker();
  const exports: PublicExport[] = [];
  for (const entry of ENTRIES) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry.file)!)!;
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const typeOnly = (exported.declarations ?? []).some((declaration) => ts.isTypeOnlyImportOrExportDeclaration(declaration));
      const docs = [exported, symbol].map((s) => ts.displayPartsToString(s.getDocumentationComment(checker)).trim()).find((text) => text !== "") ?? "";
      exports.push({
        entry: entry.specifier,
        name: exported.name,
        symbol,
        typeOnly,
        kind: kindOf(symbol),
        summary: firstSentence(docs),
      });
    }
  }
  return { program, checker, exports };
}

function kindOf(symbol: ts.Symbol): PublicExport["kind"] {
  if (symbol.flags & ts.SymbolFlags.Class) return "class";
  if (symbol.flags & ts.SymbolFlags.Function) return "function";
  if (symbol.flags & ts.SymbolFlags.Variable) return "constant";
  if (symbol.flags & ts.SymbolFlags.Interface) return "interface";
  return "type";
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const end = flat.search(/\.(\s|$)/);
  return (end === -1 ? flat : flat.slice(0, end + 1)).replace(/\|/g, "\\|");
}

/** docs/api.md as the surface says it. */
export function apiMarkdown(surface: PublicSurface = publicSurface()): string {
  const lines = [
    "# API",
    "",
    "Every name the package exports, from its three entry points, with the first sentence of its documentation (your editor shows the rest). " +
      "Every type a function here takes or returns can be named from here. Written by `npx tsx scripts/api-docs.ts`; `npm test` checks it is current.",
  ];
  for (const entry of ENTRIES) {
    const rows = surface.exports.filter((e) => e.entry === entry.specifier).sort((a, b) => a.name.localeCompare(b.name));
    lines.push("", `## \`${entry.specifier}\``, "", "| name | kind | what |", "| --- | --- | --- |");
    for (const row of rows) lines.push(`| \`${row.name}\` | ${row.kind} | ${row.summary || "—"} |`);
  }
  return lines.join("\n") + "\n";
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(API_PAGE, apiMarkdown());
  console.log(`wrote ${API_PAGE}`);
}
