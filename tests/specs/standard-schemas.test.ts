/**
 * Specs from other Standard Schema libraries: a Valibot, an ArkType and an Effect schema are specs wherever a
 * spec is taken, typed from the schema (the expectTypeOf assertions are checked by `tsc --noEmit`). Their JSON
 * Schema comes from Standard JSON Schema (Valibot and Effect wrapped for it) or ArkType's converter; what it cannot say is judged by the
 * library's own validate, last, under the check step's deadline and on its frozen copy. What cannot be
 * converted is refused, naming the library.
 */
import { type } from "arktype";
import { Schema } from "effect";
import * as v from "valibot";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { createAgent } from "langchain";
import { describe, expect, expectTypeOf, it } from "vitest";
import { validatedResponseMiddleware } from "../../src/agents/validated-response.js";
import { guardToolsMiddleware } from "../../src/agents/guard-tools.js";
import { SpecError } from "../../src/errors.js";
import { checkValue, checkValueSync } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type Spec, type SpecOutput } from "../../src/specs/spec.js";
import type { StandardSchemaV1 } from "../../src/specs/standard.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { generateValidated, type ValidationOutcome } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated } from "../../src/validation/stream.js";
import { scriptedModel } from "../../testkit/scripted-model.js";
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { answerToolName } from "../../src/agents/answer.js";

/** The same person in each library: a name of 2+ characters, a whole non-negative age, a tag the JSON Schema cannot say (starts with "x"). */
const ValibotBare = v.object({
  name: v.pipe(v.string(), v.minLength(2)),
  age: v.pipe(v.number(), v.integer(), v.minValue(0)),
  tag: v.pipe(
    v.string(),
    v.check((s) => s.startsWith("x"), "must start with x"),
  ),
});
const ValibotPerson = toStandardJsonSchema(ValibotBare);
const ArkPerson = type({
  name: "string >= 2",
  age: "number.integer >= 0",
  tag: type("string").narrow((s, ctx) => s.startsWith("x") || ctx.mustBe("starting with x")),
});
const EffectPerson = Schema.toStandardJSONSchemaV1(
  Schema.toStandardSchemaV1(
    Schema.Struct({
      name: Schema.String.check(Schema.isMinLength(2)),
      age: Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)),
      tag: Schema.String.check(Schema.makeFilter((s: string) => s.startsWith("x") || "must start with x")),
    }),
  ),
);

type Person = { name: string; age: number; tag: string };
const good: Person = { name: "Ada", age: 36, tag: "x1" };
const bad = { name: "A", age: 3.5, tag: "y1" };

const LIBRARIES = [
  ["Valibot", ValibotPerson],
  ["ArkType", ArkPerson],
  ["Effect Schema", EffectPerson],
] as const;

describe.each(LIBRARIES)("a %s schema is a spec", (library, schema) => {
  it("generateValidated gives a typed valid result after refusing an invalid answer with every field named", async () => {
    const model = scriptedModel([JSON.stringify(bad), JSON.stringify(good)]);
    const outcome = await generateValidated({ model, spec: schema, request: "a person", maxAttempts: 2 });
    expect(outcome.success).toBe(true);
    if (!outcome.success) throw new Error(outcome.errors.join("; "));
    expect(outcome.value).toEqual(good);
    expect(outcome.attempts).toBe(2);
    const feedback = String(model.calls[1].messages.at(-1)!.content);
    for (const field of ["name", "age", "tag"]) expect(feedback).toMatch(new RegExp(`^- ${field} is `, "m"));
  });

  it("refuses an invalid value naming the field: the JSON Schema for what it says, the library for the rest", async () => {
    const refused = await checkValue(schema, bad);
    expect(refused.valid).toBe(false);
    // Effect's JSON Schema says minLength 1 for isMinLength(2): Effect's own validate names the field then.
    expect(refused.errors.filter((error) => error.startsWith('name is "A"; '))).toHaveLength(1);
    expect(refused.errors).toContain("age is 3.5 (number); it must be an integer");
    // The JSON Schema cannot say "starts with x": the library's own validate does, last, on every value.
    const tagOnly = await checkValue(schema, { ...good, tag: "y1" });
    expect(tagOnly.valid).toBe(false);
    expect(tagOnly.errors).toHaveLength(1);
    expect(tagOnly.errors[0]).toMatch(/^tag is "y1"; .*(start|x)/);
    expect(resolveSpec(schema).checkSchema({ ...good, tag: "y1" })).toBe(true);
    expect(checkValueSync(schema, { ...good, tag: "y1" }).valid).toBe(false);
    expect(checkValueSync(schema, good)).toMatchObject({ valid: true, value: good });
  });

  it(`names the spec from the schema once per schema, and its JSON Schema is the library's (${library})`, () => {
    const spec = resolveSpec(schema);
    expect(resolveSpec(schema)).toBe(spec);
    expect(spec.name).toBe("output");
    expect(spec.standard).toBe(schema);
    expect(spec.schema).toMatchObject({ type: "object", required: expect.arrayContaining(["name", "age", "tag"]) });
    expect(resolveSpec({ name: "person", schema }).name).toBe("person");
  });

  it("streamValidated and the graph builder take it", async () => {
    const events = [];
    for await (const event of streamValidated({ model: scriptedModel([JSON.stringify(good)]), spec: schema, request: "x" })) events.push(event);
    expect(events.at(-1)).toMatchObject({ kind: "outcome", outcome: { success: true, value: good } });
    const graph = buildValidationGraph({ model: scriptedModel([JSON.stringify(bad)]), spec: schema, maxAttempts: 1 });
    const out = await graph.invoke({ request: "x" });
    expect(out.success).toBe(false);
    expect(out.errors.join("\n")).toMatch(/^tag is "y1"; /m);
  });

  it("guardedTool runs its function only on a valid value, typed from the schema", async () => {
    const seen: string[] = [];
    const tool = guardedTool({
      name: "register",
      spec: schema,
      func: (args) => {
        expectTypeOf(args.name).toEqualTypeOf<string>();
        seen.push(args.name);
        return "registered";
      },
    });
    expect(await tool.invoke(good)).toBe("registered");
    expect(String(await tool.invoke({ ...good, tag: "y1" }))).toMatch(/tag is "y1"/);
    expect(seen).toEqual(["Ada"]);
    expect(guardToolsMiddleware({ tools: { register: schema } }).name).toBeTypeOf("string");
  });

  it("the createAgent middleware holds the answer to it", async () => {
    const tool = answerToolName(resolveSpec(schema));
    const model = fakeModel();
    for (const args of [bad, good]) model.respond(() => new AIMessage({ content: "", tool_calls: [{ name: tool, args, id: "call_0", type: "tool_call" }] }));
    const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: schema, maxAttempts: 2 })] });
    const state = await agent.invoke({ messages: [{ role: "user", content: "a person" }] });
    expect(state.responseOutcome).toMatchObject({ success: true, value: good, attempts: 2 });
    expect((state as { structuredResponse?: unknown }).structuredResponse).toEqual(good);
  });
});

describe("types", () => {
  it("the valid value is the library's output type (StandardSchemaV1.InferOutput)", async () => {
    expectTypeOf<SpecOutput<typeof ValibotPerson>>().toEqualTypeOf<v.InferOutput<typeof ValibotBare>>();
    expectTypeOf<SpecOutput<typeof ArkPerson>>().toEqualTypeOf<typeof ArkPerson.infer>();
    expectTypeOf<SpecOutput<typeof EffectPerson>>().toEqualTypeOf<{ readonly name: string; readonly age: number; readonly tag: string }>();
    expectTypeOf(resolveSpec(ValibotPerson)).toEqualTypeOf<Spec<Person>>();
    expectTypeOf(defineSpec({ schema: ArkPerson })).toEqualTypeOf<Spec<typeof ArkPerson.infer>>();
    const outcome = await generateValidated({ model: scriptedModel([JSON.stringify(good)]), spec: ValibotPerson, request: "x", maxAttempts: 1 });
    expectTypeOf(outcome).toEqualTypeOf<ValidationOutcome<Person>>();
    const verdict = await checkValue(ArkPerson, good);
    expectTypeOf(verdict.value).toEqualTypeOf<typeof ArkPerson.infer | undefined>();
    // A transform's output is the result, typed and checked as JSON data.
    const Trimmed = toStandardJsonSchema(
      v.object({
        tag: v.pipe(
          v.string(),
          v.transform((s) => s.length),
        ),
      }),
    );
    const trimmed = await generateValidated({ model: scriptedModel([JSON.stringify({ tag: "abc" })]), spec: Trimmed, request: "x", maxAttempts: 1 });
    if (!trimmed.success) throw new Error(trimmed.errors.join("; "));
    expectTypeOf(trimmed.value.tag).toEqualTypeOf<number>();
    expect(trimmed.value.tag).toBe(3);
  });
});

/** A Standard Schema of one's own, implementing Standard JSON Schema, whose validate is given. */
function ownSchema(validate: (value: unknown) => unknown, vendor = "own"): StandardSchemaV1<unknown, { n: number }> {
  return {
    "~standard": {
      version: 1,
      vendor,
      validate: validate as StandardSchemaV1<unknown, { n: number }>["~standard"]["validate"],
      jsonSchema: { input: () => ({ type: "object", required: ["n"], properties: { n: { type: "number" } } }) },
    } as StandardSchemaV1<unknown, { n: number }>["~standard"],
  };
}

describe("the library's validate, judged as zod refinements are", () => {
  it("an asynchronous validate is awaited by the check step; the synchronous one refuses the value and leaves no rejection behind", async () => {
    // toStandardJsonSchema's type takes synchronous schemas only; it converts an asynchronous one as it is.
    const Even = toStandardJsonSchema(
      v.objectAsync({
        n: v.pipeAsync(
          v.number(),
          v.checkAsync(async (n) => n % 2 === 0, "must be even"),
        ),
      }) as unknown as v.GenericSchema<{ n: number }>,
    );
    expect(await checkValue(Even, { n: 2 })).toMatchObject({ valid: true, value: { n: 2 } });
    expect((await checkValue(Even, { n: 3 })).errors).toEqual(["n is 3; must be even"]);
    expect(checkValueSync(Even, { n: 2 }).errors[0]).toMatch(/could not check the value with its Valibot schema: its validate returned a Promise/);
  });

  it("one that does not finish within the deadline, rejects or throws makes the value invalid, never valid", async () => {
    const never = ownSchema(() => new Promise(() => undefined));
    expect((await checkValue(never, { n: 1 }, { timeoutMs: 20 })).errors).toEqual([
      'the spec "output" could not check the value with its the Standard Schema library "own" schema: its validate did not finish within 20 ms',
    ]);
    const rejects = ownSchema(() => Promise.reject(new Error("lookup down")));
    expect((await checkValue(rejects, { n: 1 })).errors[0]).toMatch(/it failed: .*lookup down/);
    const throws = ownSchema(() => {
      throw new Error("boom");
    });
    expect(checkValueSync(throws, { n: 1 }).errors[0]).toMatch(/could not check the value .*boom/);
    const odd = ownSchema(() => ({ issues: [] }));
    expect((await checkValue(odd, { n: 1 })).errors[0]).toMatch(/empty list of issues/);
  });

  it("reads a copy of its own: a validate that writes to the value changes nothing kept; what it returns is the output", async () => {
    const writes = ownSchema((value) => {
      (value as { n: number }).n = 99;
      return { value };
    });
    const given = { n: 1 };
    const verdict = await checkValue(writes, given);
    expect(verdict).toMatchObject({ valid: true, value: { n: 99 }, parsed: { n: 1 } });
    expect(given).toEqual({ n: 1 });
    expect(Object.isFrozen(verdict.parsed)).toBe(true);
    // ArkType's morphs write to the value they are given.
    const Length = type({ tag: type("string").pipe((s) => s.length) });
    expect(checkValueSync(Length, { tag: "abc" })).toMatchObject({ valid: true, value: { tag: 3 }, parsed: { tag: "abc" } });
  });

  it("an output that is not JSON data is refused (a Date from a transform)", async () => {
    const Dated = toStandardJsonSchema(
      v.object({
        at: v.pipe(
          v.string(),
          v.transform((s) => new Date(s)),
        ),
      }),
    );
    const verdict = await checkValue(Dated, { at: "2024-01-02" });
    expect(verdict.valid).toBe(false);
    expect(verdict.errors[0]).toMatch(/turned the value into something that is not JSON data/);
  });
});

describe("what cannot be converted is refused, naming the library", () => {
  it("a schema with no JSON form", () => {
    const Dated = toStandardJsonSchema(v.object({ at: v.date() }));
    expect(() => resolveSpec(Dated)).toThrow(SpecError);
    expect(() => resolveSpec(Dated)).toThrow(/^Spec "output": its Valibot schema has no JSON Schema form here: The "date" schema cannot be converted/);
    expect(() => resolveSpec(type({ at: "Date" }))).toThrow(/^Spec "output": its ArkType schema has no JSON Schema form here: ArkType could not convert it/);
  });

  it("a Valibot schema not wrapped for Standard JSON Schema, saying how to wrap it", () => {
    const wrap = 'import { toStandardJsonSchema } from "@valibot/to-json-schema"; toStandardJsonSchema(schema)';
    for (const use of [() => resolveSpec(ValibotBare), () => defineSpec({ schema: ValibotBare }), () => checkValueSync(ValibotBare, good)]) {
      let message = "";
      try {
        const verdict = use();
        message = "errors" in verdict ? verdict.errors.join("; ") : "";
      } catch (error) {
        expect(error).toBeInstanceOf(SpecError);
        message = (error as Error).message;
      }
      expect(message).toContain(
        `its Valibot schema has no JSON Schema form here: a Valibot schema gives its JSON Schema through Standard JSON Schema: pass it wrapped, ${wrap}`,
      );
    }
  });

  it("Valibot's converter under its defaults refuses an action with no keyword; the spec keeps the part JSON Schema says and Valibot judges the rest", () => {
    // @valibot/to-json-schema's own default (errorMode "throw"): a v.check() cannot be converted.
    expect(() => ValibotPerson["~standard"].jsonSchema.input({ target: "draft-07" })).toThrow(/The "check" action cannot be converted to JSON Schema/);
    // The spec passes its conversion config through Standard JSON Schema's libraryOptions.
    expect(resolveSpec(ValibotPerson).schema).toMatchObject({ properties: { tag: { type: "string" } } });
    // toStandardJsonSchema keeps Valibot's own validate: the wrapped schema's is the bare one's.
    expect(ValibotPerson["~standard"].validate({ ...good, tag: "y1" })).toEqual(ValibotBare["~standard"].validate({ ...good, tag: "y1" }));
    expect(ValibotPerson["~standard"].vendor).toBe("valibot");
  });

  it("a library without Standard JSON Schema, an Effect schema not wrapped, zod 3", () => {
    const noJson = { "~standard": { version: 1, vendor: "yup", validate: (value: unknown) => ({ value }) } };
    expect(() => resolveSpec(noJson as never)).toThrow(/the Standard Schema library "yup" schema has no JSON Schema form here: .*not Standard JSON Schema/);
    const wrappedForValidateOnly = Schema.toStandardSchemaV1(Schema.Struct({ a: Schema.String }));
    expect(() => resolveSpec(wrappedForValidateOnly)).toThrow(/Schema\.toStandardJSONSchemaV1\(Schema\.toStandardSchemaV1\(schema\)\)/);
    expect(() => resolveSpec(Schema.Struct({ a: Schema.String }) as never)).toThrow(/is an Effect Schema schema.*Schema\.toStandardJSONSchemaV1/);
  });

  it("inside a JSON Schema, or as the JSON that serialises one: never read as a JSON Schema", () => {
    expect(() => resolveSpec({ schema: { type: "object", properties: { age: v.number() } } } as never)).toThrow(
      /^The spec \(at #\/schema\/properties\/age\) is a Valibot schema, which this package does not read in this form/,
    );
    for (const schema of [ValibotBare, ValibotPerson]) {
      expect(() => resolveSpec(JSON.stringify(schema))).toThrow(/is a Valibot schema/);
      expect(() => resolveSpec(JSON.parse(JSON.stringify(schema)))).toThrow(/is a Valibot schema/);
    }
  });
});
