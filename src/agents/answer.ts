/**
 * The agent's structured answer: the tool the model gives it with, how a model
 * turn is read (still working, an answer as a tool call, or an answer as
 * text), and the check step's verdict on it. The verdict is made by
 * ../specs/check.ts, like every other verdict in the package: arguments as
 * data (or, as text, exactly one JSON value), a text answer with the model's
 * reader. No LangChain import beyond message types.
 */
import type { AIMessage, ToolCall } from "@langchain/core/messages";
import { bound } from "../shared/text.js";
import { checkGiven, checkText, givenAsText, type CheckLimits, type Verdict } from "../specs/check.js";
import type { Spec } from "../specs/spec.js";
import { MAX_RECORDED_OUTPUT_CHARS } from "../protocol/feedback.js";
import { answerToolDescription } from "./prompts.js";

/** What an answer is called in the readers' messages. */
const WHAT = "the answer";

/**
 * The answer tool's name. LangChain's agent routes calls whose name starts
 * with "extract-" as structured answers, never to its tool node.
 */
export function answerToolName(spec: Spec): string {
  return `extract-${spec.name.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64);
}

/** The answer tool as a provider-format function definition: the spec's JSON Schema is its parameters. */
export function answerTool(spec: Spec, name: string) {
  return { type: "function" as const, function: { name, description: answerToolDescription(spec, name), parameters: spec.schema } };
}

/** One model turn, as the structured answer sees it. */
type Turn =
  /** The model called other tools: it is still working. Answer calls made alongside them are set aside. */
  | { kind: "work"; setAside: ToolCall[] }
  /**
   * The model called the answer tool (once, or more than once in one message),
   * or only tools the agent does not have: an answer attempt either way, each
   * call answered with the verdict. `unreadable` counts the message's further
   * answer calls whose arguments the provider could not parse (LangChain files
   * them apart, under invalid_tool_calls): they are answers too.
   */
  | { kind: "tool"; calls: ToolCall[]; unknown?: string[]; unreadable?: number }
  /**
   * An answer with no well-formed call: text (read as a model's answer), or the
   * raw arguments of an answer call whose arguments the provider could not parse
   * (read as exactly one JSON value).
   */
  | { kind: "text"; text: string; reader: "model" | "exact" };

/** Reads a turn; `tools` are the names of the agent's other tools (a call to a name outside them cannot run). */
export function readTurn(message: AIMessage, tool: string, tools: ReadonlySet<string>): Turn {
  const calls = message.tool_calls ?? [];
  const answers = calls.filter((c) => c.name === tool);
  if (calls.some((c) => tools.has(c.name))) return { kind: "work", setAside: answers };
  const unknown = calls.filter((c) => c.name !== tool).map((c) => c.name);
  const broken = (message.invalid_tool_calls ?? []).filter((c) => c.name === tool);
  if (calls.length > 0) return { kind: "tool", calls, ...(unknown.length > 0 ? { unknown } : {}), ...(broken.length > 0 ? { unreadable: broken.length } : {}) };
  if (broken.length === 1) return { kind: "text", text: typeof broken[0].args === "string" ? broken[0].args : "", reader: "exact" };
  if (broken.length > 1) return { kind: "tool", calls: [], unreadable: broken.length };
  return { kind: "text", text: message.text, reader: "model" };
}

/** The verdict on an answer, and the answer as given (bounded), for the outcome and the review. */
interface JudgedAnswer<T> {
  verdict: Verdict<T>;
  shown: string;
}

/** How an answer is judged: the check step's limits, and the context the spec's code rules read. */
export interface JudgeOptions {
  limits?: Partial<CheckLimits>;
  context?: unknown;
}

export async function judgeAnswer<T>(spec: Spec<T>, turn: Exclude<Turn, { kind: "work" }>, { limits, context }: JudgeOptions = {}): Promise<JudgedAnswer<T>> {
  const options = { limits, context, what: WHAT };
  if (turn.kind === "text") {
    const verdict = await checkText(spec, turn.text, turn.reader, options);
    return { verdict, shown: bound(turn.text, MAX_RECORDED_OUTPUT_CHARS) };
  }
  if (turn.unknown !== undefined) {
    const names = [...new Set(turn.unknown)].map((n) => JSON.stringify(n)).join(", ");
    const error = `the agent has no tool named ${names}; give your final answer by calling ${answerToolName(spec)}`;
    return { verdict: { valid: false, errors: [bound(error, 500)], problemCount: 1 }, shown: "" };
  }
  const given = turn.calls.length + (turn.unreadable ?? 0);
  if (given > 1) {
    const unreadable = turn.unreadable ? ` (${turn.unreadable} of them with arguments that are not JSON)` : "";
    const error = `the answer was given ${given} times in one message${unreadable}; call ${answerToolName(spec)} once, with one answer`;
    return { verdict: { valid: false, errors: [error], problemCount: 1 }, shown: "" };
  }
  const args: unknown = turn.calls[0].args;
  const verdict = await checkGiven(spec, args, options);
  return { verdict, shown: bound(givenAsText(args, verdict), MAX_RECORDED_OUTPUT_CHARS) };
}

/** A person's answer at the review, judged as the validation graph's review step judges it: text exactly, an object as data. */
export async function judgePersonAnswer<T>(spec: Spec<T>, value: unknown, { limits, context }: JudgeOptions = {}): Promise<JudgedAnswer<T>> {
  const options = { limits, context, what: WHAT };
  const verdict = await checkGiven(spec, value, options);
  return { verdict, shown: bound(givenAsText(value, verdict), MAX_RECORDED_OUTPUT_CHARS) };
}
