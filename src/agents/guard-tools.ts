/**
 * guardToolsMiddleware: a createAgent middleware that holds existing tools to specs
 * without rewriting them. Each guarded call's arguments are judged by the check
 * step (../tools/arguments.ts: text exactly, an object as JSON data); a call
 * that fails is not run and its result is the exact errors, as guardedTool
 * gives them (../tools/prompts.ts), carrying guardedTool's record, so the
 * same attempt budget (../tools/budget.ts) counts it: failed calls in a row
 * since the user last wrote, located by position, whatever the tool-call ids.
 * A call that passes runs with the spec's output as its arguments.
 */
import { ToolMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import { readSpecLimits } from "../environment.js";
import { ConfigurationError } from "../errors.js";
import { resolveSpec, type SpecRef } from "../specs/registry.js";
import type { Spec } from "../specs/spec.js";
import type { ArgumentLimits } from "../tools/arguments.js";
import { BudgetMemo, GUARD_ARTIFACT_KEY } from "../tools/budget.js";
import { decideToolCall } from "../tools/decide.js";
import { DEFAULT_TOOL_ATTEMPTS } from "../tools/guarded-tool.js";
import { attemptsOption } from "../settings.js";
import { ruleContextFor, type RuleContextOption } from "./options.js";

/** Options of guardToolsMiddleware: the tools to guard with their specs, and the attempt budget. */
export interface GuardToolsOptions {
  /** The tools to guard, by name, each with the spec its arguments must pass (a built-in name, an inline JSON spec, a Spec, or a schema in code: zod, Valibot, ArkType, Effect …). Other tools run as they are. */
  tools: Record<string, SpecRef>;
  /** Calls a guarded tool may get whose arguments fail, in a row, in one turn, before it refuses (1-10, default 3), as guardedTool. */
  maxAttempts?: number;
  /** Size, depth and message limits; the defaults are the validation graph's. */
  limits?: Partial<ArgumentLimits>;
  /** Facts the specs' code rules read: a value, or computed from the run, e.g. `(run) => run.context`, as guardedTool's. */
  ruleContext?: RuleContextOption;
}

/** The middleware's name in the agent. */
const GUARD_TOOLS = "guardToolsMiddleware";

interface Guard {
  spec: Spec;
  /** One per tool, as guardedTool keeps one (see BudgetMemo). */
  memo: BudgetMemo;
}

/**
 * Middleware that holds a createAgent's existing tools to specs, by tool name.
 *
 * @example
 * ```ts
 * import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
 * import { createAgent, tool } from "langchain";
 * import { z } from "zod";
 * import { guardToolsMiddleware } from "langgraph-trustworthy-output/agents";
 *
 * declare const model: BaseChatModel; // any LangChain chat model
 * const deployService = tool(async (config) => `deployed ${config.service_name}`, {
 *   name: "deploy_service",
 *   description: "Deploy a service.",
 *   schema: z.object({ service_name: z.string() }).passthrough(),
 * });
 * const agent = createAgent({
 *   model,
 *   tools: [deployService],
 *   middleware: [guardToolsMiddleware({ tools: { deploy_service: "deployment-config" } })],
 * });
 * ```
 */
export function guardToolsMiddleware(options: GuardToolsOptions) {
  const maxAttempts = attemptsOption(options.maxAttempts, DEFAULT_TOOL_ATTEMPTS);
  const { limits, ruleContext } = options;
  if (options.tools === null || typeof options.tools !== "object" || Object.keys(options.tools).length === 0) {
    throw new ConfigurationError(
      'guardToolsMiddleware needs the tools to guard: { tools: { <tool name>: <spec> } }, e.g. { tools: { deploy_service: "deployment-config" } }.',
    );
  }
  const guards = new Map<string, Guard>();
  for (const [name, ref] of Object.entries(options.tools)) {
    // The operator's limits on run-time specs (RUNTIME_SPEC_LIMITS) hold for an inline spec given here too.
    const spec = resolveSpec(ref, { specLimits: readSpecLimits() });
    guards.set(name, { spec, memo: new BudgetMemo() });
  }

  return createMiddleware({
    name: GUARD_TOOLS,
    wrapToolCall: async (request, handler) => {
      const call = request.toolCall;
      const guard = guards.get(call.name);
      if (guard === undefined) return handler(request);
      const { spec, memo } = guard;
      const context = ruleContextFor(ruleContext, request.runtime.context);
      const decision = await decideToolCall({
        spec,
        tool: call.name,
        args: call.args,
        call,
        messages: request.state.messages,
        maxAttempts,
        memo,
        limits,
        context,
      });
      if (!decision.run) {
        return new ToolMessage({
          content: decision.text,
          status: "error",
          name: call.name,
          tool_call_id: call.id ?? "",
          artifact: { [GUARD_ARTIFACT_KEY]: decision.record },
        });
      }
      return handler({ ...request, toolCall: { ...call, args: decision.args as Record<string, unknown> } });
    },
  });
}
