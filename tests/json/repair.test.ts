/**
 * Syntax slips in a model's answer, repaired without a call: each kind and its record, nothing guessed,
 * the exact reader untouched, and the repaired value judged whole.
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { checkToolArguments } from "../../src/tools/arguments.js";
import { extractJson, parseExactJson } from "../../src/json/parse.js";
import { repairSlips } from "../../src/json/repair.js";
import { seededRandom } from "../../src/simulated/random.js";
import { checkText } from "../../src/specs/check.js";
import { builtinSpecs, resolveSpec } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

const read = (text: string) => extractJson(text);

describe("each kind of slip is repaired and listed", () => {
  const CASES: Array<[string, string, unknown, string[]]> = [
    ["a trailing comma in an object", '{"a": 1, "b": 2,}', { a: 1, b: 2 }, ["a trailing comma before } removed"]],
    ["a trailing comma in an array", '{"a": [1, 2, ], "b": 3}', { a: [1, 2], b: 3 }, ["a trailing comma before ] removed"]],
    ["a line comment", '{\n  "a": 1, // the answer\n  "b": 2\n}', { a: 1, b: 2 }, ["a // comment removed"]],
    ["a block comment", '{"a": /* one */ 1}', { a: 1 }, ["a /* */ comment removed"]],
    [
      "single-quoted keys and strings",
      "{'a': 'it\\'s \"so\"'}",
      { a: 'it\'s "so"' },
      ["the single-quoted key 'a' written with double quotes", "the single-quoted string 'it\\'s \"so\"' written with double quotes"],
    ],
    ["unquoted keys", '{replicas: 3, service_name: "api"}', { replicas: 3, service_name: "api" }, ["the key replicas quoted", "the key service_name quoted"]],
    [
      "Python literals",
      '{"a": True, "b": False, "c": None}',
      { a: true, b: false, c: null },
      ["True read as true", "False read as false", "None read as null"],
    ],
    [
      "all of them in a fence",
      "Here:\n```json\n{a: True, 'b': [1,], /* x */ \"c\": None,}\n```",
      { a: true, b: [1], c: null },
      [
        "the key a quoted",
        "True read as true",
        "the single-quoted key 'b' written with double quotes",
        "a trailing comma before ] removed",
        "a /* */ comment removed",
        "None read as null",
        "a trailing comma before } removed",
      ],
    ],
    ["in prose", "The config is {replicas: 3,} as asked.", { replicas: 3 }, ["the key replicas quoted", "a trailing comma before } removed"]],
  ];
  it.each(CASES)("%s", (_name, text, value, repairs) => {
    expect(read(text)).toMatchObject({ ok: true, value, repairs });
  });

  it("text that parses as it is is not touched and has no repairs", () => {
    const text = '{"url": "https://a.example/x // y", "note": "it\'s /* not */ a comment, True"}';
    expect(read(text)).toEqual({ ok: true, value: JSON.parse(text), source: "bare" });
    expect(repairSlips(text)).toBeUndefined();
  });

  it("more than ten repairs are counted, not all listed", () => {
    const text = `{${Array.from({ length: 15 }, (_, i) => `k${i}: ${i}`).join(", ")}}`;
    const result = read(text) as { repairs: string[] };
    expect(result.repairs).toHaveLength(11);
    expect(result.repairs[10]).toBe("…and 5 more");
  });
});

describe("nothing is guessed", () => {
  it("a truncated answer is never completed: it keeps the reader's truncation message", () => {
    for (const text of ['{"a": 1, "b": [1, 2,', '{a: 1, "b": {"c": True,', "{'a': 'unclosed"]) {
      const result = read(text);
      expect(result.ok, text).toBe(false);
      expect((result as { error: string }).error, text).toMatch(/truncated|not valid JSON/);
    }
  });

  it("an unclosed comment or string is left alone", () => {
    expect(repairSlips('{"a": 1 /* never closed')).toBeUndefined();
    expect(repairSlips("{'a: 1}")).toBeUndefined();
  });

  it("what is not a slip stays an error: NaN, Infinity, undefined, a bare word", () => {
    for (const text of ['{"a": NaN,}', '{"a": Infinity}', '{"a": undefined}', '{"a": yes}']) expect(read(text).ok, text).toBe(false);
  });

  it("with repairs turned off the reader says what is wrong, as before", () => {
    expect(extractJson('{"a": 1,}', {}, { repair: false })).toMatchObject({ ok: false, error: expect.stringMatching(/JSON does not allow a trailing comma/) });
  });

  it("a person's answer and a tool's arguments are read exactly: never repaired", () => {
    for (const text of ['{"a": 1,}', "{a: 1}", '{"a": True}', '{"a": 1 /* c */}']) expect(parseExactJson(text).ok, text).toBe(false);
  });
});

describe("the repaired value is judged whole", () => {
  const spec = resolveSpec("deployment-config");
  const valid = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;

  it("a repaired valid answer is valid, with its repairs on the verdict; a repaired invalid one is invalid", async () => {
    const slipped = JSON.stringify(valid).replace(/\}$/, ",}");
    expect(await checkText(spec, slipped, "model")).toMatchObject({ valid: true, repairs: ["a trailing comma before } removed"] });
    const invalid = JSON.stringify({ ...valid, replicas: 50 }).replace(/^\{/, "{// note\n");
    const verdict = await checkText(spec, invalid, "model");
    expect(verdict.valid).toBe(false);
    expect(verdict.repairs).toEqual(["a // comment removed"]);
    expect(await checkText(spec, slipped, "exact")).toMatchObject({ valid: false });
  });

  it("through the graph: one call instead of two, the repairs in the attempt's record; repairSyntax: false asks again", async () => {
    const slipped = `{// the config\n${JSON.stringify(valid).slice(1, -1)},}`;
    const once = await buildValidationGraph({ model: scriptedModel([slipped]) }).invoke({ request: "a deployment" });
    expect(once).toMatchObject({ success: true, attempts: 1 });
    expect(once.history[0].repairs).toEqual(["a // comment removed", "a trailing comma before } removed"]);
    const off = await buildValidationGraph({ model: scriptedModel([slipped, JSON.stringify(valid)]) }).invoke(
      { request: "a deployment" },
      { context: { repairSyntax: false } },
    );
    expect(off).toMatchObject({ success: true, attempts: 2 });
    expect(off.history[0].errors[0]).toMatch(/not valid JSON/);
  });

  it("a person's answer at the review and a tool call's arguments keep their slips: refused, never repaired, even with repairSyntax on", async () => {
    const slipped = JSON.stringify(valid).replace(/\}$/, ",}");
    const graph = buildValidationGraph({ model: scriptedModel([JSON.stringify({ ...valid, replicas: 50 })]), checkpointer: new MemorySaver() });
    const config = {
      configurable: { thread_id: `repair-review-${Math.random()}` },
      context: { maxAttempts: 1, onFailure: "interrupt" as const, repairSyntax: true },
    };
    await graph.invoke({ request: "a deployment" }, config);
    const person = await graph.invoke(new Command({ resume: { type: "edit", value: slipped } }), config);
    expect(person.success).toBe(false);
    expect(person.history.at(-1)).toMatchObject({ by: "human", valid: false });
    expect(person.history.at(-1)?.repairs).toBeUndefined();
    const tool = await checkToolArguments(spec, slipped);
    expect(tool.valid).toBe(false);
    expect(await checkToolArguments(spec, JSON.stringify(valid))).toMatchObject({ valid: true });
  });

  it("property: seeded values written with slips read back as the same value", () => {
    const random = seededRandom(34);
    for (let n = 0; n < 300; n++) {
      const value = {
        id: n,
        name: `item ${n}`,
        ok: random() < 0.5,
        tags: ["a", "b"].slice(0, Math.floor(random() * 3)),
        nested: { x: random() < 0.5 ? null : n / 7 },
      };
      let text = JSON.stringify(value, null, 1);
      if (random() < 0.5) text = text.replace(/"(\w+)":/g, "$1:");
      if (random() < 0.5) text = text.replace(/\n\}/g, ",\n}");
      if (random() < 0.5) text = text.replace(/true/g, "True").replace(/false/g, "False").replace(/null/g, "None");
      if (random() < 0.5) text = text.replace(/^\{/, "{ // generated\n");
      expect(read(text), text).toMatchObject({ ok: true, value });
    }
  });
});
