/** The validation graph's nodes: thin adapters around the prompts, the model call, the parser and the validator. */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { Overwrite } from "@langchain/langgraph";
import { checkRequestText, ensureValidationConfig, type EnsureOptions, type ValidationConfig, type ValidationConfigInput } from "../configuration.js";
import { resolveModel, type ModelSource } from "../models.js";
import { extractJson } from "../shared/json.js";
import { callModel } from "../shared/model-call.js";
import { bound } from "../shared/text.js";
import { ZERO_USAGE } from "../shared/usage.js";
import { resolveSpec, type SpecRef } from "../specs/registry.js";
import { validateAgainstSpec } from "./validate.js";
import { firstAttemptPrompt, generationSystemPrompt, retryPrompt } from "./prompts.js";
import type { StopReason, ValidationStateType, ValidationUpdate } from "./state.js";

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
  const settings = (config: LangGraphRunnableConfig): ValidationConfig => ensureValidationConfig(config, ensure);

  async function generate(state: ValidationStateType, config: LangGraphRunnableConfig): Promise<ValidationUpdate> {
    // Everything that can be refused is checked before the model is called.
    const cfg = settings(config);
    const request = checkRequestText(state.request, "request");
    const spec = resolveSpec(cfg.spec);
    const model = resolveModel(options.model, { model: cfg.model, temperature: cfg.temperature, role: "generate" });

    // A finished thread that receives a new request starts a new run.
    const fresh = state.stopReason !== null;
    const previous = fresh ? undefined : state.history.at(-1);
    const messages = [
      new SystemMessage(generationSystemPrompt(spec)),
      new HumanMessage(previous ? retryPrompt(request, previous.output, previous.errors) : firstAttemptPrompt(request)),
    ];
    const answer = await callModel(model, messages, { node: "generate", config });
    const draft = { output: answer.text, usage: answer.usage };
    if (fresh) {
      return {
        attempts: 1,
        draft,
        history: new Overwrite([]),
        usage: new Overwrite({ ...answer.usage }),
        stopReason: null,
        success: false,
        errors: [],
        result: null,
      } as ValidationUpdate;
    }
    return { attempts: state.attempts + 1, draft, usage: answer.usage };
  }

  function validate(state: ValidationStateType, config: LangGraphRunnableConfig): ValidationUpdate {
    const cfg = settings(config);
    const spec = resolveSpec(cfg.spec);
    const output = state.draft?.output ?? "";
    const parsed = extractJson(output);
    const report = parsed.ok ? validateAgainstSpec(spec, parsed.value) : { valid: false, errors: [parsed.error] };
    const previous = state.history.at(-1);

    let stopReason: StopReason | null = null;
    if (report.valid) stopReason = "valid";
    else if (state.attempts >= cfg.maxAttempts) stopReason = "max_attempts";
    else if (cfg.stopOnNoProgress && previous && sameErrors(previous.errors, report.errors)) stopReason = "no_progress";

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

  return { generate, validate, routeAfterValidate };
}

function sameErrors(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((e, i) => e === b[i]);
}
