/**
 * Test configuration: two projects, told apart by the file name (both under tests/).
 *
 *   NAME.test.ts      unit: in this process only, with scripted models; no child process, no server (not even
 *                     on loopback), no network connection, no database. tests/support/unit-guard.ts makes any
 *                     of those fail at once with a message saying to rename the file.
 *   NAME.int.test.ts  integration: crosses a real boundary (HTTP through the real ChatOpenAI, a child process,
 *                     the LangGraph dev server, PostgreSQL).
 *
 * `npm test` runs both; `npm run test:unit` runs the unit project alone (`vitest run --project unit`).
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";

/**
 * The files that take longest, longest first, as measured in full runs of the suite. Vitest orders files by
 * the durations of earlier runs, which a fresh clone (CI) does not have; without this list a long file could
 * start last, and the whole run would wait for it.
 */
const SLOWEST_FIRST = [
  "tests/package/pack.int.test.ts",
  "tests/integration/examples.int.test.ts",
  "tests/specs/jsonschemabench.test.ts",
  "tests/architecture/format.test.ts",
  "tests/specs/official-suite.test.ts",
  "tests/reliability/hostile-specs.test.ts",
  "tests/architecture/public-types.test.ts",
  "tests/architecture/type-tests.test.ts",
  "tests/bench/bench.smoke.int.test.ts",
  "tests/providers/stream-endings.int.test.ts",
  "tests/persistence/service.int.test.ts",
  "tests/server/server.int.test.ts",
  "tests/reflexion/long-run.int.test.ts",
  "tests/docs/code-blocks.int.test.ts",
  "tests/integration/http-model.int.test.ts",
  "tests/server/state-writes.int.test.ts",
  "tests/server/attacks.int.test.ts",
  "tests/streaming/docs.int.test.ts",
  "tests/reliability/provider-faults.int.test.ts",
  "tests/persistence/crash-resume.int.test.ts",
  "tests/persistence/concurrency.int.test.ts",
  "tests/specs/partial.test.ts",
  "tests/integration/cli-terminal.int.test.ts",
  "tests/tools/guarded-agent.int.test.ts",
  "tests/tools/budget.test.ts",
  "tests/server/streaming.int.test.ts",
  "tests/server/simulated.int.test.ts",
  "tests/reliability/load-faults.int.test.ts",
  "tests/agents/create-agent.int.test.ts",
];

/**
 * The files in a random order drawn from a seed (TEST_FILE_ORDER_SEED=<integer>), to show that no file depends on
 * another having run first (docs/development.md); vitest's own --sequence.shuffle keeps a custom sequencer's order.
 */
function seededOrder<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seed = process.env.TEST_FILE_ORDER_SEED;
    if (seed !== undefined && /^\d+$/.test(seed)) return seededOrder(await super.sort(files), Number(seed));
    const rank = (spec: TestSpecification) => {
      const i = SLOWEST_FIRST.findIndex((path) => spec.moduleId.endsWith(path));
      return i < 0 ? SLOWEST_FIRST.length : i;
    };
    // Array.prototype.sort is stable: the files not listed keep vitest's own order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

/** Each entry point of package.json's exports, by the package's name, to the file its source condition names. */
function sourceAliases(): { find: RegExp; replacement: string }[] {
  const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as {
    name: string;
    exports: Record<string, Record<string, string> | string>;
  };
  return Object.entries(pkg.exports).flatMap(([entry, target]) => {
    const source = typeof target === "object" ? target[`${pkg.name}-source`] : undefined;
    if (source === undefined) return [];
    const name = `${pkg.name}${entry.slice(1)}`.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    return [{ find: new RegExp(`^${name}$`), replacement: fileURLToPath(new URL(source, import.meta.url)) }];
  });
}

export default defineConfig({
  // The package's own name (the examples import it) resolves to its TypeScript source, as in the examples' child
  // processes (`--conditions=langgraph-trustworthy-output-source`): one copy of each module, never a stale dist/.
  resolve: { alias: sourceAliases() },
  test: {
    // Twice the cores: most integration files spend their time waiting on child processes, servers and
    // retry back-off rather than on CPU, so more files at once shorten the run without overloading the cores.
    maxWorkers: Math.max(2, availableParallelism()) * 2,
    sequence: { sequencer: SlowestFirst },
    // Sized from measured durations with a wide margin for a busy machine (README "Development"): the slowest
    // unit test takes about 5 s on a quiet machine and 38 s with the load average near 19; integration tests
    // that take longer set their own timeout next to the test, with the duration it was sized from.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["tests/**/*.test.ts"],
          exclude: ["tests/**/*.int.test.ts"],
          setupFiles: ["tests/support/unit-guard.ts", "tests/support/state-guard.ts"],
          // Files share a worker and its loaded modules (in both projects): each file would otherwise load
          // LangChain and LangGraph anew, about 3 s of CPU a file. tests/support/state-guard.ts fails any file
          // that leaves process-wide state behind for the next one.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "int",
          include: ["tests/**/*.int.test.ts"],
          setupFiles: ["tests/support/state-guard.ts"],
          isolate: false, // as above
        },
      },
    ],
  },
});
