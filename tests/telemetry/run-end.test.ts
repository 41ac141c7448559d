/**
 * Every span a validation run starts ends, once, whichever way the run ends: with its verdict, out of
 * attempts, on an error a node throws, aborted, left by its reader, paused for a person and resumed or never
 * resumed, through each way LangGraph runs a graph (invoke, stream, streamEvents v2 and v3). Read from an SDK
 * registered in the test, with a span processor that sees every span start and end (the exporter sees only the
 * ended ones) and the SDK's own warnings (a span ended twice is one). After each test no span is open and no
 * invocation is under way; after many runs that throw, nothing is held.
 */
import { context, diag, DiagLogLevel, propagation, SpanStatusCode, trace, type Span, type Tracer, type TracerProvider } from "@opentelemetry/api";
import { Annotation, Command, END, interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { TracedStateGraph } from "../../src/graph/traced-graph.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { invocationOf, invocationsInFlight } from "../../src/telemetry/open-telemetry.js";
import { buildValidationGraph, createValidationGraphBuilder } from "../../src/validation/graph.js";
import { ScriptedChatModel, scriptedModel } from "../../testkit/scripted-model.js";
import { parentOf, recordTelemetry, spansNamed, type Recording } from "./support.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const BROKEN = JSON.stringify({ ...(builtinSpecs.get("deployment-config")!.example as object), replicas: 8 });
const REQUEST = "A deployment config for payments-api with 8 replicas";
/** What a provider answers to a bad request: an HTTP 400 (the client does not retry it, nor does the node). */
const badRequest = () => Object.assign(new Error("bad request"), { status: 400 });

let telemetry: Recording;
const warnings: string[] = [];
beforeAll(() => {
  telemetry = recordTelemetry();
  diag.setLogger({ error: (m) => warnings.push(m), warn: (m) => warnings.push(m), info() {}, debug() {}, verbose() {} }, DiagLogLevel.WARN);
});
afterAll(async () => {
  diag.disable();
  await telemetry.stop();
});
beforeEach(() => {
  telemetry.spans.reset();
  warnings.length = 0;
});
afterEach(() => {
  expect(telemetry.openSpans()).toEqual([]);
  expect(invocationsInFlight()).toBe(0);
  // The SDK warns when a span is ended twice, or changed once ended.
  expect(warnings).toEqual([]);
});

const runSpans = () => spansNamed(telemetry.spans, "invoke_agent");
const attemptSpans = () => spansNamed(telemetry.spans, "chat");
const runsCounted = (outcome: string) => telemetry.count("trustworthy.runs", { "trustworthy.outcome": outcome });

describe("a run's spans end with the run", () => {
  it("with its verdict: valid, and out of attempts", async () => {
    await buildValidationGraph({ model: scriptedModel([BROKEN, VALID]) }).invoke({ request: REQUEST });
    await buildValidationGraph({ model: new ScriptedChatModel({ answers: [BROKEN], repeat: true }) }).invoke(
      { request: REQUEST },
      { context: { maxAttempts: 2 } },
    );
    expect(runSpans().map((span) => [span.attributes["trustworthy.stop_reason"], span.status.code])).toEqual([
      ["valid", SpanStatusCode.UNSET],
      ["max_attempts", SpanStatusCode.UNSET],
    ]);
    expect(attemptSpans()).toHaveLength(4);
  });

  it("on an error a node throws: the run's and the attempt's spans end failed with it, and the run counts as an error", async () => {
    const before = await runsCounted("error");
    const graph = buildValidationGraph({ model: scriptedModel([BROKEN, badRequest()]) });
    const thrown = await graph.invoke({ request: REQUEST }).catch((error: Error) => error);
    expect(thrown).toMatchObject({ name: "ProviderError" });
    const [run] = runSpans();
    expect(run.status).toMatchObject({ code: SpanStatusCode.ERROR, message: (thrown as Error).message.slice(0, 200) });
    expect(run.attributes).toMatchObject({ "error.type": "ProviderError" });
    expect(run.events.map((event) => event.name)).toEqual(["exception"]);
    const attempts = attemptSpans();
    expect(attempts.map((span) => [span.attributes["trustworthy.attempt"], span.status.code])).toEqual([
      [1, SpanStatusCode.UNSET],
      [2, SpanStatusCode.ERROR],
    ]);
    expect(attempts.every((span) => parentOf(span) === run.spanContext().spanId)).toBe(true);
    expect(await runsCounted("error")).toBe(before + 1);
  });

  it("aborted: the spans end cancelled, and the run counts as cancelled", async () => {
    const before = await runsCounted("cancelled");
    const abort = new AbortController();
    const model = scriptedModel([
      () => {
        abort.abort();
        return BROKEN;
      },
    ]);
    const ended = telemetry.nextEnded("invoke_agent");
    await expect(buildValidationGraph({ model }).invoke({ request: REQUEST }, { signal: abort.signal })).rejects.toThrow();
    // The caller hears of the abort at once; the run ends when LangGraph has stopped it.
    const run = await ended;
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
    expect(run.attributes).toMatchObject({ "error.type": "cancelled" });
    expect(await runsCounted("cancelled")).toBe(before + 1);
  });

  it("left by its reader after the first update: the spans end cancelled", async () => {
    const stream = await buildValidationGraph({ model: scriptedModel([BROKEN, VALID]) }).stream({ request: REQUEST }, { streamMode: "updates" });
    for await (const update of stream) {
      expect(update).toHaveProperty("generate");
      break;
    }
    const [run] = runSpans();
    expect(run.attributes).toMatchObject({ "error.type": "cancelled" });
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
  });

  it("through streamEvents, v2 and v3 (how the LangGraph server runs a graph)", async () => {
    const graph = () => buildValidationGraph({ model: scriptedModel([BROKEN, VALID]) });
    for await (const _event of graph().streamEvents({ request: REQUEST }, { version: "v2" }));
    for await (const _event of await graph().streamEvents({ request: REQUEST }, { version: "v3" }));
    expect(runSpans().map((span) => span.attributes["trustworthy.stop_reason"])).toEqual(["valid", "valid"]);
    expect(attemptSpans()).toHaveLength(4);
  });
});

describe("a run paused for a person", () => {
  it("never resumed: its span ended at its stop, nothing is left open", async () => {
    const graph = buildValidationGraph({ model: scriptedModel([BROKEN]), checkpointer: new MemorySaver() });
    const out = await graph.invoke({ request: REQUEST }, { configurable: { thread_id: "never" }, context: { maxAttempts: 1, onFailure: "interrupt" } });
    expect(out).toHaveProperty("__interrupt__");
    expect(runSpans().map((span) => span.attributes["trustworthy.stop_reason"])).toEqual(["max_attempts"]);
  });

  it("paused between steps (interruptAfter) and resumed: the paused invocation's spans end interrupted; the resume is a span in the same trace", async () => {
    const graph = createValidationGraphBuilder({ model: scriptedModel([VALID]) }).compile({ checkpointer: new MemorySaver(), interruptAfter: ["generate"] });
    const config = { configurable: { thread_id: "paused" } };
    await graph.invoke({ request: REQUEST }, config);
    expect(runSpans().map((span) => span.attributes["trustworthy.interrupted"])).toEqual([true]);
    expect(attemptSpans().map((span) => span.attributes["trustworthy.interrupted"])).toEqual([true]);
    const out = await graph.invoke(null, config);
    expect(out).toMatchObject({ success: true, stopReason: "valid" });
    const [paused, resumed] = runSpans();
    expect(resumed.attributes).toMatchObject({ "trustworthy.resumed": true, "trustworthy.stop_reason": "valid" });
    expect(parentOf(resumed)).toBe(paused.spanContext().spanId);
    expect(resumed.spanContext().traceId).toBe(paused.spanContext().traceId);
  });

  it("resumed with a person's answer: the resume's span ends with the decision", async () => {
    const graph = buildValidationGraph({ model: scriptedModel([BROKEN]), checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "resumed" }, context: { maxAttempts: 1, onFailure: "interrupt" as const } };
    await graph.invoke({ request: REQUEST }, config);
    await graph.invoke(new Command({ resume: { type: "reject", message: "not now" } }), config);
    expect(runSpans().map((span) => span.attributes["trustworthy.stop_reason"])).toEqual(["max_attempts", "rejected"]);
  });
});

describe("a graph used as a subgraph", () => {
  it("pauses, not fails, when an interrupt inside it is handed up to its parent", async () => {
    const State = Annotation.Root({ answer: Annotation<string> });
    // A traced graph whose first step holds a run span (as the validation graph's start does), then asks a person.
    const inner = new TracedStateGraph(State)
      .addNode("start", () => {
        invocationOf()!.startRun(trace.getTracer("probe").startSpan("invoke_agent probe"), {});
        return {};
      })
      .addNode("ask", () => ({ answer: interrupt<string, string>("answer?") }))
      .addEdge(START, "start")
      .addEdge("start", "ask")
      .addEdge("ask", END)
      .compile();
    const before = await runsCounted("error");
    const outer = new StateGraph(State)
      .addNode("inner", async (state) => inner.invoke(state))
      .addEdge(START, "inner")
      .addEdge("inner", END)
      .compile({ checkpointer: new MemorySaver() });
    const out = await outer.invoke({ answer: "" }, { configurable: { thread_id: "nested" } });
    expect(out).toHaveProperty("__interrupt__");
    const [probe] = spansNamed(telemetry.spans, "invoke_agent probe");
    expect(probe.status.code).toBe(SpanStatusCode.UNSET);
    expect(probe.attributes).toMatchObject({ "trustworthy.interrupted": true });
    expect(await runsCounted("error")).toBe(before);
  });
});

describe("nothing a run makes is held once it ends", () => {
  it("after many runs that throw, no span is open and no invocation is under way", async () => {
    const before = await runsCounted("error");
    const graph = buildValidationGraph({ model: new ScriptedChatModel({ answers: [badRequest()], repeat: true }) });
    for (let i = 0; i < 200; i++) await expect(graph.invoke({ request: REQUEST })).rejects.toThrow("bad request");
    expect(await runsCounted("error")).toBe(before + 200);
    expect(runSpans()).toHaveLength(200);
  });
});

describe("with a meter provider and no tracer (no context manager either)", () => {
  it("a run that throws is still counted", async () => {
    trace.disable();
    context.disable();
    try {
      const before = await runsCounted("error");
      await expect(buildValidationGraph({ model: scriptedModel([badRequest()]) }).invoke({ request: REQUEST })).rejects.toThrow("bad request");
      expect(await runsCounted("error")).toBe(before + 1);
      expect(telemetry.spans.getFinishedSpans()).toEqual([]);
    } finally {
      propagation.disable();
      telemetry.tracerProvider.register();
    }
  });
});

describe("a tracer that throws", () => {
  it("changes nothing in a run", async () => {
    const throwing = new Proxy({} as Span, {
      get: (_target, key) =>
        key === "spanContext"
          ? () => ({ traceId: "1".repeat(32), spanId: "1".repeat(16), traceFlags: 1 })
          : () => {
              throw new Error("span fault");
            },
    });
    const tracer: Tracer = {
      startSpan: () => throwing,
      startActiveSpan: () => {
        throw new Error("tracer fault");
      },
    };
    const provider: TracerProvider = { getTracer: () => tracer };
    const run = () => buildValidationGraph({ model: scriptedModel([BROKEN, VALID]) }).invoke({ request: REQUEST });
    const expected = await run();
    trace.disable();
    trace.setGlobalTracerProvider(provider);
    try {
      expect(await run()).toEqual(expected);
    } finally {
      trace.disable();
      trace.setGlobalTracerProvider(telemetry.tracerProvider);
    }
  });
});
