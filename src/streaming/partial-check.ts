/**
 * Partial checks: a spec's checks run on an answer while it streams. Each
 * value is judged when it closes, by the parts of the spec that certainly
 * apply to it alone (./schema-parts.ts); a member's name as soon as it
 * arrives (`additionalProperties: false`, `propertyNames`); the rules once the
 * whole value has closed (a rule is handed the document and the run's
 * context, so what it reads cannot be told from its declaration). Every
 * message is the full check's own, word for word.
 *
 * These checks inform and may stop an attempt early; they never decide that
 * an answer is valid: the check step (../specs/check.ts) judges the complete
 * answer. An error is published (and may stop the request) only once it is
 * certain: once the value judged is the one the check step's reader will
 * choose, whatever follows, or the answer is not accepted at all. Until then
 * the errors are held. The check step's reader lets a later fenced block
 * replace a bare value, a broken one or an object in prose, so that point
 * comes when a fenced block holding the value has closed (its closing line
 * ended: the check step's own reader then confirms the choice on the text so
 * far), or at the end of the answer (`end`). When in doubt they say nothing: a
 * missing field before its object closes, an unfinished string or number, a
 * count not yet reached, anything under a combinator whose branches could
 * still change, a zod spec's refinements.
 */
import { PATTERN_CHARS_PER_VALIDATION, PATTERN_STEPS_PER_VALIDATION, patternBudget, PatternBudgetSpent } from "../specs/ajv.js";
import type { CheckLimits } from "../specs/check.js";
import type { Spec } from "../specs/spec.js";
import { capMessages, DEFAULT_VALIDATION_LIMITS, schemaErrorMessages } from "../specs/messages.js";
import { EXPLAINED_VALUES, ruleMessages } from "../specs/validate.js";
import { RUNTIME_SPEC_LIMITS } from "../specs/limits.js";
import { extractJson } from "../json/parse.js";
import { AnswerReader, type Step } from "./reader.js";
import { judgeName, judgePart, memberParts, pointerOf, rootParts } from "./schema-parts.js";

type Part = Record<string, unknown>;

/** Certain errors kept per answer; the retry prompt carries far fewer (maxErrors). */
const MAX_KEPT_ERRORS = 200;

interface PartialCheckOptions {
  /** The limits the check step judges the complete answer with (the defaults when absent). */
  limits?: Partial<CheckLimits>;
  /** The run's context, which the spec's rules read as the check step gives it to them. */
  context?: unknown;
  /**
   * The answer is exactly one JSON value (a tool call's arguments, which the check step reads with its exact
   * reader): the value read is the one judged, so its errors are certain as they are found.
   */
  exact?: boolean;
}

/** Why the rest of an answer cannot make it valid, whatever it says. */
interface Hopeless {
  reason: Exclude<EarlyStopReason, "too-many-errors" | "first-error">;
  /** What is wrong, in words. */
  detail: string;
}

/** What the partial checks know at one point of the stream. */
interface PartialState {
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
  /** Errors of the value being read, held until it is certain to be the answer's value. */
  private held: string[] = [];
  /** The value read is the one the check step will judge, if it accepts the answer at all. */
  private settled = false;
  /** Where to look for the end of a fenced block's closing line; -1 once that line was judged. */
  private closingLineFrom?: number;
  /** The answer so far (kept whole: the check step's reader confirms a choice on it). */
  private answer = "";
  /** At the end: the state of the value the check step's reader chose, when it is not the one read. */
  private chosen?: PartialState;
  private readonly options: PartialCheckOptions;
  /** The parts of the spec that apply to each open container, outermost first. */
  private readonly frames: Part[][] = [];
  private wrongRoot?: string;
  private tooManyValues?: string;
  private frozen?: string;
  private patternChars = 0;
  private patternSteps = 0;
  private readonly context: unknown;

  constructor(
    readonly spec: Spec,
    options: PartialCheckOptions = {},
  ) {
    this.options = options;
    this.context = options.context;
    this.settled = options.exact === true;
    this.maxErrors = options.limits?.maxErrors ?? DEFAULT_VALIDATION_LIMITS.maxErrors;
    this.maxValueChars = options.limits?.maxValueChars ?? DEFAULT_VALIDATION_LIMITS.maxValueChars;
    this.reader = new AnswerReader(
      { opened: (p, c) => this.opened(p, c), closed: (p, v, parent) => this.closed(p, v, parent), restarted: () => this.restarted() },
      options.limits,
    );
  }

  /** Feed the next piece of the answer. */
  write(text: string): void {
    if (text.length === 0 || this.chosen !== undefined) return;
    const start = this.answer.length;
    this.answer += text;
    this.reader.write(text);
    if (this.reader.phase === "unsure") this.frozen ??= this.reader.problem;
    this.fenceClosed(text, start);
  }

  /** The answer received so far. */
  get text(): string {
    return this.answer;
  }

  /**
   * The answer is complete: the check step's reader reads it now, as the
   * check step will. When it chooses the value read, the held errors are
   * certain; when it chooses another (a fenced block after a draft), that
   * value is judged instead; when it reads nothing, nothing is said.
   */
  end(): void {
    if (this.settled || this.chosen !== undefined) return;
    const read = extractJson(this.answer, this.options.limits);
    if (!read.ok) return;
    if (this.isValueRead(read.value)) return this.settle();
    const again = new PartialCheck(this.spec, this.options);
    again.write(JSON.stringify(read.value));
    if (again.isValueRead(read.value)) again.settle();
    this.chosen = again.state();
    this.held = [];
    this.found = [];
    this.seen = new Set();
    for (const message of again.found) this.add(message);
  }

  /**
   * Once a fenced block holding the value has closed and its closing line
   * ended, no later text can make the check step's reader choose another
   * value and accept the answer: a later block that parses makes two, which
   * it refuses. Its own reading of the text so far confirms the choice.
   */
  private fenceClosed(piece: string, start: number): void {
    if (this.settled || this.closingLineFrom === -1 || this.reader.source !== "fence" || this.reader.phase !== "done") return;
    this.closingLineFrom ??= this.reader.fenceClosedAt!;
    const at = piece.indexOf("\n", Math.max(0, this.closingLineFrom - start));
    if (at < 0) return;
    this.closingLineFrom = -1;
    const read = extractJson(this.answer.slice(0, start + at + 1), this.options.limits);
    if (read.ok && read.source === "fence" && this.isValueRead(read.value)) this.settle();
  }

  /** Whether `value` is the value the reader read, whole. */
  private isValueRead(value: unknown): boolean {
    const phase = this.reader.phase;
    if (phase !== "done" && phase !== "after") return false;
    return JSON.stringify(value) === JSON.stringify(this.reader.root);
  }

  /** The value read is the answer's: its held errors are certain. */
  private settle(): void {
    this.settled = true;
    for (const message of this.held) this.add(message);
    this.held = [];
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
    if (this.chosen !== undefined) return { ...this.chosen, errors: capMessages(this.found, { maxErrors: this.maxErrors }).errors };
    return { value: this.reader.snapshot(), complete: this.reader.completePaths(), errors: capMessages(this.found, { maxErrors: this.maxErrors }).errors };
  }

  /** Why no continuation can make the answer valid, if that is already certain. */
  hopeless(): Hopeless | null {
    if (this.reader.tooLarge !== undefined) return { reason: "too-large", detail: this.reader.tooLarge };
    // Exactly one JSON value is read from the arguments: once they break, no continuation mends them.
    const broken = this.reader.phase === "broken" || (this.options.exact === true && this.reader.phase === "unsure");
    if (broken && (this.reader.certain || this.options.exact === true))
      return { reason: "broken-json", detail: this.reader.problem ?? "the JSON is not valid" };
    if (!this.settled) return null;
    if (this.tooManyValues !== undefined) return { reason: "too-large", detail: this.tooManyValues };
    if (this.wrongRoot !== undefined) return { reason: "wrong-root", detail: this.wrongRoot };
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
      if (!container && parent !== undefined && !Array.isArray(parent) && typeof key === "string")
        this.judgeName(this.frames[this.frames.length - 1], path, key);
      if (path.length === 0) this.rules();
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
    this.wrongRoot = undefined;
  }

  /** Stop judging past the sizes at which the full check lists fewer errors (or refuses the answer outright). */
  private limitValues(): void {
    const values = this.reader.closedValues;
    if (values > EXPLAINED_VALUES)
      this.frozen ??= `the answer holds more than ${EXPLAINED_VALUES} JSON values, and the full check then lists only its first schema error`;
    if (this.spec.untrusted) {
      const max = Math.floor((this.spec.limits ?? RUNTIME_SPEC_LIMITS).maxApplicationsPerAnswer / Math.max(1, this.spec.applicationsPerValue ?? 1));
      if (values > max)
        this.tooManyValues ??= `the answer holds more than ${max} JSON values, more than this spec (supplied at run time) may check in one answer (its limit maxApplicationsPerAnswer)`;
    }
  }

  /** One part's judgement, as messages; nothing when it cannot be judged alone or its patterns' budget runs out. */
  private judge(run: () => { errors: Parameters<typeof schemaErrorMessages>[0]; schema: unknown } | null): string[] {
    patternBudget.used = 0;
    patternBudget.steps = 0;
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
      this.patternSteps += patternBudget.steps;
    }
    // Past half the budget the full check lists only its first schema error: stop before it could.
    if ((this.spec.untrusted && this.patternChars > PATTERN_CHARS_PER_VALIDATION / 2) || this.patternSteps > PATTERN_STEPS_PER_VALIDATION / 2) {
      this.frozen ??= "the spec's patterns read too much of the answer";
      return [];
    }
    if (outcome === null || outcome.errors.length === 0) return [];
    return schemaErrorMessages(outcome.errors, outcome.schema, this.maxValueChars);
  }

  /**
   * Run the rules on the whole value. A rule may read the document and the
   * run's context beyond its inputs (its declared parameters say nothing
   * sure: a default value, `arguments` or a rest parameter hide them), so
   * none runs on part of it.
   */
  private rules(): void {
    const rules = this.spec.rules;
    for (let i = 0; i < rules.length; i++) {
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
      if (this.settled) this.add(message);
      else if (this.held.length < MAX_KEPT_ERRORS && !this.held.includes(message)) this.held.push(message);
    }
  }

  private add(message: string): void {
    if (this.seen.has(message) || this.found.length >= MAX_KEPT_ERRORS) return;
    this.seen.add(message);
    this.found.push(message);
  }
}

export const STOP_POLICIES = ["never", "useless", "first-error"] as const;
/** How much of an answer the stop policy lets through: "never" stops nothing, "useless" stops an answer that cannot help, "first-error" stops at the first certain error. */
export type StopPolicy = (typeof STOP_POLICIES)[number];
/** The policy a run stops by when it names none. */
export const DEFAULT_STOP_EARLY: StopPolicy = "useless";

export const EARLY_STOP_REASONS = ["broken-json", "wrong-root", "too-large", "too-many-errors", "first-error"] as const;
/** Why a streaming answer was stopped early: its rest could not make it valid. */
export type EarlyStopReason = (typeof EARLY_STOP_REASONS)[number];

interface StopDecision {
  reason: EarlyStopReason;
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
