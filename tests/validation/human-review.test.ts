/** When the model gives up, a person finishes: the run pauses for review, and the person is held to the same spec. */
import { Command, MemorySaver } from "@langchain/langgraph";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { builtinSpecs, resolveSpec } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { MAX_RECORDED_REFUSED_ANSWERS, reviewAnswerSchema } from "../../src/protocol/review.js";
import { checkValueSync } from "../../src/specs/check.js";
import { scriptedModel } from "../../testkit/scripted-model.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, any>;
const BROKEN = { ...VALID, replicas: 8, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } };
const REQUEST = { request: "A deployment config for payments-api with 8 replicas" };

async function pausedRun(model = scriptedModel([JSON.stringify(BROKEN)])) {
  const graph = buildValidationGraph({ model, checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: `review-${Math.random()}` }, context: { maxAttempts: 1, onFailure: "interrupt" as const } };
  await graph.invoke(REQUEST, config);
  return { graph, config, model };
}

async function payload(graph: Awaited<ReturnType<typeof pausedRun>>["graph"], config: object) {
  const state = await graph.getState(config);
  return state.tasks.flatMap((t) => t.interrupts).at(-1)?.value as Record<string, any> | undefined;
}

describe("human review (onFailure: interrupt)", () => {
  it("out of attempts, the run pauses with the request, the last output, its exact errors and the answers allowed", async () => {
    const { graph, config } = await pausedRun();
    const state = await graph.getState(config);
    expect(state.next).toEqual(["review"]);
    expect(state.values.success).toBe(false);
    const shown = await payload(graph, config);
    expect(shown).toMatchObject({ kind: "review", request: REQUEST.request, spec: "deployment-config", attempts: 1 });
    expect(JSON.parse(shown!.output)).toEqual(BROKEN);
    expect(shown!.errors).toEqual([RULES.replicasNeedCpu(0.5, 8)]);
    expect(Object.keys(shown!.answers)).toEqual(["edit", "retry", "reject"]);
  });

  it("a person's invalid value is refused with its errors and asked again; a valid one ends the run, marked as the person's", async () => {
    const { graph, config } = await pausedRun();
    const still = { ...BROKEN, resources: { cpu_limit: 0.8, memory_limit_mb: 512 } };
    await graph.invoke(new Command({ resume: { type: "edit", value: still } }), config);
    let state = await graph.getState(config);
    expect(state.next).toEqual(["review"]);
    expect(state.values.success).toBe(false);
    expect((await payload(graph, config))!.errors).toEqual([RULES.replicasNeedCpu(0.8, 8)]);

    const fixed = { ...BROKEN, resources: { cpu_limit: 2, memory_limit_mb: 512 } };
    const out = await graph.invoke(new Command({ resume: { type: "edit", value: JSON.stringify(fixed) } }), config);
    expect(out).toMatchObject({ success: true, stopReason: "valid", value: fixed, attempts: 1 });
    expect(out.history.map((h) => [h.by ?? "model", h.valid])).toEqual([
      ["model", false],
      ["human", false],
      ["human", true],
    ]);
    state = await graph.getState(config);
    expect(state.next).toEqual([]);
  });

  it("a new request gives the model a fresh attempt budget and a first-attempt prompt", async () => {
    const model = scriptedModel([JSON.stringify(BROKEN), JSON.stringify(VALID)]);
    const { graph, config } = await pausedRun(model);
    const out = await graph.invoke(new Command({ resume: { type: "retry", request: "A deployment config for payments-api with 3 replicas" } }), config);
    expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 2 });
    const prompt = String(model.calls[1].messages.at(-1)!.content);
    expect(prompt).toContain("3 replicas");
    expect(prompt).not.toContain("A validator rejected it");
    expect(out.history.map((h) => h.by ?? "model")).toEqual(["model", "human", "model"]);
  });

  it("a rejection ends the run with success false and stopReason rejected", async () => {
    const { graph, config } = await pausedRun();
    const out = await graph.invoke(new Command({ resume: { type: "reject", message: "not needed" } }), config);
    expect(out).toMatchObject({ success: false, stopReason: "rejected" });
    expect(out.history.at(-1)).toMatchObject({ by: "human", output: "rejected: not needed" });
  });

  it("an answer of the wrong shape is not taken for a value: the person is asked again, told what to send", async () => {
    const { graph, config } = await pausedRun();
    // Untyped forms included: a decision says its type.
    for (const resume of [{ replicas: 3 }, { value: VALID }, { request: "again" }, { reject: true }]) {
      await graph.invoke(new Command({ resume }), config);
      expect((await graph.getState(config)).next).toEqual(["review"]);
      expect((await payload(graph, config))!.errors[0]).toMatch(/must be one of \{"type": "edit", "value"/);
    }
  });

  it("typed decisions, as LangChain types its review decisions: edit ends valid, reject ends with its message, approve is refused with the reason", async () => {
    const edited = await pausedRun();
    await edited.graph.invoke(new Command({ resume: { type: "approve" } }), edited.config);
    expect((await payload(edited.graph, edited.config))!.errors[0]).toMatch(/^approve is not a decision here: the answer did not pass its spec/);
    const out = await edited.graph.invoke(new Command({ resume: { type: "edit", value: VALID } }), edited.config);
    expect(out).toMatchObject({ success: true, stopReason: "valid", value: VALID });
    expect(out.history.at(-1)).toMatchObject({ by: "human", valid: true });

    const rejected = await pausedRun();
    const end = await rejected.graph.invoke(new Command({ resume: { type: "reject", message: "not needed" } }), rejected.config);
    expect(end).toMatchObject({ success: false, stopReason: "rejected" });
    expect(end.history.at(-1)).toMatchObject({ by: "human", output: "rejected: not needed" });
  });

  it("a typed decision with a key it does not take is not read as another one", async () => {
    const { graph, config } = await pausedRun();
    await graph.invoke(new Command({ resume: { type: "edit", value: VALID, reason: "x" } }), config);
    expect((await graph.getState(config)).next).toEqual(["review"]);
    expect((await payload(graph, config))!.errors[0]).toMatch(/must be one of/);
  });

  it("a person's text is read exactly: valid JSON followed by anything else is refused, not cut to its prefix", async () => {
    const { graph, config } = await pausedRun();
    const out = await graph.invoke(new Command({ resume: { type: "edit", value: `${JSON.stringify(VALID)} and then anything` } }), config);
    expect(out.success).toBe(false);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["review"]);
    expect((await payload(graph, config))!.errors[0]).toMatch(
      /^The value is not valid JSON \(exactly one JSON value is expected, nothing before or after it\): Unexpected non-whitespace character after JSON/,
    );
    // A fenced block is a model's habit, not a person's answer: refused as well.
    await graph.invoke(new Command({ resume: { type: "edit", value: "```json\n" + JSON.stringify(VALID) + "\n```" } }), config);
    expect((await graph.getState(config)).values.success).toBe(false);
  });

  it.each([
    [
      "cyclic",
      () => {
        const v: Record<string, unknown> = { ...VALID };
        v.self = v;
        return v;
      },
      "self refers to itself (a cycle), which JSON cannot hold",
    ],
    ["holding a BigInt", () => ({ ...VALID, replicas: 3n }), "replicas is a BigInt, which JSON has no form for; use a number or a string"],
    [
      "with a getter",
      () => ({
        ...VALID,
        get replicas() {
          return 3;
        },
      }),
      "replicas is computed by a getter, not plain JSON data",
    ],
  ])("a value %s pauses again with the reason, and a valid answer afterwards is the result", async (_label, make, reason) => {
    const { graph, config } = await pausedRun();
    await graph.invoke(new Command({ resume: { type: "edit", value: make() } }), config);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["review"]);
    expect(state.values.success).toBe(false);
    expect((await payload(graph, config))!.errors).toEqual([reason]);
    const out = await graph.invoke(new Command({ resume: { type: "edit", value: VALID } }), config);
    expect(out).toMatchObject({ success: true, stopReason: "valid", value: VALID });
  });

  it('a field named "__proto__" in a person\'s value is refused with the hint a model gets: rename the field', async () => {
    const { graph, config } = await pausedRun();
    const written = `{"type": "edit", "value": ${JSON.stringify(VALID).replace(/^\{/, '{"__proto__": {"a": 1}, ')}}`;
    // A resume the server keeps with the run is given back by LangGraph's serializer, which sets "__proto__" by assignment: the prototype.
    const serde = new JsonPlusSerializer();
    const kept = (await serde.loadsTyped(...(await serde.dumpsTyped(JSON.parse(written))))) as { value: object };
    expect(Object.hasOwn(kept.value, "__proto__")).toBe(false);
    expect(Object.getPrototypeOf(kept.value)).toEqual({ a: 1 });
    // As JSON text, as a parsed object, and as the serializer gives it back: each says which field, and what to do.
    for (const resume of [{ type: "edit", value: JSON.stringify(JSON.parse(written).value) }, JSON.parse(written), kept]) {
      await graph.invoke(new Command({ resume }), config);
      const errors = (await payload(graph, config))!.errors as string[];
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/the value has a field named "__proto__".*; rename the field/);
    }
  });

  it("after a refused answer, the next valid answer is the result, never the refused one", async () => {
    const { graph, config } = await pausedRun();
    const refused = { ...BROKEN, resources: { cpu_limit: 0.7, memory_limit_mb: 512 } };
    await graph.invoke(new Command({ resume: { type: "edit", value: refused } }), config);
    expect((await graph.getState(config)).values.value).toEqual(refused);
    const out = await graph.invoke(new Command({ resume: { type: "edit", value: JSON.stringify(VALID) } }), config);
    expect(out).toMatchObject({ success: true, value: VALID, errors: [] });
  });

  it("refused answers in a row are recorded up to a bound, so repeated answers cannot grow the thread without limit", async () => {
    const { graph, config } = await pausedRun();
    const sizes: number[] = [];
    for (let i = 0; i < 60; i++) {
      await graph.invoke(new Command({ resume: { type: "edit", value: { ...BROKEN, replicas: 8 + (i % 3) } } }), config);
      sizes.push(JSON.stringify((await graph.getState(config)).values).length);
    }
    const state = await graph.getState(config);
    expect(state.next).toEqual(["review"]);
    expect(state.values.history).toHaveLength(1 + MAX_RECORDED_REFUSED_ANSWERS);
    // Past the bound the state stops growing: over the last 40 answers its size moves only with the answer shown (replicas 8-10).
    const late = sizes.slice(20);
    expect(Math.max(...late) - Math.min(...late)).toBeLessThanOrEqual(2);
    // Each answer is still judged and shown with its own errors.
    expect((await payload(graph, config))!.errors).toEqual([RULES.replicasNeedCpu(0.5, 10)]);
  });

  it("the interrupt carries the answers as JSON Schema (Studio's typed form), built from the spec", async () => {
    const { graph, config } = await pausedRun();
    const state = await graph.getState(config);
    const schema = (state.tasks.flatMap((t) => t.interrupts).at(-1) as { response_schema?: Record<string, unknown> }).response_schema;
    expect(schema).toEqual(reviewAnswerSchema(builtinSpecs.get("deployment-config")!));
    const form = resolveSpec(schema as Record<string, unknown>);
    expect(checkValueSync(form, { type: "edit", value: VALID }).valid).toBe(true);
    expect(checkValueSync(form, { type: "retry", request: "again, with 3 replicas" }).valid).toBe(true);
    expect(checkValueSync(form, { type: "reject", message: "not needed" }).valid).toBe(true);
    expect(checkValueSync(form, { type: "reject" }).valid).toBe(true);
    expect(checkValueSync(form, { type: "edit", value: { ...VALID, replicas: "eight" } }).valid).toBe(false);
    expect(checkValueSync(form, { type: "edit", value: VALID, extra: 1 }).valid).toBe(false);
    expect(checkValueSync(form, { type: "approve" }).valid).toBe(false);
    // A spec that refers to itself keeps its references intact: the form asks for a value of its type.
    const tree = resolveSpec({ name: "tree", schema: { type: "object", properties: { kids: { type: "array", items: { $ref: "#" } } } } });
    expect((reviewAnswerSchema(tree).oneOf as Array<{ properties: { value?: unknown } }>)[0].properties.value).toEqual({
      type: "object",
      description: expect.any(String),
    });
  });

  it("with the default onFailure (end) the run ends as before, without pausing", async () => {
    const graph = buildValidationGraph({ model: scriptedModel([JSON.stringify(BROKEN)]), checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "no-review" }, context: { maxAttempts: 1 } };
    const out = await graph.invoke(REQUEST, config);
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts" });
    expect((await graph.getState(config)).next).toEqual([]);
  });
});
