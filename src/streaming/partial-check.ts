/**
 * Partial checks: a spec's checks run on an answer while it streams. Each
 * value is judged when it closes, by the parts of the spec that certainly
 * apply to it alone (./schema-parts.ts); a member's name as soon as it
 * arrives (`additionalProperties: false`, `propertyNames`); a rule once every
 * input it reads has closed (a rule that also reads the whole document, by
 * declaring a second parameter, once the value has closed). Every message is
 * the full check's own, word for word.
 *
 * These checks inform and may stop an attempt early; they never decide that
 * an answer is valid: the check step (../specs/check.ts) judges the complete
 * answer. What they report is certain under the reader's one assumption (the
 * answer holds one JSON value; see ./reader.ts): each error is one the full
 * check reports for the complete answer, provided the value goes on to parse.
 * When in doubt they say nothing: a missing field before its object closes, an
 * unfinished string or number, a count not yet reached, anything under a
 * combinator whose branches could still change, a zod spec's refinements.
 */
import { PATTERN_CHARS_PER_VALIDATION, patternBudget, PatternBudgetSpent } from "../specs/ajv.js";
import type { CheckLimits } from "../specs/check.js";
import type { Spec } from "../specs/spec.js";
import { capMessages, DEFAULT_VALIDATION_LIMITS, EXPLAINED_VALUES, ruleMessages, schemaErrorMessages } from "../specs/validate.js";
import { RUNTIME_SPEC_LIMITS } from "../specs/limits.js";
import { AnswerReader, type Step } from "./reader.js";
import { judgeName, judgePart, memberParts, pointerOf, rootParts } from "./schema-parts.js";

type Part = Record<string, unknown>;

/** Certain errors kept per answer; the retry prompt carries far fewer (maxErrors). */
const MAX_KEPT_ERRORS = 200;

export interface PartialCheckOptions {
  /** The limits the check step judges the complete answer with (the defaults when absent). */
  limits?: Partial<CheckLimits>;
  /** The run's context, which the spec's rules read as the check step gives it to them. */
  context?: unknown;
}

/** Why the rest of an answer cannot make it valid, whatever it says. */
export interface Hopeless {
  reason: "broken-json" | "wrong-root" | "too-large";
  /** What is wrong, in words. */
  detail: string;
}

/** What the partial checks know at one point of the stream. */
export interface PartialState {
  /** The value so far (a copy; strings being written are there as far as they have come). */
  value: unknown;
  /** Paths of the largest parts that are complete ("" once the whole value is). */
  complete: string[];
  /** The errors already certain, as the full check words them, capped like its report. */
  errors: string[];
}

export class PartialCheck {
  private readonly reader: AnswerReader;
  private readonly maxErrors: number;
  private readonly maxValueChars: number;
  private found: string[] = [];
  private seen = new Set<string>();
  /** Errors of an object in prose, kept back until it closes (it may yet turn out not to be JSON). */
  private held: string[] = [];
  /** The parts of the spec that apply to each open container, outermost first. */
  private readonly frames: Part[][] = [];
  /** Dotted paths (objects only) of closed values, for the rules' inputs. */
  private closedPaths = new Set<string>();
  private rulesRun: boolean[];
  private readonly ruleInputs: string[][][];
  private wrongRoot?: string;
  private tooManyValues?: string;
  private frozen?: string;
  private patternChars = 0;
  private readonly context: unknown;

  constructor(
    readonly spec: Spec,
    options: PartialCheckOptions = {},
  ) {
    this.context = options.context;
    this.maxErrors = options.limits?.maxErrors ?? DEFAULT_VALIDATION_LIMITS.maxErrors;
    this.maxValueChars = options.limits?.maxValueChars ?? DEFAULT_VALIDATION_LIMITS.maxValueChars;
    this.reader = new AnswerReader({ opened: (p, c) => this.opened(p, c), closed: (p, v, parent) => this.closed(p, v, parent), restarted: () => this.restarted() }, options.limits);
    this.rulesRun = spec.rules.map(() => false);
    this.ruleInputs = spec.rules.map((rule) => Object.keys(rule.inputs).map((path) => prefixes(path)));
  }

  /** Feed the next piece of the answer. */
  write(text: string): void {
    this.reader.write(text);
    if (this.reader.phase === "unsure") this.frozen ??= this.reader.problem;
  }

  /** Characters received. */
  get received(): number {
    return this.reader.received;
  }

  /** The errors already certain, in the order found (uncapped, up to a bound). */
  get errors(): readonly string[] {
    return this.found;
  }

  /** Values closed so far. */
  get closedValues(): number {
    return this.reader.closedValues;
  }

  /** Whether the whole value has closed. */
  get complete(): boolean {
    return this.reader.phase === "done" || this.reader.phase === "after";
  }

  /** The state to publish: the value so far, what is complete, the certain errors (capped like the check step's report). */
  state(): PartialState {
    return { value: this.reader.snapshot(), complete: this.reader.completePaths(), errors: capMessages(this.found, { maxErrors: this.maxErrors }).errors };
  }

  /** Why no continuation can make the answer valid, if that is already certain. */
  hopeless(): Hopeless | null {
    if (this.reader.tooLarge !== undefined) return { reason: "too-large", detail: this.reader.tooLarge };
    if (this.tooManyValues !== undefined) return { reason: "too-large", detail: this.tooManyValues };
    if (this.reader.phase === "broken") return { reason: "broken-json", detail: this.reader.problem ?? "the JSON is not valid" };
    if (this.wrongRoot !== undefined && !this.reader.tentative) return { reason: "wrong-root", detail: this.wrongRoot };
    return null;
  }

  private opened(path: readonly Step[], container: object): void {
    const parent = this.frames[this.frames.length - 1];
    const key = path[path.length - 1];
    const parts = this.frozen ? [] : path.length === 0 ? rootParts(this.spec) : memberParts(this.spec, parent, key);
    // A member's name is judged as soon as it is known.
    if (!this.frozen && typeof key === "string" && parent !== undefined) this.judgeName(parent, path, key);
    this.frames.push(parts);
    if (path.length === 0) {
      const kind = Array.isArray(container) ? "array" : "object";
      for (const part of parts) {
        const type = part.type;
        const allowed = typeof type === "string" ? [type] : Array.isArray(type) ? (type as string[]) : undefined;
        if (allowed !== undefined && !allowed.includes(kind)) {
          this.wrongRoot = `its JSON value is ${kind === "array" ? "an array" : "an object"}; it must be ${allowed.map((t) => (/^[aeiou]/.test(t) ? `an ${t}` : t === "null" ? "null" : `a ${t}`)).join(" or ")}`;
          break;
        }
      }
    }
  }

  private closed(path: readonly Step[], value: unknown, parent: object | undefined): void {
    const container = value !== null && typeof value === "object";
    const parts = container ? this.frames.pop()! : this.frozen ? [] : memberParts(this.spec, this.frames[this.frames.length - 1], path[path.length - 1]);
    this.limitValues();
    if (this.frozen === undefined) {
      const pointer = pointerOf(path);
      for (const part of parts) this.report(this.judge(() => judgePart(this.spec, part, value, pointer)));
      const key = path[path.length - 1];
      if (!container && parent !== undefined && !Array.isArray(parent) && typeof key === "string") this.judgeName(this.frames[this.frames.length - 1], path, key);
      this.rules(path);
    }
    if (path.length === 0) {
      // The whole value closed: an object in prose is now the answer's value, and its errors stand.
      for (const message of this.held) this.add(message);
      this.held = [];
    }
  }

  /** A member's name against its object's parts (only `additionalProperties: false` and `propertyNames` need nothing else). */
  private judgeName(parentParts: readonly Part[], path: readonly Step[], key: string): void {
    const pointer = pointerOf(path.slice(0, -1));
    for (const part of parentParts) this.report(this.judge(() => judgeName(this.spec, part, key, pointer)));
  }

  private restarted(): void {
    this.frames.length = 0;
    this.held = [];
    this.closedPaths = new Set();
    this.rulesRun = this.spec.rules.map(() => false);
    this.wrongRoot = undefined;
  }

  /** Stop judging past the sizes at which the full check lists fewer errors (or refuses the answer outright). */
  private limitValues(): void {
    const values = this.reader.closedValues;
    if (values > EXPLAINED_VALUES) this.frozen ??= `the answer holds more than ${EXPLAINED_VALUES} JSON values, and the full check then lists only its first schema error`;
    if (this.spec.untrusted) {
      const max = Math.floor(RUNTIME_SPEC_LIMITS.maxApplicationsPerAnswer / Math.max(1, this.spec.applicationsPerValue ?? 1));
      if (values > max) this.tooManyValues ??= `the answer holds more than ${max} JSON values, more than this spec (supplied at run time) may check in one answer`;
    }
  }

  /** One part's judgement, as messages; nothing when it cannot be judged alone or its patterns' budget runs out. */
  private judge(run: () => { errors: Parameters<typeof schemaErrorMessages>[0]; schema: unknown } | null): string[] {
    patternBudget.used = 0;
    let outcome: ReturnType<typeof run>;
    try {
      outcome = run();
    } catch (error) {
      // A spent pattern budget or a part ajv could not run: the full check will say so; nothing is certain here.
      if (!(error instanceof PatternBudgetSpent)) this.frozen ??= "a part of the spec could not be judged on its own";
      else this.frozen ??= "the spec's patterns read too much of the answer";
      return [];
    } finally {
      this.patternChars += patternBudget.used;
    }
    // Past half the budget the full check lists only its first schema error: stop before it could.
    if (this.spec.untrusted && this.patternChars > PATTERN_CHARS_PER_VALIDATION / 2) {
      this.frozen ??= "the spec's patterns read too much of the answer";
      return [];
    }
    if (outcome === null || outcome.errors.length === 0) return [];
    return schemaErrorMessages(outcome.errors, outcome.schema, this.maxValueChars);
  }

  /** Run each rule whose inputs have all closed: at once when it reads only its inputs, at the end when it reads the document. */
  private rules(path: readonly Step[]): void {
    const rules = this.spec.rules;
    if (rules.length === 0) return;
    const root = path.length === 0;
    if (!root) {
      if (!path.every((step) => typeof step === "string")) return;
      this.closedPaths.add(path.join("."));
    }
    for (let i = 0; i < rules.length; i++) {
      if (this.rulesRun[i]) continue;
      // A rule that declares more parameters reads the document (or the run's context) beyond its inputs: only the whole value will do.
      if (!root && (rules[i].check.length !== 1 || !this.ruleInputs[i].every((input) => input.some((p) => this.closedPaths.has(p))))) continue;
      this.rulesRun[i] = true;
      let messages: string[];
      try {
        messages = ruleMessages(this.spec, i, this.reader.root, this.context);
      } catch {
        messages = [];
      }
      this.report(messages);
    }
  }

  private report(messages: readonly string[]): void {
    for (const message of messages) {
      if (this.reader.tentative) {
        if (!this.held.includes(message)) this.held.push(message);
      } else this.add(message);
    }
  }

  private add(message: string): void {
    if (this.seen.has(message) || this.found.length >= MAX_KEPT_ERRORS) return;
    this.seen.add(message);
    this.found.push(message);
  }
}

/** A rule input's path and each of its ancestors ("a.b.c": "a.b.c", "a.b", "a"): any of them closed means the input has. */
function prefixes(path: string): string[] {
  const steps = path.split(".");
  return steps.map((_, i) => steps.slice(0, steps.length - i).join("."));
}

/** How much of an answer the stop policy lets through: "never" stops nothing, "useless" stops an answer that cannot help, "first-error" stops at the first certain error. */
export type StopPolicy = "never" | "useless" | "first-error";

export const STOP_POLICIES = ["never", "useless", "first-error"] as const satisfies readonly StopPolicy[];

export type StopReason = Hopeless["reason"] | "too-many-errors" | "first-error";

export interface StopDecision {
  reason: StopReason;
  detail: string;
}

/**
 * Whether to stop the model now. "useless": when the rest of the answer cannot
 * help (it can no longer parse, its root is the wrong type, it is past the size
 * limit, or its certain errors already fill what a retry prompt carries);
 * "first-error": also at the first certain error.
 */
export function stopDecision(check: PartialCheck, policy: StopPolicy, maxErrors: number = DEFAULT_VALIDATION_LIMITS.maxErrors): StopDecision | null {
  if (policy === "never") return null;
  const hopeless = check.hopeless();
  if (hopeless !== null) return hopeless;
  const count = check.errors.length;
  if (policy === "first-error" && count >= 1) return { reason: "first-error", detail: "it has an error already" };
  if (count >= maxErrors) return { reason: "too-many-errors", detail: `it already has ${count} errors, as many as a retry lists` };
  return null;
}
