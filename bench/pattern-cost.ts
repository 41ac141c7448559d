/**
 * Benchmark: the worst a pattern can cost, each case in a process of its own (so the Unicode property
 * tables are made there, as in a process that meets its first such spec), CPU time of the one step
 * measured (process.cpuUsage()), next to a plain case measured the same way. The cases are the worst
 * found within the bounds src/specs/regex.ts, src/specs/ajv.ts and src/specs/limits.ts enforce: the
 * longest class a run-time pattern can spell, the most property tables a run-time spec can ask for, a
 * string that takes a validation's whole RE2 step budget and one past it, and a code-defined pattern on
 * JavaScript's RegExp at the bound linearOnBacktracking allows, on the longest answer.
 */
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { compiledDir } from "./compiled.js";
import { compareRepeated, fmt, median, table, type BenchOptions, type BenchResult, type Comparison, outcomeBlocks } from "./common.js";

interface CaseOutcome {
  cpuMs: number;
  /** What came of it: "accepted", "valid", "invalid: …", "refused: …". */
  outcome: string;
}

/** The code of one case, run in a fresh process against the compiled package: `step` is timed, `setup` is not. */
interface Case {
  label: string;
  setup: string;
  step: string;
}

const spec = (schema: unknown) => `resolveSpec({ name: "bench", schema: ${JSON.stringify(schema)} })`;
const SCRIPTS = ["Greek", "Latin", "Cyrillic", "Han"];

const CASES: Record<string, Case> = {
  widestClass: {
    label: "define a run-time spec whose pattern is one class naming \\P{L} 398 times (2,000 characters)",
    setup: "",
    step: `${spec({ type: "string", pattern: `^[${"\\P{L}".repeat(398)}]+$` })}; out = "accepted";`,
  },
  plainClass: {
    label: "define a run-time spec whose pattern is [\\P{L}] once",
    setup: "",
    step: `${spec({ type: "string", pattern: "^[\\P{L}]+$" })}; out = "accepted";`,
  },
  mostTables: {
    label: "define a run-time spec naming 4 Script properties and 6 General_Category values (every table made)",
    setup: "",
    step: `${spec({ type: "string", pattern: `^[${SCRIPTS.map((s) => `\\p{sc=${s}}`).join("")}\\p{Lu}\\p{Ll}\\p{Lt}\\p{Nd}\\p{P}\\p{Zs}]+$` })}; out = "accepted";`,
  },
  tablesMade: {
    label: "the same spec again in that process (its tables made)",
    setup: `${spec({ type: "string", pattern: `^[${SCRIPTS.map((s) => `\\p{sc=${s}}`).join("")}\\p{Lu}\\p{Ll}\\p{Lt}\\p{Nd}\\p{P}\\p{Zs}]+$` })};`,
    step: `${spec({ type: "string", pattern: `^[${SCRIPTS.map((s) => `\\p{Script=${s}}`).join("")}\\p{Lu}\\p{Ll}\\p{Lt}\\p{Nd}\\p{P}\\p{Zs}]+$`, $comment: "again" })}; out = "accepted";`,
  },
  wholeBudget: {
    label: "validate a string that takes the whole RE2 step budget: not {pattern: [ \\t]{1000}[^ ]}, 4,995 spaces",
    setup: `const s = ${spec({ type: "string", not: { pattern: "[ \\t]{1000}[^ ]" } })}; const v = " ".repeat(4995); checkValueSync(s, "x");`,
    step: `const r = checkValueSync(s, v); out = r.valid ? "valid" : "invalid: " + r.errors[0];`,
  },
  pastBudget: {
    label: "validate 250,000 spaces against that pattern (past the budget)",
    setup: `const s = ${spec({ type: "string", not: { pattern: "[ \\t]{1000}[^ ]" } })}; const v = " ".repeat(250000); checkValueSync(s, "x");`,
    step: `const r = checkValueSync(s, v); out = r.valid ? "valid" : "invalid: " + r.errors[0];`,
  },
  plainBudget: {
    label: "validate 4,995 spaces against not {pattern: [ \\t]{2}[^ ]}",
    setup: `const s = ${spec({ type: "string", not: { pattern: "[ \\t]{2}[^ ]" } })}; const v = " ".repeat(4995); checkValueSync(s, "x");`,
    step: `const r = checkValueSync(s, v); out = r.valid ? "valid" : "invalid: " + r.errors[0];`,
  },
  regExpBound: {
    label: "a code-defined pattern at RegExp's bound ([a-z]{31}[0-9]: 32 positions, unanchored) on 999,990 letters (about the longest string an answer holds)",
    setup: `const s = defineSpec({ name: "bench", schema: { type: "string", pattern: "[a-z]{31}[0-9]" } }); const v = "a".repeat(999990); checkValueSync(s, "x");`,
    step: `const r = checkValueSync(s, v); out = r.valid ? "valid" : "invalid";`,
  },
  regExpPlain: {
    label: "a code-defined pattern [a-z][0-9] on the same 999,990 letters",
    setup: `const s = defineSpec({ name: "bench", schema: { type: "string", pattern: "[a-z][0-9]" } }); const v = "a".repeat(999990); checkValueSync(s, "x");`,
    step: `const r = checkValueSync(s, v); out = r.valid ? "valid" : "invalid";`,
  },
  dataPattern: {
    label: "define a spec with pattern: {$data}",
    setup: "",
    step: `try { ${spec({ type: "object", properties: { p: { type: "string" }, v: { type: "string", pattern: { $data: "1/p" } } } })}; out = "accepted"; } catch (e) { out = "refused: " + e.message; }`,
  },
  bigCount: {
    label: "define a run-time spec with pattern a{1001}",
    setup: "",
    step: `try { ${spec({ type: "string", pattern: "a{1001}" })}; out = "accepted"; } catch (e) { out = "refused: " + e.message; }`,
  },
};

/** Run one case in a fresh Node process against the compiled package. */
function runCase(dir: string, c: Case): CaseOutcome {
  const url = (path: string) => JSON.stringify(pathToFileURL(`${dir}/${path}.js`).href);
  const code = [
    `const { resolveSpec } = await import(${url("src/specs/registry")});`,
    `const { defineSpec } = await import(${url("src/specs/spec")});`,
    `const { checkValueSync } = await import(${url("src/specs/check")});`,
    `let out = "";`,
    c.setup,
    `const cpu0 = process.cpuUsage();`,
    `{ ${c.step} }`,
    `const cpu = process.cpuUsage(cpu0);`,
    `process.stdout.write(JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, outcome: out }));`,
  ].join("\n");
  const stdout = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { encoding: "utf8", maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as CaseOutcome;
}

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const dir = await compiledDir();
  const repetitions = opts.quick ? 1 : 5;
  const results = new Map<string, CaseOutcome[]>(Object.keys(CASES).map((id) => [id, []]));
  // Every case once per repetition, so a busy moment of the machine falls on all of them alike.
  for (let r = 0; r < repetitions; r++) for (const [id, c] of Object.entries(CASES)) results.get(id)!.push(runCase(dir, c));
  const cpu = (id: string) => results.get(id)!.map((o) => o.cpuMs);
  const outcome = (id: string) => results.get(id)![0].outcome;
  const cmp = (value: string, reference: string): Comparison =>
    compareRepeated(CASES[value].label, cpu(value), cpu(reference), "ms CPU", CASES[reference].label);
  const comparisons = [
    cmp("widestClass", "plainClass"),
    cmp("mostTables", "tablesMade"),
    cmp("wholeBudget", "plainBudget"),
    cmp("pastBudget", "plainBudget"),
    cmp("regExpBound", "regExpPlain"),
  ];
  const worst = Math.max(...Object.keys(CASES).map((id) => median(cpu(id))));
  const checks = [
    {
      description: "the 398-escape class and the most tables a run-time spec may name are accepted",
      ok: outcome("widestClass") === "accepted" && outcome("mostTables") === "accepted",
    },
    {
      description: "the string within the step budget is judged (valid); the one past it is invalid, saying the budget was spent",
      ok: outcome("wholeBudget") === "valid" && /steps/.test(outcome("pastBudget")),
    },
    { description: "the pattern at RegExp's bound runs and finds no match", ok: outcome("regExpBound") === "invalid" },
    {
      description: "pattern: {$data} is refused when the spec is defined",
      ok: /takes its pattern from the answer/.test(outcome("dataPattern")),
      detail: outcome("dataPattern").slice(0, 120),
    },
    {
      description: "a{1001} is refused in the package's words, naming the limit",
      ok: /over 1000, which is not supported/.test(outcome("bigCount")),
      detail: outcome("bigCount").slice(0, 120),
    },
  ];
  const targets = [{ description: "no case costs a second of CPU", met: worst < 1_000, detail: `the costliest case's median: ${fmt(worst)} ms` }];
  const markdown = [
    "## Pattern cost: the worst cases within the bounds",
    "",
    `Each case in a Node process of its own (so the Unicode property tables are made there, as in a process meeting its first such spec), against the compiled package; the CPU time of the one step named (process.cpuUsage()), median of ${repetitions} processes, every case once per repetition. ` +
      "A run-time spec's pattern is at most 2,000 characters; RE2 steps (characters read × the pattern's positions) are bounded per validation; a code-defined pattern runs on RegExp only where start positions × the counts its one varying quantifier allows × (positions + 1), on 1,000,000 characters, is within 2^25 steps; a run-time spec names at most 4 property tables besides General_Category's.",
    "",
    table(
      ["case", "CPU ms (median)", "outcome"],
      Object.entries(CASES).map(([id, c]) => [c.label, fmt(median(cpu(id))), outcome(id).slice(0, 140)]),
    ),
    "",
    outcomeBlocks(comparisons, targets, checks),
  ].join("\n");
  return {
    id: "patterns",
    title: "Pattern cost",
    rows: Object.entries(CASES).map(([id, c]) => ({ label: c.label, value: median(cpu(id)), unit: "ms CPU" })),
    comparisons,
    targets,
    checks,
    markdown,
  };
}
