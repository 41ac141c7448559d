/**
 * The package as a user gets it: `npm pack` (which builds through `prepare`,
 * unless dist/ is already the build of the current sources),
 * then the tarball installed into a fresh project outside the repository,
 * where an ESM script runs the validation graph, a strict `tsc --noEmit`
 * compiles a TypeScript consumer against the shipped declarations, and the
 * `langgraph-trustworthy-output` command runs through npx. The `/agents` entry
 * point is checked in that project, which has no `langchain` (an optional
 * peer: the entry point must say to install it), and in a second project with
 * `langchain` installed beside the tarball (a createAgent with the middleware
 * and a scripted model ends with a validated outcome).
 *
 * The install uses the npm cache that `npm ci` filled (`--prefer-offline`):
 * nothing beyond the package's own dependencies is fetched.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { distIsCurrent } from "../../scripts/build.js";
import { checkValue } from "../../src/specs/check.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { REPO_ROOT } from "../../testkit/dev-server.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";

// Measured on a 2-core machine shared with other work (three runs): npm pack, with its build, 20-47 s;
// npm install 12-21 s; tsc 3-17 s; node run.mjs 1-5 s; each npx run 2-8 s; the whole file 24-108 s.
// The timeouts leave a margin of about ten times for a busier machine.
const SETUP_TIMEOUT = 600_000;
const STEP_TIMEOUT = 180_000;

interface Run {
  code: number | null;
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

function run(command: string, args: string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(extraEnv), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function explain(what: string, result: Run): string {
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

let work: string;
let consumer: string;
let packed: { filename: string; files: { path: string; mode: number }[] };
const timings: Record<string, number> = {};

async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await step();
  } finally {
    timings[label] = Date.now() - started;
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "lto-pack-"));
  // `npm pack` builds through `prepare`. When dist/ is already the build of the sources as they are (npm ci
  // built it, and scripts/build.ts recorded a digest of the build's inputs), it packs that build as it is.
  const current = distIsCurrent();
  const packArgs = ["pack", "--json", "--pack-destination", work, ...(current ? ["--ignore-scripts"] : [])];
  const pack = await timed(current ? "npm pack (dist current)" : "npm pack", () => run("npm", packArgs, REPO_ROOT));
  if (pack.code !== 0) throw new Error(explain("npm pack", pack));
  // npm prints the `prepare` script's output before the JSON report.
  [packed] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m)));

  consumer = join(work, "consumer");
  await cp(join(REPO_ROOT, "tests/package/consumer"), consumer, { recursive: true });
  await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2));
  // The consumer names @langchain/core and zod itself, as an app that uses LangChain's classes (here for the
  // scripted model) and writes its specs in zod does.
  const core = `@langchain/core@${repoPackage.dependencies["@langchain/core"]}`;
  const zod = `zod@${repoPackage.dependencies.zod}`;
  const install = await timed("npm install", () =>
    run("npm", ["install", join(work, packed.filename), core, zod, "--prefer-offline", "--no-audit", "--no-fund"], consumer),
  );
  if (install.code !== 0) throw new Error(explain("npm install of the tarball", install));
}, SETUP_TIMEOUT);

afterAll(async () => {
  if (Object.keys(timings).length > 0) console.log("pack test timings (ms):", JSON.stringify(timings));
  if (work) await rm(work, { recursive: true, force: true });
}, 60_000);

describe("the packed tarball", () => {
  it("holds the built JavaScript, the declarations, README, LICENSE and package.json, and nothing else", () => {
    const paths = packed.files.map((f) => f.path).sort();
    const outside = paths.filter((p) => !/^dist\/src\/.+\.(js|d\.ts)$/.test(p) && !["LICENSE", "README.md", "package.json"].includes(p));
    expect(outside).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json"]));

    // Every entry point package.json names is in the tarball.
    const dot = repoPackage.exports["."] as Record<string, string>;
    const agents = repoPackage.exports["./agents"] as Record<string, string>;
    const targets = [repoPackage.main, repoPackage.types, dot.types, dot.import, agents.types, agents.import, ...Object.values(repoPackage.bin)];
    for (const target of targets) expect(paths, target).toContain(target.replace(/^\.\//, ""));
    // Each source module ships as JavaScript and declarations.
    for (const module of ["index", "cli/generate", "validation/graph", "specs/spec", "configuration", "agents/index", "agents/validated-response"]) {
      expect(paths).toContain(`dist/src/${module}.js`);
      expect(paths).toContain(`dist/src/${module}.d.ts`);
    }
  });

  it("installs with the runtime dependencies only", () => {
    const installed = (name: string) => existsSync(join(consumer, "node_modules", name, "package.json"));
    expect(installed(repoPackage.name)).toBe(true);
    for (const dep of Object.keys(repoPackage.dependencies)) expect(installed(dep), dep).toBe(true);
    // A dev dependency may also be a runtime dependency's own (openai is @langchain/openai's client); the others must be absent.
    const nested = new Set<string>();
    for (const dep of Object.keys(repoPackage.dependencies)) {
      const manifest = JSON.parse(readFileSync(join(consumer, "node_modules", dep, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
      for (const name of Object.keys(manifest.dependencies ?? {})) nested.add(name);
    }
    const devOnly = Object.keys(repoPackage.devDependencies).filter((name) => !nested.has(name));
    expect(devOnly.length).toBeGreaterThan(5);
    for (const dev of devOnly) expect(installed(dev), dev).toBe(false);
    // langchain is an optional peer (for `/agents` only): npm leaves it out.
    expect(repoPackage.peerDependenciesMeta.langchain).toEqual({ optional: true });
    expect(installed("langchain")).toBe(false);
  });
});

describe("a consumer project with the tarball installed", () => {
  it(
    "runs an ESM script: the validation graph with a scripted model retries once and ends valid",
    async () => {
      const result = await timed("node run.mjs", () => run(process.execPath, ["run.mjs"], consumer));
      expect(result.code, explain("node run.mjs", result)).toBe(0);
      const report = JSON.parse(result.stdout.trim());
      expect(report).toEqual({
        success: true,
        result: { code: "VIP-SAVE40", percent: 40 },
        attempts: 2,
        firstErrors: ['code is "SAVE40"; percent=40 requires a code starting with "VIP-"'],
        builtins: [...builtinSpecs.keys()],
        // A zod spec through generateValidated: the refinement fed back, the result zod's output (default applied).
        zod: { success: true, result: { start: 5, end: 9, label: "window" }, attempts: 2, firstErrors: ["end is 1; end must be greater than start"] },
        // Only the entry point is exported, so internals cannot become a dependency.
        deepImport: "ERR_PACKAGE_PATH_NOT_EXPORTED",
      });
    },
    STEP_TIMEOUT,
  );

  it(
    "without langchain installed: the main entry point imports, and /agents fails saying to install langchain",
    async () => {
      const result = await timed("node agents-missing.mjs", () => run(process.execPath, ["agents-missing.mjs"], consumer));
      expect(result.code, explain("node agents-missing.mjs", result)).toBe(0);
      const report = JSON.parse(result.stdout.trim());
      expect(report.main).toBe("function");
      expect(report.agents.name).toBe("ConfigurationError");
      expect(report.agents.message).toContain(`npm install langchain@"${repoPackage.peerDependencies.langchain}"`);
    },
    STEP_TIMEOUT,
  );

  it(
    "compiles a TypeScript consumer with a strict tsc --noEmit against the shipped declarations",
    async () => {
      const tsc = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
      const result = await timed("tsc --noEmit", () => run(process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"], consumer));
      expect(result.code, explain("tsc", result)).toBe(0);
      expect(result.stdout.trim()).toBe("");
    },
    STEP_TIMEOUT,
  );

  it(
    `has a ${BIN} command: --help prints the usage`,
    async () => {
      // The link npm made in node_modules/.bin, run directly (the generate case below goes through npx).
      const result = await timed(".bin --help", () => run(join(consumer, "node_modules", ".bin", BIN), ["--help"], consumer));
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
        const result = await timed("npx generate", () => run("npx", args, consumer, { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test" }));
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

describe("a consumer project with langchain installed beside the tarball", () => {
  let agentsConsumer: string;
  beforeAll(async () => {
    agentsConsumer = join(work, "agents-consumer");
    await cp(join(REPO_ROOT, "tests/package/agents-consumer"), agentsConsumer, { recursive: true });
    await writeFile(join(agentsConsumer, "package.json"), JSON.stringify({ name: "agents-consumer", private: true, type: "module" }, null, 2));
    const extra = [`@langchain/core@${repoPackage.dependencies["@langchain/core"]}`, `zod@${repoPackage.dependencies.zod}`, `langchain@${repoPackage.devDependencies.langchain}`];
    const install = await timed("npm install (with langchain)", () =>
      run("npm", ["install", join(work, packed.filename), ...extra, "--prefer-offline", "--no-audit", "--no-fund"], agentsConsumer),
    );
    if (install.code !== 0) throw new Error(explain("npm install of the tarball with langchain", install));
  }, SETUP_TIMEOUT);

  it(
    "runs a createAgent with validatedResponse and a scripted model: every error goes back, the outcome is valid",
    async () => {
      const result = await timed("node agents-consumer/run.mjs", () => run(process.execPath, ["run.mjs"], agentsConsumer));
      expect(result.code, explain("node run.mjs (agents)", result)).toBe(0);
      const report = JSON.parse(result.stdout.trim());
      const valid = { service_name: "payments-api", replicas: 8, resources: { cpu_limit: 1, memory_limit_mb: 512 }, health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 } };
      expect(report.outcome).toEqual({ success: true, stopReason: "valid", value: valid, by: "model", errors: [], attempts: 2, spec: "deployment-config" });
      expect(report.structuredResponse).toEqual(valid);
      const broken = { ...valid, resources: { cpu_limit: 0.5, memory_limit_mb: 512 }, health_check: { path: "healthz", timeout_seconds: 10, interval_seconds: 10 } };
      const errors = (await checkValue(builtinSpecs.get("deployment-config")!, broken)).errors;
      expect(errors).toHaveLength(3);
      for (const error of errors) expect(report.feedback).toContain(`- ${error}`);
    },
    STEP_TIMEOUT,
  );

  it(
    "compiles a TypeScript consumer of /agents with a strict tsc --noEmit: the outcome is typed from a zod spec",
    async () => {
      const tsc = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
      const result = await timed("tsc --noEmit (agents)", () => run(process.execPath, [tsc, "--noEmit", "-p", "tsconfig.json"], agentsConsumer));
      expect(result.code, explain("tsc (agents)", result)).toBe(0);
      expect(result.stdout.trim()).toBe("");
    },
    STEP_TIMEOUT,
  );
});
