/**
 * Correction retries (retryWith): the retry asks for a JSON Patch, which is applied to the last answer and
 * judged whole by the check step; a correction that cannot be used is followed by a whole-answer retry
 * within the same attempts. Streaming, escalation, budgets and review keep working around them.
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { correctionPrompt, PROMPT_HEADINGS, unusedCorrectionError } from "../../src/protocol/feedback.js";
import { applyCorrection, MAX_CORRECTABLE_CHARS, MAX_CORRECTION_OPERATIONS, retryFormFor, shownValue } from "../../src/validation/corrections.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { ensureValidationConfig } from "../../src/validation/configuration.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated, type ValidationStreamEvent } from "../../src/validation/stream.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";
import { ScriptedChatModel } from "../../testkit/scripted-model.js";
import { TokenStreamingModel } from "../streaming/token-model.js";

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, any>;
const BROKEN = { ...VALID, replicas: 8, resources: { ...VALID.resources, cpu_limit: 0.5 } };
const ERROR = RULES.replicasNeedCpu(0.5, 8);
const FIX = JSON.stringify([{ op: "replace", path: "/resources/cpu_limit", value: 2 }]);
const FIXED = { ...BROKEN, resources: { ...BROKEN.resources, cpu_limit: 2 } };
const request = "A deployment config for payments-api with 8 replicas";

/** The human prompt of each call a scripted model received. */
function prompts(model: ScriptedChatModel): string[] {
  return model.calls.map((call) => String(call.messages.at(-1)!.content));
}

const isCorrectionRequest = (prompt: string) => prompt.includes(PROMPT_HEADINGS.corrections);

describe("correction retries", () => {
  it("the retry asks for a JSON Patch; the corrected answer is judged whole and recorded with the correction", async () => {
    const model = new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), FIX] });
    const outcome = await generateValidated({ model, spec: "deployment-config", request, retryWith: "corrections" });
    expect(outcome).toMatchObject({ success: true, attempts: 2, value: FIXED, stopReason: "valid" });
    const [first, second] = prompts(model);
    expect(isCorrectionRequest(first)).toBe(false);
    // The retry shows the whole previous value (the paths point into it) and the exact errors.
    expect(second).toBe(correctionPrompt(request, shownValue(BROKEN), [ERROR]));
    expect(outcome.history[1]).toMatchObject({ valid: true, errors: [], correction: { text: FIX, applied: true } });
    expect(JSON.parse(outcome.history[1].output)).toEqual(FIXED);
    expect(outcome.history[0].correction).toBeUndefined();
  });

  it("a correction that fixes one error and leaves another is kept: valid only once the whole value passes", async () => {
    const twoErrors = { ...BROKEN, service_name: "Payments API" };
    const nameOnly = JSON.stringify([{ op: "replace", path: "/service_name", value: "payments-api" }]);
    const model = new ScriptedChatModel({ answers: [JSON.stringify(twoErrors), nameOnly, FIX] });
    const outcome = await generateValidated({ model, spec: "deployment-config", request, retryWith: "corrections", maxAttempts: 3 });
    expect(outcome.history.map((r) => [r.valid, r.correction?.applied])).toEqual([
      [false, undefined],
      [false, true],
      [true, true],
    ]);
    expect(outcome.history[1].errors).toEqual([ERROR]);
    expect(prompts(model).map(isCorrectionRequest)).toEqual([false, true, true]);
    expect(outcome.value).toEqual(FIXED);
  });

  const fallbacks: Array<[string, string, RegExp]> = [
    ["not JSON", "I changed cpu_limit to 2.", /not JSON/],
    ["not a patch", JSON.stringify({ resources: { cpu_limit: 2 } }), /not a JSON Patch/],
    ["an unknown operation", JSON.stringify([{ op: "set", path: "/replicas", value: 2 }]), /op "set"/],
    ["a path outside the answer", JSON.stringify([{ op: "replace", path: "/resources/cpu", value: 2 }]), /path your previous answer does not have/],
    ["a parent outside the answer", JSON.stringify([{ op: "add", path: "/limits/cpu", value: 2 }]), /path your previous answer does not have/],
    [
      "a path naming an inherited name",
      JSON.stringify([{ op: "move", from: "/constructor", path: "" }]),
      /from \/constructor\) names a path your previous answer does not have/,
    ],
    [
      "a path naming an inherited method",
      JSON.stringify([{ op: "replace", path: "/toString", value: 1 }]),
      /\(replace \/toString, i.e. toString\) names a path your previous answer does not have/,
    ],
    ["a failed test", JSON.stringify([{ op: "test", path: "/replicas", value: 3 }, ...JSON.parse(FIX)]), /tests a value/],
    [
      "more errors",
      JSON.stringify([...JSON.parse(FIX), { op: "remove", path: "/service_name" }, { op: "replace", path: "/replicas", value: "8" }]),
      /more than the 1/,
    ],
  ];
  for (const [what, correction, problem] of fallbacks) {
    it(`a correction with ${what} is set aside: the attempt counts, the answer stays, and the next retry asks for the whole answer`, async () => {
      const model = new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), correction, JSON.stringify(VALID)] });
      const outcome = await generateValidated({ model, spec: "deployment-config", request, retryWith: "corrections", maxAttempts: 3 });
      expect(outcome).toMatchObject({ success: true, attempts: 3, value: VALID });
      const set = outcome.history[1];
      expect(set.valid).toBe(false);
      expect(set.correction).toMatchObject({ text: correction, applied: false });
      expect(set.correction!.problem).toMatch(problem);
      // The previous answer is kept as the attempt's output, with why the correction was not used, then its own errors.
      expect(JSON.parse(set.output)).toEqual(BROKEN);
      expect(set.errors).toEqual([unusedCorrectionError(set.correction!.problem!), ERROR]);
      const third = prompts(model)[2];
      expect(isCorrectionRequest(third)).toBe(false);
      expect(third).toContain(set.errors[0]);
    });
  }

  it("a correction set aside at the last attempt ends the run with the previous answer and its errors", async () => {
    const model = new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), "nope"] });
    const outcome = await generateValidated({ model, spec: "deployment-config", request, retryWith: "corrections", maxAttempts: 2 });
    expect(outcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 2, value: BROKEN });
    expect(outcome.errors.slice(1)).toEqual([ERROR]);
  });

  it("syntax slips in a correction are repaired and listed, unless repairSyntax is off", async () => {
    const slipped = `[{'op': 'replace', 'path': '/resources/cpu_limit', 'value': 2,},]`;
    const repaired = await generateValidated({
      model: new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), slipped] }),
      spec: "deployment-config",
      request,
      retryWith: "corrections",
    });
    expect(repaired.success).toBe(true);
    expect(repaired.history[1].repairs?.length).toBeGreaterThan(0);
    const exact = await generateValidated({
      model: new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), slipped] }),
      spec: "deployment-config",
      request,
      retryWith: "corrections",
      repairSyntax: false,
      maxAttempts: 2,
    });
    expect(exact.history[1].correction).toMatchObject({ applied: false });
  });

  it('"answer" (the default) never asks for corrections', async () => {
    expect(ensureValidationConfig({}).retryWith).toBe("answer");
    const model = new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), JSON.stringify(VALID)] });
    const outcome = await generateValidated({ model, spec: "deployment-config", request });
    expect(outcome.success).toBe(true);
    expect(prompts(model).some(isCorrectionRequest)).toBe(false);
    expect(outcome.history.every((r) => r.correction === undefined)).toBe(true);
  });

  it("an answer that was not JSON, or a run in a provider's schema or tool mode, is retried whole", async () => {
    const notJson = new ScriptedChatModel({ answers: ["no idea", JSON.stringify(VALID)] });
    await generateValidated({ model: notJson, spec: "deployment-config", request, retryWith: "corrections" });
    expect(prompts(notJson).some(isCorrectionRequest)).toBe(false);
    const tool = new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), JSON.stringify(VALID)] });
    const outcome = await generateValidated({ model: tool, spec: "deployment-config", request, retryWith: "corrections", outputMode: "tool" });
    expect(outcome.history.every((r) => r.correction === undefined)).toBe(true);
    expect(prompts(tool).some(isCorrectionRequest)).toBe(false);
  });

  it("a bad retryWith is refused with the values allowed", () => {
    expect(() => ensureValidationConfig({ context: { retryWith: "patch" } })).toThrow(/retryWith must be one of "answer", "corrections", "auto"/);
  });

  it("escalation: the next model is asked for corrections of the previous model's answer, and its record names it", async () => {
    const models = new Map([
      ["small", new ScriptedChatModel({ answers: [JSON.stringify(BROKEN)] })],
      ["large", new ScriptedChatModel({ answers: [FIX] })],
    ]);
    const outcome = await generateValidated({
      model: ({ model }) => models.get(model!)!,
      spec: "deployment-config",
      request,
      retryWith: "corrections",
      models: [{ model: "small" }, { model: "large" }],
    });
    expect(outcome).toMatchObject({ success: true, attempts: 2 });
    expect(outcome.history.map((r) => r.model)).toEqual(["small", "large"]);
    expect(outcome.history[1].correction?.applied).toBe(true);
    expect(Object.keys(outcome.usageByModel).sort()).toEqual(["large", "small"]);
  });

  it("a token budget counts the correction prompt like any other: a call that would pass it is not made", async () => {
    const model = new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), FIX] });
    const first = await generateValidated({ model, spec: "deployment-config", request, maxAttempts: 1 });
    const outcome = await generateValidated({
      model: new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), FIX] }),
      spec: "deployment-config",
      request,
      retryWith: "corrections",
      maxTokens: first.usage.totalTokens + 10,
    });
    expect(outcome).toMatchObject({ success: false, stopReason: "budget", attempts: 1, value: BROKEN });
  });

  it("streaming: the corrected value is published whole for its attempt; no partial check reads the patch", async () => {
    const model = new TokenStreamingModel({ answers: [JSON.stringify(BROKEN, null, 2), FIX] });
    const events: ValidationStreamEvent[] = [];
    for await (const event of streamValidated({ model, spec: "deployment-config", request, retryWith: "corrections", stopEarly: "first-error" }))
      events.push(event);
    const outcome = events.at(-1)!;
    expect(outcome).toMatchObject({ kind: "outcome", outcome: { success: true, attempts: 2, value: FIXED } });
    const second = events.filter((e) => e.kind !== "outcome" && e.attempt === 2);
    expect(second.map((e) => e.kind)).toEqual(["partial", "final"]);
    expect(second[1]).toMatchObject({ value: FIXED, complete: [""], stopped: null, chars: FIX.length });
    // "first-error" stops an answer at its first error; a patch is never read as an answer, so it ran to its end.
    expect(model.calls[1].aborted).toBe(false);
  });

  it("review: a person's answer is read exactly, never as a correction", async () => {
    const model = new ScriptedChatModel({ answers: [JSON.stringify(BROKEN), FIX] });
    const graph = buildValidationGraph({ model, checkpointer: new MemorySaver() });
    const config = {
      configurable: { thread_id: `corrections-review-${Math.random()}` },
      context: { maxAttempts: 1, onFailure: "interrupt" as const, retryWith: "corrections" as const },
    };
    await graph.invoke({ request }, config);
    const refused = await graph.invoke(new Command({ resume: { type: "edit", value: FIX } }), config);
    expect(refused.success).toBe(false);
    expect(refused.history.at(-1)).toMatchObject({ by: "human", valid: false, output: FIX });
    expect(refused.history.at(-1)?.correction).toBeUndefined();
    // A person's new request starts afresh: its first attempt is asked for a whole answer.
    await graph.invoke(new Command({ resume: { type: "retry", request } }), config);
    expect(prompts(model).map(isCorrectionRequest)).toEqual([false, false]);
  });
});

describe("applyCorrection and retryFormFor (pure)", () => {
  it("applies RFC 6902 operations without touching the value it was given", () => {
    const base = { a: { b: 1 }, list: [1, 2, 3] };
    const result = applyCorrection(
      JSON.stringify([
        { op: "replace", path: "/a/b", value: null },
        { op: "add", path: "/list/-", value: 4 },
        { op: "remove", path: "/list/0" },
        { op: "add", path: "/c", value: { b: 2 } },
        { op: "move", from: "/c", path: "/d" },
      ]),
      base,
    );
    expect(result).toEqual({ ok: true, operations: 5, value: { a: { b: null }, list: [2, 3, 4], d: { b: 2 } } });
    expect(base).toEqual({ a: { b: 1 }, list: [1, 2, 3] });
  });

  it('accepts an object holding the patch (a JSON mode\'s {"patch": […]}) and a fenced patch', () => {
    expect(applyCorrection('{"patch": [{"op": "replace", "path": "/a", "value": 2}]}', { a: 1 })).toMatchObject({ ok: true, value: { a: 2 } });
    expect(applyCorrection('```json\n[{"op": "replace", "path": "/a", "value": 2}]\n```', { a: 1 })).toMatchObject({ ok: true, value: { a: 2 } });
  });

  it("refuses what is not a usable patch, saying which operation and why", () => {
    const base = { a: 1, list: [1] };
    expect(applyCorrection("[]", base)).toMatchObject({ ok: false, problem: expect.stringMatching(/empty/) });
    expect(applyCorrection('[{"op": "replace", "path": "a", "value": 1}]', base)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/operation 1 .*JSON Pointer/),
    });
    expect(applyCorrection('[{"op": "replace", "path": "/a"}]', base)).toMatchObject({ ok: false, problem: expect.stringMatching(/no value/) });
    expect(applyCorrection('[{"op": "move", "path": "/b"}]', base)).toMatchObject({ ok: false, problem: expect.stringMatching(/no from/) });
    expect(applyCorrection('[{"op": "add", "path": "/list/5", "value": 1}]', base)).toMatchObject({ ok: false, outside: true });
    expect(applyCorrection('[{"op": "remove", "path": "/zz"}]', base)).toMatchObject({
      ok: false,
      outside: true,
      problem: "operation 1 of the correction (remove /zz, i.e. zz) names a path your previous answer does not have",
    });
    expect(applyCorrection('[{"op": "add", "path": "/__proto__/polluted", "value": 1}]', base)).toMatchObject({ ok: false });
    // What could grow the answer without bound or make it circular is refused before anything is applied.
    expect(applyCorrection('[{"op": "copy", "from": "", "path": "/a"}]', base)).toMatchObject({ ok: false, problem: expect.stringMatching(/op "copy"/) });
    expect(applyCorrection('[{"op": "move", "from": "", "path": "/a"}]', base)).toMatchObject({ ok: false, problem: expect.stringMatching(/into itself/) });
    expect(applyCorrection('[{"op": "move", "from": "/list", "path": "/list/0"}]', base)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/into itself/),
    });
    const many = JSON.stringify(Array.from({ length: MAX_CORRECTION_OPERATIONS + 1 }, () => ({ op: "test", path: "/a", value: 1 })));
    expect(applyCorrection(many, base)).toMatchObject({ ok: false, problem: expect.stringMatching(/over the limit/) });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("paths resolve through the answer's own fields only: an inherited name (constructor, toString, valueOf) names nothing, and nothing throws", () => {
    const base = { name: "api", tags: ["a", "b"] };
    const cases: Array<[string, string]> = [
      [
        '[{"op": "move", "from": "/constructor", "path": ""}]',
        "operation 1 of the correction (move the whole answer) (from /constructor) names a path your previous answer does not have",
      ],
      [
        '[{"op": "replace", "path": "/toString", "value": 1}]',
        "operation 1 of the correction (replace /toString, i.e. toString) names a path your previous answer does not have",
      ],
      [
        '[{"op": "move", "from": "/valueOf", "path": "/tags/0"}]',
        "operation 1 of the correction (move /tags/0, i.e. tags[0]) (from /valueOf) names a path your previous answer does not have",
      ],
      [
        '[{"op": "move", "from": "/toString", "path": "/toJSON"}]',
        "operation 1 of the correction (move /toJSON, i.e. toJSON) (from /toString) names a path your previous answer does not have",
      ],
      [
        '[{"op": "remove", "path": "/hasOwnProperty"}]',
        "operation 1 of the correction (remove /hasOwnProperty, i.e. hasOwnProperty) names a path your previous answer does not have",
      ],
      [
        '[{"op": "test", "path": "/tags/length", "value": 2}]',
        'operation 1 of the correction (test /tags/length, i.e. tags.length) names a path your previous answer does not have: "length" is not an array index (0, or digits without a leading zero)',
      ],
      [
        '[{"op": "add", "path": "/constructor/x", "value": 1}]',
        "operation 1 of the correction (add /constructor/x, i.e. constructor.x) names a path your previous answer does not have",
      ],
    ];
    for (const [correction, problem] of cases) expect(applyCorrection(correction, base), correction).toEqual({ ok: false, outside: true, problem });
    expect(base).toEqual({ name: "api", tags: ["a", "b"] });
    // A field the answer has is a field, whatever its name; adding one is adding an own field.
    const named = { constructor: "c", toString: "t", tags: [] };
    expect(applyCorrection('[{"op": "replace", "path": "/constructor", "value": "d"}, {"op": "move", "from": "/toString", "path": "/toJSON"}]', named)).toEqual(
      {
        ok: true,
        operations: 2,
        value: { constructor: "d", toJSON: "t", tags: [] },
      },
    );
    expect(applyCorrection('[{"op": "add", "path": "/valueOf", "value": 1}]', base)).toEqual({ ok: true, operations: 1, value: { ...base, valueOf: 1 } });
  });

  it('array indices follow RFC 6901 (no leading zero) and RFC 6902 ("-" only where a value is added)', () => {
    const base = { tags: ["a", "b"], grid: [[1, 2]] };
    const outside = (correction: string) => expect(applyCorrection(correction, base), correction).toMatchObject({ ok: false, outside: true });
    outside('[{"op": "replace", "path": "/tags/01", "value": "x"}]');
    outside('[{"op": "remove", "path": "/tags/00"}]');
    outside('[{"op": "add", "path": "/tags/01", "value": "x"}]');
    outside('[{"op": "move", "from": "/tags/01", "path": "/tags/0"}]');
    outside('[{"op": "replace", "path": "/grid/0/01", "value": 3}]');
    outside('[{"op": "replace", "path": "/tags/-", "value": "x"}]');
    outside('[{"op": "remove", "path": "/tags/-"}]');
    outside('[{"op": "test", "path": "/tags/-", "value": "b"}]');
    outside('[{"op": "move", "from": "/tags/-", "path": "/x"}]');
    outside('[{"op": "add", "path": "/tags/-/x", "value": 1}]');
    outside('[{"op": "add", "path": "/tags/3", "value": "x"}]');
    outside('[{"op": "replace", "path": "/tags/2", "value": "x"}]');
    outside('[{"op": "replace", "path": "/tags/1e0", "value": "x"}]');
    outside('[{"op": "replace", "path": "/tags/99999999999999999999", "value": "x"}]');
    expect(applyCorrection('[{"op": "replace", "path": "/tags/~2", "value": "x"}]', base)).toEqual({
      ok: false,
      problem:
        'operation 1 of the correction (replace /tags/~2, i.e. tags["~2"]) is not a JSON Pointer: in "/tags/~2", "~" must be followed by 0 or 1 (RFC 6901)',
    });
    // The grammar's own indices work, and "-" appends where RFC 6902 adds (add, and move's path); later operations see earlier ones.
    expect(
      applyCorrection(
        JSON.stringify([
          { op: "replace", path: "/tags/0", value: "z" },
          { op: "add", path: "/tags/-", value: "c" },
          { op: "add", path: "/tags/3", value: "d" },
          { op: "move", from: "/grid/0/1", path: "/tags/-" },
          { op: "test", path: "/tags/4", value: 2 },
          { op: "remove", path: "/tags/10" },
        ]),
        base,
      ),
    ).toMatchObject({ ok: false, outside: true, problem: expect.stringMatching(/^operation 6 of the correction \(remove \/tags\/10/) });
    expect(
      applyCorrection(
        JSON.stringify([
          { op: "add", path: "/tags/-", value: "c" },
          { op: "move", from: "/grid/0/1", path: "/tags/-" },
          { op: "test", path: "/tags/3", value: 2 },
        ]),
        base,
      ),
    ).toEqual({ ok: true, operations: 3, value: { tags: ["a", "b", "c", 2], grid: [[1]] } });
    expect(base).toEqual({ tags: ["a", "b"], grid: [[1, 2]] });
  });

  it("retryFormFor: corrections only of a whole JSON answer that fits; auto only when its errors are few for its size", () => {
    const big = { items: Array.from({ length: 100 }, (_, i) => ({ name: `item-${i}`, size: i })) };
    const whole = { value: big, errors: ["items[3].size is -1; it must be >= 0"], whole: true };
    expect(retryFormFor("answer", whole)).toBe("answer");
    expect(retryFormFor("corrections", whole)).toBe("corrections");
    expect(retryFormFor("auto", whole)).toBe("corrections");
    expect(retryFormFor("corrections", { ...whole, whole: false })).toBe("answer");
    expect(retryFormFor("corrections", { ...whole, value: "text" })).toBe("answer");
    expect(retryFormFor("corrections", { ...whole, value: null })).toBe("answer");
    const small = { value: { a: 1 }, errors: ["a is 1; it must be >= 2"], whole: true };
    expect(retryFormFor("corrections", small)).toBe("corrections");
    expect(retryFormFor("auto", small)).toBe("answer");
    const many = { ...whole, errors: Array.from({ length: 20 }, () => "x") };
    expect(retryFormFor("auto", many)).toBe("answer");
    const huge = { value: { text: "x".repeat(MAX_CORRECTABLE_CHARS) }, errors: ["e"], whole: true };
    expect(retryFormFor("corrections", huge)).toBe("answer");
  });
});
