/**
 * The package as a user gets it: `npm pack` (whose `prepack` builds dist/
 * unless it is already the build of the current sources, and gives the
 * tarball a package.json without the checkout's scripts), then the tarball
 * installed into fresh projects outside the repository that already name their
 * own `@langchain/core`, `@langchain/langgraph` and `zod`, as every LangGraph
 * app does. There are two set-ups: the lowest versions the peer ranges allow,
 * and the highest, the versions this repository is tested with (its dev pins).
 * In each, npm must leave one copy of `@langchain/core` and of
 * `@langchain/langgraph`, the project's own; an ESM script runs the
 * validation graph, the project's own chat model class and checkpointer work
 * with the package, a strict `tsc --noEmit` compiles a TypeScript consumer
 * against the shipped declarations, and the `langgraph-trustworthy-output`
 * command runs through npx. The `/agents` entry point is checked in those
 * projects, which have no `langchain` (an optional peer: loading the entry
 * point fails naming it), and in a second project per set-up with `langchain`
 * installed beside the tarball (a createAgent with the middleware and a
 * scripted model ends with a validated outcome). Each project has a CommonJS
 * folder (`cjs/`, "type": "commonjs"): require() gets the package's CommonJS
 * build (dist/cjs/), which runs the validation graph and the createAgent
 * middleware, and a strict tsc with `"module": "commonjs"` types static
 * imports of both entry points, value and type, with no `resolution-mode`.
 * In both kinds of project, ESM and CommonJS, a plain zod schema (no
 * defineSpec) with `startsWith`, `cuid`, `e164` and a refinement is the spec:
 * the strict tsc compiles the fixture with its type assertions and emits it,
 * and the emitted script gets a typed, validated result.
 * A fifth project serves the graphs from its own langgraph.json
 * (tests/package/server-consumer/, on the highest set-up, with the LangGraph
 * CLI): the `/server` entry point re-exported as it is (auth off), and with
 * `withServerRules` on the project's own Auth and Hono app (auth on); its own
 * `langgraphjs dev` serves each, and the state-write cases and the attack
 * suite the package's own server is tested with run against them; a
 * CommonJS script there require()s `/server` and serves a route through
 * withServerRules.
 *
 * The installs use the npm cache (`--prefer-offline`): what `npm ci` filled,
 * plus the lowest supported versions, fetched from the registry the first time.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKOUT_ONLY_FIELDS } from "../../scripts/pack.js";
import { checkValue } from "../../src/specs/check.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { Client } from "@langchain/langgraph-sdk";
import { ATTACK_KEYS, attackModelResponder, runAuthAttacks } from "../../reliability/auth-attacks.js";
import { REPO_ROOT, startDevServer, type DevServer } from "../../testkit/dev-server.js";
import { startScriptedOpenAIServer, userTextOf, type ScriptedServer } from "../../testkit/openai-server.js";
import { STATE_WRITE_CASES, STATE_WRITE_REQUEST, stateWriteResponder, type StateWriteTarget } from "../server/state-write-cases.js";

// Measured on a 2-core machine shared with other work: each node script 1-5 s alone (55 s with six tsc runs beside
// it at load 10); each npx run 2-8 s. STEP_TIMEOUT leaves a margin of ten times or more over each of them alone.
const STEP_TIMEOUT = 180_000;
// The set-up and the tsc runs are what a busy machine stretches most: npm pack, with its build, 20-70 s (511 s under
// `BUSY_LOOPS=4 scripts/busy.sh` at load 25); the four npm installs side by side 20-65 s (12-21 s for one alone); the
// six tsc runs side by side 15-30 s on a quieter machine and 160 s at load 10 (3-17 s for one alone, about 10 s of
// CPU). Their budget is CPU time instead (the shell's `ulimit -t`, per process), which waiting for a core does not
// use up, and what waits for them has no wall-clock limit. npm's own network timeouts bound a fetch that hangs.
const BUILD_CPU_SECONDS = 600;
const INSTALL_CPU_SECONDS = 300;
const TSC_CPU_SECONDS = 180;

interface Run {
  code: number | null;
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment for npm and node in the consumer: the caller's, minus what
 * `npm test` itself sets for its scripts (a child npm would read those as its
 * own configuration, e.g. the repository as its prefix), keeping where the
 * cache and user config are.
 */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && !/^npm_config_(cache|userconfig|registry)$/i.test(key)) continue;
    if (/^(OPENAI_|LLM_|LANGSMITH_|LANGCHAIN_|DATABASE_URL$)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, LANGSMITH_TRACING: "false", ...extra };
}

/** `run` with a CPU-time budget (the shell's `ulimit -t`) for the command and each process it starts. */
function runWithCpuBudget(seconds: number, command: string, args: string[], cwd: string): Promise<Run> {
  return run("/bin/sh", ["-c", `ulimit -t ${seconds} && exec "$0" "$@"`, command, ...args], cwd);
}

function run(command: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(extraEnv), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function explain(what: string, result: Run): string {
  if (result.signal === "SIGXCPU" || result.signal === "SIGKILL") return `${what} used up its CPU time (${result.signal})`;
  return `${what} exited with ${result.code}\n--- stdout ---\n${result.stdout.slice(-4000)}\n--- stderr ---\n${result.stderr.slice(-4000)}`;
}

const repoPackage = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, Record<string, string> | string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const BIN = repoPackage.name;
const CORE = "@langchain/core";
const LANGGRAPH = "@langchain/langgraph";

interface PlainZodReport {
  fixed: { success: boolean; stopReason: string; attempts: number; phone: string; value: Record<string, unknown>; firstErrors: string[] };
  refused: { success: boolean; stopReason: string; attempts: number; errors: string[] };
  direct: { valid: boolean; errors: string[] };
}

/**
 * What the plain-zod fixtures (consumer/plain-zod.ts, consumer/cjs/plain-zod.ts) report: the check step's own
 * messages for an answer that breaks startsWith, cuid, e164 and the refinement, one per field, each naming its
 * field; a run fed that answer and then a valid one ends valid with the typed result; a run with one attempt
 * ends refused with those messages.
 */
function expectPlainZodReport(report: PlainZodReport): void {
  expect(report.direct.valid).toBe(false);
  expect(report.direct.errors.map((error) => /^(\w+) is /.exec(error)?.[1])).toEqual(["id", "customer", "phone", "deliverBy"]);
  expect(report.direct.errors[0]).toContain("ord_");
  expect(report.direct.errors[3]).toContain("deliverBy must not be before shipBy");
  expect(report.fixed).toMatchObject({ success: true, stopReason: "valid", attempts: 2, firstErrors: report.direct.errors });
  expect(Object.keys(report.fixed.value).sort()).toEqual(["customer", "deliverBy", "id", "phone", "quantity", "shipBy"]);
  expect(report.fixed.value.phone).toBe(report.fixed.phone);
  expect(report.refused).toEqual({ success: false, stopReason: "max_attempts", attempts: 1, errors: report.direct.errors });
}

/** The lowest version a caret range allows: `^1.2.8` → `1.2.8`. */
function floorOf(range: string): string {
  const match = /^\^(\d+\.\d+\.\d+)$/.exec(range);
  if (!match) throw new Error(`expected a caret range such as ^1.2.3, got ${JSON.stringify(range)}`);
  return match[1];
}

/** Compares two plain x.y.z versions: negative when a is earlier. */
function compareVersions(a: string, b: string): number {
  const [x, y] = [a.split(".").map(Number), b.split(".").map(Number)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/** Whether a caret range allows a plain x.y.z version (majors of 1 or more, as here). */
function caretAllows(range: string, version: string): boolean {
  const floor = floorOf(range);
  return version.split(".")[0] === floor.split(".")[0] && compareVersions(version, floor) >= 0;
}

function laterOf(a: string, b: string): string {
  return compareVersions(a, b) >= 0 ? a : b;
}

// langchain (the /agents peer) has a floor of its own for @langchain/core.
const langchainManifest = JSON.parse(readFileSync(join(REPO_ROOT, "node_modules/langchain/package.json"), "utf8")) as {
  peerDependencies: Record<string, string>;
};

interface Setup {
  label: "lowest" | "highest";
  core: string;
  langgraph: string;
}

/** What a consumer already has: the lowest versions the peer ranges allow, and the versions this repository is tested with. */
const SETUPS: Setup[] = [
  { label: "lowest", core: floorOf(repoPackage.peerDependencies[CORE]), langgraph: floorOf(repoPackage.peerDependencies[LANGGRAPH]) },
  { label: "highest", core: repoPackage.devDependencies[CORE], langgraph: repoPackage.devDependencies[LANGGRAPH] },
];

/** A consumer project: which set-up, with langchain or without, and the versions its package.json names. */
interface Project {
  setup: Setup;
  withLangchain: boolean;
  dir: string;
  names: Record<string, string>;
  /** What `npm install` of the tarball printed. */
  install: Run;
  /** The strict `tsc` of the project's TypeScript consumer (it emits into build/; the /agents project only checks), started once the project is installed. */
  typecheck?: Promise<Run>;
  /** The same for the CommonJS consumer in its `cjs/` folder. */
  typecheckCommonJs?: Promise<Run>;
}

function projectKey(setup: Setup, withLangchain: boolean): string {
  return `${setup.label}${withLangchain ? " + langchain" : ""}`;
}

let work: string;
let packed: { filename: string; files: { path: string; mode: number }[] };
let manifestBeforePack: string;
let manifestAfterPack: string;
const projects = new Map<string, Project>();
const timings: Record<string, number> = {};

async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await step();
  } finally {
    timings[label] = Date.now() - started;
  }
}

/**
 * A fresh project that names its own @langchain/core, @langchain/langgraph and zod (and langchain, for the
 * /agents consumer), exactly, as an app with a lockfile has them; then the tarball installed into it.
 */
async function makeProject(setup: Setup, withLangchain: boolean): Promise<Project> {
  const fixtures = withLangchain ? "agents-consumer" : "consumer";
  const dir = join(work, `${setup.label}-${fixtures}`);
  await cp(join(REPO_ROOT, "tests/package", fixtures), dir, { recursive: true });
  const names: Record<string, string> = { [CORE]: setup.core, [LANGGRAPH]: setup.langgraph, zod: repoPackage.dependencies.zod };
  // The TypeScript consumer types one spec from another Standard Schema library (consumer/arktype-spec.ts).
  if (!withLangchain) names.arktype = repoPackage.devDependencies.arktype;
  if (withLangchain) {
    names.langchain = repoPackage.devDependencies.langchain;
    names[CORE] = laterOf(setup.core, floorOf(langchainManifest.peerDependencies[CORE]));
  }
  await writeFile(
    join(dir, "package.json"),
    JSON.stringify({ name: `${setup.label}-${fixtures}`, private: true, type: "module", dependencies: names }, null, 2),
  );
  const install = await installTarball(dir, projectKey(setup, withLangchain));
  return { setup, withLangchain, dir, names, install };
}

/** `npm install` of the tarball into a project whose package.json is written. */
async function installTarball(dir: string, key: string): Promise<Run> {
  const install = await timed(`npm install (${key})`, () =>
    runWithCpuBudget(INSTALL_CPU_SECONDS, "npm", ["install", join(work, packed.filename), "--save-exact", "--prefer-offline", "--no-audit", "--no-fund"], dir),
  );
  if (install.code !== 0) throw new Error(explain(`npm install of the tarball (${key})`, install));
  return install;
}

/** What a LangGraph server project has beside the tarball (at this repository's pins): the CLI, the `/server` peers, Node's types. */
const SERVER_PROJECT_PACKAGES = ["@langchain/langgraph-cli", "@langchain/langgraph-sdk", "hono", "@types/node"];

/** The project serving the graphs from its own langgraph.json (tests/package/server-consumer/), on the highest set-up. */
let serverProject: { dir: string; names: Record<string, string>; typecheck: Promise<Run> } | undefined;

async function makeServerProject(): Promise<{ dir: string; names: Record<string, string> }> {
  const setup = SETUPS[1];
  const dir = join(work, "server-consumer");
  await cp(join(REPO_ROOT, "tests/package/server-consumer"), dir, { recursive: true });
  const names: Record<string, string> = { [CORE]: setup.core, [LANGGRAPH]: setup.langgraph, zod: repoPackage.dependencies.zod };
  for (const name of SERVER_PROJECT_PACKAGES) names[name] = repoPackage.devDependencies[name];
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "server-consumer", private: true, type: "module", dependencies: names }, null, 2));
  await installTarball(dir, "server project");
  return { dir, names };
}

function projectFor(setup: Setup, withLangchain: boolean): Project {
  const project = projects.get(projectKey(setup, withLangchain));
  if (!project) throw new Error(`the ${projectKey(setup, withLangchain)} project was not installed`);
  return project;
}

interface LsNode {
  version?: string;
  path?: string;
  dependencies?: Record<string, LsNode>;
}

/** Every installed copy (its directory and version) of each named package, from `npm ls --json --all --long`. */
async function installedCopies(dir: string, names: string[]): Promise<Record<string, string[]>> {
  const ls = await run("npm", ["ls", "--json", "--all", "--long"], dir);
  // A non-zero exit also means a peer npm found missing or out of its range ("invalid").
  expect(ls.code, explain("npm ls", ls)).toBe(0);
  const copies: Record<string, Set<string>> = Object.fromEntries(names.map((name) => [name, new Set<string>()]));
  const walk = (node: LsNode) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      if (copies[name] && child.path) copies[name].add(`${child.version} at ${child.path.slice(dir.length + 1)}`);
      walk(child);
    }
  };
  walk(JSON.parse(ls.stdout) as LsNode);
  return Object.fromEntries(Object.entries(copies).map(([name, found]) => [name, [...found]]));
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "lto-pack-"));
  // `npm pack` as a user runs it: its `prepack` (scripts/pack.ts) builds dist/ only when it is not already the
  // build of the sources as they are (npm ci built it, and scripts/build.ts recorded a digest of the build's inputs).
  manifestBeforePack = await readFile(join(REPO_ROOT, "package.json"), "utf8");
  const pack = await timed("npm pack", () => runWithCpuBudget(BUILD_CPU_SECONDS, "npm", ["pack", "--json", "--pack-destination", work], REPO_ROOT));
  if (pack.code !== 0) throw new Error(explain("npm pack", pack));
  manifestAfterPack = await readFile(join(REPO_ROOT, "package.json"), "utf8");
  // A build's output, if any, comes before the JSON report.
  [packed] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m)));

  // The five projects install side by side, sharing the npm cache.
  const [made, server] = await timed("npm installs (side by side)", () =>
    Promise.all([Promise.all(SETUPS.flatMap((setup) => [makeProject(setup, false), makeProject(setup, true)])), makeServerProject()]),
  );
  // The type checks are the slowest steps: they run side by side with each other and with the tests below.
  const tsc = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
  const typecheck = (dir: string) => runWithCpuBudget(TSC_CPU_SECONDS, process.execPath, [tsc, "-p", "tsconfig.json"], dir);
  serverProject = { ...server, typecheck: timed("tsc (server project)", () => typecheck(server.dir)) };
  for (const project of made) {
    const key = projectKey(project.setup, project.withLangchain);
    project.typecheck = timed(`tsc (${key})`, () => typecheck(project.dir));
    project.typecheckCommonJs = timed(`tsc cjs (${key})`, () => typecheck(join(project.dir, "cjs")));
    projects.set(key, project);
  }
}, 0); // no wall-clock limit: each step's CPU budget bounds it

afterAll(async () => {
  if (Object.keys(timings).length > 0) console.log("pack test timings (ms):", JSON.stringify(timings));
  if (work) await rm(work, { recursive: true, force: true });
}, 60_000);

describe("the packed tarball", () => {
  it("holds the built JavaScript, the declarations, README, LICENSE, package.json and the pages the README links, and nothing else", () => {
    const paths = packed.files.map((f) => f.path).sort();
    const pages = ["CHANGELOG.md", "RELIABILITY.md", "BENCHMARKS.md"];
    const outside = paths.filter(
      (p) =>
        !/^dist\/(cjs\/)?src\/.+\.(js|d\.ts)$/.test(p) &&
        !/^docs\/[^/]+\.md$/.test(p) &&
        !["LICENSE", "README.md", "package.json", "dist/cjs/package.json", ...pages].includes(p),
    );
    expect(outside).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json", "docs/agents.md", ...pages]));

    // Every entry point package.json names is in the tarball.
    type Entry = Record<"import" | "require", { types: string; default: string }>;
    const entries = Object.entries(repoPackage.exports).flatMap(([name, target]) => (name === "./package.json" ? [] : [target as unknown as Entry]));
    expect(entries).toHaveLength(3); // ".", "./agents", "./server"
    const targets = [
      repoPackage.main,
      repoPackage.types,
      ...entries.flatMap((entry) => [entry.import.types, entry.import.default, entry.require.types, entry.require.default]),
      ...Object.values(repoPackage.bin),
    ];
    for (const target of targets) expect(paths, target).toContain(target.replace(/^\.\//, ""));
    // Each entry point's CommonJS build, with its declarations, sits under a package.json that makes both CommonJS.
    for (const entry of entries) {
      expect(entry.require.default).toMatch(/^\.\/dist\/cjs\/src\/.+\.js$/);
      expect(entry.require.types).toBe(entry.require.default.replace(/\.js$/, ".d.ts"));
    }
    // Each source module ships as JavaScript and declarations.
    for (const module of [
      "index",
      "cli/generate",
      "validation/graph",
      "specs/spec",
      "environment",
      "validation/configuration",
      "agents/index",
      "agents/validated-response",
      "server/index",
      "server/http",
    ]) {
      expect(paths).toContain(`dist/src/${module}.js`);
      expect(paths).toContain(`dist/src/${module}.d.ts`);
    }
    // The CommonJS build holds the modules the entry points reach (the command is ESM only), each with its declarations.
    const cjs = paths.filter((p) => p.startsWith("dist/cjs/src/") && p.endsWith(".js"));
    expect(cjs).toEqual(expect.arrayContaining(["index", "agents/index", "server/index", "validation/graph", "specs/spec"].map((m) => `dist/cjs/src/${m}.js`)));
    expect(cjs.filter((p) => p.startsWith("dist/cjs/src/cli/"))).toEqual([]);
    for (const module of cjs) expect(paths).toContain(module.replace(/\.js$/, ".d.ts"));
  });

  it("marks its CommonJS build as CommonJS (dist/cjs/package.json), its ES modules as ES modules (the package's own type)", async () => {
    const installed = join(projectFor(SETUPS[0], false).dir, "node_modules", repoPackage.name);
    expect(JSON.parse(await readFile(join(installed, "dist/cjs/package.json"), "utf8"))).toEqual({ type: "commonjs" });
    expect(JSON.parse(await readFile(join(installed, "package.json"), "utf8")).type).toBe("module");
  });

  it("carries the checkout's package.json without its scripts; the checkout's package.json is left as it was", async () => {
    expect(manifestAfterPack).toBe(manifestBeforePack);
    expect(existsSync(join(REPO_ROOT, ".package.json.packing"))).toBe(false);
    const checkout = JSON.parse(manifestBeforePack) as Record<string, unknown>;
    expect(Object.keys(checkout.scripts as object)).toEqual(expect.arrayContaining(["prepare", "prepack", "postpack", "test", "build"]));
    const shipped = JSON.parse(await readFile(join(projectFor(SETUPS[0], false).dir, "node_modules", repoPackage.name, "package.json"), "utf8"));
    for (const field of CHECKOUT_ONLY_FIELDS) delete checkout[field];
    expect(shipped).toEqual(checkout);
    expect(shipped).not.toHaveProperty("scripts");
  });

  it("is ignored by git where `npm pack` writes it, in the checkout", async () => {
    const ignored = await run("git", ["check-ignore", "--quiet", packed.filename], REPO_ROOT);
    expect(ignored.code, explain("git check-ignore", ignored)).toBe(0);
  });

  it("asks for @langchain/core and @langchain/langgraph as peers with a range that holds this repository's own pins", () => {
    for (const name of [CORE, LANGGRAPH]) {
      // A dependency of its own would let npm install a second copy beside the project's.
      expect(repoPackage.dependencies, name).not.toHaveProperty(name);
      expect(repoPackage.peerDependenciesMeta[name], name).toBeUndefined();
      expect(caretAllows(repoPackage.peerDependencies[name], repoPackage.devDependencies[name]), name).toBe(true);
    }
  });
});

describe.each(SETUPS)("a consumer project with the $label supported versions (@langchain/core $core, @langchain/langgraph $langgraph)", (setup) => {
  const consumer = () => projectFor(setup, false).dir;

  it("has one copy of @langchain/core and of @langchain/langgraph, the project's own: npm installed no second one", async () => {
    const copies = await installedCopies(consumer(), [CORE, LANGGRAPH, "@langchain/langgraph-checkpoint"]);
    expect(copies[CORE]).toEqual([`${setup.core} at node_modules/${CORE}`]);
    expect(copies[LANGGRAPH]).toEqual([`${setup.langgraph} at node_modules/${LANGGRAPH}`]);
    // The checkpointer base class both LangGraph and the Postgres saver (a runtime dependency) extend.
    expect(copies["@langchain/langgraph-checkpoint"]).toHaveLength(1);
  });

  it("installs with no warning: the installed package.json has no scripts (no `prepare` to approve)", async () => {
    const { install, dir } = projectFor(setup, false);
    expect(`${install.stdout}${install.stderr}`).not.toMatch(/install-scripts|prepare/i);
    const installed = JSON.parse(await readFile(join(dir, "node_modules", repoPackage.name, "package.json"), "utf8")) as Record<string, unknown>;
    expect(installed).not.toHaveProperty("scripts");
    expect(installed.version).toBe(repoPackage.version);
  });

  it("installs with the runtime dependencies only", () => {
    const dir = consumer();
    const installed = (name: string) => existsSync(join(dir, "node_modules", name, "package.json"));
    expect(installed(repoPackage.name)).toBe(true);
    for (const dep of Object.keys(repoPackage.dependencies)) expect(installed(dep), dep).toBe(true);
    // A dev dependency may also be what a runtime dependency or a required peer depends on (openai is @langchain/openai's
    // client, @langchain/langgraph-sdk is LangGraph's), or a peer itself; the others must be absent.
    const required = [...Object.keys(repoPackage.dependencies), ...Object.keys(repoPackage.peerDependencies).filter((name) => installed(name))];
    const nested = new Set<string>(Object.keys(repoPackage.peerDependencies));
    for (const dep of required) {
      const manifest = JSON.parse(readFileSync(join(dir, "node_modules", dep, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
      for (const name of Object.keys(manifest.dependencies ?? {})) nested.add(name);
    }
    // arktype is installed by the consumer itself, for the TypeScript consumer's spec of another schema library.
    nested.add("arktype");
    const devOnly = Object.keys(repoPackage.devDependencies).filter((name) => !nested.has(name));
    expect(devOnly.length).toBeGreaterThan(5);
    for (const dev of devOnly) expect(installed(dev), dev).toBe(false);
    // langchain is an optional peer (for `/agents` only): npm leaves it out.
    expect(repoPackage.peerDependenciesMeta.langchain).toEqual({ optional: true });
    expect(installed("langchain")).toBe(false);
  });

  it(
    "runs an ESM script: the validation graph with a scripted model retries once and ends valid",
    async () => {
      const result = await timed(`node run.mjs (${setup.label})`, () => run(process.execPath, ["run.mjs"], consumer()));
      expect(result.code, explain("node run.mjs", result)).toBe(0);
      const report = JSON.parse(result.stdout.trim());
      expect(report).toEqual({
        success: true,
        value: { code: "VIP-SAVE40", percent: 40 },
        attempts: 2,
        firstErrors: ['code is "SAVE40"; percent=40 requires a code starting with "VIP-"'],
        builtins: [...builtinSpecs.keys()],
        // A zod spec through generateValidated: the refinement fed back, the value zod's output (default applied).
        zod: { success: true, value: { start: 5, end: 9, label: "window" }, attempts: 2, firstErrors: ["end is 1; end must be greater than start"] },
        // Only the entry point is exported, so internals cannot become a dependency.
        deepImport: "ERR_PACKAGE_PATH_NOT_EXPORTED",
      });
    },
    STEP_TIMEOUT,
  );

  it(
    "works with the project's own LangChain objects: its chat model class, a FakeListChatModel, its MemorySaver and a review's typed answer",
    async () => {
      const result = await timed(`node own-langchain.mjs (${setup.label})`, () => run(process.execPath, ["own-langchain.mjs"], consumer()));
      expect(result.code, explain("node own-langchain.mjs", result)).toBe(0);
      expect(JSON.parse(result.stdout.trim())).toEqual({
        versions: { core: setup.core, langgraph: setup.langgraph },
        // The package imports the project's copies, so the project's classes are the package's classes.
        sameCopy: { core: true, langgraph: true },
        ownModel: { success: true, attempts: 2, calls: 2 },
        fakeList: { success: true, attempts: 2, value: { a: 2 } },
        review: { responseSchema: "object", success: true, by: "human" },
      });
    },
    STEP_TIMEOUT,
  );

  it(
    "without langchain installed: the main entry point imports, and /agents fails as it loads, naming langchain",
    async () => {
      const result = await timed(`node agents-missing.mjs (${setup.label})`, () => run(process.execPath, ["agents-missing.mjs"], consumer()));
      expect(result.code, explain("node agents-missing.mjs", result)).toBe(0);
      const report = JSON.parse(result.stdout.trim());
      expect(report.main).toBe("function");
      expect(report.agents.code).toBe("ERR_MODULE_NOT_FOUND");
      expect(report.agents.message).toMatch(/^Cannot find package 'langchain' imported from /);
    },
    STEP_TIMEOUT,
  );

  it(
    "compiles a TypeScript consumer with a strict tsc against the shipped declarations",
    async () => {
      const result = await projectFor(setup, false).typecheck!;
      expect(result.code, explain("tsc", result)).toBe(0);
      expect(result.stdout.trim()).toBe("");
    },
    0, // no wall-clock limit: tsc's CPU budget (TSC_CPU_SECONDS) bounds it
  );

  it(
    'in a CommonJS project ("type": "commonjs"): require() gets the CommonJS build, whose validation graph retries once and ends valid; /agents fails naming langchain',
    async () => {
      const result = await timed(`node cjs/run.cjs (${setup.label})`, () => run(process.execPath, ["run.cjs"], join(consumer(), "cjs")));
      expect(result.code, explain("node cjs/run.cjs", result)).toBe(0);
      expect(JSON.parse(result.stdout.trim())).toEqual({
        success: true,
        attempts: 2,
        firstErrors: ["percent is 400; it must be <= 90"],
        errorFamily: "function",
        cjsOnly: true,
        agents: { code: "MODULE_NOT_FOUND", message: "Cannot find module 'langchain'" },
      });
    },
    STEP_TIMEOUT,
  );

  it(
    'compiles a CommonJS TypeScript consumer with a strict tsc ("module": "commonjs"): static imports of the package and of /agents\' types, typed from a zod spec',
    async () => {
      const result = await projectFor(setup, false).typecheckCommonJs!;
      expect(result.code, explain("tsc (cjs)", result)).toBe(0);
      expect(result.stdout.trim()).toBe("");
    },
    0, // no wall-clock limit: tsc's CPU budget (TSC_CPU_SECONDS) bounds it
  );

  it(
    "ESM: a plain zod schema with startsWith, cuid, e164 and a refinement as the spec: typed by the strict tsc, its run refused then valid",
    async () => {
      const compiled = await projectFor(setup, false).typecheck!;
      expect(compiled.code, explain("tsc", compiled)).toBe(0);
      const result = await timed(`node build/plain-zod.js (${setup.label})`, () => run(process.execPath, ["build/plain-zod.js"], consumer()));
      expect(result.code, explain("node build/plain-zod.js", result)).toBe(0);
      expectPlainZodReport(JSON.parse(result.stdout.trim()));
    },
    STEP_TIMEOUT,
  );

  it(
    "CommonJS: the same plain zod schema through require(): typed by the strict tsc, its run refused then valid",
    async () => {
      const compiled = await projectFor(setup, false).typecheckCommonJs!;
      expect(compiled.code, explain("tsc (cjs)", compiled)).toBe(0);
      const cjs = join(consumer(), "cjs");
      const result = await timed(`node cjs/build/plain-zod.js (${setup.label})`, () => run(process.execPath, ["build/plain-zod.js"], cjs));
      expect(result.code, explain("node cjs/build/plain-zod.js", result)).toBe(0);
      expectPlainZodReport(JSON.parse(result.stdout.trim()));
    },
    STEP_TIMEOUT,
  );

  it(
    `has a ${BIN} command: --help prints the usage`,
    async () => {
      // The link npm made in node_modules/.bin, run directly (the generate case below goes through npx).
      const result = await timed(`.bin --help (${setup.label})`, () => run(join(consumer(), "node_modules", ".bin", BIN), ["--help"], consumer()));
      expect(result.code, explain(`node_modules/.bin/${BIN} --help`, result)).toBe(0);
      expect(result.stdout).toMatch(/Usage:/);
      for (const option of ["--spec", "--max-attempts", "--model", "--thread"]) expect(result.stdout).toContain(option);
    },
    STEP_TIMEOUT,
  );

  describe(`${BIN} generate against an OpenAI-compatible server`, () => {
    let server: ScriptedServer;
    beforeAll(async () => {
      const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
      server = await startScriptedOpenAIServer({ replies: [JSON.stringify({ ...example, replicas: 8 }), JSON.stringify(example)] });
    });
    afterAll(async () => server?.close());

    it(
      "prints the validated JSON on stdout and the attempts on stderr",
      async () => {
        const example = builtinSpecs.get("deployment-config")!.example;
        const args = ["--no", "--", BIN, "generate", "--spec", "deployment-config", "--max-attempts", "3", "A deployment config for payments-api"];
        const result = await timed(`npx generate (${setup.label})`, () =>
          run("npx", args, consumer(), { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" }),
        );
        expect(result.code, explain(`npx ${BIN} generate`, result)).toBe(0);
        expect(JSON.parse(result.stdout)).toEqual(example);
        expect(result.stderr).toMatch(/attempt 1 of 3: 1 error/);
        expect(result.stderr).toMatch(/attempt 2 of 3: valid/);
        expect(server.requests).toHaveLength(2);
      },
      STEP_TIMEOUT,
    );
  });
});

describe.each(SETUPS)("a consumer project with langchain installed beside the tarball, from the $label supported versions", (setup) => {
  const agentsConsumer = () => projectFor(setup, true);

  it("has one copy of @langchain/core and of @langchain/langgraph (langchain's own LangGraph dependency included)", async () => {
    const { dir, names } = agentsConsumer();
    const copies = await installedCopies(dir, [CORE, LANGGRAPH]);
    expect(copies[CORE]).toEqual([`${names[CORE]} at node_modules/${CORE}`]);
    expect(copies[LANGGRAPH]).toEqual([`${setup.langgraph} at node_modules/${LANGGRAPH}`]);
  });

  it(
    "runs a createAgent with validatedResponseMiddleware and a scripted model: every error goes back, the outcome is valid",
    async () => {
      const result = await timed(`node agents-consumer/run.mjs (${setup.label})`, () => run(process.execPath, ["run.mjs"], agentsConsumer().dir));
      expect(result.code, explain("node run.mjs (agents)", result)).toBe(0);
      const report = JSON.parse(result.stdout.trim());
      const valid = {
        service_name: "payments-api",
        replicas: 8,
        resources: { cpu_limit: 1, memory_limit_mb: 512 },
        health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
      };
      expect(report.outcome).toEqual({ success: true, stopReason: "valid", value: valid, by: "model", errors: [], attempts: 2, spec: "deployment-config" });
      expect(report.structuredResponse).toEqual(valid);
      const broken = {
        ...valid,
        resources: { cpu_limit: 0.5, memory_limit_mb: 512 },
        health_check: { path: "healthz", timeout_seconds: 10, interval_seconds: 10 },
      };
      const errors = (await checkValue(builtinSpecs.get("deployment-config")!, broken)).errors;
      expect(errors).toHaveLength(3);
      for (const error of errors) expect(report.feedback).toContain(`- ${error}`);
    },
    STEP_TIMEOUT,
  );

  it(
    "compiles a TypeScript consumer of /agents with a strict tsc --noEmit: the outcome is typed from a zod spec",
    async () => {
      const result = await agentsConsumer().typecheck!;
      expect(result.code, explain("tsc (agents)", result)).toBe(0);
      expect(result.stdout.trim()).toBe("");
    },
    0, // no wall-clock limit: tsc's CPU budget (TSC_CPU_SECONDS) bounds it
  );

  it(
    "CommonJS: require() of both entry points; a createAgent with validatedResponseMiddleware and a scripted model ends valid",
    async () => {
      const cjs = join(agentsConsumer().dir, "cjs");
      const result = await timed(`node agents-consumer/cjs/run.cjs (${setup.label})`, () => run(process.execPath, ["run.cjs"], cjs));
      expect(result.code, explain("node cjs/run.cjs (agents)", result)).toBe(0);
      const report = JSON.parse(result.stdout.trim());
      expect(report.outcome).toMatchObject({ success: true, stopReason: "valid", by: "model", errors: [], attempts: 2, spec: "deployment-config" });
      expect(report.structuredResponse).toEqual(report.outcome.value);
      expect(report.errors).toHaveLength(3);
      for (const error of report.errors) expect(report.feedback).toContain(`- ${error}`);
      expect(report.cjsOnly).toBe(true);
    },
    STEP_TIMEOUT,
  );

  it(
    'compiles a CommonJS TypeScript consumer of /agents with a strict tsc ("module": "commonjs"): static imports, the outcome typed from a zod spec',
    async () => {
      const result = await agentsConsumer().typecheckCommonJs!;
      expect(result.code, explain("tsc cjs (agents)", result)).toBe(0);
      expect(result.stdout.trim()).toBe("");
    },
    0, // no wall-clock limit: tsc's CPU budget (TSC_CPU_SECONDS) bounds it
  );
});

describe("a project serving the graphs from its own langgraph.json with its own `langgraphjs dev` (tests/package/server-consumer/)", () => {
  // Measured with this file whole at load 36-43 on the 2-core machine: the two dev servers up in 8.4 s side by side,
  // each state-write case 1-4 s, the attack suite 11-15 s. The bounds leave a margin of twenty times or more.
  const START_TIMEOUT = 240_000;
  const CASE_TIMEOUT = 120_000;
  const ATTACKS_TIMEOUT = 300_000;
  type Target = StateWriteTarget & { server: DevServer };
  const models: ScriptedServer[] = [];
  /** The ready-made exports (langgraph.json at the project's root), auth off. */
  let readyMade: Target | undefined;
  /** The project's own Auth and app with withServerRules (own-rules/langgraph.json), auth on with the attack suite's keys. */
  let ownRules: Target | undefined;
  const project = () => {
    if (!serverProject) throw new Error("the server project was not installed");
    return serverProject;
  };

  beforeAll(async () => {
    const { dir } = project();
    const bin = join(dir, "node_modules", ".bin", "langgraphjs");
    const [plain, shared] = await Promise.all([
      startScriptedOpenAIServer({ responder: stateWriteResponder }),
      // One server for both suites: the state-write cases' runs by their request, the attack suite's by its roles.
      startScriptedOpenAIServer({ responder: (req) => (userTextOf(req).includes(STATE_WRITE_REQUEST) ? stateWriteResponder(req) : attackModelResponder(req)) }),
    ]);
    models.push(plain, shared);
    const env = (model: ScriptedServer) => ({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: "test", LLM_MAX_RETRIES: "0" });
    const keys = JSON.stringify({ [ATTACK_KEYS.alice]: "alice", [ATTACK_KEYS.bob]: "bob" });
    const started = await timed("langgraphjs dev (server project, two side by side)", () =>
      Promise.allSettled([
        startDevServer({ project: { config: join(dir, "langgraph.json"), bin }, env: env(plain), startTimeoutMs: START_TIMEOUT - 30_000 }),
        startDevServer({
          project: { config: join(dir, "own-rules", "langgraph.json"), bin },
          env: { ...env(shared), PROJECT_API_KEYS: keys },
          startTimeoutMs: START_TIMEOUT - 30_000,
        }),
      ]),
    );
    const [a, b] = started.map((s) => (s.status === "fulfilled" ? s.value : undefined));
    if (!a || !b) {
      await Promise.all([a?.stop(), b?.stop()]);
      throw (started.find((s) => s.status === "rejected") as PromiseRejectedResult).reason;
    }
    readyMade = { server: a, model: plain, client: new Client({ apiUrl: a.url, apiKey: null }), headers: { "content-type": "application/json" } };
    const alice = { "content-type": "application/json", "x-api-key": ATTACK_KEYS.alice };
    ownRules = { server: b, model: shared, client: new Client({ apiUrl: b.url, apiKey: ATTACK_KEYS.alice }), headers: alice };
  }, START_TIMEOUT);

  afterAll(async () => {
    await Promise.all([readyMade?.server.stop(), ownRules?.server.stop()]);
    await Promise.all(models.map((model) => model.close()));
  }, 60_000);

  /** Runs `fn` against a target; on failure, appends the server's recent output to the error. */
  const against = (target: () => Target | undefined, fn: (target: Target) => Promise<void>) => async () => {
    try {
      await fn(target()!);
    } catch (error) {
      const tail = target()?.server.tail(4_000);
      if (tail && error instanceof Error) error.message += `\n--- langgraphjs dev output (tail) ---\n${tail}`;
      throw error;
    }
  };

  it(
    "compiles the project's server files with a strict tsc against the shipped declarations",
    async () => {
      const result = await project().typecheck;
      expect(result.code, explain("tsc (server project)", result)).toBe(0);
      expect(result.stdout.trim()).toBe("");
    },
    0, // no wall-clock limit: tsc's CPU budget (TSC_CPU_SECONDS) bounds it
  );

  it(
    "CommonJS: require() of /server gets the graphs, the Auth and the app; withServerRules serves the project's route",
    async () => {
      const result = await timed("node require-server.cjs", () => run(process.execPath, ["require-server.cjs"], project().dir));
      expect(result.code, explain("node require-server.cjs", result)).toBe(0);
      expect(JSON.parse(result.stdout.trim())).toEqual({
        graphs: ["Deterministic validation", "function"],
        app: "function",
        auth: "function",
        hello: [200, { hello: "from CommonJS" }],
        cjsOnly: true,
      });
    },
    STEP_TIMEOUT,
  );

  it("has one copy of @langchain/core, @langchain/langgraph, @langchain/langgraph-sdk and hono, the project's own", async () => {
    const { dir, names } = project();
    const shared = [CORE, LANGGRAPH, "@langchain/langgraph-sdk", "hono"];
    const copies = await installedCopies(dir, shared);
    for (const name of shared) expect(copies[name], name).toEqual([`${names[name]} at node_modules/${name}`]);
  });

  for (const c of STATE_WRITE_CASES) {
    const [label, target] =
      c.auth === "off" ? ["the ready-made exports, auth off", () => readyMade] : ["withServerRules on its own Auth and app", () => ownRules];
    it(`${label}: ${c.name}`, against(target, c.run), CASE_TIMEOUT);
  }

  it(
    "withServerRules on its own Auth and app: every attack of the suite is refused, and each user keeps full use of their own data",
    against(
      () => ownRules,
      async ({ server }) => {
        const results = await runAuthAttacks(server.url);
        expect(results.filter((r) => !r.held).map((r) => `${r.name}\n    ${r.detail}`)).toEqual([]);
        expect(results.length).toBeGreaterThanOrEqual(15);
      },
    ),
    ATTACKS_TIMEOUT,
  );

  it(
    "withServerRules keeps the project's own rules and routes: its thread tag beside the owner, its own route, its 401",
    against(
      () => ownRules,
      async ({ client, server, headers }) => {
        const thread = await client.threads.create();
        expect(thread.metadata).toMatchObject({ project: "consumer", owner: "alice" });
        const hello = await fetch(`${server.url}/hello`, { headers });
        expect([hello.status, await hello.json()]).toEqual([200, { hello: "from the project's own app" }]);
        const anonymous = await fetch(`${server.url}/hello`);
        await anonymous.arrayBuffer();
        expect(anonymous.status).toBe(401);
      },
    ),
    CASE_TIMEOUT,
  );
});
