/**
 * Every TypeScript block in the README and docs/, and every `@example` in the
 * source's JSDoc, type-checks against the package's source, so a page or an
 * example cannot drift from the code. The blocks are
 * written as modules into a folder of the repository (so their imports
 * resolve from its node_modules) and checked by tsc with the project's own
 * options, the package's name mapped to its source. A canary block that
 * imports a name the package does not export must fail, so the check can
 * never pass by checking nothing.
 */
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../testkit/dev-server.js";
import { documentationPages, jsdocExamples, typescriptBlocks } from "./markdown.js";

const dir = join(REPO_ROOT, `.docs-check-${process.pid}`);
/** tsc's CPU-time budget, over ten times what it was measured to use. */
const TSC_CPU_SECONDS = 120;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("documentation code blocks and JSDoc examples", () => {
  it("type-check against the package's source", async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    const written: string[] = [];
    for (const page of documentationPages()) {
      typescriptBlocks(page).forEach((code, i) => {
        const file = `${page.replace(/[/.]/g, "_")}-${i}.ts`;
        writeFileSync(join(dir, file), `${code}\nexport {};\n`);
        written.push(file);
      });
    }
    jsdocExamples().forEach(({ file, code }, i) => {
      const name = `${file.replace(/[/.]/g, "_")}-example-${i}.ts`;
      writeFileSync(join(dir, name), `${code}\nexport {};\n`);
      written.push(name);
    });
    expect(written.filter((name) => name.includes("-example-")).length).toBeGreaterThanOrEqual(12);
    expect(written.length).toBeGreaterThanOrEqual(20);
    writeFileSync(join(dir, "canary.ts"), 'import { notExportedByThePackage } from "langgraph-trustworthy-output";\nconsole.log(notExportedByThePackage);\n');
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        extends: "../tsconfig.json",
        compilerOptions: {
          noEmit: true,
          paths: {
            "langgraph-trustworthy-output": ["../src/index.ts"],
            "langgraph-trustworthy-output/agents": ["../src/agents/index.ts"],
            "langgraph-trustworthy-output/server": ["../src/server/index.ts"],
          },
        },
        include: ["*.ts"],
      }),
    );
    const tsc = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
    // The budget is CPU time (the shell's `ulimit -t`), which a busy machine does not use up: this test (vitest and tsc)
    // used 11 s of CPU at load 18 and 15 s under scripts/busy.sh with 4 loops at load 20, where it took 127 s of wall time.
    const script = `ulimit -t ${TSC_CPU_SECONDS} && exec "$0" "$@"`;
    const output = await promisify(execFile)("/bin/sh", ["-c", script, process.execPath, tsc, "-p", dir, "--pretty", "false"], {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      () => "",
      (error: { stdout?: string; stderr?: string; signal?: string }) =>
        error.signal === "SIGXCPU" || error.signal === "SIGKILL"
          ? `tsc used up its ${TSC_CPU_SECONDS} s of CPU time (${error.signal})`
          : `${error.stdout ?? ""}${error.stderr ?? ""}` || String(error),
    );
    const problems = output.split("\n").filter((line) => /error TS\d+/.test(line));
    // The canary fails as intended, and nothing else fails.
    expect(
      problems.filter((line) => line.includes("canary.ts")),
      output.slice(0, 2_000),
    ).toEqual([expect.stringMatching(/has no exported member 'notExportedByThePackage'/)]);
    expect(problems.filter((line) => !line.includes("canary.ts"))).toEqual([]);
  }, 0); // no wall-clock limit, which CPU starvation could reach: tsc's CPU budget above bounds the test
});
