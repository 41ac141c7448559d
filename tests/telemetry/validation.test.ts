/**
 * The validation graph's traces and metrics, read from an OpenTelemetry SDK registered in the test (spans in
 * memory, metrics collected): a span per run and per attempt with the GenAI attributes and the verdict, under the
 * caller's own span; counters of a run with a retry and an escalation, one stopped by its budget, one refused.
 */
import { trace } from "@opentelemetry/api";
import { Command, MemorySaver } from "@langchain/langgraph";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelRequest } from "../../src/models.js";
import { estimateTokens } from "../../src/shared/usage.js";
import { builtinSpecs, fingerprintSpec, resolveSpec } from "../../src/specs/registry.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";
import { configureTelemetry } from "../../src/telemetry/open-telemetry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { generationSystemPrompt } from "../../src/validation/prompts.js";
import { firstAttemptPrompt } from "../../src/protocol/feedback.js";
import { ScriptedChatModel, scriptedModel } from "../../testkit/scripted-model.js";
import { streamValidated } from "../../src/validation/stream.js";
import { TokenStreamingModel } from "../streaming/token-model.js";
import { parentOf, recordTelemetry, spansNamed, type Recording } from "./support.js";

const SPEC = "deployment-config";
const VALID = builtinSpecs.get(SPEC)!.example as Record<string, unknown>;
const BROKEN = JSON.stringify({ ...VALID, replicas: 8 });
const REQUEST = "A deployment config for payments-api with 8 replicas";

let telemetry: Recording;
beforeAll(() => {
  telemetry = recordTelemetry();
});
afterAll(async () => {
  configureTelemetry();
  await telemetry.stop();
});
beforeEach(() => {
  telemetry.spans.reset();
  configureTelemetry();
});

/** A factory of one scripted model per name; each call opens a span of the caller's own, to see where it nests. */
function escalationModels() {
  const small = new ScriptedChatModel({ answers: [BROKEN], repeat: true });
  const large = scriptedModel([JSON.stringify(VALID)]);
  const models: Record<string, ScriptedChatModel> = { small, large };
  return (request: ModelRequest) => {
    trace.getTracer("user").startSpan(`user factory ${request.model}`).end();
    return models[request.model];
  };
}

describe("the validation graph's spans", () => {
  it("a run's span under the caller's, one GenAI chat span per attempt under it with the verdict; the caller's spans nest in the attempt", async () => {
    const graph = buildValidationGraph({ model: escalationModels() });
    const user = trace.getTracer("user");
    const out = await user.startActiveSpan("user request", async (span) => {
      try {
        return await graph.invoke({ request: REQUEST }, { context: { maxAttempts: 3, models: [{ model: "small", attempts: 2 }, { model: "large" }] } });
      } finally {
        span.end();
      }
    });
    expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 3 });

    const [caller] = spansNamed(telemetry.spans, "user request");
    const [run] = spansNamed(telemetry.spans, "invoke_agent");
    const attempts = spansNamed(telemetry.spans, "chat ");
    expect(parentOf(run)).toBe(caller.spanContext().spanId);
    expect(run.spanContext().traceId).toBe(caller.spanContext().traceId);
    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "trustworthy.spec.name": SPEC,
      "trustworthy.spec.fingerprint": fingerprintSpec(resolveSpec(SPEC)),
      "trustworthy.valid": true,
      "trustworthy.stop_reason": "valid",
      "trustworthy.attempts": 3,
      "gen_ai.usage.input_tokens": out.usage.inputTokens,
      "gen_ai.usage.output_tokens": out.usage.outputTokens,
    });
    expect(run.attributes["trustworthy.request"]).toBeUndefined();

    expect(attempts.map((span) => span.name)).toEqual(["chat small", "chat small", "chat large"]);
    expect(attempts.every((span) => parentOf(span) === run.spanContext().spanId)).toBe(true);
    expect(attempts.map((span) => span.attributes["trustworthy.attempt"])).toEqual([1, 2, 3]);
    expect(attempts.map((span) => span.attributes["trustworthy.valid"])).toEqual([false, false, true]);
    expect(attempts.map((span) => span.attributes["trustworthy.escalation.step"])).toEqual([0, 0, 1]);
    expect(attempts[0].attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "small",
      "gen_ai.usage.input_tokens": out.history[0].usage.inputTokens,
      "gen_ai.usage.output_tokens": out.history[0].usage.outputTokens,
      "trustworthy.error_count": 1,
      "trustworthy.errors": [RULES.replicasNeedCpu(0.5, 8)],
      "trustworthy.error_class": "spec",
      "trustworthy.output_mode": out.history[0].mode,
    });
    expect(attempts[0].attributes["trustworthy.answer"]).toBeUndefined();

    // The factory's span was made while the attempt's span was active.
    const factorySpans = spansNamed(telemetry.spans, "user factory");
    expect(factorySpans.map((span) => parentOf(span))).toEqual(attempts.map((span) => span.spanContext().spanId));
  });

  it("the request and the answer go on the spans only when asked, bounded", async () => {
    configureTelemetry({ recordContent: true, maxContentChars: 20 });
    await buildValidationGraph({ model: scriptedModel([JSON.stringify(VALID)]) }).invoke({ request: REQUEST });
    const [run] = spansNamed(telemetry.spans, "invoke_agent");
    const [attempt] = spansNamed(telemetry.spans, "chat ");
    const request = String(run.attributes["trustworthy.request"]);
    const answer = String(attempt.attributes["trustworthy.answer"]);
    expect(request.startsWith(REQUEST.slice(0, 20))).toBe(true);
    expect(request).not.toContain(REQUEST.slice(20));
    expect(answer.startsWith(JSON.stringify(VALID).slice(0, 20))).toBe(true);
    expect(answer).not.toContain(JSON.stringify(VALID).slice(20));
  });

  it("a budget stop: the call not made is a 'budget stop' span, and the run's span says budget", async () => {
    const limit = estimateTokens(generationSystemPrompt(resolveSpec(SPEC)).length + firstAttemptPrompt(REQUEST).length);
    const out = await buildValidationGraph({ model: new ScriptedChatModel({ answers: [BROKEN], repeat: true }) }).invoke(
      { request: REQUEST },
      { context: { maxTokens: limit } },
    );
    expect(out).toMatchObject({ stopReason: "budget", attempts: 1 });
    const [run] = spansNamed(telemetry.spans, "invoke_agent");
    expect(run.attributes).toMatchObject({ "trustworthy.stop_reason": "budget", "trustworthy.valid": false, "trustworthy.budget.left": 0 });
    const [stop] = spansNamed(telemetry.spans, "budget stop");
    expect(stop.attributes["trustworthy.budget.exceeded"]).toBe(true);
    expect(parentOf(stop)).toBe(run.spanContext().spanId);
  });

  it("the run's span context is kept in its settings, so the steps after a checkpoint nest under it", async () => {
    const graph = buildValidationGraph({ model: new ScriptedChatModel({ answers: [BROKEN], repeat: true }), checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "kept" }, context: { maxAttempts: 2 } };
    await graph.invoke({ request: REQUEST }, config);
    const [run] = spansNamed(telemetry.spans, "invoke_agent");
    const { values } = await graph.getState(config);
    expect(values.run.trace).toBe(`00-${run.spanContext().traceId}-${run.spanContext().spanId}-01`);
  });
});

describe("the validation graph's metrics", () => {
  it("count runs by stop reason, attempts per run, refused attempts by class, escalations, budget stops and tokens per valid output", async () => {
    const histogram = async (name: string) => {
      const point = (await telemetry.points(name)).find(
        (p) => p.attributes["gen_ai.request.model"] === "large" && [undefined, "valid"].includes(p.attributes["trustworthy.outcome"] as string),
      );
      return point?.value as { count: number; sum: number } | undefined;
    };
    const before = {
      valid: await telemetry.count("trustworthy.runs", { "trustworthy.outcome": "valid", "trustworthy.spec": SPEC }),
      refused: await telemetry.count("trustworthy.runs", { "trustworthy.outcome": "refused" }),
      budget: await telemetry.count("trustworthy.budget_stops"),
      escalations: await telemetry.count("trustworthy.escalations", { "gen_ai.request.model": "large" }),
      spec: await telemetry.count("trustworthy.attempts.refused", { "trustworthy.error_class": "spec", "gen_ai.request.model": "small" }),
      refusal: await telemetry.count("trustworthy.attempts.refused", { "trustworthy.error_class": "refusal" }),
      attempts: (await histogram("trustworthy.run.attempts")) ?? { count: 0, sum: 0 },
      tokens: (await histogram("trustworthy.valid_output.tokens")) ?? { count: 0, sum: 0 },
    };
    // A retry and an escalation.
    const escalated = await buildValidationGraph({ model: escalationModels() }).invoke(
      { request: REQUEST },
      { context: { maxAttempts: 3, models: [{ model: "small", attempts: 2 }, { model: "large" }] } },
    );
    // A refusal, twice: the run ends "refused".
    const refusal = { refusal: "I can't help with that." };
    await buildValidationGraph({ model: scriptedModel([refusal, refusal]) }).invoke({ request: REQUEST });
    // A budget stop.
    const limit = estimateTokens(generationSystemPrompt(resolveSpec(SPEC)).length + firstAttemptPrompt(REQUEST).length);
    await buildValidationGraph({ model: new ScriptedChatModel({ answers: [BROKEN], repeat: true }) }).invoke(
      { request: REQUEST },
      { context: { maxTokens: limit } },
    );

    expect(await telemetry.count("trustworthy.runs", { "trustworthy.outcome": "valid", "trustworthy.spec": SPEC })).toBe(before.valid + 1);
    expect(await telemetry.count("trustworthy.runs", { "trustworthy.outcome": "refused" })).toBe(before.refused + 1);
    expect(await telemetry.count("trustworthy.budget_stops")).toBe(before.budget + 1);
    expect(await telemetry.count("trustworthy.escalations", { "gen_ai.request.model": "large" })).toBe(before.escalations + 1);
    expect(await telemetry.count("trustworthy.attempts.refused", { "trustworthy.error_class": "spec", "gen_ai.request.model": "small" })).toBe(before.spec + 2);
    expect(await telemetry.count("trustworthy.attempts.refused", { "trustworthy.error_class": "refusal" })).toBe(before.refusal + 2);

    expect(await histogram("trustworthy.run.attempts")).toMatchObject({ count: before.attempts.count + 1, sum: before.attempts.sum + 3 });
    expect(await histogram("trustworthy.valid_output.tokens")).toMatchObject({
      count: before.tokens.count + 1,
      sum: before.tokens.sum + escalated.usage.totalTokens,
    });
  });

  it("a spec or a model name a run supplies counts as itself only among the first hundred seen", async () => {
    const names = Array.from({ length: 105 }, (_, i) => `m-${i}-${Math.random().toString(36).slice(2)}`);
    for (const model of names) {
      await buildValidationGraph({ model: scriptedModel([JSON.stringify(VALID)]) }).invoke({ request: REQUEST }, { context: { model } });
    }
    const seen = new Set((await telemetry.points("trustworthy.runs")).map((point) => point.attributes["gen_ai.request.model"]));
    expect(seen.has("other")).toBe(true);
    expect(seen.size).toBeLessThanOrEqual(101);
  });
});

describe("the review step", () => {
  it("each decision of a person is counted and is a span under the run's; a resumed run is a span of its own in the run's trace", async () => {
    const graph = buildValidationGraph({ model: scriptedModel([BROKEN]), checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "review" }, context: { maxAttempts: 1, onFailure: "interrupt" as const } };
    const count = (decision: string) => telemetry.count("trustworthy.reviews", { "trustworthy.decision": decision });
    const before = { refused: await count("refused_value"), accepted: await count("accepted") };
    await graph.invoke({ request: REQUEST }, config);
    await graph.invoke(new Command({ resume: { type: "edit", value: BROKEN } }), config);
    const out = await graph.invoke(new Command({ resume: { type: "edit", value: JSON.stringify(VALID) } }), config);
    expect(out).toMatchObject({ success: true, stopReason: "valid" });
    expect(await count("refused_value")).toBe(before.refused + 1);
    expect(await count("accepted")).toBe(before.accepted + 1);
    // The first invocation's span ends at the run's stop; each resume is a span of its own, a child of the first.
    const [run, refusedAt, acceptedAt] = spansNamed(telemetry.spans, "invoke_agent");
    expect(run.attributes).toMatchObject({ "trustworthy.stop_reason": "max_attempts", "trustworthy.valid": false });
    expect(run.attributes["trustworthy.resumed"]).toBeUndefined();
    expect([refusedAt, acceptedAt].map((span) => [parentOf(span), span.spanContext().traceId, span.attributes["trustworthy.resumed"]])).toEqual([
      [run.spanContext().spanId, run.spanContext().traceId, true],
      [run.spanContext().spanId, run.spanContext().traceId, true],
    ]);
    // A value refused: the run waits for a person again, and the invocation's span says it was interrupted.
    expect(refusedAt.attributes).toMatchObject({ "trustworthy.interrupted": true });
    expect(acceptedAt.attributes).toMatchObject({ "trustworthy.stop_reason": "valid", "trustworthy.valid": true, "trustworthy.decision": "accepted" });
    const reviews = spansNamed(telemetry.spans, "review");
    expect(reviews.map((span) => [span.attributes["trustworthy.decision"], parentOf(span)])).toEqual([
      ["refused_value", refusedAt.spanContext().spanId],
      ["accepted", acceptedAt.spanContext().spanId],
    ]);
  });
});

describe("early stops while streaming", () => {
  it("an answer stopped while it streamed is counted by reason, and its span says why", async () => {
    const bad = JSON.stringify({ ...VALID, service_name: "Payments API" }, null, 2);
    const fenced = `Here it is:\n\`\`\`json\n${bad}\n\`\`\`\n${"and some explanation after it ".repeat(20)}`;
    const before = await telemetry.count("trustworthy.early_stops", { "trustworthy.reason": "first-error" });
    const model = new TokenStreamingModel({ answers: [fenced, JSON.stringify(VALID)] });
    let outcome: unknown;
    for await (const event of streamValidated({ model, spec: SPEC, request: REQUEST, stopEarly: "first-error" }))
      if (event.kind === "outcome") outcome = event.outcome;
    expect(outcome).toMatchObject({ success: true, attempts: 2 });
    expect(model.calls[0].aborted).toBe(true);
    expect(await telemetry.count("trustworthy.early_stops", { "trustworthy.reason": "first-error" })).toBe(before + 1);
    const attempts = spansNamed(telemetry.spans, "chat ");
    expect(attempts.map((span) => [span.attributes["trustworthy.stopped_early"], span.attributes["trustworthy.error_class"]])).toEqual([
      ["first-error", "stopped_early"],
      [undefined, undefined],
    ]);
  });
});

describe("with telemetry off", () => {
  it("a run returns and keeps exactly what it does with it on, and records nothing", async () => {
    const run = async () => {
      const graph = buildValidationGraph({ model: scriptedModel([BROKEN, JSON.stringify(VALID)]), checkpointer: new MemorySaver() });
      const config = { configurable: { thread_id: "off" } };
      const out = await graph.invoke({ request: REQUEST }, config);
      return { out, run: (await graph.getState(config)).values.run };
    };
    const on = await run();
    configureTelemetry({ enabled: false });
    telemetry.spans.reset();
    const off = await run();
    expect(telemetry.spans.getFinishedSpans()).toEqual([]);
    expect(off.out).toEqual(on.out);
    const { trace: kept, ...settings } = on.run;
    expect(kept).toMatch(/^00-/);
    expect(off.run).toEqual(settings);
  });
});
