/**
 * Every type a user receives can be named: walking the types of everything the
 * package's entry points export (function parameters and results, properties,
 * class members, type arguments), each named type declared in src/ is itself
 * exported from an entry point, so a user can write it in an annotation.
 * (Types inferred from zod schemas, such as AttemptRecord, reach the checker
 * without their alias; their fields are still walked.)
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { API_PAGE, apiMarkdown, publicSurface, type PublicExport } from "../../scripts/api-docs.js";

const SRC = resolve(import.meta.dirname, "../../src") + "/";
const surface = publicSurface();
const checker = surface.checker;

const NAMED = ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class | ts.SymbolFlags.Enum;

/** Where a symbol is declared, when that is the package's own source. */
function ownDeclaration(symbol: ts.Symbol | undefined): ts.Declaration | undefined {
  const declaration = symbol?.declarations?.[0];
  return declaration && declaration.getSourceFile().fileName.startsWith(SRC) ? declaration : undefined;
}

/** Named types of the package that a user meets through `roots`, by name, with where they were met. */
function reachableNamedTypes(roots: PublicExport[]): Map<ts.Declaration, string> {
  const found = new Map<ts.Declaration, string>();
  const seen = new Set<ts.Type>();

  const noteNamed = (symbol: ts.Symbol | undefined, via: string) => {
    const declaration = ownDeclaration(symbol);
    if (declaration && symbol!.flags & NAMED && !found.has(declaration)) found.set(declaration, `${symbol!.name} (via ${via})`);
  };

  const visitSignature = (signature: ts.Signature, via: string) => {
    for (const parameter of signature.getParameters()) visitType(checker.getTypeOfSymbol(parameter), `${via}(${parameter.name})`);
    visitType(signature.getReturnType(), `${via}()`);
  };

  function visitType(type: ts.Type, via: string): void {
    if (seen.has(type)) return;
    seen.add(type);
    noteNamed(type.aliasSymbol, via);
    noteNamed(type.getSymbol(), via);
    for (const argument of type.aliasTypeArguments ?? []) visitType(argument, via);
    if (type.isUnionOrIntersection()) for (const member of type.types) visitType(member, via);
    const symbol = type.aliasSymbol ?? type.getSymbol();
    // Types of other packages (LangChain's, zod's) are theirs to name: only the package's own and anonymous types are walked into.
    const declaredElsewhere = symbol?.declarations?.length && !ownDeclaration(symbol) && !(symbol.flags & ts.SymbolFlags.TypeLiteral);
    if (type.flags & ts.TypeFlags.Object) {
      if ((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference)
        for (const argument of checker.getTypeArguments(type as ts.TypeReference)) visitType(argument, via);
      if (declaredElsewhere) return;
      for (const property of checker.getPropertiesOfType(type)) {
        if (property.getName().startsWith("#") || property.getName().startsWith("__")) continue;
        const declaration = property.valueDeclaration ?? property.declarations?.[0];
        if (declaration && ts.getCombinedModifierFlags(declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
        visitType(checker.getTypeOfSymbol(property), `${via}.${property.getName()}`);
      }
      for (const signature of type.getCallSignatures()) visitSignature(signature, via);
      for (const signature of type.getConstructSignatures()) visitSignature(signature, `new ${via}`);
    }
  }

  for (const { symbol, typeOnly } of roots) {
    if (!typeOnly && symbol.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Variable | ts.SymbolFlags.Class))
      visitType(checker.getTypeOfSymbol(symbol), symbol.name);
    if (symbol.flags & NAMED) visitType(checker.getDeclaredTypeOfSymbol(symbol), symbol.name);
  }
  return found;
}

describe("the public surface", () => {
  const names = new Set(surface.exports.flatMap((e) => e.symbol.declarations ?? []));
  const reachable = reachableNamedTypes(surface.exports);

  it("walks the types users receive", () => {
    // The walk reaches well-known result types; if it reached nothing, the check below would pass vacuously.
    const reached = [...reachable.values()].map((entry) => entry.split(" ")[0]);
    expect(reached).toEqual(expect.arrayContaining(["ValidationOutcome", "Verdict", "ResponseOutcome", "RunReport", "StoppedAnswer"]));
  });

  it("names every type a user receives", () => {
    const unnamed = [...reachable].filter(([declaration]) => !names.has(declaration)).map(([, where]) => where);
    expect(unnamed).toEqual([]);
  });

  it("is listed in docs/api.md as it is (npx tsx scripts/api-docs.ts writes it)", () => {
    expect(readFileSync(API_PAGE, "utf8")).toBe(apiMarkdown(surface));
  });

  it("is small: at most 95 names over the entry points, each once and each explained", () => {
    const named = surface.exports.map((e) => e.name);
    expect(named.length).toBeLessThanOrEqual(95);
    expect(new Set(named).size).toBe(named.length);
    expect(surface.exports.filter((e) => e.summary === "").map((e) => `${e.entry}: ${e.name}`)).toEqual([]);
  });

  it("keeps no deprecated name: a rename is made everywhere at once (0.x, unpublished)", () => {
    const deprecated = sourceFiles(SRC).filter((file) => /@deprecated\b/.test(readFileSync(file, "utf8")));
    expect(deprecated).toEqual([]);
    expect(surface.exports.filter((e) => e.symbol.getJsDocTags(checker).some((tag) => tag.name === "deprecated")).map((e) => e.name)).toEqual([]);
  });
});

/** The TypeScript files under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => /\.(ts|mts|cts)$/.test(name))
    .map((name) => join(dir, name));
}
