/** The validation graph's nodes: thin adapters around the prompts, the model call, the parser and the validator. */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Overwrite } from "@langchain/langgraph";
import { checkRequestText, ensureValidationConfig, type EnsureOptions, type ValidationConfigInput } from "../configuration.js";
import { ConfigurationError } from "../errors.js";
import { resolveModel, type ModelSource } from "../models.js";
import { extractJson } from "../shared/json.js";
import { callModel } from "../shared/model-call.js";
import { bound } from "../shared/text.js";
import { ZERO_USAGE } from "../shared/usage.js";
import { isSpec, recordSpec, resolveSpec, specFromRecord, type SpecRef } from "../specs/registry.js";
import type { Spec } from "../specs/spec.js";
import { validateAgainstSpec } from "./validate.js";
import { firstAttemptPrompt, generationSystemPrompt, retryPrompt } from "./prompts.js";
import type { RunSettings, StopReason, ValidationStateType, ValidationUpdate } from "./state.js";

/** Longest raw answer kept in each history record. */
export const MAX_RECORDED_OUTPUT_CHARS = 20_000;

export interface ValidationNodeOptions extends EnsureOptions<ValidationConfigInput> {
  /** The chat model, or a factory asked per run; defaults to the environment's OpenAI-compatible model. */
  model?: ModelSource;
  /** Default spec for runs that name none: a built-in name, an inline JSON spec, or a Spec from defineSpec (with code rules). */
  spec?: SpecRef;
  /** Default attempt limit for runs that set none (1-10). */
  maxAttempts?: number;
}

/** The configuration defaults a builder was given: its `defaults`, with `spec` and `maxAttempts` on top. */
export function builderDefaults(options: ValidationNodeOptions): EnsureOptions<ValidationConfigInput> {
  const defaults: Partial<ValidationConfigInput> = { ...options.defaults };
  if (options.spec !== undefined) defaults.spec = options.spec as ValidationConfigInput["spec"];
  if (options.maxAttempts !== undefined) defaults.maxAttempts = options.maxAttempts;
  return { env: options.env, defaults };
}

export function makeValidationNodes(options: ValidationNodeOptions) {
  const ensure = builderDefaults(options);
  // A code-defined spec (with code rules) cannot be stored in a checkpoint; a resumed run finds it here.
  const codeSpec: Spec | undefined = isSpec(options.spec) ? options.spec : undefined;

  /** The spec of the run in progress, from what the run recorded when it began. */
  function runSpec(run: RunSettings): Spec {
    return specFromRecord(run.spec, codeSpec);
  }

  function settingsOf(state: ValidationStateType): RunSettings {
    if (state.run === null) throw new ConfigurationError("This thread has no run in progress to continue; send a request to start one.");
    return state.run;
  }

  /**
   * A new request starts a new run: its settings are fixed here, once, and the
   * counters and records of any earlier run on the thread are cleared. Only a
   * new input reaches this node; resuming an interrupted run continues at the
   * step that was interrupted, with the settings recorded here.
   */
  function begin(state: ValidationStateType, config: LangGraphRunnableConfig): ValidationUpdate {
    const cfg = ensureValidationConfig(config, ensure);
    const request = checkRequestText(state.request, "request");
    const spec = resolveSpec(cfg.spec);
    const run: RunSettings = {
      request,
      spec: recordSpec(spec),
      maxAttempts: cfg.maxAttempts,
      model: cfg.model,
      temperature: cfg.temperature,
      stopOnNoProgress: cfg.stopOnNoProgress,
    };
    return {
      run,
      spec: spec.name,
      attempts: 0,
      draft: null,
      history: new Overwrite([]),
      usage: new Overwrite({ ...ZERO_USAGE }),
      stopReason: null,
      success: false,
      errors: [],
      result: null,
    } as ValidationUpdate;
  }

  async function generate(state: ValidationStateType, config: LangGraphRunnableConfig): Promise<ValidationUpdate> {
    const run = settingsOf(state);
    const spec = runSpec(run);
    const model = resolveModel(options.model, { model: run.model, temperature: run.temperature, role: "generate" });
    const previous = state.history.at(-1);
    const messages = [
      new SystemMessage(generationSystemPrompt(spec)),
      new HumanMessage(previous ? retryPrompt(run.request, previous.output, previous.errors) : firstAttemptPrompt(run.request)),
    ];
    const answer = await callModel(model, messages, { node: "generate", config });
    return { attempts: state.attempts + 1, draft: { output: answer.text, usage: answer.usage }, usage: answer.usage };
  }

  function validate(state: ValidationStateType): ValidationUpdate {
    const run = settingsOf(state);
    const spec = runSpec(run);
    const output = state.draft?.output ?? "";
    const parsed = extractJson(output);
    const report = parsed.ok ? validateAgainstSpec(spec, parsed.value) : { valid: false, errors: [parsed.error] };
    const previous = state.history.at(-1);

    let stopReason: StopReason | null = null;
    if (report.valid) stopReason = "valid";
    else if (state.attempts >= run.maxAttempts) stopReason = "max_attempts";
    else if (run.stopOnNoProgress && previous && sameErrors(previous.errors, report.errors)) stopReason = "no_progress";

    return {
      success: report.valid,
      result: parsed.ok ? parsed.value : null,
      errors: report.errors,
      stopReason,
      spec: spec.name,
      draft: null,
      history: [
        {
          attempt: state.attempts,
          output: bound(output, MAX_RECORDED_OUTPUT_CHARS),
          errors: report.errors,
          valid: report.valid,
          usage: state.draft?.usage ?? { ...ZERO_USAGE },
        },
      ],
    };
  }

  function routeAfterValidate(state: ValidationStateType): "generate" | "__end__" {
    return state.stopReason === null ? "generate" : "__end__";
  }

  return { begin, generate, validate, routeAfterValidate };
}

function sameErrors(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((e, i) => e === b[i]);
}
