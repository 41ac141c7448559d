/**
 * The strategies the evaluation compares, each run on the same requests with
 * the same model and the same attempt budget:
 *
 *  validation   this package's validation graph: every error, exact messages, fed back.
 *  first-error  the same graph, with the spec wrapped so that the validator reports only
 *               the first schema error, and the cross-field rules only when the schema
 *               passes: the article's `validate_config` (same message wording as above).
 *  self-review  generate, then a second model call reviews the JSON against the spec;
 *               "APPROVED" ends the loop, otherwise its critique is fed back.
 *  reflexion    the Reflexion graph with the deterministic gate (`spec` in its context).
 */
import type { ValidateFunction } from "ajv";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { InMemoryStore } from "@langchain/langgraph";
import { resolveModel, type ModelSource } from "../src/models.js";
import { buildReflexionGraph } from "../src/reflexion/graph.js";
import { describeSpec } from "../src/specs/describe.js";
import { resolveSpec } from "../src/specs/registry.js";
import { variantOf, type Spec } from "../src/specs/spec.js";
import { callModel } from "../src/providers/model-call.js";
import { bound } from "../src/shared/text.js";
import { PROMPT_HEADINGS } from "../src/protocol/feedback.js";
import { addUsage, ZERO_USAGE, type TokenUsage } from "../src/shared/usage.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { generationSystemPrompt } from "../src/validation/prompts.js";
import { firstAttemptPrompt, MAX_ECHOED_OUTPUT_CHARS } from "../src/protocol/feedback.js";
import type { EvalRequest } from "./suite.js";

export interface StrategyOutcome {
  /** Whether the strategy itself said it succeeded (valid, approved, passed its gate). */
  claimedSuccess: boolean;
  /** The final output as text (what the strategy would hand on). */
  finalText: string | null;
  usage: TokenUsage;
  /** Generations made (answers of the generating model). */
  attempts: number;
}

export interface StrategyContext {
  model: ModelSource;
  maxAttempts: number;
  /** Model name passed to the model factory. */
  modelName: string;
}

export interface Strategy {
  id: "validation" | "first-error" | "self-review" | "reflexion";
  name: string;
  description: string;
  run(item: EvalRequest, ctx: StrategyContext): Promise<StrategyOutcome>;
}

// ---------------------------------------------------------------------------
// (a) the validation graph

const validationGraphs = new WeakMap<object, ReturnType<typeof buildValidationGraph>>();
function validationGraph(model: ModelSource) {
  const key = model as object;
  let graph = validationGraphs.get(key);
  if (!graph) validationGraphs.set(key, (graph = buildValidationGraph({ model })));
  return graph;
}

async function runValidationGraph(item: EvalRequest, ctx: StrategyContext, spec: string | Spec): Promise<StrategyOutcome> {
  const out = await validationGraph(ctx.model).invoke(
    { request: item.request },
    { context: { spec: spec as never, maxAttempts: ctx.maxAttempts, model: ctx.modelName, temperature: 0 } },
  );
  const last = out.history.at(-1);
  return { claimedSuccess: out.success, finalText: last?.output ?? null, usage: out.usage, attempts: out.attempts };
}

// ---------------------------------------------------------------------------
// (b) the article's feedback: the first schema error only; rules only when the schema passes

const firstErrorSpecs = new Map<string, Spec>();

/**
 * The spec with the article's `validate_config` behaviour: the schema check
 * keeps only its first error (ajv's first, in schema order), and each rule
 * runs only when the whole schema passes. Messages keep the package's wording.
 */
export function firstErrorSpec(name: string): Spec {
  const cached = firstErrorSpecs.get(name);
  if (cached) return cached;
  const spec = resolveSpec(name);
  const original = spec.validateSchema;
  const firstOnly = ((value: unknown) => {
    const ok = original(value);
    // The first error that says something on its own (ajv follows a field-name error with a generic propertyNames one, and then/else errors with an "if" one).
    const first = (original.errors ?? []).find((e) => e.keyword !== "propertyNames" && e.keyword !== "if");
    firstOnly.errors = ok ? null : first ? [first] : (original.errors ?? []).slice(0, 1);
    return ok;
  }) as ValidateFunction;
  const wrapped = variantOf(spec, {
    name: `${spec.name}.first-error`,
    validateSchema: firstOnly,
    rules: Object.freeze(
      spec.rules.map((rule) => ({
        ...rule,
        check: (values: Record<string, any>, doc: unknown, context: unknown) => (original(doc) ? rule.check(values, doc, context) : null),
      })),
    ),
  });
  firstErrorSpecs.set(name, wrapped);
  return wrapped;
}

// ---------------------------------------------------------------------------
// (c) self-review

export function reviewSystemPrompt(spec: Spec): string {
  return [
    `You review JSON objects of this kind: ${spec.description}`,
    "Check the JSON against every constraint and rule below.",
    'If it satisfies all of them, reply with the single word APPROVED. Otherwise list each problem on its own line as "- field: problem".',
    "",
    describeSpec(spec),
  ].join("\n");
}

export function reviewPrompt(request: string, output: string): string {
  return `${PROMPT_HEADINGS.request}\n${request}\n\nJSON to review:\n${bound(output, MAX_ECHOED_OUTPUT_CHARS)}`;
}

export function reviseAfterReviewPrompt(request: string, previousOutput: string, review: string): string {
  return [
    `${PROMPT_HEADINGS.request}\n${request}`,
    `${PROMPT_HEADINGS.previousAnswer}\n${bound(previousOutput, MAX_ECHOED_OUTPUT_CHARS)}`,
    `A reviewer found these problems:\n${bound(review, MAX_ECHOED_OUTPUT_CHARS)}`,
    "Reply with the corrected JSON object only. Fix every problem listed and keep everything that was already right.",
  ].join("\n\n");
}

/** A review approves when its first line starts with APPROVED, "looks good" or LGTM. */
export function isApproval(review: string): boolean {
  const first = review.trim().split("\n")[0] ?? "";
  return /^\W*(approved|looks good|lgtm)\b/i.test(first);
}

async function runSelfReview(item: EvalRequest, ctx: StrategyContext): Promise<StrategyOutcome> {
  const spec = resolveSpec(item.spec);
  const generator = await resolveModel(ctx.model, { model: ctx.modelName, temperature: 0, role: "generate" });
  const reviewer = await resolveModel(ctx.model, { model: ctx.modelName, temperature: 0, role: "reviewer" });
  let usage: TokenUsage = { ...ZERO_USAGE };
  let previous: { output: string; review: string } | undefined;
  for (let attempt = 1; ; attempt++) {
    const prompt = previous ? reviseAfterReviewPrompt(item.request, previous.output, previous.review) : firstAttemptPrompt(item.request);
    const answer = await callModel(generator, [new SystemMessage(generationSystemPrompt(spec)), new HumanMessage(prompt)], { node: "generate" });
    usage = addUsage(usage, answer.usage);
    const review = await callModel(reviewer, [new SystemMessage(reviewSystemPrompt(spec)), new HumanMessage(reviewPrompt(item.request, answer.text))], {
      node: "review",
    });
    usage = addUsage(usage, review.usage);
    const approved = isApproval(review.text);
    if (approved || attempt >= ctx.maxAttempts) return { claimedSuccess: approved, finalText: answer.text, usage, attempts: attempt };
    previous = { output: answer.text, review: review.text };
  }
}

// ---------------------------------------------------------------------------
// (d) Reflexion with the deterministic gate

async function runReflexion(item: EvalRequest, ctx: StrategyContext): Promise<StrategyOutcome> {
  const spec = resolveSpec(item.spec);
  // A store per request: no memories carried from one request to the next, as for the other strategies.
  const graph = buildReflexionGraph({ model: ctx.model, store: new InMemoryStore() });
  const out = await graph.invoke(
    { tasks: [item.request] },
    { context: { spec: item.spec, maxLoops: ctx.maxAttempts, systemPrompt: generationSystemPrompt(spec), model: ctx.modelName, temperature: 0 } },
  );
  const outcome = out.outcomes[0];
  return {
    claimedSuccess: outcome?.valid === true,
    finalText: out.results[0] ?? null,
    usage: out.usage,
    attempts: out.steps[0]?.length ?? 0,
  };
}

export const STRATEGIES: readonly Strategy[] = [
  {
    id: "validation",
    name: "validation loop (this package)",
    description:
      "The compiled validation graph: every schema error and every rule violation, with exact messages, fed back; success only when the validator passes.",
    run: (item, ctx) => runValidationGraph(item, ctx, item.spec),
  },
  {
    id: "first-error",
    name: "first schema error only (the article's validator)",
    description:
      "The same graph with the spec wrapped so that the validator behaves like the article's validate_config: only the first schema error is reported, and the cross-field rules only once the schema passes.",
    run: (item, ctx) => runValidationGraph(item, ctx, firstErrorSpec(item.spec)),
  },
  {
    id: "self-review",
    name: "LLM self-review",
    description:
      'Generate, then a second model call reviews the JSON against the spec; "APPROVED" ends the loop and counts as success, otherwise the critique is fed back (the pattern the article warns against).',
    run: runSelfReview,
  },
  {
    id: "reflexion",
    name: "Reflexion with the deterministic gate",
    description: "The Reflexion graph (actor, evaluator, reflector, refine) with the spec as its gate; success is the gate's verdict on the best response.",
    run: runReflexion,
  },
];
