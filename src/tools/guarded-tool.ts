/**
 * guardedTool: a LangChain tool whose function runs only with arguments that
 * pass a spec. The model sees the spec's JSON Schema as the tool's parameters;
 * each call's arguments go through the same parse-then-validate step as the
 * validation graph; a call that fails returns the exact errors as the tool's
 * result (so the model can fix them and call again) and, once the attempt
 * budget is spent, a refusal. Works with LangGraph's ToolNode and
 * createReactAgent and with `model.bindTools`.
 */
import { ToolMessage } from "@langchain/core/messages";
import { tool, type DynamicStructuredTool, type ToolRuntime } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { z } from "zod";
import { readSpecLimits } from "../environment.js";
import { ConfigurationError, SpecError } from "../errors.js";
import { attemptsOption } from "../settings.js";
import { resolveSpec, type SpecLike } from "../specs/registry.js";
import type { JsonSchema, Spec } from "../specs/spec.js";
import type { ArgumentLimits } from "./arguments.js";
import { BudgetMemo, GUARD_ARTIFACT_KEY, type ToolCallRef } from "./budget.js";
import { decideToolCall } from "./decide.js";
import { toolDescription } from "./prompts.js";
import { traceToolCall } from "../telemetry/open-telemetry.js";

/** Options of guardedTool: the tool's name, description, spec and function, and its attempt budget. */
export interface GuardedToolOptions<Args = any, Output = unknown> {
  /** What valid arguments are: a zod schema or a Spec from defineSpec (both type `args`), a built-in spec name, or an inline JSON spec. Its schema must describe an object. */
  spec: SpecLike<Args>;
  /** The tool's name as the model sees it: 1-64 letters, digits, "_" or "-". */
  name: string;
  /** What the tool does, for the model; defaults to the spec's description. The spec's cross-field rules are appended. */
  description?: string;
  /** Runs only with arguments that passed the spec: plain JSON data, the very value judged (frozen). */
  func: (args: Args, runtime: ToolRuntime) => Output | Promise<Output>;
  /** Calls the model may make whose arguments fail, in a row, in one turn, before the tool refuses (1-10, default 3). */
  maxAttempts?: number;
  /** Size, depth and message limits; the defaults are the validation graph's. */
  limits?: Partial<ArgumentLimits>;
  /** Facts the spec's code rules read (their third argument): a value, or computed from the call's runtime (e.g. `runtime.context`). */
  ruleContext?: unknown | ((runtime: ToolRuntime) => unknown);
}

export const DEFAULT_TOOL_ATTEMPTS = 3;
/** What OpenAI-compatible providers accept as a function name. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** The dialect the validator runs (ajv's default class), stated for the provider unless the spec states its own. */
const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

/** The argument schema LangChain sees: accepts any value (the spec decides, below), and converts to the spec's JSON Schema. */
type ParametersSchema = z.ZodUnknown;

/**
 * A LangChain tool whose function runs only with arguments that pass the spec; failing calls get the exact errors, within an attempt budget.
 *
 * @example
 * ```ts
 * import { guardedTool } from "langgraph-trustworthy-output";
 *
 * const deploy = guardedTool({
 *   spec: "deployment-config",
 *   name: "deploy_service",
 *   func: async (config: { service_name: string }) => `deployed ${config.service_name}`,
 * });
 * console.log(await deploy.invoke({ service_name: "api" })); // the exact errors: the function did not run
 * ```
 */
export function guardedTool<Args = any, Output = unknown>(
  options: GuardedToolOptions<Args, Output>,
): DynamicStructuredTool<ParametersSchema, unknown, unknown, Output | ToolMessage | string> {
  // The operator's limits on run-time specs (RUNTIME_SPEC_LIMITS) hold for an inline spec given here too.
  const spec = resolveSpec(options.spec, { specLimits: readSpecLimits() });
  const name = options.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new ConfigurationError(`A tool name must be 1-64 letters, digits, "_" or "-"; got ${JSON.stringify(String(name).slice(0, 80))}.`);
  }
  const maxAttempts = attemptsOption(options.maxAttempts, DEFAULT_TOOL_ATTEMPTS);
  const { func, limits, ruleContext } = options;
  const memo = new BudgetMemo();

  async function guarded(input: unknown, runtime: ToolRuntime): Promise<Output | ToolMessage | string> {
    const context = typeof ruleContext === "function" ? (ruleContext as (runtime: ToolRuntime) => unknown)(runtime) : ruleContext;
    const toolCallId = runtime?.toolCall?.id ?? (runtime?.toolCallId || undefined);
    const messages = (runtime?.state as { messages?: unknown } | undefined)?.messages;
    // The call as its AI message holds it (ToolNode passes a copy of the entry, with the same arguments): located by position, never by id alone.
    const call: ToolCallRef | undefined = runtime?.toolCall ?? (toolCallId !== undefined ? { id: toolCallId, name, args: input } : undefined);
    const decision = await decideToolCall({ spec, tool: name, args: input, call, messages, maxAttempts, memo, limits, context });
    // The verdict goes to OpenTelemetry (../telemetry.ts): a span around the call, a refusal counted.
    const verdict = decision.run
      ? { tool: name, spec: spec.name, valid: true, errors: [] }
      : { tool: name, spec: spec.name, valid: false, outcome: decision.record.outcome, attempt: decision.record.attempt, errors: decision.record.errors };
    if (decision.run) return traceToolCall(verdict, () => func(decision.args as Args, runtime));
    await traceToolCall(verdict, () => undefined);
    // Inside a tool call the result is a ToolMessage marked as an error, carrying the record the budget counts; in a
    // conversation that holds even for a call without an id, whose bare text would pass for the result of a call that ran.
    if (toolCallId === undefined && (call === undefined || !Array.isArray(messages))) return decision.text;
    return new ToolMessage({
      content: decision.text,
      status: "error",
      name,
      tool_call_id: toolCallId ?? "",
      artifact: { [GUARD_ARTIFACT_KEY]: decision.record },
    });
  }

  return tool(guarded, { name, description: toolDescription(spec, options.description), schema: parametersSchema(spec) }) as DynamicStructuredTool<
    ParametersSchema,
    unknown,
    unknown,
    Output | ToolMessage | string
  >;
}

/**
 * LangChain checks a tool's arguments against its schema before the tool's
 * function runs and throws its own generic error (for a JSON Schema it uses
 * @cfworker/json-schema). So LangChain gets a zod schema that accepts any
 * value, and the spec itself decides; zod's JSON Schema output carries the
 * schema's metadata, which here is the spec's JSON Schema, so `bindTools`
 * shows the model exactly the spec's schema.
 */
function parametersSchema(spec: Spec): ParametersSchema {
  const schema = spec.schema;
  if (schema.type !== "object") {
    throw new SpecError(`Spec ${JSON.stringify(spec.name)} cannot guard a tool: tool arguments are a JSON object, so its schema needs "type": "object".`);
  }
  const expected: JsonSchema = { $schema: DRAFT_07, ...schema };
  const parameters = z.unknown().meta(expected);
  // zod gives some metadata keys a meaning of its own (e.g. "id"); never show the model a schema other than the spec's.
  if (!sameJson(toJsonSchema(parameters), expected)) {
    throw new SpecError(
      `Spec ${JSON.stringify(spec.name)} cannot guard a tool: its schema does not convert to tool parameters unchanged (a top-level "id" keyword? use "$id").`,
    );
  }
  return parameters;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object" || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
