/** The public types: a spec's type flows to a successful result, and misspelt settings are compile errors (checked with the TypeScript compiler, in process). */
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

describe("typed from end to end", () => {
  it("the fixture type-checks except where it must not, and every @ts-expect-error is needed", () => {
    const fixture = fileURLToPath(new URL("./settings.fixture.ts", import.meta.url));
    const program = ts.createProgram([fixture], {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
    });
    // The fixture's own diagnostics: the types it uses are checked as it uses them, while the bodies of src/
    // are left to the build (`npm run build`, which `npm ci` runs), which fails on any type error.
    const source = program.getSourceFile(fixture)!;
    const found = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    const diagnostics = found.map((d) => `${d.file?.fileName.split("/").pop()}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    // An unused @ts-expect-error (the line compiled) is itself an error, so an empty list proves every marked line fails.
    expect(diagnostics).toEqual([]);
  }, 120_000);
});
