/**
 * Judged is kept: every value the readers and the JSON-data copy let through comes back from a LangGraph
 * checkpoint exactly as it was judged, and every shape they refuse really would not (so the refusal is needed).
 * The second half fails the day an upgrade of @langchain/langgraph-checkpoint changes what its serializer
 * revives: then src/json/kept.ts must follow.
 */
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { extractJson, parseExactJson } from "../../src/json/parse.js";
import { toJsonData } from "../../src/json/data.js";
import { keptFromText } from "../../src/json/kept.js";
import { checkText } from "../../src/specs/check.js";
import { builtinSpecs, resolveSpec } from "../../src/specs/registry.js";
import { seededRandom } from "../../src/simulated/random.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

const serde = new JsonPlusSerializer();
async function roundTrip(value: unknown): Promise<unknown> {
  const [type, bytes] = await serde.dumpsTyped({ value });
  return ((await serde.loadsTyped(type, bytes)) as { value?: unknown }).value;
}

/** Shapes a checkpoint does not give back as written, each as JSON text (as a model or a person would write it). */
const UNKEPT: Array<[string, string]> = [
  ["the undefined marker", '{"body": {"lc": 2, "type": "undefined"}}'],
  ["a Set marker", '{"body": {"lc": 2, "type": "constructor", "id": ["Set"], "method": null, "args": [[1, 2]], "kwargs": {}}}'],
  ["a Map marker", '{"body": {"lc": 2, "type": "constructor", "id": ["Map"], "args": [[["a", 1]]]}}'],
  ["a RegExp marker", '{"body": {"lc": 2, "type": "constructor", "id": ["RegExp"], "args": ["a+", "g"]}}'],
  ["an Error marker", '{"body": {"lc": 2, "type": "constructor", "id": ["Error"], "args": ["boom"]}}'],
  ["a Uint8Array marker", '{"body": {"lc": 2, "type": "constructor", "id": ["Uint8Array"], "method": "from", "args": [[1, 2]]}}'],
  ["a LangChain object", '{"body": {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {"content": "hi"}}}'],
  ["a Send", '{"body": {"lg_name": "Send", "node": "x", "args": 1, "extra": 2}}'],
  ["a field named __proto__", '{"body": {"__proto__": {"a": 1}}}'],
  ["a field named __proto__ holding a number", '{"body": {"__proto__": 1}}'],
];

describe("what a checkpoint would not give back is refused before it is judged", () => {
  it.each(UNKEPT)("%s: the checkpoint's serializer does not give it back as written (upstream guard)", async (_name, text) => {
    const value = JSON.parse(text);
    expect(await roundTrip(value)).not.toEqual(value);
  });

  it.each(UNKEPT)("%s: refused by both readers and by the JSON-data copy, with the path and the reason", (_name, text) => {
    const model = extractJson(text);
    const exact = parseExactJson(text);
    const data = toJsonData(JSON.parse(text));
    for (const result of [model, exact, data]) {
      expect(result.ok).toBe(false);
      expect((result as { error: string }).error).toMatch(/body (has|is)/);
    }
    expect((model as { error: string }).error).toMatch(/^The JSON cannot be kept as written: body has .*(checkpoint|__proto__)/);
  });

  it("numbers JSON has no form for: 1e400 and -1e400 are refused, never judged as ±Infinity", async () => {
    for (const text of ['{"x": 1e400}', '{"x": -1e400}', '[1, {"y": [2, 1e999]}]']) {
      const read = extractJson(text);
      expect(read.ok, text).toBe(false);
      expect((read as { error: string }).error).toMatch(/is a number out of range \(it reads as -?Infinity\), which JSON has no form for/);
      expect(parseExactJson(text).ok).toBe(false);
    }
    // A keyword that does not fix the type used to accept it, and the run kept null.
    for (const schema of [
      { properties: { x: { maximum: 5 } } },
      { properties: { x: { not: { type: "string" } } } },
      { properties: { x: { anyOf: [{ type: "number" }, { type: "string" }] } } },
    ]) {
      const verdict = await checkText(resolveSpec({ name: "n", schema }), '{"x": -1e400}', "model");
      expect(verdict.valid).toBe(false);
      expect(verdict.errors[0]).toMatch(/x is a number out of range/);
    }
    expect(toJsonData({ x: Number.NEGATIVE_INFINITY })).toEqual({
      ok: false,
      error: expect.stringMatching(/^x is a number out of range \(it reads as -Infinity\)/),
    });
    // The smallest double is kept as written; a number too small for one (it reads as 0) is refused (./numbers.test.ts).
    const tiny = extractJson('{"y": 5e-324}');
    expect(tiny).toEqual({ ok: true, value: { y: 5e-324 }, source: "bare" });
    expect(await roundTrip((tiny as { value: unknown }).value)).toEqual({ y: 5e-324 });
  });

  it("near-misses are plain data and come back as written", async () => {
    const near: unknown[] = [
      { lc: "2", type: "undefined" },
      { lc: 2 },
      { type: "undefined" },
      { lc: 2, type: 5 },
      { lc: null, type: "constructor", id: ["Set"], args: [[1]] },
      { lg_name: "send" },
      { constructor: { prototype: 1 }, toString: "x", valueOf: 2 },
    ];
    for (const value of near) {
      expect(keptFromText(value), JSON.stringify(value)).toEqual({ ok: true, value });
      expect(await roundTrip(value)).toEqual(value);
    }
  });
});

/** A seeded JSON value, with checkpoint-marker parts, numbers at the edges, odd keys and strings. */
function generate(random: () => number, depth = 0): unknown {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const r = random();
  if (depth > 4 || r < 0.35) {
    return pick<unknown>([
      null,
      true,
      false,
      0,
      1,
      -1,
      0.1,
      1e308,
      -1e308,
      5e-324,
      2 ** 53 + 2,
      "",
      "a",
      "lc",
      "undefined",
      "\u2028\u00a0\ud83d\ude00",
      "x".repeat(50),
    ]);
  }
  if (r < 0.45)
    return pick([
      { lc: 2, type: "undefined" },
      { lc: 1, type: "constructor", id: ["Set"] },
      { lg_name: "Send", node: "n", args: [] },
      JSON.parse('{"__proto__": 1}'),
    ]);
  if (r < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => generate(random, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(random() * 5); i > 0; i--)
    object[pick(["lc", "type", "id", "args", "value", "lg_name", "node", "constructor", "a b", "é", "0"])] = generate(random, depth + 1);
  return object;
}

describe("every value let through comes back from the checkpoint exactly as judged (property)", () => {
  it("2,000 seeded values and the built-in specs' examples: refused, or kept deep-equal through the serializer", async () => {
    const random = seededRandom(29);
    let kept = 0;
    let refused = 0;
    const values: unknown[] = [...[...builtinSpecs.values()].map((s) => s.example), ...Array.from({ length: 2_000 }, () => generate(random))];
    for (const value of values) {
      const text = JSON.stringify(value);
      const read = parseExactJson(text);
      const copy = toJsonData(value);
      expect(read.ok, text).toBe(copy.ok);
      if (!read.ok) {
        refused++;
        continue;
      }
      kept++;
      expect(await roundTrip(read.value), text).toEqual(read.value);
      expect(await roundTrip((copy as { value: unknown }).value), text).toEqual(read.value);
    }
    // Both kinds occur, so the property is not vacuous.
    expect(kept).toBeGreaterThan(300);
    expect(refused).toBeGreaterThan(300);
  });

  it("through the validation graph and MemorySaver: a marker-shaped body is refused (then the valid answer is the result), and getState gives back exactly what invoke returned", async () => {
    const marker = {
      method: "POST",
      url: "https://api.example.com/v1/orders",
      headers: { "Content-Type": "application/json" },
      body: { lc: 2, type: "undefined" },
      timeout_ms: 5000,
      retries: 0,
    };
    const valid = { ...marker, body: { lc: "2", type: "undefined", note: "kept", big: 1e308, tiny: 5e-324 } };
    const checkpointer = new MemorySaver();
    const graph = buildValidationGraph({ model: scriptedModel([JSON.stringify(marker), JSON.stringify(valid)]), checkpointer });
    const config = { configurable: { thread_id: "kept-1" }, context: { spec: "api-request" } };
    const out = await graph.invoke({ request: "POST an order" }, config);
    expect(out.history[0].errors[0]).toMatch(/^The JSON cannot be kept as written: body has the fields "lc" and "type" of a LangGraph checkpoint marker/);
    expect(out.success).toBe(true);
    expect(out.value).toEqual(valid);
    const saved = await graph.getState(config);
    expect(saved.values.value).toEqual(out.value);
    expect(saved.values.success).toBe(true);
  });
});
