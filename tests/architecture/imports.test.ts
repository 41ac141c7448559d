/**
 * The import graph, as the layout promises it: no import cycle anywhere in the repository (src/, graphs/,
 * examples/, testkit/, reliability/, bench/, eval/, scripts/ and the tests' shared helpers), and the createAgent
 * middleware (src/agents/) stands beside the validation graph, not on it: what both need (the review protocol,
 * the retry feedback) lives in modules of its own (src/review.ts, src/feedback.ts). The check step judges through
 * the validator alone, whose messages are rendered by a module that calls nothing back; both graphs' nodes are
 * module-level functions that take their builder's share from a node context.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const DIRS = ["src", "graphs", "examples", "testkit", "reliability", "bench", "eval", "scripts", "tests/support"];

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (/\.(ts|mts|cts)$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Static imports and re-exports of relative modules (type-only imports included: they are still a dependency of the design). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/gms)) {
    const target = resolve(dirname(file), m[1].replace(/\.js$/, ".ts"));
    found.push(relative(ROOT, target));
  }
  return found;
}

const files = DIRS.flatMap((d) => tsFiles(join(ROOT, d))).map((f) => relative(ROOT, f));
const graph = new Map(files.map((f) => [f, importsOf(join(ROOT, f)).filter((t) => files.includes(t))]));

describe("the import graph", () => {
  it("reads the repository's modules", () => {
    expect(files.length).toBeGreaterThan(150);
    expect(graph.get("src/validation/nodes.ts")).toContain("src/review.ts");
  });

  it("has no cycle anywhere", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const path: string[] = [];
    const visit = (file: string) => {
      state.set(file, "open");
      path.push(file);
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === "open") cycles.push([...path.slice(path.indexOf(next)), next].join(" → "));
        else if (!state.has(next)) visit(next);
      }
      path.pop();
      state.set(file, "done");
    };
    for (const file of files) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });

  it("src/agents/ imports nothing from src/validation/", () => {
    const offending = [...graph]
      .filter(([file]) => file.startsWith("src/agents/"))
      .flatMap(([file, targets]) => targets.filter((t) => t.startsWith("src/validation/")).map((t) => `${file} → ${t}`));
    expect(offending).toEqual([]);
  });

  it("the check step judges through src/specs/validate.ts alone, and the messages it renders with call nothing back", () => {
    expect(graph.get("src/specs/check.ts")).toContain("src/specs/validate.ts");
    expect(graph.get("src/specs/check.ts")).not.toContain("src/specs/messages.ts");
    expect(graph.get("src/specs/validate.ts")).toContain("src/specs/messages.ts");
    expect(graph.get("src/specs/messages.ts")!.filter((t) => ["src/specs/check.ts", "src/specs/validate.ts", "src/specs/registry.ts"].includes(t))).toEqual([]);
  });

  it("both graphs' nodes take what they need from a node context of their builder, not from closures", () => {
    for (const room of ["validation", "reflexion"]) {
      const nodes = readFileSync(join(ROOT, `src/${room}/nodes.ts`), "utf8");
      expect(graph.get(`src/${room}/nodes.ts`)).toContain(`src/${room}/node-context.ts`);
      expect(nodes).not.toMatch(/^export function make\w+\(/m);
    }
  });
});

describe("each setting's values are declared once", () => {
  const sources = files.filter((f) => f.startsWith("src/")).map((f) => readFileSync(join(ROOT, f), "utf8"));
  const count = (needle: string) => sources.reduce((n, text) => n + text.split(needle).length - 1, 0);
  it.each([
    ["the answer modes", '"text", "json_object", "json_schema", "tool"'],
    ["the stop policies", '"never", "useless", "first-error"'],
    ["the early stop reasons", '"broken-json", "wrong-root", "too-large", "too-many-errors", "first-error"'],
    ["the onFailure choices", '"end", "interrupt"'],
    ["who gives an answer", '"model", "human"'],
  ])("%s are written out once in src/", (_what, list) => {
    expect(count(list)).toBe(1);
  });

  it("the attempt bounds are declared once (MAX_ATTEMPTS, MAX_RUN_ATTEMPTS) and no other module writes its own", () => {
    expect(count("export const MAX_ATTEMPTS = ")).toBe(1);
    expect(count("export const MAX_RUN_ATTEMPTS = ")).toBe(1);
    expect(sources.filter((text) => /const MAX_\w*ATTEMPTS\w* = 10\b/.test(text))).toHaveLength(1);
  });
});
