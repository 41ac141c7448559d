/**
 * One attempt's answer, watched while it streams: the partial checks fed with
 * each piece, progress published as events, and the stop policy applied. It
 * knows nothing of LangGraph: the generate node hands it a `publish` function
 * (LangGraph's `custom` stream writer) and gets back, per model call, the
 * signal that stops the request and, at the end, whether and why the attempt
 * was stopped.
 *
 * Events: `{ kind: "partial", attempt, value, complete, errors }` while the
 * answer streams (when a value closes, the certain errors change, or at least
 * PARTIAL_EVERY_CHARS characters arrived; spaced out on long answers), then
 * one `{ kind: "final", … }` per attempt. None of them decides the attempt's verdict: the validate node's
 * check step does, on the text received.
 */
import { readText, type CheckLimits } from "../specs/check.js";
import type { Spec } from "../specs/spec.js";
import { capMessages, DEFAULT_VALIDATION_LIMITS } from "../specs/messages.js";
import { bound } from "../shared/text.js";
import { PartialCheck, stopDecision, type StopPolicy, type EarlyStopReason, type EARLY_STOP_REASONS } from "./partial-check.js";

/** A value of type T as far as it has arrived: every field optional, all the way down. */
export type DeepPartial<T> = T extends ReadonlyArray<infer U> ? Array<DeepPartial<U>> : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** Progress of an attempt's answer while it streams. */
export interface PartialEvent<T = unknown> {
  kind: "partial";
  /** The attempt (1-based), as its history record numbers it. */
  attempt: number;
  /** The value so far (strings being written included as far as they have come); undefined before the value starts. */
  value: DeepPartial<T> | undefined;
  /** Paths of the largest parts that are complete: each closed field whose object is still open; [""] once the whole value is. */
  complete: string[];
  /** Errors already certain, worded as the check step words them, capped like its report. */
  errors: string[];
}

/** The end of an attempt's stream: what arrived, and whether the request was stopped. */
export interface AttemptEndEvent<T = unknown> extends Omit<PartialEvent<T>, "kind"> {
  kind: "final";
  /** Characters of the answer received. */
  chars: number;
  /** Set when the request was stopped early. */
  stopped: StoppedAnswer | null;
  /** Set when the model call failed (the node's retry policy may try it again). */
  failed?: string;
}

export type StreamEvent<T = unknown> = PartialEvent<T> | AttemptEndEvent<T>;

/** Where and why an answer was stopped. */
export interface StoppedAnswer {
  /** Characters of the answer received when it was stopped. */
  at: number;
  /** Why the rest of the answer could not help. */
  reason: (typeof EARLY_STOP_REASONS)[number];
  /** Why, in words. */
  detail: string;
}

/** A stopped answer, as its attempt's draft carries it to the validate node: with the errors already certain. */
interface StoppedDraft extends StoppedAnswer {
  errors: string[];
}

/** Characters after which a partial event is published even when no value closed (a long string growing). */
const PARTIAL_EVERY_CHARS = 64;
/**
 * Past this many characters, a partial is published only once the answer has
 * grown by a sixteenth since the last one: each event copies the value so far,
 * so a long answer gets a number of events that grows with its logarithm.
 */
const SMALL_ANSWER_CHARS = 4_096;

interface AttemptWatchOptions {
  spec: Spec;
  attempt: number;
  policy: StopPolicy;
  /** Where events go (LangGraph's `config.writer`); none: nothing is published. */
  publish?: (event: StreamEvent) => void;
  limits?: Partial<CheckLimits>;
  /** The run's context, for the spec's rules. */
  context?: unknown;
  /** The answer is exactly one JSON value (a tool call's arguments): its errors are certain as they are found. */
  exact?: boolean;
}

/** What one model call is given: where its answer's text goes, and the signal that stops it. */
interface CallWatch {
  write(text: string): void;
  stop: AbortSignal;
}

export class AttemptWatch {
  private check?: PartialCheck;
  private stopped?: StoppedDraft;
  private published = { closed: -1, errors: -1, chars: 0 };

  constructor(private readonly options: AttemptWatchOptions) {}

  /** A fresh reading for one model call (a call in a mode the provider refused is discarded with its reading); `stopEarly: false`: it never stops the call. */
  start(options: { stopEarly?: boolean } = {}): CallWatch {
    const controller = new AbortController();
    this.stopped = undefined;
    this.published = { closed: -1, errors: -1, chars: 0 };
    const check = new PartialCheck(this.options.spec, { limits: this.options.limits, context: this.options.context, exact: this.options.exact });
    this.check = check;
    return {
      stop: controller.signal,
      write: (piece: string) => {
        if (piece.length === 0 || controller.signal.aborted) return;
        check.write(piece);
        this.progress();
        if (options.stopEarly === false) return;
        const decision = stopDecision(check, this.options.policy, this.options.limits?.maxErrors ?? DEFAULT_VALIDATION_LIMITS.maxErrors);
        if (decision !== null) {
          this.stopped = {
            at: check.received,
            reason: decision.reason,
            detail: this.describe(decision.reason, decision.detail),
            errors: capMessages(check.errors, this.options.limits).errors,
          };
          controller.abort(new Error(`stopped early: ${decision.reason}`));
        }
      },
    };
  }

  /** The attempt's answer arrived (or was stopped): publish the final event; the stop, if any, for the draft. */
  finish(): StoppedDraft | undefined {
    // A complete answer is read as the check step will read it; a stopped one is judged on what arrived, with the errors found before the stop.
    if (this.stopped === undefined) this.check?.end();
    this.publishEnd();
    return this.stopped;
  }

  /** The model call failed: say so in the final event (the node's retry policy may try again). */
  failed(error: unknown): void {
    this.publishEnd(bound(String((error as Error)?.message ?? error), 300));
  }

  private publishEnd(failed?: string): void {
    const check = this.check;
    const state = check?.state() ?? { value: undefined, complete: [], errors: [] };
    this.options.publish?.({
      kind: "final",
      attempt: this.options.attempt,
      value: state.value,
      complete: state.complete,
      errors: state.errors,
      chars: check?.received ?? 0,
      stopped: this.stopped ? { at: this.stopped.at, reason: this.stopped.reason, detail: this.stopped.detail } : null,
      ...(failed !== undefined ? { failed } : {}),
    });
  }

  /** Publish a partial event when something changed enough to show. */
  private progress(): void {
    const check = this.check;
    if (!check || !this.options.publish) return;
    const closed = check.closedValues;
    const errors = check.errors.length;
    const chars = check.received;
    const since = chars - this.published.chars;
    const gap = chars <= SMALL_ANSWER_CHARS ? 0 : chars / 16;
    const due = errors !== this.published.errors || (closed !== this.published.closed && since >= gap) || since >= Math.max(PARTIAL_EVERY_CHARS, gap);
    if (!due) return;
    this.published = { closed, errors, chars };
    const state = check.state();
    if (state.value === undefined) return;
    this.options.publish({ kind: "partial", attempt: this.options.attempt, value: state.value, complete: state.complete, errors: state.errors });
  }

  /** Why the answer was stopped, in the words its retry prompt will carry. */
  private describe(reason: EarlyStopReason, detail: string): string {
    if (reason === "broken-json") {
      // The check step's own reading of the text received says where it broke, unless it only sees a cut.
      const reading = readText(this.check?.text ?? "", "model", this.options.limits);
      if (!reading.ok && !/truncated/i.test(reading.error)) return reading.error;
      return /^The /.test(detail) ? detail : `The answer is not valid JSON: ${detail}.`;
    }
    return detail;
  }
}

/**
 * The errors a stopped attempt is recorded with (and its retry prompt
 * carries): the errors already certain, then what stopped it. The attempt's
 * verdict stays the check step's on the text received.
 */
export function stoppedAttemptErrors(stopped: StoppedDraft): string[] {
  const where = `The answer was stopped after ${stopped.at} character${stopped.at === 1 ? "" : "s"}`;
  let note: string;
  switch (stopped.reason) {
    case "too-many-errors":
      note = `${where}: it already had the errors above, as many as one reply lists. Fix them and give the whole answer again.`;
      break;
    case "first-error":
      note = `${where} at its first error (above). Fix it and give the whole answer again.`;
      break;
    case "wrong-root":
      note = `${where}: ${stopped.detail}.`;
      break;
    case "too-large":
      note = `${where}: ${stopped.detail}; reply with the JSON object only.`;
      break;
    case "broken-json":
      note = `${where}: ${stopped.detail}`;
      break;
  }
  return [...stopped.errors, note];
}

/**
 * The events of an attempt that answered with corrections (a JSON Patch to the previous answer): the
 * patch's own tokens are not the answer, so no partial check reads them; once the correction is applied,
 * the corrected value is published whole (or, when it could not be applied, the previous answer), then
 * the attempt's end. As always, the verdict is the check step's.
 */
export function correctedAttemptEvents(attempt: number, value: unknown, chars: number): StreamEvent[] {
  const shown = value as DeepPartial<unknown>;
  return [
    { kind: "partial", attempt, value: shown, complete: [""], errors: [] },
    { kind: "final", attempt, value: shown, complete: [""], errors: [], chars, stopped: null },
  ];
}
