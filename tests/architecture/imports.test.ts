/**
 * The import graph, as the layout promises it: no import cycle anywhere in the repository (src/, graphs/,
 * examples/, testkit/, reliability/, bench/, eval/, scripts/ and the tests' shared helpers); the rooms of src/
 * (a folder, or a file at its root) on floors, none importing from a room above its own nor from anything
 * outside src/, and no two rooms importing each other, however indirectly; and the createAgent middleware
 * (src/agents/) beside the validation graph, not on it: what both need (the review protocol, the retry
 * feedback) lives in a room of its own (src/protocol/). The check step judges through the validator alone, whose
 * messages are rendered by a module that calls nothing back; both graphs' nodes are module-level functions that
 * take their builder's share from a node context.
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
    expect(graph.get("src/validation/nodes.ts")).toContain("src/protocol/review.ts");
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

/**
 * The floors of src/, from the ground up. A module imports from its own room or from a room on a lower floor;
 * on its own floor, only from a room that does not import it back (no cycle between rooms). A new folder or
 * root file of src/ takes its place here.
 */
const FLOORS: Array<{ floor: string; rooms: string[] }> = [
  {
    floor: "the ground: the error family and what every room speaks (bounded text, usage, outcomes)",
    rooms: ["src/errors.ts", "src/shared/"],
  },
  { floor: "the JSON readers and the one path renderer", rooms: ["src/json/"] },
  { floor: "specs and the one check step", rooms: ["src/specs/"] },
  {
    floor: "the parts the graphs, the middleware and the tools are built of",
    rooms: [
      "src/environment.ts",
      "src/settings.ts",
      "src/protocol/",
      "src/streaming/",
      "src/graph/",
      "src/simulated/",
      "src/models.ts",
      "src/model-option.ts",
      "src/providers/",
      "src/telemetry/",
      "src/persistence/",
      "src/tools/",
    ],
  },
  { floor: "the two graphs and the createAgent middleware", rooms: ["src/validation/", "src/reflexion/", "src/agents/"] },
  { floor: "the entry points", rooms: ["src/index.ts", "src/server/", "src/cli/"] },
];

/** The room of a module of src/: the longest room that holds it (undefined: on no floor). */
function roomOf(file: string): string | undefined {
  const rooms = FLOORS.flatMap((f) => f.rooms).filter((room) => (room.endsWith("/") ? file.startsWith(room) : file === room));
  return rooms.sort((a, b) => b.length - a.length)[0];
}
const floorOf = (room: string) => FLOORS.findIndex((f) => f.rooms.includes(room));

/** Each import between two rooms of src/, as room → room with the files that make it. */
function roomImports(edges: Iterable<[string, string[]]>): Map<string, Map<string, string[]>> {
  const rooms = new Map<string, Map<string, string[]>>();
  for (const [file, targets] of edges) {
    const from = roomOf(file);
    if (from === undefined) continue;
    for (const target of targets) {
      const to = roomOf(target);
      if (to === undefined || to === from) continue;
      const out = rooms.get(from) ?? new Map<string, string[]>();
      out.set(to, [...(out.get(to) ?? []), `${file} → ${target}`]);
      rooms.set(from, out);
    }
  }
  return rooms;
}

/** The cycles among rooms, each as room → … → room. */
function roomCycles(rooms: Map<string, Map<string, string[]>>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (room: string) => {
    state.set(room, "open");
    path.push(room);
    for (const next of rooms.get(room)?.keys() ?? []) {
      if (state.get(next) === "open") cycles.push([...path.slice(path.indexOf(next)), next].join(" → "));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(room, "done");
  };
  for (const room of rooms.keys()) if (!state.has(room)) visit(room);
  return cycles;
}

/** The imports that run up the floors, as "from (floor) → to (floor): file → file". */
function importsUp(rooms: Map<string, Map<string, string[]>>): string[] {
  return [...rooms].flatMap(([from, targets]) =>
    [...targets]
      .filter(([to]) => floorOf(to) > floorOf(from))
      .map(([to, via]) => `${from} (floor ${floorOf(from) + 1}) → ${to} (floor ${floorOf(to) + 1}): ${via.join(", ")}`),
  );
}

describe("the floors of src/", () => {
  const sources = [...graph].filter(([file]) => file.startsWith("src/"));

  it("hold every module of src/, each room on one floor", () => {
    expect(sources.filter(([file]) => roomOf(file) === undefined).map(([file]) => file)).toEqual([]);
    const rooms = FLOORS.flatMap((f) => f.rooms);
    expect(rooms.filter((room, i) => rooms.indexOf(room) !== i)).toEqual([]);
  });

  it("have no import running up, and nothing in src/ imports from outside it", () => {
    expect(importsUp(roomImports(sources))).toEqual([]);
    const outside = sources.flatMap(([file, targets]) => targets.filter((t) => !t.startsWith("src/")).map((t) => `${file} → ${t}`));
    expect(outside).toEqual([]);
  });

  it("have no cycle between rooms, however indirect", () => {
    expect(roomCycles(roomImports(sources))).toEqual([]);
  });

  it("are checked as written: an import up, or two rooms importing each other, is found", () => {
    const up: Array<[string, string[]]> = [["src/specs/registry.ts", ["src/environment.ts"]]];
    expect(importsUp(roomImports(up))).toEqual(["src/specs/ (floor 3) → src/environment.ts (floor 4): src/specs/registry.ts → src/environment.ts"]);
    const around: Array<[string, string[]]> = [
      ["src/settings.ts", ["src/specs/registry.ts"]],
      ["src/specs/check.ts", ["src/shared/text.ts"]],
      ["src/shared/text.ts", ["src/settings.ts"]],
    ];
    expect(roomCycles(roomImports(around))).toEqual(["src/settings.ts → src/specs/ → src/shared/ → src/settings.ts"]);
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
