/**
 * Benchmark 1: validator speed on the deployment-config spec.
 *
 * The validator (the schema check and the rules: `judgeSchemaAndRules`, what
 * the check step runs on every parsed answer) against
 *  - the hand-written TypeScript checker of the same schema and rules (the floor), and
 *  - the article's Python `validate_config` (jsonschema), in a Python process
 *    that times its own rounds on command (bench/article_validator.py).
 *
 * Everything is measured together: interleaved rounds, every variant once per
 * round in a random order, CPU time per call (process.cpuUsage() here,
 * time.process_time_ns() in Python), each variant in a timing loop of its own.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { createInterface, type Interface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  compareRepeated,
  fmt,
  fmtLoad,
  fmtRatio,
  interleavedRounds,
  jsVariant,
  median,
  ownLoop,
  ratioStats,
  sink,
  nowNs,
  cpuUs,
  spread,
  table,
  type BenchOptions,
  type BenchResult,
  type Comparison,
  type MicroVariant,
  type RoundSample,
  outcomeBlocks,
  type Target,
} from "./common.js";
import { compiled } from "./compiled.js";
import { INVALID_CONFIGS, VALID_CONFIGS, mutatedConfigs } from "./deployment-inputs.js";

export interface ValidatorSpeedOptions extends BenchOptions {
  /** Python executable (default python3). */
  python?: string;
}

interface PythonReady {
  python: string;
  jsonschema: string;
  verdicts: { valid: boolean; errors: string[] }[];
}

type PythonFunction = "article_valid" | "article_invalid" | "compiled_valid" | "compiled_invalid";

const PY_SCRIPT = fileURLToPath(new URL("./article_validator.py", import.meta.url));

/** The article's validator in a Python process that times rounds on command (see bench/article_validator.py). */
export class PythonTimer {
  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly lines: Interface,
    readonly ready: PythonReady,
  ) {}

  /** Start it with the inputs; the reason when Python or jsonschema is missing. */
  static async start(
    python: string,
    payload: { valid: unknown[]; invalid: unknown[] },
  ): Promise<{ ok: true; timer: PythonTimer } | { ok: false; reason: string }> {
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(python, [PY_SCRIPT], { stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      return { ok: false, reason: `not run: python3/jsonschema not available (${(error as Error).message})` };
    }
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.stdin.on("error", () => undefined);
    const lines = createInterface({ input: child.stdout });
    const first = await new Promise<{ line: string } | { failed: string }>((resolve) => {
      lines.once("line", (line) => resolve({ line }));
      child.once("error", (error) => resolve({ failed: error.message }));
      child.once("close", (code) => {
        const missing = /No module named|ModuleNotFoundError/.test(stderr)
          ? "jsonschema is not installed"
          : `exit ${code}: ${stderr.trim().split("\n").at(-1) ?? ""}`;
        resolve({ failed: missing });
      });
      child.stdin.write(`${JSON.stringify(payload)}\n`);
    });
    if ("failed" in first || !first.line.startsWith("READY ")) {
      child.kill();
      return { ok: false, reason: `not run: python3/jsonschema not available (${"failed" in first ? first.failed : first.line.slice(0, 200)})` };
    }
    return { ok: true, timer: new PythonTimer(child, lines, JSON.parse(first.line.slice("READY ".length)) as PythonReady) };
  }

  /** One timed round inside Python: `passes` passes over the group's inputs; ns per call. */
  time(fn: PythonFunction, passes: number): Promise<RoundSample> {
    return new Promise((resolve, reject) => {
      this.lines.once("line", (line) => {
        try {
          const r = JSON.parse(line) as { cpu_ns: number; wall_ns: number };
          resolve({ cpuNs: r.cpu_ns, wallNs: r.wall_ns });
        } catch (error) {
          reject(error as Error);
        }
      });
      this.child.stdin.write(`${JSON.stringify({ fn, passes })}\n`);
    });
  }

  variant(name: string, fn: PythonFunction): MicroVariant {
    return { name, round: (passes) => this.time(fn, passes) };
  }

  close(): void {
    this.child.stdin.end();
    if (this.child.exitCode === null) this.child.kill();
  }
}

/** Variant names (also the row labels, with " µs/call"). */
const V = {
  valid: "validator (schema + rules), valid",
  invalid: "validator (schema + rules), invalid",
  handValid: "hand-written checker, valid",
  handInvalid: "hand-written checker, invalid",
  ajvValid: "ajv schema check alone, valid",
  valueValid: "checkValueSync (object in: bounded copy, then judged), valid",
  valueInvalid: "checkValueSync (object in: bounded copy, then judged), invalid",
  textValid: "checkTextSync (text in: the exact reader, then judged), valid",
  sharedValid: "validator, valid, in a timing loop shared by every measured function",
  sharedHandValid: "hand-written checker, valid, in a timing loop shared by every measured function",
  parse: "JSON.parse alone, valid",
  freshValid: "JSON.parse + validator, valid",
  freshHandValid: "JSON.parse + hand-written checker, valid",
  freshInvalid: "JSON.parse + validator, invalid",
  freshHandInvalid: "JSON.parse + hand-written checker, invalid",
  pyCompiledValid: "Python, validator built once, valid",
  pyCompiledInvalid: "Python, validator built once, invalid",
  pyArticleValid: "Python validate_config as written, valid",
  pyArticleInvalid: "Python validate_config as written, invalid",
} as const;

export async function run(opts: ValidatorSpeedOptions): Promise<BenchResult> {
  // The package and the checker as compiled JavaScript (see bench/compiled.ts).
  const { builtinSpecs } = await compiled<typeof import("../src/specs/registry.js")>("src/specs/registry");
  const { checkValueSync, checkTextSync } = await compiled<typeof import("../src/specs/check.js")>("src/specs/check");
  const { judgeSchemaAndRules } = await compiled<typeof import("../src/specs/validate.js")>("src/specs/validate");
  const { checkDeploymentConfig } = await compiled<typeof import("./handwritten-checker.js")>("bench/handwritten-checker");
  const spec = builtinSpecs.get("deployment-config");
  if (!spec) throw new Error("deployment-config spec missing");
  const validateValue = (v: unknown) => checkValueSync(spec, v);
  // What the check step runs on a parsed answer (checkText → judge): the schema check, then the rules. No copy: JSON.parse made the value.
  const judge = (v: unknown) => judgeSchemaAndRules(spec, v);

  // Equivalence: the hand-written checker and the validator agree on verdicts and messages.
  const equivalenceInputs = [...VALID_CONFIGS, ...INVALID_CONFIGS, ...mutatedConfigs(opts.quick ? 300 : 5000)];
  let verdictMismatches = 0;
  let messageMismatches = 0;
  for (const input of equivalenceInputs) {
    const a = validateValue(input);
    const b = checkDeploymentConfig(input);
    if (a.valid !== b.valid) verdictMismatches++;
    if (a.errors.length !== b.errors.length || a.errors.some((e, i) => e !== b.errors[i])) messageMismatches++;
  }
  const timedVerdictsOk =
    VALID_CONFIGS.every((c) => validateValue(c).valid && checkDeploymentConfig(c).valid && judge(c).messages.length === 0) &&
    INVALID_CONFIGS.every((c) => !validateValue(c).valid && !checkDeploymentConfig(c).valid && judge(c).messages.length > 0);

  const validTexts = VALID_CONFIGS.map((c) => JSON.stringify(c));
  const invalidTexts = INVALID_CONFIGS.map((c) => JSON.stringify(c));

  // The earlier method, kept as one variant so its cost shows: one timing loop for every measured function.
  const sharedLoop = ownLoop<unknown>();
  for (const fn of [
    judge,
    checkDeploymentConfig,
    validateValue,
    (v: unknown) => spec.checkSchema(v),
    (v: unknown) => JSON.stringify(v),
    (v: unknown) => structuredClone(v),
  ])
    sink.value = sharedLoop(fn, VALID_CONFIGS, 50);
  const sharedVariant = (name: string, fn: (v: unknown) => unknown): MicroVariant => ({
    name,
    round: (passes) => {
      const wall0 = nowNs();
      const cpu0 = process.cpuUsage();
      sink.value = sharedLoop(fn, VALID_CONFIGS, passes);
      const calls = passes * VALID_CONFIGS.length;
      return { cpuNs: (cpuUs(cpu0) * 1000) / calls, wallNs: (nowNs() - wall0) / calls };
    },
  });

  const variants: MicroVariant[] = [
    jsVariant(V.valid, VALID_CONFIGS, judge),
    jsVariant(V.invalid, INVALID_CONFIGS, judge),
    jsVariant(V.handValid, VALID_CONFIGS, checkDeploymentConfig),
    jsVariant(V.handInvalid, INVALID_CONFIGS, checkDeploymentConfig),
    jsVariant(V.ajvValid, VALID_CONFIGS, (v) => spec.checkSchema(v)),
    jsVariant(V.valueValid, VALID_CONFIGS, validateValue),
    jsVariant(V.valueInvalid, INVALID_CONFIGS, validateValue),
    sharedVariant(V.sharedValid, judge),
    sharedVariant(V.sharedHandValid, checkDeploymentConfig),
    jsVariant(V.parse, validTexts, (t) => JSON.parse(t)),
    jsVariant(V.freshValid, validTexts, (t) => judge(JSON.parse(t))),
    jsVariant(V.freshHandValid, validTexts, (t) => checkDeploymentConfig(JSON.parse(t))),
    jsVariant(V.freshInvalid, invalidTexts, (t) => judge(JSON.parse(t))),
    jsVariant(V.textValid, validTexts, (t) => checkTextSync(spec, t, "exact")),
    jsVariant(V.freshHandInvalid, invalidTexts, (t) => checkDeploymentConfig(JSON.parse(t))),
  ];

  const py = await PythonTimer.start(opts.python ?? "python3", { valid: VALID_CONFIGS, invalid: INVALID_CONFIGS });
  if (py.ok) {
    variants.push(
      py.timer.variant(V.pyCompiledValid, "compiled_valid"),
      py.timer.variant(V.pyCompiledInvalid, "compiled_invalid"),
      py.timer.variant(V.pyArticleValid, "article_valid"),
      py.timer.variant(V.pyArticleInvalid, "article_invalid"),
    );
  }
  const rounds = opts.quick ? 3 : 15;
  const roundMs = opts.quick ? 5 : 40;
  const loadBefore = loadavg();
  let samples: Map<string, RoundSample[]>;
  try {
    samples = await interleavedRounds(variants, { rounds, roundMs, warmupRounds: opts.quick ? 1 : 2 });
  } finally {
    if (py.ok) py.timer.close();
  }
  const loadAfter = loadavg();
  const present = (name: string) => samples.has(name);
  const cpu = (name: string) => samples.get(name)!.map((s) => s.cpuNs / 1000);
  const wall = (name: string) => samples.get(name)!.map((s) => s.wallNs / 1000);
  const m = (name: string) => median(cpu(name));
  const cmp = (label: string, value: string, reference: string, referenceLabel: string) =>
    compareRepeated(label, cpu(value), cpu(reference), "µs/call", referenceLabel);

  const comparisons: Comparison[] = [
    cmp("validator (schema + rules), valid inputs", V.valid, V.handValid, "hand-written checker"),
    cmp("validator (schema + rules), invalid inputs (all errors, full messages)", V.invalid, V.handInvalid, "hand-written checker"),
    cmp("JSON.parse + validator, freshly parsed valid inputs", V.freshValid, V.freshHandValid, "JSON.parse + hand-written checker"),
    cmp("JSON.parse + validator, freshly parsed invalid inputs", V.freshInvalid, V.freshHandInvalid, "JSON.parse + hand-written checker"),
    cmp("checkValueSync on an object (a bounded copy first), valid inputs", V.valueValid, V.valid, "the validator on the value as parsed"),
    cmp("the check step on text (checkTextSync: the exact reader, then judged), valid inputs", V.textValid, V.freshValid, "JSON.parse + validator"),
  ];
  const notRun: string[] = [];
  const checks: BenchResult["checks"] = [
    {
      description: `hand-written checker and checkValueSync give the same verdict on every input (${equivalenceInputs.length} inputs: the timed ones and random mutations)`,
      ok: verdictMismatches === 0,
      detail: `${verdictMismatches} verdict mismatches`,
    },
    {
      description: "…and the same error messages in the same order",
      ok: messageMismatches === 0,
      detail: `${messageMismatches} message mismatches`,
    },
    {
      description: `the ${VALID_CONFIGS.length} timed valid inputs are valid and the ${INVALID_CONFIGS.length} timed invalid inputs are invalid for the validator, checkValueSync and the hand-written checker`,
      ok: timedVerdictsOk,
    },
  ];
  let pyLine = "";
  if (py.ok) {
    const r = py.timer.ready;
    // Python is the figure and the validator the reference, so these ratios read like every other: value ÷ reference.
    comparisons.push(
      cmp(
        "Python with the validator built once (jsonschema Draft202012Validator) vs the validator, valid inputs",
        V.pyCompiledValid,
        V.valid,
        "validator (schema + rules)",
      ),
      cmp(
        "Python with the validator built once vs the validator, invalid inputs (its first error against all errors)",
        V.pyCompiledInvalid,
        V.invalid,
        "validator (schema + rules)",
      ),
      cmp(
        "the article's validate_config vs the validator, valid inputs (as written: schema re-checked, validator rebuilt every call)",
        V.pyArticleValid,
        V.valid,
        "validator (schema + rules)",
      ),
      cmp(
        "the article's validate_config vs the validator, invalid inputs (as written: stops at the first schema error)",
        V.pyArticleInvalid,
        V.invalid,
        "validator (schema + rules)",
      ),
    );
    const all = [...VALID_CONFIGS, ...INVALID_CONFIGS];
    const agree = all.filter((c, i) => r.verdicts[i]?.valid === validateValue(c).valid).length;
    checks.push({
      description: "the article's validator gives the same verdict as checkValueSync on every timed input",
      ok: agree === all.length,
      detail: `${agree}/${all.length}`,
    });
    pyLine = `Python ${r.python}, jsonschema ${r.jsonschema}, in a child process started once; each of its rounds is timed inside Python on command, between the TypeScript variants' rounds.`;
  } else notRun.push(py.reason);

  const find = (prefix: string) => comparisons.find((c) => c.label.startsWith(prefix));
  const validVsHand = find("validator (schema + rules), valid") as Comparison;
  const freshVsHand = find("JSON.parse + validator, freshly parsed valid") as Comparison;
  const pyValid = find("Python with the validator built once (jsonschema");
  const pyInvalid = find("Python with the validator built once vs the validator, invalid");
  const reps = (c: Comparison) => `${fmtRatio(c.ratio)} (${fmtRatio(Math.min(...c.ratios))}–${fmtRatio(Math.max(...c.ratios))} over ${c.ratios.length} rounds)`;
  const targets: Target[] = [
    {
      description: "valid path within 2× of the hand-written checker",
      met: validVsHand.ratio <= 2,
      detail: `${fmt(validVsHand.value)} µs vs ${fmt(validVsHand.reference)} µs: ${reps(validVsHand)}`,
    },
    {
      description: "freshly parsed valid inputs (JSON.parse per call) within 1.5× of the hand-written checker on the same inputs",
      met: freshVsHand.ratio <= 1.5,
      detail: `${fmt(freshVsHand.value)} µs vs ${fmt(freshVsHand.reference)} µs: ${reps(freshVsHand)} (JSON.parse alone: ${fmt(m(V.parse))} µs)`,
    },
    {
      description: "at least 100× faster than Python with its validator built once (valid inputs)",
      met: pyValid ? pyValid.ratio >= 100 : null,
      detail: pyValid ? `${reps(pyValid)} (${fmt(pyValid.value)} µs vs ${fmt(pyValid.reference)} µs)` : (notRun[0] ?? "not run"),
    },
    {
      description: "at least 20× faster than Python with its validator built once (invalid inputs, all errors against its first)",
      met: pyInvalid ? pyInvalid.ratio >= 20 : null,
      detail: pyInvalid ? `${reps(pyInvalid)} (${fmt(pyInvalid.value)} µs vs ${fmt(pyInvalid.reference)} µs)` : (notRun[0] ?? "not run"),
    },
  ];

  const rows = [...samples.keys()].map((name) => ({ label: name, value: m(name), unit: "µs/call" }));
  const cell = (name: string) => (present(name) ? `${spread(cpu(name))} [wall ${fmt(median(wall(name)))}]` : "—");
  const shared = ratioStats(cpu(V.sharedValid), cpu(V.valid));
  const sharedHand = ratioStats(cpu(V.sharedHandValid), cpu(V.handValid));
  const copy = ratioStats(cpu(V.valueValid), cpu(V.valid));
  const wallOverCpu = ratioStats(wall(V.valid), cpu(V.valid));

  const markdown = [
    "## 1. Validator speed (deployment-config)",
    "",
    `Inputs: ${VALID_CONFIGS.length} valid and ${INVALID_CONFIGS.length} invalid deployment configs (missing fields, wrong types, ranges, patterns, broken rules, several at once). ` +
      "The validator is what the check step runs on every parsed answer: the compiled schema check, then the rules (`judgeSchemaAndRules`, src/specs/validate.ts); " +
      "it reports every error with a full message. The hand-written checker (bench/handwritten-checker.ts) produces the same messages; " +
      "the article's `validate_config` (bench/article_validator.py) stops at the first schema error. " +
      `**Measured together:** ${rounds} interleaved rounds (after ${opts.quick ? 1 : 2} dropped), each running every variant once in a random order for about ${roundMs} ms; ` +
      "the TypeScript variants in this process (compiled JavaScript, bench/compiled.ts), each in a timing loop of its own, the Python ones in a child process that times each round inside Python when asked. " +
      "The figure is CPU time per call (`process.cpuUsage()`; Python `time.process_time_ns()`), median (min–max) over the rounds, wall time beside it in brackets. " +
      "The hot figures reuse the same few objects on every pass; the freshly parsed ones run `JSON.parse` on the input's text before every call, which is how an answer reaches a validator.",
    pyLine ? `\n${pyLine}` : "",
    "",
    `Load average (1 / 5 / 15 min): ${fmtLoad(loadBefore)} before, ${fmtLoad(loadAfter)} after (${cpus().length} cores).`,
    "",
    table(
      ["validator", "valid µs/call (hot)", "invalid µs/call (hot)", "valid µs/call, freshly parsed (JSON.parse included)", "invalid µs/call, freshly parsed"],
      [
        ["the validator (`judgeSchemaAndRules`: ajv + rules)", cell(V.valid), cell(V.invalid), cell(V.freshValid), cell(V.freshInvalid)],
        ["hand-written TypeScript checker", cell(V.handValid), cell(V.handInvalid), cell(V.freshHandValid), cell(V.freshHandInvalid)],
        ["`checkValueSync` on an object (a bounded copy, then the validator)", cell(V.valueValid), cell(V.valueInvalid), "—", "—"],
        ["ajv schema check alone", cell(V.ajvValid), "—", "—", "—"],
        ["JSON.parse alone", "—", "—", cell(V.parse), "—"],
        ...(py.ok
          ? [
              ["Python, jsonschema validator built once (Draft202012Validator)", cell(V.pyCompiledValid), cell(V.pyCompiledInvalid), "—", "—"],
              ["article's validate_config as written (Python, jsonschema.validate per call)", cell(V.pyArticleValid), cell(V.pyArticleInvalid), "—", "—"],
            ]
          : [["article's validate_config (Python)", notRun[0] ?? "not run", "", "", ""]]),
      ],
    ),
    "",
    outcomeBlocks(comparisons, targets, checks),
    "",
    "**How this differs from the earlier method**, each difference measured in these rounds: " +
      "(1) the earlier figures timed `checkValueSync` on objects, which now makes a bounded copy of the value first (a caller's object may hold cycles, getters or non-JSON values), " +
      `while the check step never copies a value \`JSON.parse\` made: the copy path takes ${fmtRatio(copy.median)} the validator's time (${fmt(m(V.valueValid))} µs against ${fmt(m(V.valid))} µs). ` +
      `(2) One timing loop served every measured function, a megamorphic call site that can keep V8 from inlining the function under test: through such a loop the validator takes ${fmtRatio(shared.median)} its own loop's time and the hand-written checker ${fmtRatio(sharedHand.median)}${
        Math.max(Math.abs(shared.median - 1), Math.abs(sharedHand.median - 1)) < 0.05 ? ", no measurable effect here" : ""
      }. ` +
      `(3) The earlier figures were wall time, which on a shared machine includes time spent waiting for a core: here wall ÷ CPU for the validator was ${fmtRatio(wallOverCpu.median)}. ` +
      "(4) Python ran in a separate burst after the TypeScript, so the two sides did not share the machine's load; here they alternate round by round.",
    "",
    `Where the valid path's time goes: the compiled ajv schema check alone takes ${fmt(m(V.ajvValid))} µs; the rest of the validator's ${fmt(m(V.valid))} µs ` +
      "runs the business rules (src/specs/validate.ts): each rule's input reader is compiled once per spec to straight-line code, as ajv does for schemas, " +
      "and messages are only built once a problem is found.",
    py.ok
      ? "\nThe article's `validate_config` calls `jsonschema.validate`, which checks the schema against the metaschema and builds a validator on every call; most of its time is that. " +
        "The fair comparison for Python is the validator built once (the first two Python rows of the comparisons); the as-written figures are shown because the article's code does it that way. "
      : "",
  ].join("\n");

  return { id: "validator", title: "Validator speed", rows, comparisons, targets, checks, markdown, notRun };
}
