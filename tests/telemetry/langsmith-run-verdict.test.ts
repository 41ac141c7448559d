/**
 * The verdict on the graph's LangSmith run (markRunVerdict), and what it relies on in @langchain/core and
 * @langchain/langgraph, checked with LangChain's own tracer over a client that records what the tracer
 * sends it (no network):
 *
 * - a node's `config.callbacks` is a callback manager whose parent run is the node's own run, for a node
 *   given as a Runnable (the validation graph's DirectCall) and for a plain function (its review node);
 * - `instanceof LangChainTracer` finds the tracer among the handlers, and its `getRun` holds the node's
 *   run, whose `parent_run_id` is the graph's run;
 * - what is set on the graph's run that `getRun` returns, before the run ends, is what the tracer sends
 *   when it ends (its metadata and tags).
 *
 * If an upgrade changes any of these, the first test fails, whatever the validation graph does.
 */
import { randomUUID } from "node:crypto";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { CallbackManager } from "@langchain/core/callbacks/manager";
import { Runnable, type RunnableConfig } from "@langchain/core/runnables";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import { Annotation, Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import type { LangSmithTracingClientInterface } from "langsmith";
import { describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { markRunVerdict } from "../../src/telemetry/langsmith-feedback.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

type Sent = { id: string; name?: string; extra?: { metadata?: Record<string, unknown> }; tags?: string[] };

/** A LangChainTracer over a client that keeps what it is sent, each run's create with its updates laid over it. */
function recordingTracer() {
  const runs = new Map<string, Sent>();
  // A copy of what was sent, as it was then (the run's metadata and tags, which the test reads).
  const keep = (id: string, run: { name?: string; extra?: Sent["extra"]; tags?: string[] }) => {
    const sent: Sent = { ...runs.get(id), id };
    if (run.name !== undefined) sent.name = run.name;
    if (run.extra !== undefined) sent.extra = { metadata: { ...run.extra.metadata } };
    if (run.tags !== undefined) sent.tags = [...run.tags];
    runs.set(id, sent);
  };
  const client: LangSmithTracingClientInterface = {
    async createRun(run) {
      keep(run.id!, run);
    },
    async updateRun(id, run) {
      keep(id, run);
    },
  };
  return { tracer: new LangChainTracer({ client, projectName: "p" }), runs };
}

const VERDICT = { valid: false, stopReason: "max_attempts", attempts: 3, spec: "deployment-config" };

/** A Runnable that calls its function with the config it is given, as the validation graph's DirectCall does. */
class Direct extends Runnable<object, object> {
  lc_namespace = ["tests"];
  constructor(private readonly fn: (config: RunnableConfig) => object) {
    super();
  }
  async invoke(_input: object, config?: RunnableConfig) {
    return this.fn(config ?? {});
  }
}

describe("what markRunVerdict relies on (LangChain's tracer, LangGraph's node runs)", () => {
  it("a verdict set from a node, a Runnable or a plain function, is on the graph's run as the tracer sends it, and only there", async () => {
    const State = Annotation.Root({ n: Annotation<number>() });
    const marked: number[] = [];
    const graph = new StateGraph(State)
      .addNode(
        "first",
        new Direct((config) => {
          marked.push(markRunVerdict(config, { ...VERDICT, valid: true, stopReason: "valid" }));
          return { n: 1 };
        }),
      )
      .addNode("second", (_state: typeof State.State, config: RunnableConfig) => {
        marked.push(markRunVerdict(config, VERDICT));
        return { n: 2 };
      })
      .addEdge(START, "first")
      .addEdge("first", "second")
      .addEdge("second", END)
      .compile();
    const { tracer, runs } = recordingTracer();
    const runId = randomUUID();
    await graph.invoke({ n: 0 }, { runId, callbacks: [tracer] });
    await awaitAllCallbacks();

    expect(marked).toEqual([1, 1]);
    const run = runs.get(runId)!;
    // The second verdict replaces the first: one verdict's metadata and tags, the last.
    expect(run.extra?.metadata).toMatchObject({
      trustworthy_valid: false,
      trustworthy_attempts: 3,
      trustworthy_stop_reason: "max_attempts",
      trustworthy_spec: "deployment-config",
    });
    expect(run.tags?.filter((tag) => tag.startsWith("trustworthy:"))).toEqual(["trustworthy:invalid", "trustworthy:stop:max_attempts"]);
    const others = [...runs.values()].filter((r) => r.id !== runId);
    expect(others.map((r) => r.name)).toEqual(expect.arrayContaining(["first", "second"]));
    expect(others.filter((r) => r.extra?.metadata?.trustworthy_valid !== undefined)).toEqual([]);
  });

  it("untraced, nothing is done: no callbacks, a bare list of handlers, or no LangSmith tracer among them", () => {
    const other = BaseCallbackHandler.fromMethods({});
    const manager = new CallbackManager("parent-run");
    manager.addHandler(other);
    expect(markRunVerdict(undefined, VERDICT)).toBe(0);
    expect(markRunVerdict({}, VERDICT)).toBe(0);
    expect(markRunVerdict({ callbacks: [other] }, VERDICT)).toBe(0);
    expect(markRunVerdict({ callbacks: manager }, VERDICT)).toBe(0);
  });
});

describe("the validation graph's verdict on its LangSmith run", () => {
  const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
  const BROKEN = { ...VALID, replicas: 8, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } };

  it("a run that pauses for review is marked as it paused; the run that resumes it, with the person's verdict", async () => {
    const graph = buildValidationGraph({ model: scriptedModel([JSON.stringify(BROKEN)]), checkpointer: new MemorySaver() });
    const { tracer, runs } = recordingTracer();
    const thread = { configurable: { thread_id: randomUUID() }, context: { maxAttempts: 1, onFailure: "interrupt" as const }, callbacks: [tracer] };
    const paused = randomUUID();
    await graph.invoke({ request: "A deployment config for payments-api with 8 replicas" }, { ...thread, runId: paused });
    const resumed = randomUUID();
    const fixed = { ...BROKEN, resources: { cpu_limit: 2, memory_limit_mb: 512 } };
    const out = await graph.invoke(new Command({ resume: { type: "edit", value: fixed } }), { ...thread, runId: resumed });
    await awaitAllCallbacks();

    expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 1 });
    expect(runs.get(paused)?.extra?.metadata).toMatchObject({ trustworthy_valid: false, trustworthy_stop_reason: "max_attempts", trustworthy_attempts: 1 });
    expect(runs.get(resumed)?.extra?.metadata).toMatchObject({ trustworthy_valid: true, trustworthy_stop_reason: "valid", trustworthy_attempts: 1 });
    expect(runs.get(resumed)?.tags).toEqual(expect.arrayContaining(["trustworthy:valid", "trustworthy:stop:valid"]));
  });
});
