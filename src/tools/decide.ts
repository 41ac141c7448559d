/**
 * The one decision about a guarded tool call, for both tool paths (guardedTool and the createAgent
 * middleware guardToolsMiddleware): is the tool's budget of failed calls spent (the call is refused), and do its
 * arguments pass the spec (the check step judges them; a valid call runs with the spec's output)? A call that
 * does not run gets the text the model reads and the record the budget counts.
 */
import type { Spec } from "../specs/spec.js";
import { checkToolArguments, toolArgumentsPass, type ArgumentLimits } from "./arguments.js";
import { decideBudget, judgeAlongside, type BudgetMemo, type GuardRecord, type ToolCallRef } from "./budget.js";
import { invalidCallText, refusalText, type CallFacts } from "./prompts.js";

interface ToolCallQuery {
  spec: Spec;
  tool: string;
  /** The arguments as the tool received them. */
  args: unknown;
  /** The call as its AI message holds it, when known (located by position, never by id alone). */
  call: ToolCallRef | undefined;
  /** The conversation so far (undefined outside one: a direct invoke). */
  messages: unknown;
  maxAttempts: number;
  memo: BudgetMemo;
  limits?: Partial<ArgumentLimits>;
  context?: unknown;
}

type ToolCallDecision = { run: true; args: unknown } | { run: false; text: string; record: GuardRecord };

export async function decideToolCall(q: ToolCallQuery): Promise<ToolCallDecision> {
  const { spec, tool, maxAttempts, limits, context } = q;
  // The calls made alongside this one are counted as the check step judges them (asynchronous rules included).
  await judgeAlongside(q.messages, tool, q.memo, async (args) => (await checkToolArguments(spec, args, limits, context)).valid);
  const passes = (args: unknown) => toolArgumentsPass(spec, args, limits, context);
  const budget = decideBudget(q.messages, { tool, call: q.call, maxAttempts, passes, memo: q.memo });
  const facts: CallFacts = { tool, spec: spec.name, maxAttempts, attempt: budget.failures + 1 };
  const located = budget.callIndex !== undefined ? { callIndex: budget.callIndex } : {};
  if (facts.attempt > maxAttempts) {
    return {
      run: false,
      text: refusalText(facts),
      record: { outcome: "refused", spec: spec.name, attempt: facts.attempt, maxAttempts, errors: [], ...located },
    };
  }
  const checked = await checkToolArguments(spec, q.args, limits, context);
  if (!checked.valid) {
    return {
      run: false,
      text: invalidCallText(facts, checked.errors),
      record: { outcome: "invalid", spec: spec.name, attempt: facts.attempt, maxAttempts, errors: checked.errors, ...located },
    };
  }
  return { run: true, args: checked.value };
}
