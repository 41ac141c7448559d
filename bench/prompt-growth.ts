/**
 * Benchmark 5: prompt growth over a run that needs every attempt.
 *
 * A validation run with maxAttempts 5 whose answers are never valid (each a
 * different broken config), through the real ChatOpenAI client against the
 * scripted server (in process here: only sizes are measured). For each
 * attempt: the prompt's characters as the server received them, and the
 * prompt tokens the server reported. The reference is the same run's
 * attempts as a growing chat transcript (every earlier answer and its errors
 * kept as messages), the usual alternative to a fixed-size retry prompt.
 */
import { readEnvironment } from "../src/environment.js";
import { createChatModel, type ModelRequest } from "../src/models.js";
import { builtinSpecs } from "../src/specs/registry.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { generationSystemPrompt } from "../src/validation/prompts.js";
import { firstAttemptPrompt } from "../src/protocol/feedback.js";
import { startScriptedOpenAIServer } from "../testkit/openai-server.js";
import { compare, fmt, table, type BenchOptions, type BenchResult, outcomeBlocks, type Target } from "./common.js";
import { PROMPT_HEADINGS } from "../src/protocol/feedback.js";

const MAX_ATTEMPTS = 5;
const REQUEST = "A deployment config for payments-api with 8 replicas";

export async function run(_opts: BenchOptions): Promise<BenchResult> {
  const spec = builtinSpecs.get("deployment-config");
  if (!spec) throw new Error("deployment-config spec missing");
  const example = spec.example as Record<string, any>;
  // Five different broken answers: the errors change from attempt to attempt, as they would with a model.
  const answers = [
    { ...example, replicas: 8, health_check: { ...example.health_check, timeout_seconds: 30 } },
    { ...example, service_name: "Payments_API", replicas: "8" },
    { ...example, resources: { cpu_limit: 0.5 }, health_check: { path: "healthz", timeout_seconds: 0, interval_seconds: 2 } },
    { service_name: "payments-api", replicas: 25, resources: { cpu_limit: 12, memory_limit_mb: 64 } },
    { ...example, replicas: 0, resources: { ...example.resources, cpu_limit: "1" } },
  ].map((a) => JSON.stringify(a));

  const server = await startScriptedOpenAIServer({ replies: answers });
  try {
    const env = { ...readEnvironment({}), providers: { openai: { apiKey: "bench-key", baseUrl: server.baseURL } }, maxRetries: 0 };
    const graph = buildValidationGraph({ model: (r: ModelRequest) => createChatModel(r, env) });
    const out = await graph.invoke({ request: REQUEST }, { context: { maxAttempts: MAX_ATTEMPTS } });

    const chars = server.requests.map((r) => r.messages.reduce((n, m) => n + m.content.length, 0));
    const tokens = out.history.map((h) => h.usage.inputTokens);

    // The reference: the same attempts as one growing transcript.
    const transcript: string[] = [generationSystemPrompt(spec), firstAttemptPrompt(REQUEST)];
    const transcriptChars: number[] = [];
    for (let i = 0; i < out.history.length; i++) {
      transcriptChars.push(transcript.reduce((n, m) => n + m.length, 0));
      const h = out.history[i];
      transcript.push(h.output, `${PROMPT_HEADINGS.errors}\n${h.errors.map((e) => `- ${e}`).join("\n")}\nReply with the corrected JSON object only.`);
    }

    const ratio = (xs: number[]) => Math.max(...xs) / Math.min(...xs);
    const retries = chars.slice(1);
    const last = chars.length - 1;
    const comparisons = [
      compare(`prompt characters at attempt ${last + 1}`, chars[last], transcriptChars[last], "chars", "growing chat transcript, same attempts"),
      compare("max/min prompt characters over all attempts", ratio(chars), ratio(transcriptChars), "×", "growing transcript max/min"),
    ];
    const targets: Target[] = [
      {
        description: "prompt size stays flat: retry prompts (attempts 2-5) within 1.25× of each other",
        met: ratio(retries) <= 1.25,
        detail: `retry max/min ${ratio(retries).toFixed(2)}×; over all attempts ${ratio(chars).toFixed(2)}× (the first attempt carries no previous answer); a growing transcript reaches ${ratio(transcriptChars).toFixed(2)}×`,
      },
    ];
    const checks = [
      {
        description: `the run used all ${MAX_ATTEMPTS} attempts and ended invalid (stopReason max_attempts)`,
        ok: out.attempts === MAX_ATTEMPTS && out.stopReason === "max_attempts" && !out.success,
      },
      { description: "one request reached the server per attempt", ok: server.requests.length === MAX_ATTEMPTS, detail: `${server.requests.length} requests` },
      {
        description: "the tokens the server reported reached the run's usage ledger",
        ok: tokens.every((t) => t > 0) && out.usage.inputTokens === tokens.reduce((a, b) => a + b, 0),
      },
    ];
    const rows = chars.map((c, i) => ({ label: `attempt ${i + 1} prompt characters`, value: c, unit: "chars" }));
    rows.push(...tokens.map((t, i) => ({ label: `attempt ${i + 1} prompt tokens (server usage)`, value: t, unit: "tokens" })));

    const markdown = [
      "## 5. Prompt growth over a run that needs every attempt",
      "",
      `One validation run, maxAttempts ${MAX_ATTEMPTS}, through the real ChatOpenAI client against the scripted server; the five answers are five different broken configs, so the run uses every attempt. ` +
        "Characters are those of the messages the server received (system + user); tokens are the prompt tokens the server reported in its usage (it counts characters ÷ 4). " +
        "The reference is the same attempts kept as one growing chat transcript (every earlier answer and its errors resent each time).",
      "",
      table(
        ["attempt", "errors fed back", "prompt characters", "prompt tokens (server)", "growing transcript characters"],
        chars.map((c, i) => [String(i + 1), i === 0 ? "—" : String(out.history[i - 1].errors.length), fmt(c), fmt(tokens[i]), fmt(transcriptChars[i])]),
      ),
      "",
      outcomeBlocks(comparisons, targets, checks),
      "",
      "The retry prompt carries the request, the previous answer (bounded to 4,000 characters) and its errors (at most 20 messages of at most 300 characters), never the whole history, " +
        "so its size depends on the last answer, not on the attempt number.",
    ].join("\n");
    return { id: "prompt", title: "Prompt growth", rows, comparisons, targets, checks, markdown };
  } finally {
    await server.close();
  }
}
