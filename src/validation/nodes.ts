/**
 * The validation graph's nodes (startRun on the edge from START, generate,
 * validate, review): thin adapters around the prompts, the model call, the
 * parser and the validator. Each takes first what it needs from its builder
 * (see ValidationNodeContext); graph.ts binds it.
 */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Command, END, interrupt, Overwrite, Send } from "@langchain/langgraph";
import { checkRequestText } from "../settings.js";
import { ConfigurationError } from "../errors.js";
import { resolveModel } from "../models.js";
import { bound } from "../shared/text.js";
import { estimateTokens, ZERO_USAGE, type TokenUsage } from "../shared/usage.js";
import type { Spec } from "../specs/spec.js";
import { checkGiven, checkText, givenAsText, type CheckOptions, type Verdict } from "../specs/check.js";
import { streamsTokens } from "../providers/model-call.js";
import { AttemptWatch, correctedAttemptEvents, stoppedAttemptErrors } from "../streaming/attempt.js";
import { applyCorrection, retryFormFor, shownValue, type RetryForm } from "./corrections.js";
import { callModelInMode, type ModeAnswer, type OutputMode } from "./output-mode.js";
import { mapBackStrictAnswer, strictForm } from "../providers/strict-form.js";
import { MODEL_PROVIDERS, type ModelProvider } from "../providers/index.js";
import {
  correctionPrompt,
  firstAttemptPrompt,
  MAX_RECORDED_OUTPUT_CHARS,
  retryPrompt,
  truncatedAnswerError,
  unfinishedAnswerError,
  unusedCorrectionError,
} from "../protocol/feedback.js";
import { MAX_RECORDED_REFUSED_ANSWERS, readReviewAnswer, REVIEW_ANSWERS, reviewAnswerSchema, type ReviewRequest } from "../protocol/review.js";
import type { ValidationNodeContext } from "./node-context.js";
import { generationSystemPrompt } from "./prompts.js";
import type { AttemptRecord, RunSettings, StopReason, ValidationStateType, ValidationUpdate } from "./state.js";

/** What a new input hands the run's first attempt (see startRun): the run's settings. */
interface RunStart {
  newRun: RunSettings;
}

/**
 * A new input starts a new run. Its settings are fixed here, once, from the
 * configuration of the call that gave the input, and handed with the request
 * to the run's first attempt (a Send, kept in the checkpoint: a first attempt
 * cut by a crash resumes with them). That attempt clears the thread's
 * previous run in the same step as its model call; every later attempt reads
 * the thread's state, and resuming an interrupted run continues at the step
 * that was interrupted, with the settings recorded.
 */
export function startRun(ctx: ValidationNodeContext, state: ValidationStateType, config: LangGraphRunnableConfig): Send {
  const cfg = ctx.settings.forRun(config);
  if (cfg.models && new Set(cfg.models.map((step) => step.model)).size > 1 && ctx.model !== undefined && typeof ctx.model !== "function") {
    // One chat model cannot be asked for another by name: the escalation would silently not happen.
    throw new ConfigurationError(
      "models (escalation) needs a model factory, ({ model }) => BaseChatModel, to ask for each model by name; this graph was built with one chat model.",
    );
  }
  const spec = ctx.specs.record(cfg.spec);
  const run: RunSettings = {
    request: checkRequestText(state.request, "request"),
    spec,
    maxAttempts: cfg.maxAttempts,
    model: cfg.model,
    temperature: cfg.temperature,
    stopOnNoProgress: cfg.stopOnNoProgress,
    onFailure: cfg.onFailure,
    outputMode: cfg.outputMode,
    attemptLimit: cfg.maxAttempts,
    stopEarly: cfg.stopEarly,
    repairSyntax: cfg.repairSyntax,
    retryWith: cfg.retryWith,
    ...(cfg.ruleContext !== undefined ? { ruleContext: cfg.ruleContext } : {}),
    ...(cfg.models !== undefined ? { models: cfg.models } : {}),
    ...(cfg.maxTokens !== undefined ? { maxTokens: cfg.maxTokens, tokenLimit: cfg.maxTokens } : {}),
  };
  return new Send("generate", { newRun: run } satisfies RunStart);
}

/**
 * One attempt: the model asked for the answer (the first time), for a fix of the last answer with its
 * errors, or for corrections to it, within the run's token budget. The answer is left as a draft for validate.
 */
export async function generate(ctx: ValidationNodeContext, input: ValidationStateType | RunStart, config: LangGraphRunnableConfig): Promise<ValidationUpdate> {
  const starting = isRunStart(input) ? freshRun(input.newRun) : undefined;
  const state = starting?.state ?? (input as ValidationStateType);
  // The first attempt's usage replaces the previous run's totals; later ones add to them.
  const counted = <T>(value: T) => (starting ? new Overwrite(value) : value);
  const run = settingsOf(state);
  const spec = ctx.specs.find(run.spec);
  const modelName = modelForAttempt(run, state.attempts);
  const previous = lastAnswer(state.history);
  const form = previous ? nextRetryForm(run, previous, state.value) : "answer";
  const prompt = !previous
    ? firstAttemptPrompt(run.request)
    : form === "corrections"
      ? correctionPrompt(run.request, shownValue(state.value), previous.errors)
      : retryPrompt(run.request, previous.output, previous.errors);
  const messages = [new SystemMessage(generationSystemPrompt(spec)), new HumanMessage(prompt)];
  const budget = overBudget(run, state.usage, messages);
  if (budget) return { ...starting?.writes, draft: { output: "", usage: { ...ZERO_USAGE }, budget } };
  const model = await resolveModel(ctx.model, { model: modelName, temperature: run.temperature, role: "generate" });
  // When the run streams model tokens, the answer is checked as it arrives: progress goes to the custom
  // stream, and the stop policy may end a request whose rest cannot help. The verdict stays validate's.
  // A correction's tokens are not the answer: no partial check reads them (its corrected value is published once applied).
  const streaming = streamsTokens(config);
  const watch =
    streaming && form === "answer"
      ? new AttemptWatch({ spec, attempt: state.attempts + 1, policy: run.stopEarly, publish: config.writer, context: run.ruleContext })
      : undefined;
  let answer: ModeAnswer;
  try {
    // An answer in a strict form that reshapes it (introduced nulls, a wrapped root, a map's entries) is not yet in the spec's
    // shape while it streams: its partial checks are published, but cannot stop the request.
    const watchFor = watch && ((_mode: OutputMode, reshaped: boolean) => watch.start({ stopEarly: !reshaped }));
    answer = await callModelInMode(model, messages, run.outputMode, spec, { node: "generate", config, watch: watchFor });
  } catch (error) {
    watch?.failed(error);
    throw error;
  }
  const stopped = watch?.finish();
  if (streaming && form === "corrections" && config.writer) {
    const applied = applyCorrection(answer.text, state.value, { repair: run.repairSyntax });
    for (const event of correctedAttemptEvents(state.attempts + 1, applied.ok ? applied.value : state.value, answer.text.length)) config.writer(event);
  }
  const draft = definedFields({
    output: answer.text,
    usage: answer.usage,
    mode: answer.mode,
    model: modelName,
    fallbacks: answer.fallbacks.length > 0 ? answer.fallbacks : undefined,
    schemaDropped: answer.schemaDropped,
    strict: answer.strict ? true : undefined,
    strictBy: answer.strict ? answer.strictBy : undefined,
    notStrict: answer.notStrict,
    stopped: stopped || undefined,
    refusal: answer.refusal,
    truncated: answer.truncated,
    unfinished: answer.unfinished,
    missing: answer.missing,
    corrections: form === "corrections" ? true : undefined,
  });
  // A mode the provider refused is not asked again in this run.
  // ("auto" is asked afresh of each model: an escalation may change provider.)
  const settled = answer.mode === run.outputMode || run.outputMode === "auto" ? {} : { run: { ...run, outputMode: answer.mode } };
  // fromEntries: a model may be named anything, "__proto__" included.
  const byModel = Object.fromEntries([[modelName, answer.usage]]) as Record<string, TokenUsage>;
  return {
    ...starting?.writes,
    attempts: state.attempts + 1,
    draft,
    usage: counted(answer.usage),
    usageByModel: counted(byModel),
    ...settled,
  } as ValidationUpdate;
}

/** The verdict on the latest answer, and where the run goes next: another attempt, a person's review, or the end. */
export async function validate(ctx: ValidationNodeContext, state: ValidationStateType): Promise<Command> {
  const run = settingsOf(state);
  const update = await judgeDraft(state, run, ctx.specs.find(run.spec));
  const stopReason = update.stopReason ?? null;
  const next = stopReason === null ? "generate" : stopReason !== "valid" && run.onFailure === "interrupt" ? "review" : END;
  return new Command({ update, goto: next });
}

/** The check step's verdict on the draft: the run's next state, with a stop reason when it ends. */
async function judgeDraft(state: ValidationStateType, run: RunSettings, spec: Spec): Promise<ValidationUpdate> {
  // The call was not made: the run ends with what it has (the last answer, its errors, the usage).
  if (state.draft?.budget) return { stopReason: "budget", draft: null };
  const refusal = state.draft?.refusal;
  if (refusal !== undefined) return refused(state, run, refusal);
  if (state.draft?.corrections) return judgeCorrection(state, run, spec);
  const output = state.draft?.output ?? "";
  const report = await checkText(spec, output, "model", { context: run.ruleContext, repair: run.repairSyntax, mapBack: mapBackFor(state, spec) });
  // A stopped answer is judged on what arrived; its retry carries the errors found before the stop, and why.
  const stopped = state.draft?.stopped;
  // The provider cut the answer at its output limit: it did not run to completion, so it is not valid
  // whatever its text, and its retry asks for a compact answer rather than a fix of the cut-off JSON.
  const truncated = state.draft?.truncated;
  // The provider did not say the model finished (another stop, or none): not valid whatever its text either.
  const unfinished = state.draft?.unfinished;
  // The model called another tool than the answer's: there is no answer to judge.
  const missing = state.draft?.missing;
  const valid = report.valid && truncated === undefined && unfinished === undefined && missing === undefined;
  const errors =
    truncated !== undefined
      ? [truncatedAnswerError(truncated)]
      : unfinished !== undefined
        ? [unfinishedAnswerError(unfinished)]
        : missing !== undefined
          ? [missing]
          : stopped && !report.valid
            ? stoppedAttemptErrors(stopped)
            : report.errors;

  return {
    success: valid,
    value: truncated !== undefined || unfinished !== undefined ? null : judgedValue(report),
    errors,
    stopReason: stopAfter(state, run, { valid, errors }),
    draft: null,
    ...(state.refusal !== null ? { refusal: null } : {}),
    history: [
      attemptRecord(state, {
        output,
        errors,
        valid,
        repairs: report.repairs,
        mappedBack: report.mappedBack,
        stopped: stopped ? { at: stopped.at, reason: stopped.reason, detail: stopped.detail } : undefined,
        truncated,
        unfinished,
      }),
    ],
  };
}

/** How an answer asked in the strict form of the spec's schema is mapped back before it is judged (undefined: it was not). */
function mapBackFor(state: ValidationStateType, spec: Spec): CheckOptions["mapBack"] {
  const draft = state.draft;
  if (draft?.strict !== true) return undefined;
  // The provider whose strict form was sent (a strict draft names it).
  const provider = draft.strictBy;
  const dialect = provider !== undefined && Object.hasOwn(MODEL_PROVIDERS, provider) ? MODEL_PROVIDERS[provider as ModelProvider].strictDialect : undefined;
  if (dialect === undefined) return undefined;
  const form = strictForm(spec.schema, dialect);
  return form.strict ? (value) => mapBackStrictAnswer(value, form) : undefined;
}

/**
 * An attempt that answered with corrections: applied to the last answer's value, and the corrected
 * answer judged whole by the check step, exactly as a whole answer is (it is valid only if the complete
 * value passes). A correction that is not JSON Patch, does not apply, names a path the answer does not
 * have, or leaves more errors than the answer had is not used: the attempt counts, keeps the previous
 * answer and its errors (after why), and the next retry asks for the whole answer.
 */
async function judgeCorrection(state: ValidationStateType, run: RunSettings, spec: Spec): Promise<ValidationUpdate> {
  const text = state.draft?.output ?? "";
  const truncated = state.draft?.truncated;
  const unfinished = state.draft?.unfinished;
  const base = lastAnswer(state.history);
  const baseErrors = base?.errors ?? [];
  const applied =
    truncated !== undefined
      ? ({ ok: false, problem: `it was cut off at the output limit (${truncated})` } as const)
      : unfinished !== undefined
        ? ({ ok: false, problem: `the provider did not say it was finished (${unfinished})` } as const)
        : applyCorrection(text, state.value, { repair: run.repairSyntax });
  let problem = applied.ok ? undefined : applied.problem;
  let report: Verdict | undefined;
  if (applied.ok) {
    // The corrected value goes through the same reader and check step as a whole answer.
    report = await checkText(spec, shownValue(applied.value), "model", { context: run.ruleContext, repair: false });
    const before = problemsIn(baseErrors);
    if (!report.valid && report.problemCount > before) {
      problem = `the corrected answer has ${report.problemCount} errors, more than the ${before} it had, so it was set aside`;
    }
  }
  const correction = definedFields({ text: bound(text, MAX_RECORDED_OUTPUT_CHARS), applied: problem === undefined, problem });
  const repairs = applied.ok ? applied.repairs : undefined;
  if (problem !== undefined || report === undefined) {
    const errors = [unusedCorrectionError(problem ?? "it could not be applied"), ...baseErrors];
    return {
      success: false,
      errors,
      // The previous answer is kept: its errors are not this attempt's own, so they are not compared for progress.
      stopReason: stopAfter(state, run, { valid: false }),
      draft: null,
      ...(state.refusal !== null ? { refusal: null } : {}),
      history: [attemptRecord(state, { output: shownValue(state.value), errors, valid: false, correction })],
    };
  }
  return {
    success: report.valid,
    value: judgedValue(report),
    errors: report.errors,
    stopReason: stopAfter(state, run, { valid: report.valid, errors: report.errors }),
    draft: null,
    ...(state.refusal !== null ? { refusal: null } : {}),
    history: [
      attemptRecord(state, {
        output: shownValue(applied.ok ? applied.value : state.value),
        errors: report.errors,
        valid: report.valid,
        correction,
        repairs,
      }),
    ],
  };
}

/**
 * The provider declined to answer: recorded as a refusal, not validated as a broken answer. The same
 * request is asked once more (a refusal can be a fluke); a second refusal, or one at the last attempt,
 * ends the run. The last answer and its errors stay as they were.
 */
function refused(state: ValidationStateType, run: RunSettings, refusal: string): ValidationUpdate {
  return {
    stopReason: stopAfter(state, run, { valid: false, refusal: true }),
    refusal,
    draft: null,
    history: [attemptRecord(state, { output: "", errors: [], valid: false, refusal })],
  };
}

/** What an attempt's record says beyond the draft: the answer as recorded, its verdict, and how it was read. */
type AttemptFacts = Pick<AttemptRecord, "output" | "errors" | "valid"> &
  Partial<Pick<AttemptRecord, "by" | "refusal" | "repairs" | "mappedBack" | "correction" | "stopped" | "truncated" | "unfinished">>;

/**
 * An attempt's record, the one constructor of every record the history keeps: numbered after the last,
 * the output bounded, and for a model's attempt what the draft says of it (the usage, the mode and its
 * fallbacks, the keywords not sent, why not strict, the model); a person's attempt costs no tokens.
 * A fact that is absent is left out, never written as undefined.
 */
function attemptRecord(state: ValidationStateType, facts: AttemptFacts): AttemptRecord {
  const draft = facts.by === "human" ? null : state.draft;
  return definedFields({
    attempt: state.history.length + 1,
    output: bound(facts.output, MAX_RECORDED_OUTPUT_CHARS),
    errors: facts.errors,
    valid: facts.valid,
    usage: draft?.usage ?? { ...ZERO_USAGE },
    mode: (draft?.mode || undefined) as OutputMode | undefined,
    fallbacks: draft?.fallbacks,
    schemaDropped: draft?.schemaDropped,
    strict: draft?.strict === true ? true : undefined,
    notStrict: draft?.notStrict,
    model: draft?.model,
    by: facts.by,
    refusal: facts.refusal,
    repairs: facts.repairs,
    mappedBack: facts.mappedBack,
    correction: facts.correction,
    stopped: facts.stopped,
    truncated: facts.truncated,
    unfinished: facts.unfinished,
  }) as AttemptRecord;
}

/**
 * Where a judged model attempt leaves the run, decided in this one place: a valid answer ends it; a refusal
 * ends it when it is the second in a row (since a person last answered) or the last attempt; otherwise the
 * last attempt ends it, and so does an answer with the same errors as the one before (stopOnNoProgress).
 * `errors` are the errors compared for progress; an attempt without its own (a correction set aside keeps the
 * previous answer's) is not compared.
 */
function stopAfter(
  state: ValidationStateType,
  run: RunSettings,
  attempt: { valid: boolean; errors?: readonly string[]; refusal?: boolean },
): StopReason | null {
  const last = state.attempts >= run.attemptLimit;
  if (attempt.refusal) return earlierRefusals(state.history) > 0 || last ? "refused" : null;
  if (attempt.valid) return "valid";
  if (last) return "max_attempts";
  const previous = state.history.at(-1);
  if (run.stopOnNoProgress && attempt.errors !== undefined && previous && sameErrors(previous.errors, attempt.errors)) return "no_progress";
  return null;
}

/** Refusals among the model's attempts since a person last answered. */
function earlierRefusals(history: readonly AttemptRecord[]): number {
  let earlier = 0;
  for (let i = history.length - 1; i >= 0 && history[i].by !== "human"; i--) if (history[i].refusal !== undefined) earlier++;
  return earlier;
}

/** The object without its undefined fields: a record or a draft keeps only the facts that hold. */
function definedFields<T extends object>(fields: T): Defined<T> {
  for (const key of Object.keys(fields) as Array<keyof T>) if (fields[key] === undefined) delete fields[key];
  return fields as Defined<T>;
}

/** An object's type with each field that may be undefined made optional instead. */
type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/**
 * A person finishes what the model could not: the run pauses (LangGraph's
 * interrupt) with the request, the last output and its exact errors, and
 * resumes with a corrected value (held to the same spec: a value that fails
 * is shown again with its errors), a new request (the model tries again with
 * a fresh attempt budget), or a rejection.
 */
export async function review(ctx: ValidationNodeContext, state: ValidationStateType): Promise<Command> {
  const run = settingsOf(state);
  const spec = ctx.specs.find(run.spec);
  const last = state.history.findLast((record) => record.refusal === undefined);
  const answer = interrupt<ReviewRequest, unknown>(
    {
      kind: "review",
      request: run.request,
      spec: spec.name,
      output: last?.output ?? "",
      errors: state.errors,
      attempts: state.attempts,
      ...(state.refusal !== null ? { refusal: state.refusal } : {}),
      answers: REVIEW_ANSWERS,
    },
    // A JSON Schema (not zod): Studio renders the form from it, and the answer is still judged by the check step alone.
    { responseSchema: reviewAnswerSchema(spec) },
  );
  const decision = readReviewAnswer(answer);
  const record = (output: string, errors: string[], valid: boolean) => attemptRecord(state, { output, errors, valid, by: "human" });
  if (decision.kind === "invalid") {
    // Not an answer the review understands: ask again, saying why.
    return new Command({ update: { errors: [decision.problem] }, goto: "review" });
  }
  if (decision.kind === "reject") {
    return new Command({
      update: { stopReason: "rejected", success: false, history: [record(`rejected${decision.reason ? `: ${decision.reason}` : ""}`, [], false)] },
      goto: END,
    });
  }
  if (decision.kind === "request") {
    let request: string;
    try {
      request = checkRequestText(decision.request, "the new request");
    } catch (error) {
      return new Command({ update: { errors: [(error as Error).message] }, goto: "review" });
    }
    return new Command({
      update: {
        // A fresh budget of attempts, and of tokens when the run has one.
        run: {
          ...run,
          request,
          attemptLimit: state.attempts + run.maxAttempts,
          ...(run.maxTokens !== undefined ? { tokenLimit: state.usage.totalTokens + run.maxTokens } : {}),
        },
        stopReason: null,
        history: [record(`new request: ${request}`, [], false)],
      },
      goto: "generate",
    });
  }
  // A person's answer is read exactly: text must be one JSON value and nothing else; an object is read as JSON data.
  const report = await checkGiven(spec, decision.value, { context: run.ruleContext });
  const shown = givenAsText(decision.value, report);
  if (!report.valid) {
    // Nothing invalid passes because a person typed it: a failing value is shown again with its errors.
    // Only the first few refused answers in a row are recorded, so a person (or a script) answering
    // again and again cannot grow the thread's state without bound.
    let refusedInRow = 0;
    for (let i = state.history.length - 1; i >= 0 && state.history[i].by === "human" && !state.history[i].valid; i--) refusedInRow++;
    const recordIt = refusedInRow < MAX_RECORDED_REFUSED_ANSWERS;
    return new Command({
      update: { success: false, value: judgedValue(report), errors: report.errors, ...(recordIt ? { history: [record(shown, report.errors, false)] } : {}) },
      goto: "review",
    });
  }
  return new Command({
    update: { success: true, value: judgedValue(report), errors: [], stopReason: "valid", history: [record(shown, [], true)] },
    goto: END,
  });
}

/** Whether generate was handed a new run's start (from startRun) rather than the thread's state. */
function isRunStart(input: ValidationStateType | RunStart): input is RunStart {
  const newRun = (input as Partial<RunStart>).newRun;
  return newRun !== null && typeof newRun === "object";
}

/** The state a new run starts from, and the writes that clear the thread's previous run. */
function freshRun(run: RunSettings): { state: ValidationStateType; writes: ValidationUpdate } {
  const fresh = { run, spec: run.spec.name, attempts: 0, draft: null, refusal: null, stopReason: null, success: false, errors: [], value: null };
  return {
    state: { ...fresh, request: run.request, history: [], usage: { ...ZERO_USAGE }, usageByModel: {} },
    writes: { ...fresh, history: new Overwrite([]), usage: new Overwrite({ ...ZERO_USAGE }), usageByModel: new Overwrite({}) } as ValidationUpdate,
  };
}

/** What a run reports as its value: the spec's output when valid, else the JSON value read (null when there was none). */
function judgedValue(verdict: Verdict): unknown {
  if (verdict.valid) return verdict.value;
  return verdict.parsed === undefined ? null : verdict.parsed;
}

/**
 * The model that makes the next attempt: with an escalation list, each model makes its attempts in turn
 * (counted from the start of the run, or of a person's new request) and the last makes the rest.
 */
function modelForAttempt(run: RunSettings, attemptsMade: number): string {
  if (run.models === undefined || run.models.length === 0) return run.model;
  let index = attemptsMade - (run.attemptLimit - run.maxAttempts);
  for (const step of run.models.slice(0, -1)) {
    if (index < step.attempts) return step.model;
    index -= step.attempts;
  }
  return run.models.at(-1)!.model;
}

/** The answer a retry quotes: the model's last one, past any refusals; none after a person's new request. */
function lastAnswer(history: readonly AttemptRecord[]): AttemptRecord | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i].by === "human") return undefined;
    if (history[i].refusal === undefined) return history[i];
  }
  return undefined;
}

/**
 * Whether the next call would pass the run's token budget: the tokens spent plus the call's input,
 * estimated from the prompt's characters as the usage estimate counts them. The call's output is not
 * known in advance, so a call that fits may end past the budget; none is made after that.
 */
function overBudget(
  run: RunSettings,
  spent: TokenUsage,
  messages: readonly { content: unknown }[],
): { spent: number; nextInput: number; limit: number } | undefined {
  if (run.tokenLimit === undefined) return undefined;
  let chars = 0;
  for (const message of messages) chars += typeof message.content === "string" ? message.content.length : JSON.stringify(message.content).length;
  const nextInput = estimateTokens(chars);
  return spent.totalTokens + nextInput > run.tokenLimit ? { spent: spent.totalTokens, nextInput, limit: run.tokenLimit } : undefined;
}

/**
 * How the next retry asks for the fix: corrections only when the run's setting allows them, the output
 * mode lets the prompt choose the answer's shape (a provider's schema or tool mode forces the spec's
 * shape), and the last answer was read whole (not cut off, not stopped, not a correction that was set aside).
 */
function nextRetryForm(run: RunSettings, previous: AttemptRecord, value: unknown): RetryForm {
  const shapeFree = run.outputMode === "text" || run.outputMode === "json_object";
  const whole =
    shapeFree &&
    previous.truncated === undefined &&
    previous.unfinished === undefined &&
    previous.stopped === undefined &&
    previous.correction?.applied !== false;
  return retryFormFor(run.retryWith, { value, errors: previous.errors, whole });
}

/** How many problems an error list stands for (the list may end with "…and N more problems"). */
function problemsIn(errors: readonly string[]): number {
  const more = /^…and (\d+) more problems?$/.exec(errors.at(-1) ?? "");
  return more ? errors.length - 1 + Number(more[1]) : errors.length;
}

/** Whether two error lists are the same, in order. */
function sameErrors(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((e, i) => e === b[i]);
}

/** The settings of the run in progress on this thread. */
function settingsOf(state: ValidationStateType): RunSettings {
  if (state.run === null) throw new ConfigurationError("This thread has no run in progress to continue; send a request to start one.");
  return state.run;
}
