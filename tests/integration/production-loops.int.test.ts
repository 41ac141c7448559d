/**
 * Escalation, token budgets and provider refusals through the real ChatOpenAI against the scripted
 * OpenAI-compatible server (JSON and SSE), and through the command line.
 *
 * Refusals, as measured here: the server sends OpenAI's shape (`message.refusal` with `content: null`;
 * streamed, `delta.refusal` pieces). A plain ChatOpenAI 1.5.8 drops the field: the answer arrives as
 * empty content, nothing thrown, in every output mode, whole or streamed. The model factory's ChatOpenAI
 * keeps it as `additional_kwargs.refusal`, which is what the graph reads.
 */
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel } from "../../src/models.js";
import { estimateTokens } from "../../src/shared/usage.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { OUTPUT_MODES } from "../../src/validation/output-mode.js";
import { retryPrompt } from "../../src/protocol/feedback.js";
import type { ValidationOutcome } from "../../src/validation/generate.js";
import { streamValidated } from "../../src/validation/stream.js";
import { runCli } from "../../testkit/cli.js";
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedReply, type ScriptedServer } from "../../testkit/openai-server.js";

const SPEC = builtinSpecs.get("deployment-config")!;
const VALID = JSON.stringify(SPEC.example);
const BROKEN = JSON.stringify({ ...(SPEC.example as object), replicas: 8 });
const REQUEST = "A deployment config for payments-api with 8 replicas";
const REFUSAL = "I'm sorry, but I can't help with that request.";
const TOOL = "deployment-config_output";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedOpenAIServer();
});
afterAll(async () => {
  await server?.close();
});
let seen = 0;
beforeEach(() => {
  seen = server.requests.length;
});
const requests = (): RecordedRequest[] => server.requests.slice(seen);
const cliEnv = () => ({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0" });

function factory() {
  const env = { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0 };
  return (request: Parameters<typeof createChatModel>[0]) => createChatModel(request, env);
}

/** An answer in `mode`: JSON text, or the spec's tool called with it. */
const answer = (mode: string, json: string): ScriptedReply => (mode === "tool" ? { content: null, toolCalls: [{ name: TOOL, arguments: json }] } : json);

describe("what a refusal looks like on the way in", () => {
  it("the server sends OpenAI's refusal field, whole and streamed", async () => {
    server.setReplies([
      { content: null, refusal: REFUSAL },
      { content: null, refusal: REFUSAL },
    ]);
    const post = (stream: boolean) =>
      fetch(`${server.baseURL}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", stream, messages: [] }) });
    const whole = (await (await post(false)).json()) as { choices: Array<{ message: unknown }> };
    expect(whole.choices[0].message).toEqual({ role: "assistant", content: null, refusal: REFUSAL });
    const events = (await (await post(true)).text())
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => JSON.parse(line.slice(6)) as { choices: Array<{ delta: { refusal?: string } }> });
    expect(events.map((e) => e.choices[0]?.delta.refusal ?? "").join("")).toBe(REFUSAL);
  });

  it("a plain ChatOpenAI 1.5.8 drops it: empty content, no refusal, nothing thrown; the factory's client keeps it", async () => {
    const plain = new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "test-key", configuration: { baseURL: server.baseURL }, maxRetries: 0, streamUsage: true });
    const ours = factory()({ model: "gpt-4o-mini", role: "generate" });
    server.setResponder(() => ({ content: null, refusal: REFUSAL }));
    for (const [model, expected] of [
      [plain, undefined],
      [ours, REFUSAL],
    ] as const) {
      const whole = await model.invoke([new HumanMessage("hi")]);
      expect(whole.content).toBe("");
      expect(whole.additional_kwargs.refusal).toBe(expected);
      let streamed: Awaited<ReturnType<typeof model.invoke>> | undefined;
      for await (const chunk of await model.stream([new HumanMessage("hi")]))
        streamed = streamed === undefined ? chunk : (streamed as never as { concat(c: unknown): typeof chunk }).concat(chunk);
      expect(streamed?.content).toBe("");
      expect(streamed?.additional_kwargs.refusal).toBe(expected);
    }
  });
});

describe("refusals through the graph, in every output mode", () => {
  it.each(OUTPUT_MODES)("%s: whole answers and streamed ones end 'refused' after one retry, with the provider's text redacted", async (mode) => {
    const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123";
    server.setResponder(() => ({ content: null, refusal: `${REFUSAL} (key ${secret})` }));
    const graph = buildValidationGraph({ model: factory() });
    const out = await graph.invoke({ request: REQUEST }, { context: { outputMode: mode, maxAttempts: 3 } });
    expect(out).toMatchObject({ success: false, stopReason: "refused", attempts: 2 });
    expect(out.refusal).toContain(REFUSAL);
    expect(out.refusal).not.toContain(secret);
    // "auto" asks ChatOpenAI for json_schema; the record names the mode asked.
    const asked = mode === "auto" ? "json_schema" : mode;
    expect(out.history.map((h) => [h.mode, h.valid, h.errors])).toEqual([
      [asked, false, []],
      [asked, false, []],
    ]);
    expect(requests()).toHaveLength(2);
    expect(requests().every((r) => !r.stream)).toBe(true);

    seen = server.requests.length;
    let outcome: ValidationOutcome | undefined;
    for await (const event of streamValidated({ model: factory(), spec: "deployment-config", request: REQUEST, outputMode: mode }))
      if (event.kind === "outcome") outcome = event.outcome;
    expect(outcome).toMatchObject({ success: false, stopReason: "refused", attempts: 2 });
    expect(outcome!.success === false && outcome!.refusal).toContain(REFUSAL);
    expect(outcome!.usageByModel).toEqual({ [out.history[0].model!]: outcome!.usage });
    expect(requests().map((r) => r.stream)).toEqual([true, true]);
  });

  it("a refusal, then an answer: the retry asks the same request again, and the run ends valid", async () => {
    server.setReplies([{ content: null, refusal: REFUSAL }, VALID]);
    const out = await buildValidationGraph({ model: factory() }).invoke({ request: REQUEST }, { context: { outputMode: "json_schema" } });
    expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 2, refusal: null });
    const [first, second] = requests();
    expect(second.messages).toEqual(first.messages);
  });
});

describe("escalation through ChatOpenAI", () => {
  it("the factory is asked for each model by name: the requests name small, small, large; large gets the exact errors", async () => {
    server.setResponder((req) => (req.model === "large" ? VALID : BROKEN));
    const out = await buildValidationGraph({ model: factory() }).invoke(
      { request: REQUEST },
      { context: { maxAttempts: 3, models: [{ model: "small", attempts: 2 }, { model: "large" }] } },
    );
    expect(out).toMatchObject({ success: true, attempts: 3 });
    expect(requests().map((r) => r.model)).toEqual(["small", "small", "large"]);
    const last = requests()[2].messages.at(-1)!.content;
    expect(last).toBe(retryPrompt(REQUEST, BROKEN, [RULES.replicasNeedCpu(0.5, 8)]));
    // Usage per model is the provider's own count.
    expect(out.usageByModel.small.calls).toBe(2);
    expect(out.usageByModel.large.inputTokens).toBe(out.history[2].usage.inputTokens);
  });
});

describe("token budgets through ChatOpenAI", () => {
  it.each(["text", "tool"] as const)("%s: the budget's estimate matches the provider's input count here, and no call is made past it", async (mode) => {
    server.setResponder(() => answer(mode, BROKEN));
    const probe = await buildValidationGraph({ model: factory() }).invoke({ request: REQUEST }, { context: { maxAttempts: 1, outputMode: mode } });
    // The scripted server counts the messages' characters ÷ 4, as the budget's estimate does.
    const chars = requests()[0].messages.reduce((n, m) => n + m.content.length, 0);
    expect(probe.usage.inputTokens).toBe(estimateTokens(chars));
    const spent = probe.usage.totalTokens;
    const nextChars = chars - requests()[0].messages.at(-1)!.content.length + retryPrompt(REQUEST, probe.history[0].output, probe.history[0].errors).length;

    seen = server.requests.length;
    const out = await buildValidationGraph({ model: factory() }).invoke(
      { request: REQUEST },
      { context: { maxAttempts: 3, outputMode: mode, maxTokens: spent + estimateTokens(nextChars) - 1 } },
    );
    expect(out).toMatchObject({ success: false, stopReason: "budget", attempts: 1 });
    expect(requests()).toHaveLength(1);

    seen = server.requests.length;
    const fits = await buildValidationGraph({ model: factory() }).invoke(
      { request: REQUEST },
      { context: { maxAttempts: 2, outputMode: mode, maxTokens: spent + estimateTokens(nextChars) } },
    );
    expect(fits.attempts).toBe(2);
    expect(requests()).toHaveLength(2);
  });
});

describe("the command line", () => {
  it("--max-tokens: a run the budget stops exits 1 with stopReason budget, its last errors and usage, and no call past it", async () => {
    server.setResponder(() => BROKEN);
    const r = await runCli(["--max-tokens", "1000", "--max-attempts", "5", REQUEST], cliEnv());
    expect(r.code, r.stderr).toBe(1);
    const document = JSON.parse(r.stdout);
    expect(document).toMatchObject({ success: false, stopReason: "budget", errors: [RULES.replicasNeedCpu(0.5, 8)] });
    expect(document.usage.calls).toBe(requests().length);
    expect(requests().length).toBeLessThan(5);
    expect(r.stderr).toMatch(/the next model call would have passed the token budget/);
  });

  it("--escalate-to and --escalate-after: the first model, then the other; each attempt's line names its model", async () => {
    server.setResponder((req) => (req.model === "large" ? VALID : BROKEN));
    const r = await runCli(["--model", "small", "--escalate-to", "large", "--escalate-after", "2", REQUEST], cliEnv());
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(SPEC.example);
    expect(requests().map((q) => q.model)).toEqual(["small", "small", "large"]);
    expect(r.stderr).toMatch(/attempt 2 of 3 \(small\): 1 error/);
    expect(r.stderr).toMatch(/attempt 3 of 3 \(large\): valid/);
  });

  it("a refused run exits 1 with the provider's text; bad flags are refused before any model call", async () => {
    server.setResponder(() => ({ content: null, refusal: REFUSAL }));
    const refused = await runCli([REQUEST], cliEnv());
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ success: false, stopReason: "refused", refusal: REFUSAL });
    expect(refused.stderr).toContain(`attempt 1 of 3: the provider refused: ${REFUSAL}`);

    seen = server.requests.length;
    for (const args of [
      ["--max-tokens", "lots", REQUEST],
      ["--max-tokens", "0", REQUEST],
      ["--escalate-after", "2", REQUEST],
      ["--escalate-to", "large", "--escalate-after", "3", REQUEST],
    ]) {
      const r = await runCli(args, cliEnv());
      expect(r.code, args.join(" ")).toBe(2);
    }
    expect(requests()).toHaveLength(0);
  });
});
