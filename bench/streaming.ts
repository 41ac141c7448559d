/**
 * Validated streaming, measured on a simulated streaming model (not an LLM):
 *
 *  1. What each stop policy saves. A model streams a catalog answer (about 1,000
 *     tokens) at a realistic pace (a first token after ~300 ms, then ~15 ms a
 *     token, seeded jitter), with a defect at a controlled place: early,
 *     middle, late, broken JSON, a root of the wrong type, or an error in every
 *     item; and one answer without defects. Its retry fixes exactly the
 *     defects its feedback names (the rule of the package's simulated model),
 *     so an answer stopped before a defect was reached, or a retry that lists
 *     only some errors, costs more attempts. Each run goes through the real
 *     graph: "no streaming checks" is generateValidated (whole-answer calls, as
 *     long as streaming every token), the policies are streamValidated. Per
 *     valid output: tokens generated (counted by the model, which stops when
 *     its request is aborted), wall time, model calls. All runs go at once
 *     (they mostly wait on the simulated tokens), each timed on its own.
 *  2. CPU per streamed token, two figures, each a median of per-cycle ratios
 *     with variants interleaved in one process in random order
 *     (process.cpuUsage()):
 *     - the partial checks alone: reading the simulated stream with the checks
 *       (and their events) against reading it plainly;
 *     - streamValidated end to end over HTTP: a real ChatOpenAI against the
 *       scripted OpenAI-compatible server (testkit/openai-server.ts, in its
 *       own process so its CPU is not counted) streaming the valid catalog
 *       answer a token a piece, through the real graph, against plain
 *       ChatOpenAI `.stream()` of the same answer to the same prompt; the same
 *       run unstreamed (generateValidated) beside it, for the graph's own cost
 *       per run; and a longer answer (60 items, the most the spec allows), to
 *       show how that share falls.
 *
 *   npx tsx bench/streaming.ts                 # full sizes, writes docs/streaming-benchmark.md
 *   npx tsx bench/streaming.ts --quick         # tiny sizes, prints only
 *   npm run bench -- --only streaming --update # the same run, into BENCHMARKS.md's section and docs/streaming-benchmark.md
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { firstAttemptPrompt } from "../src/protocol/feedback.js";
import { checkTextSync } from "../src/specs/check.js";
import { defineSpec } from "../src/specs/spec.js";
import { AttemptWatch } from "../src/streaming/attempt.js";
import type { StopPolicy } from "../src/streaming/partial-check.js";
import { generateValidated, type ValidationOutcome } from "../src/validation/generate.js";
import { generationSystemPrompt } from "../src/validation/prompts.js";
import { streamValidated } from "../src/validation/stream.js";
import { TokenStreamingModel } from "../tests/streaming/token-model.js";
import { seededRandom } from "../testkit/random.js";
import {
  compareRepeated,
  cpuUs,
  fmt,
  fmtLoad,
  fmtRatio,
  machineInfo,
  median,
  shuffled,
  table,
  type BenchOptions,
  type BenchResult,
  type Comparison,
  runIfMain,
} from "./common.js";
import { lineStartingWith, spawnTs } from "./concurrency.js";

// ---------------------------------------------------------------------------
// The workload: a catalog, its defects, and a model that fixes what it is told

const catalogSpec = defineSpec({
  name: "catalog",
  description: "A store's catalog: its items with SKU, name, price, stock and tags.",
  schema: {
    type: "object",
    required: ["store", "currency", "items"],
    additionalProperties: false,
    properties: {
      store: { type: "string", pattern: "^[a-z][a-z0-9-]*$" },
      currency: { enum: ["EUR", "USD", "GBP"] },
      items: {
        type: "array",
        minItems: 1,
        maxItems: 60,
        items: {
          type: "object",
          required: ["sku", "name", "price", "stock", "tags"],
          additionalProperties: false,
          properties: {
            sku: { type: "string", pattern: "^[A-Z]{3}-[0-9]{4}$" },
            name: { type: "string", minLength: 3, maxLength: 60 },
            price: { type: "number", exclusiveMinimum: 0, maximum: 10_000 },
            stock: { type: "integer", minimum: 0 },
            tags: { type: "array", items: { enum: ["new", "sale", "eco", "bulk", "gift"] }, uniqueItems: true },
          },
        },
      },
    },
  },
});

const TAGS = ["new", "sale", "eco", "bulk", "gift"];
const NAMES = ["Oak desk", "Steel lamp", "Linen shirt", "Wool scarf", "Glass vase", "Cotton towel", "Maple shelf", "Clay mug"];

function catalog(items: number): { store: string; currency: string; items: Array<Record<string, unknown>> } {
  return {
    store: "north-market",
    currency: "EUR",
    items: Array.from({ length: items }, (_, i) => ({
      sku: `NMK-${String(1000 + i * 7).padStart(4, "0")}`,
      name: `${NAMES[i % NAMES.length]} ${i + 1}`,
      price: Math.round((9.5 + i * 3.25) * 100) / 100,
      stock: (i * 13) % 90,
      tags: [TAGS[i % TAGS.length], TAGS[(i + 2) % TAGS.length]],
    })),
  };
}

/** A defect: how it changes the answer, and whether a feedback text names it. */
interface Defect {
  apply(value: any): any;
  /** The text of the answer after JSON.stringify, for defects that are not a value (broken JSON). */
  text?(json: string): string;
  named(feedback: string): boolean;
}

/** A value defect, named when the feedback holds the check step's own message for it. */
function valueDefect(items: number, apply: (value: any) => void): Defect {
  const broken = catalog(items);
  apply(broken);
  const messages = checkTextSync(catalogSpec, JSON.stringify(broken), "model").errors;
  return {
    apply: (value) => {
      apply(value);
      return value;
    },
    named: (feedback) => messages.some((m) => feedback.includes(m)),
  };
}

interface Scenario {
  name: string;
  /** Where the defect sits, as a share of the answer. */
  where: string;
  defects: (items: number) => Defect[];
}

const SCENARIOS: Scenario[] = [
  { name: "valid", where: "—", defects: () => [] },
  { name: "early error", where: "~5 %", defects: (n) => [valueDefect(n, (v) => (v.items[1].price = -5))] },
  { name: "middle error", where: "~50 %", defects: (n) => [valueDefect(n, (v) => (v.items[Math.floor(n / 2)].sku = "bad sku"))] },
  { name: "late error", where: "~95 %", defects: (n) => [valueDefect(n, (v) => (v.items[n - 1].stock = -1))] },
  {
    name: "broken JSON",
    where: "~40 %",
    defects: (n) => [
      {
        apply: (v) => v,
        text: (json) => {
          const at = json.indexOf(",\n", Math.floor(json.length * 0.4));
          return `${json.slice(0, at)}${json.slice(at + 1)}`; // a comma between two fields is gone
        },
        named: (feedback) => feedback.includes("not valid JSON"),
      },
    ],
  },
  {
    name: "wrong root",
    where: "0 %",
    defects: () => [{ apply: (v) => [v], named: (feedback) => feedback.includes("must be an object") }],
  },
  {
    name: "error in every item",
    where: "from ~3 %",
    defects: (n) => Array.from({ length: n }, (_, i) => valueDefect(n, (v) => (v.items[i].price = -(i + 1)))),
  },
];

/** The text of a catalog with these defects, pretty-printed as models tend to write it. */
function render(items: number, defects: readonly Defect[]): string {
  let value: unknown = catalog(items);
  for (const d of defects) value = d.apply(value);
  let json = JSON.stringify(value, null, 2);
  for (const d of defects) if (d.text) json = d.text(json);
  return json;
}

/** The first answer has the scenario's defects; each retry fixes exactly those its feedback names. */
function fixingModel(scenario: Scenario, items: number, pace: Pace, seed: number): TokenStreamingModel {
  let remaining = scenario.defects(items);
  return new TokenStreamingModel({
    answers: [
      (messages: BaseMessage[], call: number) => {
        if (call > 0) {
          const feedback = messages
            .filter((m) => m instanceof HumanMessage)
            .map((m) => String(m.content))
            .join("\n");
          remaining = remaining.filter((d) => !d.named(feedback));
        }
        return render(items, remaining);
      },
    ],
    repeat: true,
    firstTokenMs: pace.firstTokenMs,
    tokenMs: pace.tokenMs,
    jitterMs: pace.jitterMs,
    random: seededRandom(seed),
  });
}

interface Pace {
  firstTokenMs: number;
  tokenMs: number;
  jitterMs: number;
}

// ---------------------------------------------------------------------------
// 1. Stop policies against no streaming checks

type Variant = "no streaming checks" | StopPolicy;
const VARIANTS: Variant[] = ["no streaming checks", "never", "useless", "first-error"];
const MAX_ATTEMPTS = 10;

interface RunFigures {
  valid: boolean;
  tokens: number;
  calls: number;
  ms: number;
  stopped: number;
}

async function runOnce(variant: Variant, scenario: Scenario, items: number, pace: Pace, seed: number): Promise<RunFigures> {
  const model = fixingModel(scenario, items, pace, seed);
  const options = { model, spec: catalogSpec, request: "The north-market catalog", maxAttempts: MAX_ATTEMPTS };
  const started = performance.now();
  let outcome: ValidationOutcome<unknown>;
  if (variant === "no streaming checks") outcome = await generateValidated(options);
  else {
    let last: ValidationOutcome<unknown> | undefined;
    for await (const event of streamValidated({ ...options, stopEarly: variant })) if (event.kind === "outcome") last = event.outcome;
    outcome = last!;
  }
  const ms = performance.now() - started;
  return {
    valid: outcome.success,
    tokens: model.calls.reduce((n, c) => n + c.generated, 0),
    calls: model.calls.length,
    ms,
    stopped: outcome.history.filter((h) => h.stopped !== undefined).length,
  };
}

interface PolicyRow {
  scenario: string;
  where: string;
  variant: Variant;
  runs: number;
  valid: number;
  /** Sums over every run, the failed ones included (what they spent counts against the valid outputs). */
  tokens: number;
  ms: number;
  calls: number;
  stopped: number;
}

/** A sum per valid output (infinite when there was none). */
const perValid = (sum: number, valid: number) => (valid === 0 ? Number.POSITIVE_INFINITY : sum / valid);

async function measurePolicies(opts: BenchOptions): Promise<{ rows: PolicyRow[]; items: number; tokens: number; pace: Pace; reps: number }> {
  const items = opts.quick ? 6 : 24;
  const reps = opts.quick ? 1 : 3;
  const pace: Pace = opts.quick ? { firstTokenMs: 20, tokenMs: 1, jitterMs: 1 } : { firstTokenMs: 300, tokenMs: 15, jitterMs: 6 };
  const jobs: Array<{ scenario: Scenario; variant: Variant; seed: number }> = [];
  let seed = 1;
  for (const scenario of SCENARIOS) for (const variant of VARIANTS) for (let r = 0; r < reps; r++) jobs.push({ scenario, variant, seed: seed++ });
  const results = await Promise.all(jobs.map(async (job) => ({ job, figures: await runOnce(job.variant, job.scenario, items, pace, job.seed) })));
  const rows: PolicyRow[] = [];
  for (const scenario of SCENARIOS) {
    for (const variant of VARIANTS) {
      const mine = results.filter((r) => r.job.scenario === scenario && r.job.variant === variant).map((r) => r.figures);
      const sum = (f: (x: RunFigures) => number) => mine.reduce((n, x) => n + f(x), 0);
      rows.push({
        scenario: scenario.name,
        where: scenario.where,
        variant,
        runs: mine.length,
        valid: mine.filter((f) => f.valid).length,
        tokens: sum((f) => f.tokens),
        ms: sum((f) => f.ms),
        calls: sum((f) => f.calls),
        stopped: sum((f) => f.stopped),
      });
    }
  }
  const tokens = Math.ceil(render(items, []).length / 4);
  return { rows, items, tokens, pace, reps };
}

// ---------------------------------------------------------------------------
// 2. CPU per streamed token: the partial checks alone, and streamValidated end to end over HTTP

interface CpuFigures {
  plainUsPerToken: number[];
  checkedUsPerToken: number[];
  ratios: number[];
  tokens: number;
}

async function measureCpu(opts: BenchOptions): Promise<CpuFigures> {
  const items = opts.quick ? 6 : 24;
  const texts = [render(items, []), render(items, SCENARIOS[6].defects(items))];
  const rounds = opts.quick ? 3 : 15;
  const answersPerRound = opts.quick ? 2 : 8;
  const prompt = [new HumanMessage("The north-market catalog")];
  const consume = async (checked: boolean): Promise<{ us: number; tokens: number }> => {
    let tokens = 0;
    const before = process.cpuUsage();
    for (let a = 0; a < answersPerRound; a++) {
      const model = new TokenStreamingModel({ answers: [texts[a % texts.length]] });
      // The node's own events go to LangGraph's writer; a no-op here, as in a run nobody streams "custom" from.
      const watch = checked ? new AttemptWatch({ spec: catalogSpec, attempt: 1, policy: "never", publish: () => undefined }).start() : undefined;
      let text = "";
      for await (const chunk of await model.stream(prompt)) {
        const piece = typeof chunk.content === "string" ? chunk.content : "";
        text += piece;
        watch?.write(piece);
      }
      tokens += model.calls[0].generated;
      if (text.length === 0) throw new Error("empty stream");
    }
    const used = process.cpuUsage(before);
    return { us: used.user + used.system, tokens };
  };
  // Warm up both paths (the partial checks compile each part of the spec once).
  await consume(false);
  await consume(true);
  const random = seededRandom(99);
  const figures: CpuFigures = { plainUsPerToken: [], checkedUsPerToken: [], ratios: [], tokens: 0 };
  for (let r = 0; r < rounds; r++) {
    const order = random() < 0.5 ? [false, true] : [true, false];
    const got: Record<string, { us: number; tokens: number }> = {};
    for (const checked of order) got[String(checked)] = await consume(checked);
    const plain = got.false.us / got.false.tokens;
    const checked = got.true.us / got.true.tokens;
    figures.plainUsPerToken.push(plain);
    figures.checkedUsPerToken.push(checked);
    figures.ratios.push(checked / plain);
    figures.tokens = got.true.tokens;
  }
  return figures;
}

/** The end-to-end figure's target: streamValidated costs at most this much CPU per streamed token as plain token streaming. */
const END_TO_END_TARGET = 1.3;

interface EndToEndAnswer {
  items: number;
  /** Pieces the server streams (four characters each, about a token each). */
  tokens: number;
  /** µs CPU per answer, one figure per cycle. */
  plain: number[];
  streamed: number[];
  /** The same `.stream()` in a one-node LangGraph graph: the framework's own cost of streaming inside a run. */
  node: number[];
  unstreamed: number[];
}

interface EndToEndFigures {
  answers: EndToEndAnswer[];
  cycles: number;
  runs: number;
  load: { before: number[]; after: number[] };
}

/**
 * streamValidated end to end: ChatOpenAI over HTTP, the real graph, one attempt (the answer is valid),
 * against plain `ChatOpenAI.stream()` of the same answer to the same prompt, interleaved per cycle in
 * random order; one server per answer, each in its own process.
 */
async function measureEndToEnd(opts: BenchOptions): Promise<EndToEndFigures> {
  const sizes = opts.quick ? [6] : [24, 60];
  const cycles = opts.quick ? 3 : 25;
  const runs = opts.quick ? 1 : 3;
  const dir = mkdtempSync(join(tmpdir(), "streaming-bench-"));
  const servers = sizes.map((items) => {
    const file = join(dir, `catalog-${items}.json`);
    writeFileSync(file, JSON.stringify([{ content: render(items, []), pieceChars: 4 }]));
    return spawnTs("../testkit/openai-server.ts", ["--port", "0", "--replies-file", file, "--repeat"]);
  });
  try {
    const request = "The north-market catalog";
    // Plain streaming sends the prompt the graph's first attempt sends, so the two differ only in what streamValidated adds.
    const prompt = [new SystemMessage(generationSystemPrompt(catalogSpec)), new HumanMessage(firstAttemptPrompt(request))];
    const expectOne = (outcome: ValidationOutcome<unknown>) => {
      if (!outcome.success || outcome.attempts !== 1) throw new Error("every validated run should pass at its first attempt");
    };
    const answers = await Promise.all(
      servers.map(async (server, k) => {
        const baseURL = await lineStartingWith(server, "READY ", 30_000);
        const model = new ChatOpenAI({ model: "catalog", apiKey: "not-needed", configuration: { baseURL }, maxRetries: 0 });
        const text = render(sizes[k], []);
        const readAll = async (config?: LangGraphRunnableConfig) => {
          let got = "";
          for await (const chunk of await model.stream(prompt, config)) got += typeof chunk.content === "string" ? chunk.content : "";
          if (got !== text) throw new Error("streaming got another answer");
          return got;
        };
        const oneNode = new StateGraph(Annotation.Root({ text: Annotation<string> }))
          .addNode("generate", async (_state: unknown, config: LangGraphRunnableConfig) => ({ text: await readAll(config) }))
          .addEdge(START, "generate")
          .addEdge("generate", END)
          .compile();
        const variants: Record<"plain" | "streamed" | "node" | "unstreamed", () => Promise<void>> = {
          plain: async () => void (await readAll()),
          node: async () => {
            for await (const state of await oneNode.stream({ text: "" }, { streamMode: "values" })) void state;
          },
          streamed: async () => {
            let last: unknown;
            for await (const event of streamValidated({ model, spec: catalogSpec, request, maxAttempts: 1 })) last = event;
            expectOne((last as { outcome: ValidationOutcome<unknown> }).outcome);
          },
          unstreamed: async () => expectOne(await generateValidated({ model, spec: catalogSpec, request, maxAttempts: 1 })),
        };
        return { items: sizes[k], tokens: Math.ceil(text.length / 4), variants };
      }),
    );
    // Warm up every path (JIT, compiled spec parts, connections).
    for (let i = 0; i < 3; i++) for (const a of answers) for (const run of Object.values(a.variants)) await run();
    const before = loadavg();
    const random = seededRandom(35);
    const figures: EndToEndAnswer[] = answers.map((a) => ({ items: a.items, tokens: a.tokens, plain: [], streamed: [], node: [], unstreamed: [] }));
    for (let cycle = 0; cycle < cycles; cycle++) {
      for (const [k, a] of answers.entries()) {
        for (const name of shuffled(["plain", "streamed", "node", "unstreamed"] as const, random)) {
          const start = process.cpuUsage();
          for (let r = 0; r < runs; r++) await a.variants[name]();
          figures[k][name].push(cpuUs(start) / runs);
        }
      }
    }
    return { answers: figures, cycles, runs, load: { before, after: loadavg() } };
  } finally {
    for (const server of servers) {
      server.stdin?.end();
      server.kill();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// Report

function policyTable(rows: PolicyRow[]): string {
  const cell = (n: number, digits = 3) => (Number.isFinite(n) ? fmt(n, digits) : "no valid output");
  return table(
    ["answer", "defect at", "variant", "valid / runs", "tokens per valid output", "wall s per valid output", "calls per valid output", "attempts stopped"],
    rows.map((r) => [
      r.scenario,
      r.where,
      r.variant,
      `${r.valid} / ${r.runs}`,
      cell(perValid(r.tokens, r.valid)),
      cell(perValid(r.ms, r.valid) / 1000),
      cell(perValid(r.calls, r.valid)),
      r.stopped,
    ]),
  );
}

function totals(rows: PolicyRow[], variant: Variant) {
  const mine = rows.filter((r) => r.variant === variant);
  const sum = (f: (r: PolicyRow) => number) => mine.reduce((n, r) => n + f(r), 0);
  const valid = sum((r) => r.valid);
  return {
    valid,
    runs: sum((r) => r.runs),
    tokens: perValid(
      sum((r) => r.tokens),
      valid,
    ),
    ms: perValid(
      sum((r) => r.ms),
      valid,
    ),
    calls: perValid(
      sum((r) => r.calls),
      valid,
    ),
  };
}

/** The names of the two CPU figures, the same in the summary, the section and docs/streaming-benchmark.md. */
const CHECKS_ALONE = "CPU per streamed token, the partial checks alone";
const END_TO_END = "CPU per streamed token, streamValidated end to end over HTTP";

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const started = Date.now();
  const load = loadavg();
  const policies = await measurePolicies(opts);
  const checksLoad = loadavg();
  const cpu = await measureCpu(opts);
  const checksLoadAfter = loadavg();
  const endToEnd = await measureEndToEnd(opts);
  const m = machineInfo();

  const base = totals(policies.rows, "no streaming checks");
  const summary = VARIANTS.map((v) => {
    const t = totals(policies.rows, v);
    return [v, `${t.valid} / ${t.runs}`, fmt(t.tokens), `${fmtRatio(t.tokens / base.tokens)}`, fmt(t.ms / 1000), `${fmtRatio(t.ms / base.ms)}`, fmt(t.calls)];
  });
  // The default policy must not cost attempts: per answer, no more calls per valid output than without checks.
  const callsHeld = SCENARIOS.every((s) => {
    const of = (v: Variant) => policies.rows.find((r) => r.scenario === s.name && r.variant === v)!;
    const calls = (r: PolicyRow) => perValid(r.calls, r.valid);
    return of("useless").valid === of("no streaming checks").valid && calls(of("useless")) <= calls(of("no streaming checks")) + 1e-9;
  });
  const validNeverStopped = policies.rows.filter((r) => r.scenario === "valid").every((r) => r.stopped === 0 && r.valid === r.runs);

  const checksAlone = compareRepeated(CHECKS_ALONE, cpu.checkedUsPerToken, cpu.plainUsPerToken, "µs", "plain token streaming, in process");
  const perToken = (us: readonly number[], tokens: number) => us.map((x) => x / tokens);
  const endToEndOf = (a: EndToEndAnswer, label: string) =>
    compareRepeated(label, perToken(a.streamed, a.tokens), perToken(a.plain, a.tokens), "µs", "plain ChatOpenAI token streaming");
  const [headlineAnswer, ...longer] = endToEnd.answers;
  const endToEndHeadline = endToEndOf(headlineAnswer, END_TO_END);
  const range = (c: Comparison) => `${fmtRatio(c.ratio)} (${fmtRatio(Math.min(...c.ratios))}–${fmtRatio(Math.max(...c.ratios))})`;
  const endToEndRows = endToEnd.answers.map((a) => {
    const streamed = endToEndOf(a, END_TO_END);
    const versus = (us: readonly number[]) => range(compareRepeated("", perToken(us, a.tokens), perToken(a.plain, a.tokens), "µs", "plain"));
    return [
      `${a.items} items, ${fmt(a.tokens)} tokens`,
      fmt(streamed.reference),
      fmt(streamed.value),
      `**${range(streamed)}**`,
      versus(a.node),
      versus(a.unstreamed),
    ];
  });
  const endToEndMet = endToEndHeadline.ratio <= END_TO_END_TARGET;

  const markdown = [
    "## Validated streaming",
    "",
    `Measured by bench/streaming.ts${opts.quick ? " in quick mode (tiny sizes: not representative)" : ""} on ${m.cpuModel}, ${m.cores} cores, Node.js ${m.node}, ${m.date}; load average ${load.map((x) => x.toFixed(2)).join(" / ")} at the start. ` +
      `**The model is simulated** (tests/streaming/token-model.ts), not an LLM: it streams ${policies.tokens} tokens per catalog answer (${policies.items} items, 4 characters a token), ` +
      `the first after ${policies.pace.firstTokenMs} ms, then one every ${policies.pace.tokenMs} ms plus up to ${policies.pace.jitterMs} ms of seeded jitter, and stops generating when its request is aborted. ` +
      'Its retry fixes exactly the defects its feedback names. Every run goes through the real validation graph (maxAttempts 10): "no streaming checks" is `generateValidated` (whole-answer calls that take as long as streaming every token), the policies are `streamValidated` with `stopEarly`. ' +
      `${policies.reps} run(s) per answer and variant, all at once; each run timed on its own. Took ${Math.round((Date.now() - started) / 1000)} s.`,
    "",
    "### All answers together",
    "",
    table(["variant", "valid / runs", "tokens per valid output", "vs no checks", "wall s per valid output", "vs no checks", "calls per valid output"], summary),
    "",
    "### Per answer",
    "",
    policyTable(policies.rows),
    "",
    `- Valid answers are never stopped, under any policy: ${validNeverStopped ? "held" : "**not held**"}.`,
    `- The default policy (\`useless\`) makes no more calls per valid output than no streaming checks, for every answer: ${callsHeld ? "held" : "**not held**"}.`,
    `- The simulated answers are bare JSON. An error in a bare draft is not certain until the answer ends (a fenced block after it would be read instead, as the check step's reader does), so no policy stops them mid-answer, and here stopping saves nothing. A stop saves tokens only once an answer's value is certain: a fenced block whose closing line has ended, followed by more text, or a root, size or nesting that no later text can change. \`first-error\`'s retry hears of one error at a time.`,
    "",
    "### CPU per streamed token",
    "",
    "Two figures, each the median of per-cycle ratios (min–max over the cycles), the variants interleaved in one process in random order, CPU time from `process.cpuUsage()`:",
    "",
    table(
      ["figure", "what is compared", "ratio", "µs CPU per token (median)", "load average (1 / 5 / 15 min)"],
      [
        [
          `**${CHECKS_ALONE}**`,
          `the simulated stream (one valid catalog, one with an error in every item; ${fmt(cpu.tokens)} tokens a round) read with the partial checks and their events (an \`AttemptWatch\` fed each piece) ÷ read plainly (LangChain's \`model.stream\`), ${cpu.ratios.length} rounds`,
          `**${range(checksAlone)}**`,
          `${fmt(checksAlone.value)} ÷ ${fmt(checksAlone.reference)}`,
          `${fmtLoad(checksLoad)} → ${fmtLoad(checksLoadAfter)}`,
        ],
        [
          `**${END_TO_END}**`,
          `\`streamValidated\` (a real \`ChatOpenAI\` over HTTP, the real graph, one attempt) ÷ plain \`ChatOpenAI\` \`.stream()\` of the same answer (the valid catalog, ${headlineAnswer.items} items, ${fmt(headlineAnswer.tokens)} tokens) to the same prompt, ${endToEnd.cycles} cycles × ${endToEnd.runs} runs`,
          `**${range(endToEndHeadline)}**`,
          `${fmt(endToEndHeadline.value)} ÷ ${fmt(endToEndHeadline.reference)}`,
          `${fmtLoad(endToEnd.load.before)} → ${fmtLoad(endToEnd.load.after)}`,
        ],
      ],
    ),
    "",
    `End to end, the server is the scripted OpenAI-compatible server (testkit/openai-server.ts) in a process of its own, so its CPU is not counted; it streams the answer four characters a piece (about a token a piece), usage last. ` +
      "Beside it, against the same plain token streaming: the same `.stream()` as the only node of a one-node LangGraph graph (the framework's own cost of streaming a model inside a run: its steps, and the run's abort signal raced at every chunk), " +
      `and the validated run unstreamed (\`generateValidated\`, one whole-answer request: what the graph and the check step cost per run)${longer.length > 0 ? "; and a longer answer (the most items the spec allows), over which the per-run costs spread" : ""}:`,
    "",
    table(
      [
        "answer",
        "plain ChatOpenAI token streaming, µs CPU per token",
        "streamValidated, µs per token",
        `${END_TO_END} ÷ plain`,
        "one LangGraph node streaming ÷ plain",
        "unstreamed (generateValidated) ÷ plain",
      ],
      endToEndRows,
    ),
    "",
    `- Target: ${END_TO_END} at most ${fmtRatio(END_TO_END_TARGET)} plain token streaming, for the ${headlineAnswer.items}-item catalog: ${endToEndMet ? "met" : "**not met**"} (${fmtRatio(endToEndHeadline.ratio)}).`,
    `- The checks alone add about ${fmt(checksAlone.value - checksAlone.reference)} µs of CPU per token; at ${policies.pace.tokenMs} ms a token from the simulated provider that is ${fmt(((checksAlone.value - checksAlone.reference) / 1000 / policies.pace.tokenMs) * 100)} % of the time between tokens. Absolute times on this machine drift with load; the ratios are what was taken side by side.`,
  ].join("\n");

  const rows = [
    ...VARIANTS.map((v) => ({ label: `tokens per valid output, ${v}`, value: totals(policies.rows, v).tokens, unit: "tokens" })),
    ...VARIANTS.map((v) => ({ label: `wall time per valid output, ${v}`, value: totals(policies.rows, v).ms, unit: "ms" })),
    ...VARIANTS.map((v) => ({ label: `calls per valid output, ${v}`, value: totals(policies.rows, v).calls, unit: "calls" })),
    { label: "CPU per streamed token, plain token streaming in process", value: checksAlone.reference, unit: "µs" },
    { label: CHECKS_ALONE, value: checksAlone.value, unit: "µs" },
    { label: "CPU per streamed token, plain ChatOpenAI token streaming over HTTP", value: endToEndHeadline.reference, unit: "µs" },
    { label: END_TO_END, value: endToEndHeadline.value, unit: "µs" },
  ].filter((row) => Number.isFinite(row.value));

  return {
    id: "streaming",
    title: "Validated streaming",
    rows,
    comparisons: [checksAlone, endToEndHeadline],
    targets: [
      {
        description: "the default stop policy makes no more calls per valid output than no streaming checks",
        met: callsHeld,
        detail: callsHeld ? "held for every answer" : "not held",
      },
      { description: "valid answers are never stopped", met: validNeverStopped, detail: validNeverStopped ? "held" : "not held" },
      {
        description: `${END_TO_END}: at most ${fmtRatio(END_TO_END_TARGET)} plain ChatOpenAI token streaming`,
        met: endToEndMet,
        detail: `${range(endToEndHeadline)} for the ${headlineAnswer.items}-item catalog (${fmt(headlineAnswer.tokens)} tokens)`,
      },
    ],
    checks: [
      {
        description: "every variant produced a valid output for the valid answer",
        ok: policies.rows.filter((r) => r.scenario === "valid").every((r) => r.valid > 0),
      },
    ],
    markdown,
    page: { path: "docs/streaming-benchmark.md", text: pageText(markdown) },
  };
}

/** docs/streaming-benchmark.md: the section, under a title of its own. */
function pageText(markdown: string): string {
  return `# Validated streaming: benchmark\n\nWhat stopping early saves, and what the partial checks and \`streamValidated\` cost per streamed token (see [streaming.md](streaming.md)). Regenerate with \`npx tsx bench/streaming.ts\`, or with BENCHMARKS.md's section by \`npm run bench -- --only streaming --update\`.\n\n${markdown}\n`;
}

async function main(argv: string[]): Promise<void> {
  const quick = argv.includes("--quick");
  const at = argv.indexOf("--out");
  const out = at >= 0 ? argv[at + 1] : quick ? undefined : "docs/streaming-benchmark.md";
  const result = await run({ quick });
  if (out) writeFileSync(out, result.page!.text);
  process.stdout.write(`${result.markdown}\n`);
  if (result.targets.some((t) => t.met === false)) process.exitCode = 1;
}

runIfMain(import.meta.url, main);
