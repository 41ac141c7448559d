/**
 * Benchmark 1: validator speed on the deployment-config spec.
 *
 * `validateAgainstSpec` (ajv, all errors, full messages, rules) against
 *  - the hand-written TypeScript checker of the same schema and rules (the floor), and
 *  - the article's Python `validate_config` (jsonschema), timed inside Python on the same inputs.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  compare,
  fmt,
  table,
  timePerCall,
  type BenchOptions,
  type BenchResult,
  type Comparison,
  outcomeBlocks,
  type Target,
} from "./common.js";
import { compiled } from "./compiled.js";
import { INVALID_CONFIGS, VALID_CONFIGS, mutatedConfigs } from "./deployment-inputs.js";

export interface ValidatorSpeedOptions extends BenchOptions {
  /** Python executable (default python3). */
  python?: string;
}

interface PythonResult {
  python: string;
  jsonschema: string;
  verdicts: { valid: boolean; errors: string[] }[];
  valid_us: number;
  invalid_us: number;
  compiled_valid_us: number;
  compiled_invalid_us: number;
}

const PY_SCRIPT = fileURLToPath(new URL("./article_validator.py", import.meta.url));

/** Runs the article's validator once in a child process; undefined (with the reason) when Python or jsonschema is missing. */
export async function runPython(
  python: string,
  payload: { valid: unknown[]; invalid: unknown[]; round_seconds: number },
): Promise<{ ok: true; result: PythonResult } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(python, [PY_SCRIPT], { stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      resolve({ ok: false, reason: `not run: python3/jsonschema not available (${(error as Error).message})` });
      return;
    }
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", (error) => resolve({ ok: false, reason: `not run: python3/jsonschema not available (${error.message})` }));
    child.on("close", (code) => {
      if (code !== 0) {
        const missing = /No module named|ModuleNotFoundError/.test(stderr) ? "jsonschema is not installed" : `exit ${code}: ${stderr.trim().split("\n").at(-1) ?? ""}`;
        resolve({ ok: false, reason: `not run: python3/jsonschema not available (${missing})` });
        return;
      }
      try {
        resolve({ ok: true, result: JSON.parse(stdout) as PythonResult });
      } catch (error) {
        resolve({ ok: false, reason: `not run: the Python validator printed no JSON (${(error as Error).message})` });
      }
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(JSON.stringify(payload));
  });
}

export async function run(opts: ValidatorSpeedOptions): Promise<BenchResult> {
  // The package and the checker as compiled JavaScript (see bench/compiled.ts).
  const { builtinSpecs } = await compiled<typeof import("../src/specs/registry.js")>("src/specs/registry");
  const { validateAgainstSpec } = await compiled<typeof import("../src/specs/check.js")>("src/specs/check");
  const { checkDeploymentConfig } = await compiled<typeof import("./handwritten-checker.js")>("bench/handwritten-checker");
  const spec = builtinSpecs.get("deployment-config");
  if (!spec) throw new Error("deployment-config spec missing");
  const validate = (v: unknown) => validateAgainstSpec(spec, v);

  // Equivalence: the hand-written checker and the validator agree on verdicts and messages.
  const equivalenceInputs = [...VALID_CONFIGS, ...INVALID_CONFIGS, ...mutatedConfigs(opts.quick ? 300 : 5000)];
  let verdictMismatches = 0;
  let messageMismatches = 0;
  for (const input of equivalenceInputs) {
    const a = validate(input);
    const b = checkDeploymentConfig(input);
    if (a.valid !== b.valid) verdictMismatches++;
    if (a.errors.length !== b.errors.length || a.errors.some((e, i) => e !== b.errors[i])) messageMismatches++;
  }
  const timedVerdictsOk =
    VALID_CONFIGS.every((c) => validate(c).valid && checkDeploymentConfig(c).valid) &&
    INVALID_CONFIGS.every((c) => !validate(c).valid && !checkDeploymentConfig(c).valid);

  const timing = opts.quick ? { iterations: 20, rounds: 3 } : { iterations: 20_000, rounds: 9 };
  const validatorValidNs = timePerCall(VALID_CONFIGS, validate, timing);
  const handValidNs = timePerCall(VALID_CONFIGS, checkDeploymentConfig, timing);
  // Where the valid path's time goes: the compiled ajv schema check alone.
  const ajvValidNs = timePerCall(VALID_CONFIGS, (v) => spec.validateSchema(v), timing);
  const validatorInvalidNs = timePerCall(INVALID_CONFIGS, validate, { ...timing, iterations: Math.ceil(timing.iterations / 2) });
  const handInvalidNs = timePerCall(INVALID_CONFIGS, checkDeploymentConfig, { ...timing, iterations: Math.ceil(timing.iterations / 2) });

  // The same inputs freshly parsed on every call (JSON.parse of the text, as an answer arrives), so no call sees an object hot from the last pass.
  const validTexts = VALID_CONFIGS.map((c) => JSON.stringify(c));
  const invalidTexts = INVALID_CONFIGS.map((c) => JSON.stringify(c));
  const freshTiming = opts.quick ? timing : { iterations: 4_000, rounds: 9 };
  const parseValidNs = timePerCall(validTexts, (t) => JSON.parse(t), freshTiming);
  const validatorFreshValidNs = timePerCall(validTexts, (t) => validate(JSON.parse(t)), freshTiming);
  const handFreshValidNs = timePerCall(validTexts, (t) => checkDeploymentConfig(JSON.parse(t)), freshTiming);
  const validatorFreshInvalidNs = timePerCall(invalidTexts, (t) => validate(JSON.parse(t)), freshTiming);
  const handFreshInvalidNs = timePerCall(invalidTexts, (t) => checkDeploymentConfig(JSON.parse(t)), freshTiming);

  const py = await runPython(opts.python ?? "python3", { valid: VALID_CONFIGS, invalid: INVALID_CONFIGS, round_seconds: opts.quick ? 0.002 : 0.25 });

  const us = (ns: number) => ns / 1000;
  const comparisons: Comparison[] = [
    compare("validateAgainstSpec, valid inputs", us(validatorValidNs), us(handValidNs), "µs/call", "hand-written checker", "value/reference"),
    compare("validateAgainstSpec, invalid inputs (all errors, full messages)", us(validatorInvalidNs), us(handInvalidNs), "µs/call", "hand-written checker", "value/reference"),
    compare("JSON.parse + validateAgainstSpec, freshly parsed valid inputs", us(validatorFreshValidNs), us(handFreshValidNs), "µs/call", "JSON.parse + hand-written checker", "value/reference"),
    compare("JSON.parse + validateAgainstSpec, freshly parsed invalid inputs", us(validatorFreshInvalidNs), us(handFreshInvalidNs), "µs/call", "JSON.parse + hand-written checker", "value/reference"),
  ];
  const notRun: string[] = [];
  const checks: BenchResult["checks"] = [
    {
      description: `hand-written checker and validateAgainstSpec give the same verdict on every input (${equivalenceInputs.length} inputs: the timed ones and random mutations)`,
      ok: verdictMismatches === 0,
      detail: `${verdictMismatches} verdict mismatches`,
    },
    {
      description: "…and the same error messages in the same order",
      ok: messageMismatches === 0,
      detail: `${messageMismatches} message mismatches`,
    },
    { description: `the ${VALID_CONFIGS.length} timed valid inputs are valid and the ${INVALID_CONFIGS.length} timed invalid inputs are invalid for both`, ok: timedVerdictsOk },
  ];
  let pyLine = "";
  if (py.ok) {
    const r = py.result;
    // Python is the figure and validateAgainstSpec the reference, so that these ratios read like every other
    // (value ÷ reference: how many times validateAgainstSpec's time the figure takes).
    comparisons.push(
      compare("Python with the validator built once (jsonschema Draft202012Validator) vs validateAgainstSpec, valid inputs", r.compiled_valid_us, us(validatorValidNs), "µs/call", "validateAgainstSpec"),
      compare("Python with the validator built once vs validateAgainstSpec, invalid inputs (its first error against all errors)", r.compiled_invalid_us, us(validatorInvalidNs), "µs/call", "validateAgainstSpec"),
      compare("the article's validate_config vs validateAgainstSpec, valid inputs (as written: schema re-checked, validator rebuilt every call)", r.valid_us, us(validatorValidNs), "µs/call", "validateAgainstSpec"),
      compare("the article's validate_config vs validateAgainstSpec, invalid inputs (as written: stops at the first schema error)", r.invalid_us, us(validatorInvalidNs), "µs/call", "validateAgainstSpec"),
    );
    const all = [...VALID_CONFIGS, ...INVALID_CONFIGS];
    const agree = all.filter((c, i) => r.verdicts[i]?.valid === validate(c).valid).length;
    checks.push({ description: "the article's validator gives the same verdict as validateAgainstSpec on every timed input", ok: agree === all.length, detail: `${agree}/${all.length}` });
    pyLine = `Python ${r.python}, jsonschema ${r.jsonschema}; timed inside Python (5 rounds, median), called once from Node with the inputs as JSON on stdin.`;
  } else notRun.push(py.reason);

  const ratioOf = (label: string) => comparisons.find((c) => c.label === label);
  const validVsHand = ratioOf("validateAgainstSpec, valid inputs") as Comparison;
  const pyValid = ratioOf("Python with the validator built once (jsonschema Draft202012Validator) vs validateAgainstSpec, valid inputs");
  const pyInvalid = ratioOf("Python with the validator built once vs validateAgainstSpec, invalid inputs (its first error against all errors)");
  const freshVsHand = ratioOf("JSON.parse + validateAgainstSpec, freshly parsed valid inputs") as Comparison;
  const targets: Target[] = [
    {
      description: "valid path within 2× of the hand-written checker",
      met: validVsHand.ratio <= 2,
      detail: `${fmt(validVsHand.value)} µs vs ${fmt(validVsHand.reference)} µs = ${validVsHand.ratio.toFixed(2)}×`,
    },
    {
      description: "freshly parsed valid inputs (JSON.parse per call) within 1.5× of the hand-written checker on the same inputs",
      met: freshVsHand.ratio <= 1.5,
      detail: `${fmt(freshVsHand.value)} µs vs ${fmt(freshVsHand.reference)} µs = ${freshVsHand.ratio.toFixed(2)}× (JSON.parse alone: ${fmt(us(parseValidNs))} µs)`,
    },
    {
      description: "at least 100× faster than Python with its validator built once (valid inputs)",
      met: pyValid ? pyValid.ratio >= 100 : null,
      detail: pyValid ? `${fmt(pyValid.ratio)}× (${fmt(pyValid.value)} µs vs ${fmt(pyValid.reference)} µs)` : (notRun[0] ?? "not run"),
    },
    {
      description: "at least 20× faster than Python with its validator built once (invalid inputs, all errors against its first)",
      met: pyInvalid ? pyInvalid.ratio >= 20 : null,
      detail: pyInvalid ? `${fmt(pyInvalid.ratio)}× (${fmt(pyInvalid.value)} µs vs ${fmt(pyInvalid.reference)} µs)` : (notRun[0] ?? "not run"),
    },
  ];

  const rows = [
    { label: "validateAgainstSpec, valid", value: us(validatorValidNs), unit: "µs/call" },
    { label: "hand-written checker, valid", value: us(handValidNs), unit: "µs/call" },
    { label: "ajv schema check alone, valid", value: us(ajvValidNs), unit: "µs/call" },
    { label: "validateAgainstSpec, invalid", value: us(validatorInvalidNs), unit: "µs/call" },
    { label: "hand-written checker, invalid", value: us(handInvalidNs), unit: "µs/call" },
    { label: "JSON.parse alone, valid", value: us(parseValidNs), unit: "µs/call" },
    { label: "JSON.parse + validateAgainstSpec, valid", value: us(validatorFreshValidNs), unit: "µs/call" },
    { label: "JSON.parse + hand-written checker, valid", value: us(handFreshValidNs), unit: "µs/call" },
    { label: "JSON.parse + validateAgainstSpec, invalid", value: us(validatorFreshInvalidNs), unit: "µs/call" },
    { label: "JSON.parse + hand-written checker, invalid", value: us(handFreshInvalidNs), unit: "µs/call" },
    ...(py.ok
      ? [
          { label: "Python validate_config, valid", value: py.result.valid_us, unit: "µs/call" },
          { label: "Python validate_config, invalid", value: py.result.invalid_us, unit: "µs/call" },
          { label: "Python, compiled once, valid", value: py.result.compiled_valid_us, unit: "µs/call" },
          { label: "Python, compiled once, invalid", value: py.result.compiled_invalid_us, unit: "µs/call" },
        ]
      : []),
  ];

  const markdown = [
    "## 1. Validator speed (deployment-config)",
    "",
    `Inputs: ${VALID_CONFIGS.length} valid and ${INVALID_CONFIGS.length} invalid deployment configs (missing fields, wrong types, ranges, patterns, broken rules, several at once). ` +
      `Each figure is the median of ${timing.rounds} rounds of ${timing.iterations.toLocaleString("en-US")} passes (invalid: half as many). ` +
      "`validateAgainstSpec` reports every error with a full message; the hand-written checker (bench/handwritten-checker.ts) produces the same messages; " +
      "the article's `validate_config` (bench/article_validator.py) stops at the first schema error. " +
      "The TypeScript is timed as compiled JavaScript (bench/compiled.ts: esbuild, file by file, like tsc's output), not through tsx's loader. " +
      "The hot figures reuse the same few objects on every pass, so they sit in the CPU's caches; the freshly parsed figures run `JSON.parse` on the input's text before every call " +
      `(${freshTiming.rounds} rounds of ${freshTiming.iterations.toLocaleString("en-US")} passes), which is how an answer reaches a validator, and show what the validator's speed is worth once the parse is counted.`,
    pyLine ? `\n${pyLine}` : "",
    "",
    table(
      ["validator", "valid µs/call (same objects, hot)", "invalid µs/call (hot)", "valid µs/call, freshly parsed (JSON.parse included)", "invalid µs/call, freshly parsed"],
      [
        ["validateAgainstSpec (ajv + rules)", fmt(us(validatorValidNs)), fmt(us(validatorInvalidNs)), fmt(us(validatorFreshValidNs)), fmt(us(validatorFreshInvalidNs))],
        ["hand-written TypeScript checker", fmt(us(handValidNs)), fmt(us(handInvalidNs)), fmt(us(handFreshValidNs)), fmt(us(handFreshInvalidNs))],
        ["JSON.parse alone", "—", "—", fmt(us(parseValidNs)), "—"],
        ...(py.ok
          ? [
              ["Python, jsonschema validator built once (Draft202012Validator)", fmt(py.result.compiled_valid_us), fmt(py.result.compiled_invalid_us), "—", "—"],
              ["article's validate_config as written (Python, jsonschema.validate per call)", fmt(py.result.valid_us), fmt(py.result.invalid_us), "—", "—"],
            ]
          : [["article's validate_config (Python)", notRun[0] ?? "not run", "", "", ""]]),
      ],
    ),
    "",
    outcomeBlocks(comparisons, targets, checks),
    "",
    `Where the valid path's time goes: the compiled ajv schema check alone takes ${fmt(us(ajvValidNs))} µs; the other ${fmt(us(validatorValidNs - ajvValidNs))} µs of \`validateAgainstSpec\` ` +
      "run the business rules (src/specs/validate.ts): each rule's input reader is compiled once per spec to straight-line code, as ajv does for schemas, " +
      "and messages are only built once a problem is found.",
    py.ok
      ? "\nThe article's `validate_config` calls `jsonschema.validate`, which checks the schema against the metaschema and builds a validator on every call; most of its time is that. " +
        "The fair comparison for Python is the validator built once (the first two Python rows of the comparisons); the as-written figures are shown because the article's code does it that way."
      : "",
  ].join("\n");

  return { id: "validator", title: "Validator speed", rows, comparisons, targets, checks, markdown, notRun };
}
