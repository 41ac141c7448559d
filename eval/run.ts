/**
 * The evaluation: the same requests through four strategies, judged by the
 * deterministic validator.
 *
 *   npm run eval                                   # simulated model (seed 1), all strategies, all requests
 *   npm run eval -- --seed 7 --miss-rate 0.5       # another simulation
 *   OPENAI_API_KEY=… npm run eval -- --base-url https://api.openai.com/v1 --model gpt-4o-mini
 *   npm run eval -- --base-url http://localhost:11434/v1 --model qwen2.5:7b --concurrency 2
 *
 * Options: --out FILE (HTML report, default eval/report.html), --json FILE (records),
 * --max-attempts N (default 3), --per-spec N (first N requests of each spec),
 * --strategies validation,first-error,self-review,reflexion, --concurrency N,
 * --latency-ms N (simulated latency per call).
 *
 * Escalation and token budgets (eval/loops.ts) are measured too: on the simulated model with its "small"
 * and "large" generators; against an endpoint with --escalate-to NAME (the strong model; --model is the
 * cheap one). --max-tokens N sets the budgeted configuration's token budget (default 2000); --no-loops
 * leaves the section out.
 *
 * Retry forms (eval/retry-forms.ts): whole answers against corrections (retryWith) on answers of about
 * 0.5, 5 and 20 KB with 1, 3 and 10 defects, and syntax slips with repairSyntax on and off; against an
 * endpoint too (its first answers planted by the simulated model). --retry-with answer,corrections,auto
 * picks the forms compared (default all three), --retry-requests N the requests per row (default 8),
 * --no-retry-forms leaves the section out.
 *
 * Prints the markdown table on stdout; progress on stderr.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { readEnvironment, type Environment } from "../src/environment.js";
import { createChatModel, type ModelRequest, type ModelSource } from "../src/models.js";
import { runEval, type EvalRun } from "./harness.js";
import { runLoops } from "./loops.js";
import { runRetryForms } from "./retry-forms.js";
import { RETRY_WITH, type RetryWith } from "../src/settings.js";
import { renderHtml, renderMarkdown } from "./report.js";
import { DEFAULT_MISS_RATE, SIMULATED_TIERS, simulatedModelSource, tieredModelSource } from "./simulated-model.js";
import { STRATEGIES } from "./strategies.js";
import { SUITE, type EvalRequest } from "./suite.js";

export interface EvalCliResult {
  run: EvalRun;
  markdown: string;
  html: string;
  htmlPath: string;
}

/** The options the command takes: an unknown one is refused before anything runs. */
const OPTIONS = Object.fromEntries(
  [
    "base-url",
    "model",
    "seed",
    "miss-rate",
    "max-attempts",
    "concurrency",
    "out",
    "json",
    "per-spec",
    "strategies",
    "escalate-to",
    "max-tokens",
    "latency-ms",
    "retry-with",
    "retry-requests",
  ].map((name) => [name, { type: "string" as const }]),
);

/** Every option's value, checked against OPTIONS (and --no-loops). */
function parseEvalArgs(argv: string[]): Record<string, string | boolean | undefined> {
  return parseArgs({ args: argv, options: { ...OPTIONS, "no-loops": { type: "boolean" }, "no-retry-forms": { type: "boolean" } } }).values;
}

function option(argv: string[], name: string): string | undefined {
  const value = parseEvalArgs(argv)[name.replace(/^--/, "")];
  return typeof value === "string" ? value : undefined;
}

/** The first `n` requests of each spec, in suite order. */
export function perSpec(suite: readonly EvalRequest[], n: number): EvalRequest[] {
  const counts = new Map<string, number>();
  return suite.filter((r) => {
    const c = counts.get(r.spec) ?? 0;
    counts.set(r.spec, c + 1);
    return c < n;
  });
}

/** The escalation section's default token budget: it binds on some requests of the suite, not most. */
export const DEFAULT_LOOP_BUDGET = 2_000;

export async function main(argv: string[], log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<EvalCliResult> {
  parseEvalArgs(argv);
  const baseUrl = option(argv, "--base-url");
  const modelName = option(argv, "--model");
  const real = baseUrl !== undefined || modelName !== undefined;
  const seed = Number(option(argv, "--seed") ?? 1);
  const missRate = Number(option(argv, "--miss-rate") ?? DEFAULT_MISS_RATE);
  const maxAttempts = Number(option(argv, "--max-attempts") ?? 3);
  const concurrency = Number(option(argv, "--concurrency") ?? 1);
  const htmlPath = option(argv, "--out") ?? "eval/report.html";
  const jsonPath = option(argv, "--json");
  const perSpecCount = option(argv, "--per-spec");
  const wanted = option(argv, "--strategies")?.split(",");
  const unknown = wanted?.filter((id) => !STRATEGIES.some((s) => s.id === id)) ?? [];
  if (unknown.length > 0)
    throw new Error(`--strategies: no strategy ${unknown.map((id) => JSON.stringify(id)).join(", ")}; use ${STRATEGIES.map((s) => s.id).join(", ")}`);
  const strategies = wanted ? STRATEGIES.filter((s) => wanted.includes(s.id)) : STRATEGIES;
  const suite = perSpecCount ? perSpec(SUITE, Number(perSpecCount)) : [...SUITE];
  const forms = option(argv, "--retry-with")?.split(",") ?? [...RETRY_WITH];
  const badForms = forms.filter((f) => !(RETRY_WITH as readonly string[]).includes(f));
  if (badForms.length > 0) throw new Error(`--retry-with: no form ${badForms.map((f) => JSON.stringify(f)).join(", ")}; use ${RETRY_WITH.join(", ")}`);
  const retryRequests = Number(option(argv, "--retry-requests") ?? 8);
  if (!Number.isInteger(retryRequests) || retryRequests < 1)
    throw new Error(`--retry-requests: a whole number, at least 1; got ${option(argv, "--retry-requests")}`);

  const escalateTo = option(argv, "--escalate-to");
  const loopBudget = Number(option(argv, "--max-tokens") ?? DEFAULT_LOOP_BUDGET);
  if (!Number.isInteger(loopBudget) || loopBudget < 1)
    throw new Error(`--max-tokens: a whole number of tokens, at least 1; got ${option(argv, "--max-tokens")}`);
  let model: ModelSource;
  let description: string;
  let name: string;
  if (real) {
    const env = withBaseUrl(readEnvironment(), baseUrl);
    name = modelName ?? env.model;
    model = (request: ModelRequest) => createChatModel({ ...request, model: name }, env);
    const where = env.providers.openai?.baseUrl
      ? (() => {
          const u = new URL(env.providers.openai?.baseUrl as string);
          return `${u.host}${u.pathname}`;
        })()
      : "OpenAI";
    description = `${name} at ${where} (an OpenAI-compatible endpoint)`;
  } else {
    name = "simulated";
    model = simulatedModelSource({ seed, missRate, suite: SUITE, latencyMs: Number(option(argv, "--latency-ms") ?? 0) });
    description = `simulated model (seed ${seed}) — not a real LLM`;
    log(`eval: no --base-url/--model given: using the ${description} (see eval/simulated-model.ts)`);
  }

  let done = 0;
  const total = suite.length * strategies.length;
  const run = await runEval({
    model,
    modelName: name,
    meta: { model: description, simulated: !real, ...(real ? {} : { seed, missRate }) },
    suite,
    strategies,
    maxAttempts,
    concurrency,
    onRecord: (r) => {
      done++;
      if (real || done % 40 === 0 || done === total)
        log(`eval: ${done}/${total} ${r.strategy} ${r.requestId}: ${r.valid ? "valid" : "invalid"}${r.failure ? ` (failed: ${r.failure.slice(0, 120)})` : ""}`);
    },
  });

  if (!argv.includes("--no-loops") && (!real || escalateTo !== undefined)) {
    const tiers = real ? { small: name, large: escalateTo as string } : { ...SIMULATED_TIERS };
    const loopModel: ModelSource = real
      ? (request: ModelRequest) => createChatModel(request, withBaseUrl(readEnvironment(), baseUrl))
      : tieredModelSource({ seed, latencyMs: Number(option(argv, "--latency-ms") ?? 0) });
    log(`eval: escalation and token budgets: ${tiers.small} → ${tiers.large}, budget ${loopBudget} tokens`);
    run.loops = await runLoops({ model: loopModel, tiers, suite, maxAttempts, maxTokens: loopBudget });
  } else if (real) log("eval: escalation and token budgets left out (give --escalate-to NAME to measure them against this endpoint)");

  if (!argv.includes("--no-retry-forms")) {
    // The forms are compared against whole answers, which are always measured.
    const compared = [...new Set<RetryWith>(["answer", ...(forms as RetryWith[])])];
    log(`eval: retry forms (${compared.join(", ")}) on answers of about 0.5, 5 and 20 KB`);
    run.retryForms = await runRetryForms({
      ...(real ? { model, modelName: name } : {}),
      seed,
      forms: compared,
      requests: retryRequests,
      log,
    });
  }

  const markdown = renderMarkdown(run);
  const html = renderHtml(run);
  mkdirSync(dirname(htmlPath), { recursive: true });
  writeFileSync(htmlPath, html);
  if (jsonPath) writeFileSync(jsonPath, JSON.stringify(run, null, 2));
  log(`eval: wrote ${htmlPath}${jsonPath ? ` and ${jsonPath}` : ""}`);
  return { run, markdown, html, htmlPath };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    ({ markdown }) => {
      process.stdout.write(`${markdown}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}

/** The environment with the OpenAI-compatible server's base URL replaced (its key kept), when one is given. */
function withBaseUrl(env: Environment, baseUrl: string | undefined): Environment {
  return baseUrl ? { ...env, providers: { ...env.providers, openai: { ...env.providers.openai, baseUrl } } } : env;
}
