/**
 * Benchmark: a LangChain v1 createAgent's structured answer, side by side, on
 * the same scripted conversation with a SIMULATED model: this package's
 * validatedResponseMiddleware middleware, `toolStrategy` with its own error handling,
 * and a plain `responseFormat` on a model that declares native structured
 * output (LangChain then uses providerStrategy). The requests are the
 * evaluation's hard deployment-config requests whose first answer carries 3-4
 * defects, a cross-field rule among them. For each: model calls and tokens to
 * the end of the run, how many of the answer's defects each retry's feedback
 * named, and whether an invalid answer was returned as the result.
 *
 *   npx tsx bench/agents.ts            # writes docs/agents-benchmark.md
 *   npx tsx bench/agents.ts --print    # prints it instead
 *
 * The simulated model is not a language model. It answers the way the
 * evaluation's simulated model does (eval/simulated-model.ts): its first
 * answer is the spec's example with the request's seeded defects; on a retry
 * it fixes exactly the defects its feedback names and keeps the others. A
 * defect is named when the feedback names its field: as the subject of a
 * sentence (`resources.cpu_limit is 0.5; …`, the rule of the evaluation), or,
 * so that LangChain's own validator counts too, as the chain of properties
 * its messages name (`Property "resources" does not match schema.`,
 * `Property "cpu_limit" …`, `… required property "path"`). It calls the
 * structured-answer tool when one is bound and writes the JSON as text
 * otherwise (as a model under a provider's response_format would; this one
 * does not enforce the schema, as many OpenAI-compatible servers do not).
 */
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { BaseChatModel, type BaseChatModelCallOptions } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { createAgent, toolStrategy } from "langchain";
import { buildAnswer, exhibits, planDefects, type Defect } from "../eval/simulated-model.js";
import { SUITE, type EvalRequest } from "../eval/suite.js";
import { validatedResponseMiddleware } from "../src/agents/index.js";
import { checkValue } from "../src/specs/check.js";
import { resolveSpec } from "../src/specs/registry.js";
import { fmt, table } from "./common.js";

const SEED = 1;
const SPEC = "deployment-config";
export const OUTPUT_FILE = "docs/agents-benchmark.md";

/** The evaluation's hard deployment-config requests whose first answer has 3 or more defects, a cross-field rule among them. */
export function scenario(): EvalRequest[] {
  return SUITE.filter((r) => {
    const planned = planDefects(r.spec, r.request, r.difficulty, SEED);
    return r.spec === SPEC && planned.length >= 3 && planned.some((d) => d.kind === "cross-field rule");
  });
}

/** The evaluation's deployment-config requests whose first answer's only defect is a cross-field rule (the schema passes). */
export function ruleOnlyScenario(): EvalRequest[] {
  return SUITE.filter((r) => {
    const planned = planDefects(r.spec, r.request, r.difficulty, SEED);
    return r.spec === SPEC && planned.length > 0 && planned.every((d) => d.kind === "cross-field rule");
  });
}

// ---------------------------------------------------------------------------
// The simulated model

interface SimulatedCallOptions extends BaseChatModelCallOptions {
  tools?: Array<{ type: string; function: { name: string } }>;
  /** What a native structured-output request (providerStrategy) sends. */
  response_format?: unknown;
}

/** What the model saw at each retry: the defects its previous answer had, and how many of them the feedback named. */
export interface RetryFeedback {
  present: number;
  named: number;
}

/** Names every key of `label`'s path, in order, as LangChain's JSON Schema validator names properties (one message per level). */
function namedByPropertyChain(feedback: string, label: string): boolean {
  const keys = [...feedback.matchAll(/(?:Property|required property) "([^"]+)"/g)].map((m) => m[1]);
  const path = label.split(".");
  for (let i = 0; i + path.length <= keys.length; i++) if (path.every((k, j) => keys[i + j] === k)) return true;
  return false;
}

const names = (feedback: string, d: Defect) => d.mentions.some((re) => re.test(feedback)) || namedByPropertyChain(feedback, d.label);

export class SimulatedAgentModel extends BaseChatModel<SimulatedCallOptions> {
  calls = 0;
  inputTokens = 0;
  outputTokens = 0;
  readonly retries: RetryFeedback[] = [];

  constructor(
    private readonly request: EvalRequest,
    /** Whether the model declares native structured output (LangChain then uses providerStrategy for a plain responseFormat). */
    private readonly native = false,
  ) {
    super({});
  }

  override get profile() {
    return { structuredOutput: this.native };
  }

  _llmType(): string {
    return "simulated-agent";
  }

  override bindTools(tools: Parameters<typeof convertToOpenAITool>[0][], kwargs?: Partial<SimulatedCallOptions>) {
    return this.withConfig({ ...kwargs, tools: tools.map((t) => convertToOpenAITool(t)) } as Partial<SimulatedCallOptions>);
  }

  async _generate(messages: BaseMessage[], options: this["ParsedCallOptions"]): Promise<ChatResult> {
    const planned = planDefects(this.request.spec, this.request.request, this.request.difficulty, SEED);
    const remaining = new Set(planned.map((d) => d.id));
    const lastAnswer = messages.findLastIndex((m) => m.getType() === "ai");
    if (lastAnswer >= 0) {
      const previous = answerIn(messages[lastAnswer] as AIMessage);
      const feedback = messages
        .slice(lastAnswer + 1)
        .map((m) => m.text)
        .join("\n");
      const present = planned.filter((d) => previous !== undefined && exhibits(d, previous));
      for (const d of planned) if (!present.includes(d) || names(feedback, d)) remaining.delete(d.id);
      this.retries.push({ present: present.length, named: present.filter((d) => names(feedback, d)).length });
    }
    const answer = buildAnswer(this.request.spec, planned, remaining);
    const tool = (options.tools ?? []).find((t) => t.function.name.startsWith("extract-"));
    const json = JSON.stringify(answer);
    const message = tool
      ? new AIMessage({ content: "", tool_calls: [{ name: tool.function.name, args: answer, id: `call_${this.calls}`, type: "tool_call" }] })
      : new AIMessage(json);
    // Tokens as the evaluation counts them (characters ÷ 4), over everything sent: messages, their tool calls, and the tools' schemas.
    let sent = JSON.stringify(options.tools ?? []).length + JSON.stringify(options.response_format ?? "").length;
    for (const m of messages) sent += m.text.length + JSON.stringify((m as AIMessage).tool_calls ?? []).length;
    const input = Math.ceil(sent / 4);
    const output = Math.ceil(json.length / 4);
    this.calls++;
    this.inputTokens += input;
    this.outputTokens += output;
    message.usage_metadata = { input_tokens: input, output_tokens: output, total_tokens: input + output };
    return { generations: [{ text: message.text, message }] };
  }
}

/** The answer a turn gave: a structured-answer call's arguments, or JSON text. */
function answerIn(message: AIMessage): unknown {
  const call = message.tool_calls?.find((c) => c.name.startsWith("extract-"));
  if (call) return call.args;
  try {
    return JSON.parse(message.text);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// The contenders

export type ContenderId = "validated-response" | "tool-strategy" | "response-format";

interface Contender {
  id: ContenderId;
  label: string;
  setup: string;
  /** Runs the agent; resolves with the result it returned (undefined when there was none), or rejects. */
  run: (model: SimulatedAgentModel, request: string) => Promise<unknown>;
  native: boolean;
}

const ask = (request: string) => ({ messages: [new HumanMessage(request)] });

export const CONTENDERS: Contender[] = [
  {
    id: "validated-response",
    label: "validatedResponseMiddleware (this package)",
    setup: '`middleware: [validatedResponseMiddleware({ spec: "deployment-config" })]` (3 attempts)',
    native: false,
    run: async (model, request) => {
      const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: SPEC })] }).invoke(ask(request));
      return out.responseOutcome?.success ? out.responseOutcome.value : undefined;
    },
  },
  {
    id: "tool-strategy",
    label: "toolStrategy, its own error handling",
    setup: "`responseFormat: toolStrategy(jsonSchema, { handleError: true })`",
    native: false,
    run: async (model, request) => {
      const agent = createAgent({ model, tools: [], responseFormat: toolStrategy(resolveSpec(SPEC).schema as never, { handleError: true }) });
      return ((await agent.invoke(ask(request))) as { structuredResponse?: unknown }).structuredResponse;
    },
  },
  {
    id: "response-format",
    label: "plain responseFormat, native structured output",
    setup: "`responseFormat: jsonSchema` on a model whose profile declares structured output (providerStrategy)",
    native: true,
    run: async (model, request) => {
      const agent = createAgent({ model, tools: [], responseFormat: resolveSpec(SPEC).schema as never });
      return ((await agent.invoke(ask(request))) as { structuredResponse?: unknown }).structuredResponse;
    },
  },
];

export interface RunRecord {
  contender: ContenderId;
  request: string;
  defects: number;
  calls: number;
  tokens: number;
  retries: RetryFeedback[];
  /** valid: the result passes the spec; invalid: a result was returned that fails it; none: the run ended without a result; threw: the run failed with an error. */
  result: "valid" | "invalid" | "none" | "threw";
  error?: string;
}

export async function runSideBySide(requests: EvalRequest[] = scenario()): Promise<RunRecord[]> {
  const spec = resolveSpec(SPEC);
  const records: RunRecord[] = [];
  for (const item of requests) {
    for (const contender of CONTENDERS) {
      const model = new SimulatedAgentModel(item, contender.native);
      let result: RunRecord["result"];
      let error: string | undefined;
      try {
        const value = await contender.run(model, item.request);
        result = value === undefined ? "none" : (await checkValue(spec, value)).valid ? "valid" : "invalid";
      } catch (e) {
        result = "threw";
        error = `${(e as Error).constructor.name}: ${(e as Error).message.split("\n")[0]}`;
      }
      const defects = planDefects(item.spec, item.request, item.difficulty, SEED).length;
      records.push({
        contender: contender.id,
        request: item.id,
        defects,
        calls: model.calls,
        tokens: model.inputTokens + model.outputTokens,
        retries: model.retries,
        result,
        error,
      });
    }
  }
  return records;
}

// ---------------------------------------------------------------------------
// The report

const retriesText = (r: RunRecord) => (r.retries.length === 0 ? "no retry" : r.retries.map((f) => `${f.named} of ${f.present}`).join(", "));

function summaryRows(records: RunRecord[]) {
  return CONTENDERS.map((c) => {
    const runs = records.filter((r) => r.contender === c.id);
    const count = (result: RunRecord["result"]) => runs.filter((r) => r.result === result).length;
    const retries = runs.flatMap((r) => r.retries);
    const named = retries.reduce((n, f) => n + f.named, 0);
    const present = retries.reduce((n, f) => n + f.present, 0);
    return [
      c.label,
      `${count("valid")} of ${runs.length}`,
      count("invalid"),
      count("none") + count("threw"),
      fmt(runs.reduce((n, r) => n + r.calls, 0) / runs.length),
      fmt(runs.reduce((n, r) => n + r.tokens, 0) / runs.length),
      present === 0 ? "no retry" : `${named} of ${present} (${fmt((100 * named) / present)} %)`,
    ];
  });
}

const SUMMARY_HEADER = [
  "",
  "valid result",
  "invalid result returned",
  "no result (ended or threw)",
  "model calls per run",
  "tokens per run",
  "defects named by the retries' feedback",
];

function detailTable(records: RunRecord[]): string {
  const label = (id: ContenderId) => CONTENDERS.find((c) => c.id === id)!.label;
  const rows = records.map((r) => [
    r.request,
    label(r.contender),
    r.defects,
    r.calls,
    r.tokens,
    retriesText(r),
    r.result === "threw" ? `threw (${r.error})` : r.result,
  ]);
  return table(["request", "setup", "defects in the first answer", "model calls", "tokens", "defects named per retry", "result"], rows);
}

export interface SideBySide {
  multi: { requests: EvalRequest[]; records: RunRecord[] };
  ruleOnly: { requests: EvalRequest[]; records: RunRecord[] };
}

export async function runBenchmark(): Promise<SideBySide> {
  const multi = scenario();
  const ruleOnly = ruleOnlyScenario();
  return { multi: { requests: multi, records: await runSideBySide(multi) }, ruleOnly: { requests: ruleOnly, records: await runSideBySide(ruleOnly) } };
}

export function renderMarkdown({ multi, ruleOnly }: SideBySide, date = new Date()): string {
  const ids = (requests: EvalRequest[]) => requests.map((r) => r.id).join(", ");
  return [
    "## createAgent structured answers, side by side (simulated model)",
    "",
    `Generated by \`npx tsx bench/agents.ts\` on ${date.toISOString().slice(0, 10)}. **Every figure comes from a simulated model, not a language model**: it answers with the spec's example carrying the request's seeded defects and, on a retry, fixes exactly the defects its feedback names (by the field path, as the subject of a sentence or as the chain of properties LangChain's validator names), keeping the others (bench/agents.ts says how). It does not enforce the schema the provider is given, as many OpenAI-compatible servers do not; under a provider's strict mode the schema defects would not occur, the cross-field ones still would. Tokens are characters ÷ 4 of everything sent (messages, tool calls, tool and response schemas) and of the answer.`,
    "",
    "Setups (\`langchain\` 1.5.14, \`@langchain/core\` 1.4.0, \`@langchain/langgraph\` 1.7.3; one user turn, no other tools):",
    "",
    ...CONTENDERS.map((c) => `- **${c.label}**: ${c.setup}.`),
    "",
    `### Multi-defect answers: the ${multi.requests.length} hard deployment-config requests of the evaluation (${ids(multi.requests)})`,
    "",
    "Each first answer has 3-4 defects, a cross-field rule (replicas need CPU, timeout below the interval) among them.",
    "",
    table(SUMMARY_HEADER, summaryRows(multi.records)),
    "",
    'Per run ("defects named per retry": for each retry, how many of the previous answer\'s defects its feedback named, of how many it had):',
    "",
    detailTable(multi.records),
    "",
    `### An answer whose only defect is a cross-field rule (${ids(ruleOnly.requests)})`,
    "",
    table(SUMMARY_HEADER, summaryRows(ruleOnly.records)),
    "",
    detailTable(ruleOnly.records),
    "",
    "What these runs show, under the simulation's rule: validatedResponseMiddleware names every defect of an answer at once, the schema's and the cross-field rules', so one retry fixed them all, and it returned a value only when the spec passed. LangChain's `toolStrategy` retried with its validator's message, which stops at the first failing property (one defect named per retry) and does not know the cross-field rules: once the schema passed it returned the answer as `structuredResponse` with its rule defects. A plain `responseFormat` on a model with native structured output did not retry: an answer that failed the schema ended the run with `StructuredOutputParsingError`, and one that passed it was returned with its rule defects.",
    "",
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const markdown = renderMarkdown(await runBenchmark());
  if (process.argv.includes("--print")) console.log(markdown);
  else {
    writeFileSync(OUTPUT_FILE, markdown);
    console.log(`wrote ${OUTPUT_FILE}`);
  }
}
