/**
 * Benchmark: model calls and tokens per valid output, on the evaluation's
 * multi-defect requests (eval/suite.ts: the requests whose first answer the
 * simulated model seeds with 2 or more defects), through each client's own
 * retry mechanism, against the SIMULATED model (eval/simulated-model.ts)
 * served over HTTP by the scripted OpenAI-compatible server, so every client
 * reaches it through its real HTTP client.
 *
 * The simulated model is not a language model: on a retry it fixes exactly the
 * defects its feedback names (a field path as the subject of a sentence), so
 * these figures show how each client's feedback behaves under that rule.
 */
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { SimulatedChatModel } from "../eval/simulated-model.js";
import { firstErrorSpec } from "../eval/strategies.js";
import { SUITE, type EvalRequest } from "../eval/suite.js";
import { planDefects } from "../eval/simulated-model.js";
import { resolveSpec } from "../src/specs/registry.js";
import { checkValueSync } from "../src/specs/check.js";
import { startScriptedOpenAIServer, type RecordedRequest } from "../testkit/openai-server.js";
import { compare, fmt, outcomeBlocks, table, type BenchOptions, type BenchResult, type Target } from "./common.js";
import { makePeer, type PeerName } from "./peer-clients.js";
import { PROMPT_HEADINGS } from "../src/protocol/feedback.js";

const SEED = 1;
const MAX_ATTEMPTS = 5;

interface Contender {
  id: string;
  label: string;
  peer: PeerName;
  firstError?: boolean;
  feedback: string;
}

const CONTENDERS: Contender[] = [
  {
    id: "package-all",
    label: "this package, all errors",
    peer: "package-graph",
    feedback: "every schema error and rule violation, exact messages, in the package's retry prompt (request, previous answer, errors)",
  },
  {
    id: "package-first",
    label: "this package, first error only",
    peer: "package-graph",
    firstError: true,
    feedback: "the first schema error only, rules only once the schema passes (the article's `validate_config`), same prompt",
  },
  {
    id: "ai-sdk",
    label: "AI SDK `generateObject` in a loop",
    peer: "ai-sdk",
    feedback:
      "the AI SDK's own error text (`NoObjectGeneratedError` message and its `TypeValidationError` cause, which carries the validator's messages) as a new user turn after the answer",
  },
  {
    id: "wso",
    label: "`withStructuredOutput` in a loop",
    peer: "with-structured-output",
    feedback: "the validator's messages as a new user turn after the answer (LangChain has no retry loop of its own; with a JSON Schema it only parses)",
  },
];

/** The simulated model reads the package's prompt layout; a conversation (answer, then feedback as a new turn) is laid out the same way for it. */
function simulatedPrompt(req: RecordedRequest): BaseMessage[] {
  const system = req.messages
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join("\n");
  const turns = req.messages.filter((m) => m.role !== "system");
  const first = turns[0]?.content ?? "";
  const lastAssistant = [...turns].reverse().find((m) => m.role === "assistant");
  const last = turns.at(-1)?.content ?? "";
  const prompt =
    lastAssistant && !last.includes(PROMPT_HEADINGS.previousAnswer)
      ? `${first}\n\n${PROMPT_HEADINGS.previousAnswer}\n${lastAssistant.content}\n\n${last}`
      : last;
  return [new SystemMessage(system), new HumanMessage(prompt)];
}

export interface CallsTokensRow {
  id: string;
  requests: number;
  valid: number;
  calls: number;
  promptTokens: number;
  completionTokens: number;
}

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const multi = SUITE.filter((r) => planDefects(r.spec, r.request, r.difficulty, SEED).length >= 2);
  const items: EvalRequest[] = opts.quick ? multi.slice(0, 3) : multi;
  const model = new SimulatedChatModel({ seed: SEED, suite: SUITE }, "generator");
  const counters = { calls: 0, prompt: 0, completion: 0 };
  const server = await startScriptedOpenAIServer({
    responder: async (req) => {
      const answer = await model.invoke(simulatedPrompt(req));
      const content = String(answer.content);
      // Tokens as the simulation counts them (characters ÷ 4), over everything the client sent the model: messages and any schema in response_format or tools.
      const extra = JSON.stringify(req.body?.response_format ?? req.body?.tools ?? "").length;
      const promptTokens = Math.ceil((req.messages.reduce((n, m) => n + m.content.length, 0) + extra) / 4);
      const completionTokens = Math.ceil(content.length / 4);
      counters.calls++;
      counters.prompt += promptTokens;
      counters.completion += completionTokens;
      return { content, usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens } };
    },
  });
  const rows: CallsTokensRow[] = [];
  try {
    for (const c of CONTENDERS) {
      const row: CallsTokensRow = { id: c.id, requests: items.length, valid: 0, calls: 0, promptTokens: 0, completionTokens: 0 };
      for (const item of items) {
        const spec = c.firstError ? firstErrorSpec(item.spec) : resolveSpec(item.spec);
        const client = makePeer(c.peer, server.baseURL, { spec, maxAttempts: MAX_ATTEMPTS, request: () => item.request });
        const before = { ...counters };
        const out = await client(0);
        server.requests.splice(0, server.requests.length);
        row.calls += counters.calls - before.calls;
        row.promptTokens += counters.prompt - before.prompt;
        row.completionTokens += counters.completion - before.completion;
        if (out.success) row.valid++;
      }
      rows.push(row);
    }
  } finally {
    await server.close();
  }
  return report(rows, items);
}

function report(rows: CallsTokensRow[], items: EvalRequest[]): BenchResult {
  const by = (id: string) => rows.find((r) => r.id === id) as CallsTokensRow;
  const perValid = (r: CallsTokensRow, x: number) => x / Math.max(1, r.valid);
  const tokens = (r: CallsTokensRow) => r.promptTokens + r.completionTokens;
  const all = by("package-all");
  const comparisons = [
    compare(
      "model calls per valid output: package (all errors) vs first error only",
      perValid(all, all.calls),
      perValid(by("package-first"), by("package-first").calls),
      "calls",
      "first error only",
    ),
    compare(
      "tokens per valid output: package (all errors) vs AI SDK loop",
      perValid(all, tokens(all)),
      perValid(by("ai-sdk"), tokens(by("ai-sdk"))),
      "tokens",
      "AI SDK generateObject loop",
    ),
    compare(
      "tokens per valid output: package (all errors) vs withStructuredOutput loop",
      perValid(all, tokens(all)),
      perValid(by("wso"), tokens(by("wso"))),
      "tokens",
      "withStructuredOutput loop",
    ),
  ];
  const targets: Target[] = [
    {
      description: "the package (all errors) needs the fewest model calls per valid output of the clients compared (simulated model)",
      met: rows.every((r) => perValid(all, all.calls) <= perValid(r, r.calls) + 1e-9),
      detail: rows.map((r) => `${r.id} ${fmt(perValid(r, r.calls))}`).join(", "),
    },
    {
      description: "the package (all errors) needs the fewest tokens per valid output of the clients compared (simulated model)",
      met: rows.every((r) => perValid(all, tokens(all)) <= perValid(r, tokens(r)) + 1e-9),
      detail: rows.map((r) => `${r.id} ${fmt(perValid(r, tokens(r)))}`).join(", "),
    },
  ];
  const checks = [
    { description: "every client was run on every request", ok: rows.every((r) => r.requests === items.length), detail: `${items.length} requests` },
    {
      description: "every client made at least one model call per request",
      ok: rows.every((r) => r.calls >= r.requests),
      detail: rows.map((r) => `${r.id} ${r.calls}`).join(", "),
    },
  ];
  const markdown = [
    "## 8. Model calls and tokens per valid output (simulated model)",
    "",
    `**These figures come from the simulated model (eval/simulated-model.ts, seed ${SEED}), not from a language model.** It follows fixed rules: its first answer to a request is the spec's example with seeded defects, ` +
      "and on a retry it fixes exactly the defects that its feedback names (a field path as the subject of a sentence, e.g. `resources.cpu_limit is 0.5; …`) and keeps the others. " +
      "So the figures show how each client's feedback behaves under that rule; a real model fixes some defects it is not told about and misses some it is told about.",
    "",
    `Requests: the ${items.length} requests of the evaluation suite (eval/suite.ts) whose first answer carries 2 or more defects, across the four built-in specs. ` +
      `Each client runs each request once with a budget of ${MAX_ATTEMPTS} attempts, through its real HTTP client against the scripted OpenAI-compatible server, whose replies come from the simulated model ` +
      "(a conversation, answer then feedback as a new turn, is laid out for it as the package lays out a retry). Tokens are counted as the simulation counts them (characters ÷ 4) over everything the client sent: " +
      "messages, and the JSON Schema the AI SDK and `withStructuredOutput` send as `response_format`. instructor-js is not measured: it does not install beside zod 4 and openai 6 (section 7).",
    "",
    table(
      [
        "client",
        "what it feeds back",
        "valid outputs",
        "model calls",
        "calls per valid output",
        "prompt tokens per valid output",
        "completion tokens per valid output",
        "tokens per valid output",
      ],
      CONTENDERS.map((c) => {
        const r = by(c.id);
        return [
          c.label,
          c.feedback,
          `${r.valid}/${r.requests}`,
          r.calls,
          fmt(perValid(r, r.calls)),
          fmt(perValid(r, r.promptTokens)),
          fmt(perValid(r, r.completionTokens)),
          fmt(perValid(r, tokens(r))),
        ];
      }),
    ),
    "",
    outcomeBlocks(comparisons, targets, checks),
  ].join("\n");
  const measurements = rows.flatMap((r) => [
    { label: `${r.id} calls per valid output`, value: perValid(r, r.calls), unit: "calls" },
    { label: `${r.id} tokens per valid output`, value: perValid(r, tokens(r)), unit: "tokens" },
  ]);
  return { id: "calls", title: "Calls and tokens (simulated model)", rows: measurements, comparisons, targets, checks, markdown };
}
