/** The validation graph's nodes: thin adapters around the prompts, the model call, the parser and the validator. */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Command, END, interrupt, Overwrite, Send } from "@langchain/langgraph";
import { checkRequestText, type EnsureOptions } from "../settings.js";
import { ensureValidationConfig, ValidationConfigSchema, type ValidationConfig, type ValidationConfigInput } from "./configuration.js";
import { ConfigurationError } from "../errors.js";
import { resolveModel, type ModelSource } from "../models.js";
import { jsonEqual } from "../shared/json-data.js";
import { bound } from "../shared/text.js";
import { estimateTokens, ZERO_USAGE, type TokenUsage } from "../shared/usage.js";
import { builtinSpecs, fingerprintSpec, isSpec, isZodSchema, recordSpec, resolveSpec, specFromRecord, type SpecRef } from "../specs/registry.js";
import type { RuntimeSpecLimits } from "../specs/limits.js";
import type { JsonSchema, Spec } from "../specs/spec.js";
import { checkGiven, checkText, givenAsText, type Verdict } from "../specs/check.js";
import { streamsTokens } from "../shared/model-call.js";
import { AttemptWatch, correctedAttemptEvents, stoppedAttemptErrors } from "../streaming/attempt.js";
import { applyCorrection, retryFormFor, shownValue, type RetryForm } from "../shared/corrections.js";
import { DEFAULT_STOP_EARLY } from "../streaming/partial-check.js";
import { callModelInMode, type ModeAnswer, type OutputMode } from "./output-mode.js";
import { correctionPrompt, firstAttemptPrompt, MAX_RECORDED_OUTPUT_CHARS, retryPrompt, truncatedAnswerError, unusedCorrectionError } from "../feedback.js";
import { MAX_RECORDED_REFUSED_ANSWERS, readReviewAnswer, REVIEW_ANSWERS, reviewAnswerSchema, type ReviewRequest } from "../review.js";
import { generationSystemPrompt } from "./prompts.js";
import type { AttemptRecord, RunSettings, StopReason, ValidationStateType, ValidationUpdate } from "./state.js";

/** What the validation graph's nodes are built with: the model (or a factory by name) and default settings. */
export interface ValidationNodeOptions extends EnsureOptions<ValidationConfigInput> {
  /** The chat model, or a factory asked per run; defaults to the environment's OpenAI-compatible model. */
  model?: ModelSource;
  /** Default spec for runs that name none: a built-in name, an inline JSON spec, a Spec from defineSpec (with code rules), or a zod schema. */
  spec?: SpecRef;
  /** Default attempt limit for runs that set none (1-10). */
  maxAttempts?: number;
  /**
   * Limits on the specs runs supply (inline JSON) other than the defaults and the operator's
   * RUNTIME_SPEC_LIMITS, e.g. `{ maxChars: 200_000 }` (see docs/specs.md). A run cannot change them.
   */
  specLimits?: Partial<RuntimeSpecLimits>;
}

/** The configuration defaults a builder was given: its `defaults`, with `spec` and `maxAttempts` on top. */
export function builderDefaults(options: ValidationNodeOptions): EnsureOptions<ValidationConfigInput> {
  const defaults: Partial<ValidationConfigInput> = { ...options.defaults };
  if (options.spec !== undefined) defaults.spec = (builderSpecOf(options) ?? options.spec) as ValidationConfigInput["spec"];
  if (options.maxAttempts !== undefined) defaults.maxAttempts = options.maxAttempts;
  return { env: options.env, defaults };
}

/** The builder's own code-defined spec (a Spec, or a zod schema's Spec), if it was given one. */
function builderSpecOf(options: ValidationNodeOptions): Spec | undefined {
  return isSpec(options.spec) || isZodSchema(options.spec) ? resolveSpec(options.spec) : undefined;
}

export function makeValidationNodes(options: ValidationNodeOptions) {
  const ensure = builderDefaults(options);
  // A code-defined spec (with code rules) cannot be stored in a checkpoint: a run in progress finds it
  // here, the builder's own or one a run was given in its context. Those are held weakly, by name and
  // fingerprint: a run's own context holds its spec for as long as the run goes on, however many other
  // specs come and go, and a spec no run holds any more is freed with its map entry.
  const builderSpec = builderSpecOf(options);
  const runSpecs = new Map<string, WeakRef<Spec>>();
  const forget = new FinalizationRegistry<string>((key) => {
    if (runSpecs.get(key)?.deref() === undefined) runSpecs.delete(key);
  });
  const keyOf = (name: string, fingerprint: string) => `${fingerprint}:${name}`;
  function remember(spec: Spec): void {
    if (spec.untrusted || builtinSpecs.get(spec.name) === spec || spec === builderSpec) return;
    const key = keyOf(spec.name, fingerprintSpec(spec));
    if (runSpecs.get(key)?.deref() !== undefined) return;
    runSpecs.set(key, new WeakRef(spec));
    forget.register(spec, key);
  }

  /** The spec of the run in progress, from what the run recorded when it began. */
  function runSpec(run: RunSettings): Spec {
    const held = run.spec.kind === "code" ? runSpecs.get(keyOf(run.spec.name, run.spec.fingerprint))?.deref() : undefined;
    if (held !== undefined) return held;
    const known = [...(builderSpec ? [builderSpec] : []), ...[...runSpecs.values()].flatMap((ref) => ref.deref() ?? [])];
    return specFromRecord(run.spec, known, { specLimits: options.specLimits });
  }

  /**
   * The settings of each run the front door checked, kept a little while so
   * that the run's start reads them instead of parsing them again: a run's
   * settings are parsed once. The front door sees LangGraph's parsed copy of
   * what the run was given (its context, or else configurable), the run's
   * start the run's own: they are matched by value. A run not found (many at
   * once, with other settings) has its settings parsed again, with the same
   * outcome.
   */
  const checked: Array<{ given: Record<string, unknown>; settings: ValidationConfig }> = [];
  const CHECKED_KEPT = 32;
  const settingKeys = Object.keys(ValidationConfigSchema.shape);
  const settingsGiven = (source: unknown): Record<string, unknown> | undefined => {
    if (source === null || typeof source !== "object") return undefined;
    const out: Record<string, unknown> = {};
    for (const key of settingKeys) if ((source as Record<string, unknown>)[key] !== undefined) out[key] = (source as Record<string, unknown>)[key];
    return out;
  };

  /** The front door's check of what a run was given: its settings (or a ConfigurationError), kept for the run's start. */
  function checkSettings(given: Record<string, unknown>): ValidationConfig {
    const settings = ensureValidationConfig({ context: given }, ensure);
    checked.push({ given: settingsGiven(given)!, settings });
    if (checked.length > CHECKED_KEPT) checked.shift();
    return settings;
  }

  /** A new run's settings: those the front door checked for it, else parsed from its configuration. */
  function settingsFor(config: LangGraphRunnableConfig): ValidationConfig {
    // LangGraph checks `context` when a run has one, else `configurable`; the run's start reads both (context wins).
    const fromContext = config.context !== undefined;
    const given = settingsGiven(fromContext ? config.context : config.configurable);
    const alsoConfigurable = fromContext && Object.keys(settingsGiven(config.configurable) ?? {}).length > 0;
    if (given !== undefined && !alsoConfigurable) {
      // Taken, not shared: each check serves one run (its settings hold the run's own copy of its ruleContext).
      for (let i = checked.length - 1; i >= 0; i--) if (jsonEqual(checked[i].given, given)) return checked.splice(i, 1)[0].settings;
    }
    return ensureValidationConfig(config, ensure);
  }

  function settingsOf(state: ValidationStateType): RunSettings {
    if (state.run === null) throw new ConfigurationError("This thread has no run in progress to continue; send a request to start one.");
    return state.run;
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
  function startRun(state: ValidationStateType, config: LangGraphRunnableConfig): Send {
    const cfg = settingsFor(config);
    if (cfg.models && new Set(cfg.models.map((step) => step.model)).size > 1 && options.model !== undefined && typeof options.model !== "function") {
      // One chat model cannot be asked for another by name: the escalation would silently not happen.
      throw new ConfigurationError(
        "models (escalation) needs a model factory, ({ model }) => BaseChatModel, to ask for each model by name; this graph was built with one chat model.",
      );
    }
    const spec = resolveSpec(cfg.spec, { specLimits: options.specLimits });
    remember(spec);
    const run: RunSettings = {
      request: checkRequestText(state.request, "request"),
      spec: recordSpec(spec),
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

  async function generate(input: ValidationStateType | RunStart, config: LangGraphRunnableConfig): Promise<ValidationUpdate> {
    const starting = isRunStart(input) ? freshRun(input.newRun) : undefined;
    const state = starting?.state ?? (input as ValidationStateType);
    // The first attempt's usage replaces the previous run's totals; later ones add to them.
    const counted = <T>(value: T) => (starting ? new Overwrite(value) : value);
    const run = settingsOf(state);
    const spec = runSpec(run);
    const modelName = modelForAttempt(run, state.attempts);
    const previous = lastAnswer(state.history);
    const form = previous ? nextRetryForm(run, previous, state.result) : "answer";
    const prompt = !previous
      ? firstAttemptPrompt(run.request)
      : form === "corrections"
        ? correctionPrompt(run.request, shownValue(state.result), previous.errors)
        : retryPrompt(run.request, previous.output, previous.errors);
    const messages = [new SystemMessage(generationSystemPrompt(spec)), new HumanMessage(prompt)];
    const budget = overBudget(run, state.usage, messages);
    if (budget) return { ...starting?.writes, draft: { output: "", usage: { ...ZERO_USAGE }, budget } };
    const model = await resolveModel(options.model, { model: modelName, temperature: run.temperature, role: "generate" });
    // When the run streams model tokens, the answer is checked as it arrives: progress goes to the custom
    // stream, and the stop policy may end a request whose rest cannot help. The verdict stays validate's.
    // A correction's tokens are not the answer: no partial check reads them (its corrected value is published once applied).
    const streaming = streamsTokens(config);
    const watch =
      streaming && form === "answer"
        ? new AttemptWatch({ spec, attempt: state.attempts + 1, policy: run.stopEarly ?? DEFAULT_STOP_EARLY, publish: config.writer, context: run.ruleContext })
        : undefined;
    let answer: ModeAnswer;
    try {
      answer = await callModelInMode(model, messages, run.outputMode, spec, { node: "generate", config, watch: watch && (() => watch.start()) });
    } catch (error) {
      watch?.failed(error);
      throw error;
    }
    const stopped = watch?.finish();
    if (streaming && form === "corrections" && config.writer) {
      const applied = applyCorrection(answer.text, state.result, { repair: run.repairSyntax !== false });
      for (const event of correctedAttemptEvents(state.attempts + 1, applied.ok ? applied.value : state.result, answer.text.length)) config.writer(event);
    }
    const draft = {
      output: answer.text,
      usage: answer.usage,
      mode: answer.mode,
      model: modelName,
      ...(answer.fallbacks.length > 0 ? { fallbacks: answer.fallbacks } : {}),
      ...(answer.schemaDropped !== undefined ? { schemaDropped: answer.schemaDropped } : {}),
      ...(stopped ? { stopped } : {}),
      ...(answer.refusal !== undefined ? { refusal: answer.refusal } : {}),
      ...(answer.truncated !== undefined ? { truncated: answer.truncated } : {}),
      ...(form === "corrections" ? { corrections: true } : {}),
    };
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
  async function validate(state: ValidationStateType): Promise<Command> {
    const run = settingsOf(state);
    const update = await judgeDraft(state, run);
    const stopReason = update.stopReason ?? null;
    const next = stopReason === null ? "generate" : stopReason !== "valid" && run.onFailure === "interrupt" ? "review" : END;
    return new Command({ update, goto: next });
  }

  async function judgeDraft(state: ValidationStateType, run: RunSettings): Promise<ValidationUpdate> {
    const spec = runSpec(run);
    // The call was not made: the run ends with what it has (the last answer, its errors, the usage).
    if (state.draft?.budget) return { stopReason: "budget", draft: null };
    const refusal = state.draft?.refusal;
    if (refusal !== undefined) return refused(state, run, refusal);
    if (state.draft?.corrections) return judgeCorrection(state, run, spec);
    const output = state.draft?.output ?? "";
    const report = await checkText(spec, output, "model", { context: run.ruleContext, repair: run.repairSyntax !== false });
    const previous = state.history.at(-1);
    // A stopped answer is judged on what arrived; its retry carries the errors found before the stop, and why.
    const stopped = state.draft?.stopped;
    // The provider cut the answer at its output limit: it did not run to completion, so it is not valid
    // whatever its text, and its retry asks for a compact answer rather than a fix of the cut-off JSON.
    const truncated = state.draft?.truncated;
    const valid = report.valid && truncated === undefined;
    const errors = truncated !== undefined ? [truncatedAnswerError(truncated)] : stopped && !report.valid ? stoppedAttemptErrors(stopped) : report.errors;

    let stopReason: StopReason | null = null;
    if (valid) stopReason = "valid";
    else if (state.attempts >= run.attemptLimit) stopReason = "max_attempts";
    else if (run.stopOnNoProgress && previous && sameErrors(previous.errors, errors)) stopReason = "no_progress";

    return {
      success: valid,
      result: truncated !== undefined ? null : resultOf(report),
      errors,
      stopReason,
      draft: null,
      ...(state.refusal !== null ? { refusal: null } : {}),
      history: [
        {
          ...modelRecord(state, output),
          errors,
          valid,
          ...(report.repairs !== undefined ? { repairs: report.repairs } : {}),
          ...(stopped ? { stopped: { at: stopped.at, reason: stopped.reason, detail: stopped.detail } } : {}),
          ...(truncated !== undefined ? { truncated } : {}),
        },
      ],
    };
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
    const base = lastAnswer(state.history);
    const baseErrors = base?.errors ?? [];
    const applied =
      truncated !== undefined
        ? ({ ok: false, problem: `it was cut off at the output limit (${truncated})` } as const)
        : applyCorrection(text, state.result, { repair: run.repairSyntax !== false });
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
    const correction = { text: bound(text, MAX_RECORDED_OUTPUT_CHARS), applied: problem === undefined, ...(problem !== undefined ? { problem } : {}) };
    const repairs = applied.ok ? applied.repairs : undefined;
    if (problem !== undefined || report === undefined) {
      const errors = [unusedCorrectionError(problem ?? "it could not be applied"), ...baseErrors];
      return {
        success: false,
        errors,
        stopReason: state.attempts >= run.attemptLimit ? "max_attempts" : null,
        draft: null,
        ...(state.refusal !== null ? { refusal: null } : {}),
        history: [{ ...modelRecord(state, shownValue(state.result)), errors, valid: false, correction }],
      };
    }
    const previous = state.history.at(-1);
    let stopReason: StopReason | null = null;
    if (report.valid) stopReason = "valid";
    else if (state.attempts >= run.attemptLimit) stopReason = "max_attempts";
    else if (run.stopOnNoProgress && previous && sameErrors(previous.errors, report.errors)) stopReason = "no_progress";
    return {
      success: report.valid,
      result: resultOf(report),
      errors: report.errors,
      stopReason,
      draft: null,
      ...(state.refusal !== null ? { refusal: null } : {}),
      history: [
        {
          ...modelRecord(state, shownValue(applied.ok ? applied.value : state.result)),
          errors: report.errors,
          valid: report.valid,
          correction,
          ...(repairs !== undefined ? { repairs } : {}),
        },
      ],
    };
  }

  /**
   * The provider declined to answer: recorded as a refusal, not validated as a broken answer. The same
   * request is asked once more (a refusal can be a fluke); a second refusal, or one at the last attempt,
   * ends the run. The last answer and its errors stay as they were.
   */
  function refused(state: ValidationStateType, run: RunSettings, refusal: string): ValidationUpdate {
    let earlier = 0;
    for (let i = state.history.length - 1; i >= 0 && state.history[i].by !== "human"; i--) if (state.history[i].refusal !== undefined) earlier++;
    const stopReason: StopReason | null = earlier > 0 || state.attempts >= run.attemptLimit ? "refused" : null;
    return {
      stopReason,
      refusal,
      draft: null,
      history: [{ ...modelRecord(state, ""), errors: [], valid: false, refusal }],
    };
  }

  /** A model attempt's record, from the draft: what it answered, how, by which model, at what cost. */
  function modelRecord(state: ValidationStateType, output: string): Omit<AttemptRecord, "errors" | "valid"> {
    const draft = state.draft;
    return {
      attempt: state.history.length + 1,
      output: bound(output, MAX_RECORDED_OUTPUT_CHARS),
      usage: draft?.usage ?? { ...ZERO_USAGE },
      ...(draft?.mode ? { mode: draft.mode as OutputMode } : {}),
      ...(draft?.fallbacks ? { fallbacks: draft.fallbacks } : {}),
      ...(draft?.schemaDropped ? { schemaDropped: draft.schemaDropped } : {}),
      ...(draft?.model !== undefined ? { model: draft.model } : {}),
    };
  }

  /**
   * A person finishes what the model could not: the run pauses (LangGraph's
   * interrupt) with the request, the last output and its exact errors, and
   * resumes with a corrected value (held to the same spec: a value that fails
   * is shown again with its errors), a new request (the model tries again with
   * a fresh attempt budget), or a rejection.
   */
  async function review(state: ValidationStateType): Promise<Command> {
    const run = settingsOf(state);
    const spec = runSpec(run);
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
    const record = (output: string, errors: string[], valid: boolean) => ({
      attempt: state.history.length + 1,
      output: bound(output, MAX_RECORDED_OUTPUT_CHARS),
      errors,
      valid,
      usage: { ...ZERO_USAGE },
      by: "human" as const,
    });
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
        update: { success: false, result: resultOf(report), errors: report.errors, ...(recordIt ? { history: [record(shown, report.errors, false)] } : {}) },
        goto: "review",
      });
    }
    return new Command({
      update: { success: true, result: resultOf(report), errors: [], stopReason: "valid", history: [record(shown, [], true)] },
      goto: END,
    });
  }

  return { startRun, generate, validate, review, checkSettings };
}

/** What a new input hands the run's first attempt (see startRun): the run's settings. */
interface RunStart {
  newRun: RunSettings;
}

function isRunStart(input: ValidationStateType | RunStart): input is RunStart {
  const newRun = (input as Partial<RunStart>).newRun;
  return newRun !== null && typeof newRun === "object";
}

/** The state a new run starts from, and the writes that clear the thread's previous run. */
function freshRun(run: RunSettings): { state: ValidationStateType; writes: ValidationUpdate } {
  const fresh = { run, spec: run.spec.name, attempts: 0, draft: null, refusal: null, stopReason: null, success: false, errors: [], result: null };
  return {
    state: { ...fresh, request: run.request, history: [], usage: { ...ZERO_USAGE }, usageByModel: {} },
    writes: { ...fresh, history: new Overwrite([]), usage: new Overwrite({ ...ZERO_USAGE }), usageByModel: new Overwrite({}) } as ValidationUpdate,
  };
}

/** What a run reports as its result: the spec's output when valid, else the JSON value read (null when there was none). */
function resultOf(verdict: Verdict): unknown {
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
  const whole = shapeFree && previous.truncated === undefined && previous.stopped === undefined && previous.correction?.applied !== false;
  return retryFormFor(run.retryWith ?? "answer", { value, errors: previous.errors, whole });
}

/** How many problems an error list stands for (the list may end with "…and N more problems"). */
function problemsIn(errors: readonly string[]): number {
  const more = /^…and (\d+) more problems?$/.exec(errors.at(-1) ?? "");
  return more ? errors.length - 1 + Number(more[1]) : errors.length;
}

function sameErrors(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((e, i) => e === b[i]);
}
