/**
 * The evaluation's simulated model: the package's built-in one (src/simulated/model.ts, its defect catalogue in
 * src/simulated/defects.ts), plus what only the
 * evaluation and the benchmarks use, through the built-in model's protected hooks: the suite's requests (their
 * spec and difficulty), the "small" and "large" tiers an escalation asks for by name, syntax slips and bad
 * corrections at given rates, and its rules written out for the report (SIMULATION_RULES).
 */
import {
  SimulatedChatModel as BuiltinSimulatedChatModel,
  simulatedModelSource as builtinModelSource,
  type SimulatedModelOptions,
  type SimulatedRequestContext,
  type SimulatedRole,
} from "../src/simulated/model.js";
import type { Defect, Difficulty } from "../src/simulated/defects.js";
import { hash, seededRandom as random } from "../src/simulated/random.js";
import { leavesOf } from "../src/simulated/sample.js";
import { SUITE } from "./suite.js";

export { buildAnswer, DEFECTS, exhibits, planDefects, type Defect, type Difficulty } from "../src/simulated/defects.js";

/** The reviewer's miss rate when none is given: the probability that it misses a defect. */
export const DEFAULT_MISS_RATE = 0.6;

export const SIMULATION_RULES = [
  "It is not a language model; it follows fixed rules with a seeded random generator, so a seed always gives the same numbers.",
  "As a generator, its first answer to a request is the spec's example with seeded defects: 0-1 for an easy request, 1-2 for a medium one, 3-4 for a hard one " +
    "(the suite marks each request; a request it does not list counts as medium), chosen from a per-spec catalogue (wrong type, missing field, out of range, pattern, enum, format, unexpected field, broken cross-field rule; " +
    "two defects of one answer never touch the same field).",
  "On a retry it fixes exactly the defects that its feedback names (a defect is named when the feedback mentions its field path as the subject of a sentence, " +
    "e.g. `resources.cpu_limit is 0.5; …` or `- resources.cpu_limit: …`, or as zod's errors point at it, `→ at resources.cpu_limit`), keeps the others, and never introduces new ones.",
  "As a reviewer (the self-review strategy) it misses each defect present in the answer with the miss rate (default 0.6) and names the others; " +
    'if it names none it replies "APPROVED".',
  "As a Reflexion evaluator it repeats the validator errors in its prompt and scores the response (max(1, 6 − errors)/10); with no errors it gives 9.5/10; " +
    'without a validator section it judges like the reviewer. It always ends with "Final score: N/10". As a reflector it repeats the evaluation\'s problem lines.',
  "Which spec a request is for: the suite's entry, else the spec the system prompt describes, else the request's own words (deploy → deployment-config, sign up or register → signup-form, " +
    "an HTTP method, a URL or an API request → api-request, a query, table, rows or columns → db-query). For a request none of these identify " +
    "it answers with a message saying so (not JSON), and as a reviewer or evaluator it says it cannot judge (Final score: 0/10).",
  "For a spec that is not built in, it answers from the JSON Schema in its prompt: the spec's example if it has one, else a value drawn from the schema with the seed " +
    "(types, bounds, enums, patterns, the standard formats), except that a number the request gives a field by name (with 8 replicas: a numeric field `replicas`) is taken when the field's type and bounds admit it; its first answer breaks 1-2 fields (a required field left out, or a value of the wrong type). " +
    'A retry fixes the named defects as above and draws again every other field its feedback names (a field a broken rule reads, e.g. `code is "X"; percent=50 requires …`).',
  "Given tools (bindTools), it calls each tool once, with arguments from the built-in spec the request names when its example has the tool's fields, else drawn from the tool's schema " +
    "(first answer with defects, as above); a call whose result is an error is made again with the named defects fixed, from the built-in spec that result says the arguments must match when it names one (a guard holds a tool to a spec its own schema does not show) (up to 3 failed calls of a tool in a turn, then it says the tool did not run); then it gives the structured answer " +
    '(a tool whose name starts with "extract-") with the arguments of the call that ran when they are for the same spec; with nothing left to call it replies with the last tool\'s result.',
  "Asked for corrections only (a retry whose prompt asks for a JSON Patch), it answers with the JSON Patch from its previous answer to the answer a whole retry would give, so it fixes exactly what that retry fixes. " +
    "At its bad-correction rate (default 0) the correction is a bad one, chosen with the seed: a `test` of a value the answer does not have (it does not apply), the first operation at a misspelt path (outside the answer), " +
    "or operations that break other fields and fix none (the answer gets worse).",
  "At its slip rate (default 0) a whole answer has one syntax slip, chosen with the seed: a trailing comma, a // comment after its opening brace, an unquoted or single-quoted first key, or a Python literal (True, False, None).",
  "Token usage is characters ÷ 4 for prompt and answer; there is no latency unless one is configured, so latency figures are the harness's own processing time.",
  'For escalation, two generators by model name: "large" is the generator above; "small" is the same except that it never fixes a broken cross-field rule, even when its feedback names it (it fixes the other defects named).',
];

/** What the simulated "small" model never fixes (SIMULATED_TIERS). */
export const SMALL_MODEL_NEVER_FIXES: readonly Defect["kind"][] = ["cross-field rule"];

/** A request the model knows in advance: its spec and difficulty (the evaluation suite's entries). */
interface SimulatedRequest {
  request: string;
  spec: string;
  difficulty: Difficulty;
}

export interface EvaluationModelOptions extends SimulatedModelOptions {
  /** Requests the model knows (spec and difficulty), e.g. the evaluation suite; any other request counts as medium. */
  suite?: readonly SimulatedRequest[];
  /** Defect kinds the generator never fixes, even when its feedback names them (the "small" model of SIMULATED_TIERS). */
  neverFixes?: readonly Defect["kind"][];
  /** Probability that a correction (an answer to a request for corrections only) is a bad one (default 0): see BAD_CORRECTIONS. */
  badCorrectionRate?: number;
  /** Probability that a whole answer has a syntax slip (default 0): see SYNTAX_SLIPS. */
  slipRate?: number;
}

/** The bad corrections the generator writes at its badCorrectionRate, one of them chosen with the seed. */
const BAD_CORRECTIONS = ["not-applicable", "wrong-path", "worse"] as const;
type BadCorrection = (typeof BAD_CORRECTIONS)[number];

/** The syntax slips the generator makes at its slipRate, one of them chosen with the seed. */
const SYNTAX_SLIPS = ["trailing-comma", "comment", "unquoted-key", "single-quotes", "python-literal"] as const;
type SyntaxSlip = (typeof SYNTAX_SLIPS)[number];

const PYTHON_LITERALS: Record<string, string> = { true: "True", false: "False", null: "None" };

/** A JSON Pointer from a path's keys. */
function pointer(path: readonly string[]): string {
  return path.map((key) => `/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/** The built-in model with the evaluation's options; knows the requests it is given (`suite`), none by default. */
export class EvaluationModel extends BuiltinSimulatedChatModel {
  private readonly requests: Map<string, SimulatedRequest>;
  private readonly neverFixes: ReadonlySet<Defect["kind"]>;
  private readonly badCorrectionRate: number;
  private readonly slipRate: number;

  constructor(options: EvaluationModelOptions, role?: SimulatedRole) {
    super({ ...options, missRate: options.missRate ?? DEFAULT_MISS_RATE }, role);
    this.requests = new Map((options.suite ?? []).map((r) => [r.request, r]));
    this.neverFixes = new Set(options.neverFixes ?? []);
    this.badCorrectionRate = options.badCorrectionRate ?? 0;
    this.slipRate = options.slipRate ?? 0;
  }

  protected override knownRequest(requestText: string): { spec: string; difficulty: Difficulty } | undefined {
    return this.requests.get(requestText);
  }

  protected override fixes(defect: Defect): boolean {
    return !this.neverFixes.has(defect.kind);
  }

  /**
   * A correction: the JSON Patch from the previous answer to the answer a whole retry would give (so it
   * fixes exactly what that retry fixes), or, at the badCorrectionRate, a bad one (BAD_CORRECTIONS): a
   * `test` of a value the answer does not have, the right operations at a misspelt path, or operations
   * that break other fields and fix none.
   */
  protected override finishCorrection(
    ctx: SimulatedRequestContext,
    previousText: string,
    previous: object,
    operations: Array<{ op: string; path: string; value?: unknown }>,
  ): string {
    const r = random(hash(this.seed, "correction", ctx.requestText, previousText));
    if (operations.length === 0 || r() >= this.badCorrectionRate) return JSON.stringify(operations);
    const bad = BAD_CORRECTIONS[Math.floor(r() * BAD_CORRECTIONS.length)];
    if (bad === "not-applicable") return JSON.stringify([{ op: "test", path: operations[0].path, value: "not what the answer has" }, ...operations]);
    if (bad === "wrong-path") return JSON.stringify(operations.map((o, i) => (i === 0 ? { ...o, op: "replace", path: `${o.path}_` } : o)));
    // Worse: each operation lands on another field, written with a value of the wrong kind.
    const leaves = leavesOf(previous, ctx.schema).filter((leaf) => !operations.some((o) => o.path === pointer(leaf.path)));
    const worse = operations.map((_, i) => {
      const leaf = leaves[Math.floor(r() * leaves.length)] ?? leaves[i % Math.max(1, leaves.length)];
      return leaf === undefined ? { op: "remove", path: operations[i].path } : { op: "replace", path: pointer(leaf.path), value: [leaf.value] };
    });
    return JSON.stringify([...worse, { op: "add", path: "/unexpected_field", value: true }]);
  }

  /** A whole answer's text, with a syntax slip (SYNTAX_SLIPS) at the slipRate, seeded by the request and the previous answer. */
  protected override finishAnswer(ctx: SimulatedRequestContext, previousText: string, text: string): string {
    if (this.slipRate <= 0) return text;
    const r = random(hash(this.seed, "slip", ctx.requestText, previousText));
    if (r() >= this.slipRate || !text.startsWith("{") || text === "{}") return text;
    const slip = SYNTAX_SLIPS[Math.floor(r() * SYNTAX_SLIPS.length)];
    switch (slip) {
      case "trailing-comma":
        return `${text.slice(0, -1)},}`;
      case "comment":
        return `{// ${ctx.requestText.split("\n")[0].slice(0, 60)}\n${text.slice(1)}`;
      case "unquoted-key":
        return text.replace(/^\{"([A-Za-z_$][\w$]*)":/, "{$1:");
      case "single-quotes":
        return text.replace(/^\{"([A-Za-z_$][\w$]*)":/, "{'$1':");
      case "python-literal":
        return /:(true|false|null)([,}\]])/.test(text)
          ? text.replace(/:(true|false|null)([,}\]])/, (_, v: string, end: string) => `:${PYTHON_LITERALS[v]}${end}`)
          : `${text.slice(0, -1)},}`;
    }
  }
}

/** The evaluation's simulated model: the built-in one with the options above, knowing the evaluation suite's requests unless told otherwise. */
export class SimulatedChatModel extends EvaluationModel {
  constructor(options: EvaluationModelOptions, role?: SimulatedRole) {
    super({ suite: SUITE, ...options }, role);
  }
}

/** A ModelSource factory: one evaluation model per role, knowing the suite. */
export function simulatedModelSource(options: EvaluationModelOptions): ReturnType<typeof builtinModelSource<EvaluationModelOptions, SimulatedChatModel>> {
  return builtinModelSource(options, (o, role) => new SimulatedChatModel(o, role));
}

/**
 * The simulated models an escalation asks for by name: "small" never fixes a broken cross-field rule,
 * "large" fixes every defect its feedback names.
 */
export const SIMULATED_TIERS = { small: "small", large: "large" } as const;

/** A ModelSource factory for escalation: the generator named "small" or "large" (any other name is the large one). */
export function tieredModelSource(options: EvaluationModelOptions): (request: { role: string; model?: string; temperature?: number }) => SimulatedChatModel {
  const small = simulatedModelSource({ ...options, neverFixes: SMALL_MODEL_NEVER_FIXES });
  const large = simulatedModelSource(options);
  return (request) => (request.model === SIMULATED_TIERS.small ? small(request) : large(request));
}
