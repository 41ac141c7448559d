/**
 * The published declarations stand on their own: a project without Node's types (no @types/node) that
 * checks its libraries' declarations (`skipLibCheck: false`) compiles against every entry point (main, `/agents`,
 * `/server`) with no error in the package's own `.d.ts` files (e.g. no `NodeJS.ProcessEnv`). The declarations are
 * emitted in memory, as `npm run build` emits them, and checked there.
 */
import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ENTRIES } from "../../scripts/api-docs.js";

const ROOT = resolve(import.meta.dirname, "../..");
// The emitted files live, in memory, where dist/ would put them, so that their imports of LangChain and zod resolve.
const OUT = join(ROOT, "dist-declarations-check");

function emitDeclarations(): { emitted: Map<string, string>; program: ts.Program } {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: ROOT,
    outDir: OUT,
    types: ["node"],
  };
  // Through the language service, as an editor asks for declarations: forced, the checker answers what they
  // need instead of checking every file first, as `tsc` does (about half the time). The text is the build's,
  // up to the order in which a union's members or a type's keys are printed.
  const service = ts.createLanguageService({
    getScriptFileNames: () => ENTRIES.map((entry) => entry.file),
    getScriptVersion: () => "1",
    getScriptSnapshot: (file) => {
      const text = ts.sys.readFile(file);
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
    },
    getCompilationSettings: () => options,
    getCurrentDirectory: () => ROOT,
    getDefaultLibFileName: ts.getDefaultLibFilePath,
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  });
  const program = service.getProgram()!;
  const emitted = new Map<string, string>();
  for (const file of program.getSourceFiles()) {
    if (program.isSourceFileFromExternalLibrary(file) || program.isSourceFileDefaultLibrary(file) || file.isDeclarationFile) continue;
    for (const out of service.getEmitOutput(file.fileName, true, true).outputFiles) emitted.set(resolve(out.name), out.text);
  }
  return { emitted, program };
}

describe("the published declarations", () => {
  it("compile without Node's types, libraries' declarations checked", () => {
    const { emitted, program: source } = emitDeclarations();
    const consumer = join(OUT, "consumer.ts");
    // Every entry point, and every declaration their code emits (also what only a dynamic import reaches, as
    // the `/server` entry point's auth and HTTP app): all of them ship, so none may need Node's types.
    const entries = ENTRIES.map((entry) => join(OUT, entry.file.slice(ROOT.length + 1)).replace(/\.ts$/, ".js"));
    expect(entries.every((file) => emitted.has(file.replace(/\.js$/, ".d.ts")))).toBe(true);
    const declarations = [...emitted.keys()].filter((file) => file.endsWith(".d.ts"));
    emitted.set(consumer, entries.map((file, i) => `import * as entry${i} from "./${file.slice(OUT.length + 1)}";\nexport { entry${i} };\n`).join(""));
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: [],
    };
    const host = ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    // A project without @types/node: this checkout has it (for its own code), so it is hidden here.
    const hidden = (path: string) => resolve(path).includes("/node_modules/@types/node");
    host.readFile = (file) => emitted.get(resolve(file)) ?? (hidden(file) ? undefined : readFile(file));
    host.fileExists = (file) => emitted.has(resolve(file)) || (!hidden(file) && fileExists(file));
    // The libraries' declarations the emit already parsed are parsed once (each file is the same text, read the same way).
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (file, ...rest) =>
      (emitted.has(resolve(file)) || hidden(file) ? undefined : source.getSourceFile(file)) ?? getSourceFile(file, ...rest);
    host.directoryExists = (dir) => [...emitted.keys()].some((file) => file.startsWith(resolve(dir) + "/")) || (!hidden(dir) && ts.sys.directoryExists(dir));
    const program = ts.createProgram([consumer, ...declarations], options, host);
    const own = program.getSourceFiles().filter((file) => emitted.has(resolve(file.fileName)));
    expect(own.length).toBeGreaterThan(20);
    expect(own.map((file) => file.fileName)).toEqual(expect.arrayContaining([join(OUT, "src", "environment.d.ts"), join(OUT, "src", "server", "auth.d.ts")]));
    const problems = own.flatMap((file) =>
      [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map(
        (d) => `${dirname(file.fileName).slice(OUT.length + 1)}/${file.fileName.split("/").at(-1)}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`,
      ),
    );
    expect(problems).toEqual([]);
  }, 120_000);
});
