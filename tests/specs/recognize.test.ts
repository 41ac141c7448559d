/**
 * A spec is what it says it is: a zod 4 schema or another Standard Schema library's schema passed whole (Valibot
 * and Effect wrapped for Standard JSON Schema), a
 * Spec from defineSpec, a built-in name, an inline {name, description, schema}, or a bare JSON Schema
 * recognised as one. Another library's schema where a JSON Schema stands (inside one, or in its JSON form) is
 * refused wherever a spec is taken, naming the library, never read as a JSON Schema whose unknown keywords are
 * ignored (which would check nothing of what it says); so is a schema no JSON Schema can be had from (an Effect
 * or Valibot schema not wrapped for Standard JSON Schema, zod 3 and zod/mini, a library without Standard JSON Schema).
 * The schemas are the libraries' own (Valibot, ArkType and Effect are dev dependencies; zod 3 and zod/mini ship inside zod 4).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type } from "arktype";
import { Schema } from "effect";
import * as v from "valibot";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import * as zm from "zod/mini";
import { guardToolsMiddleware } from "../../src/agents/guard-tools.js";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { validatedResponseMiddleware } from "../../src/agents/validated-response.js";
import { runGenerateCli } from "../../src/cli/generate.js";
import { SpecError } from "../../src/errors.js";
import { checkValue, checkValueSync } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, isSpec, type BusinessRule } from "../../src/specs/spec.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated } from "../../src/validation/stream.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

const vNumber = v.number();
const vPerson = v.object({ age: v.pipe(v.number(), v.minValue(18)) });
/** The JSON a Valibot schema serialises to (a request's body, a --spec file): functions are gone, "~standard" is kept with its vendor. */
const vPersonJson = () => JSON.parse(JSON.stringify(vPerson));
/** A Valibot schema as a spec: wrapped for Standard JSON Schema by Valibot's own converter. */
const vPersonSpec = toStandardJsonSchema(vPerson);
const VALIBOT_WRAP = 'import { toStandardJsonSchema } from "@valibot/to-json-schema"; toStandardJsonSchema(schema)';
const arkPerson = type({ age: "number >= 18" });
/** An Effect schema as it is, not wrapped as a Standard Schema: a class whose static `ast` is a tagged node. */
const EffectPerson = Schema.Struct({ age: Schema.Number });

const UNDERAGE = { age: 12 };

const REFUSED = /which this package does not read in this form: a spec is a zod 4 schema, another Standard Schema library's schema passed whole/;

describe("another library's schema that cannot be read is refused wherever a spec is taken, naming the library", () => {
  it("an Effect or Valibot schema not wrapped, zod 3 and zod/mini, a library without Standard JSON Schema, a function", () => {
    const cases: Array<[unknown, RegExp]> = [
      [vPerson, /^Spec "output": its Valibot schema has no JSON Schema form here: .*pass it wrapped, import \{ toStandardJsonSchema \}/],
      [EffectPerson, /^The spec is an Effect Schema schema, which this package does not read in this form: .*Schema\.toStandardJSONSchemaV1/],
      [
        z3.object({ age: z3.number().min(18) }),
        /^Spec "output": its zod schema has no JSON Schema form here: it is a zod schema of another API than zod 4's classic one \(zod 3/,
      ],
      [zm.object({ age: zm.number() }), /^Spec "output": its zod schema has no JSON Schema form here: it is a zod schema of another API/],
      [
        { type: "object", "~standard": { version: 1, vendor: "yup", validate: (value: unknown) => ({ value }) } },
        /^Spec "output": its the Standard Schema library "yup" schema has no JSON Schema form here/,
      ],
      [() => true, /^The spec is a function or a class/],
    ];
    for (const [ref, message] of cases) {
      expect(() => resolveSpec(ref as never)).toThrow(SpecError);
      expect(() => resolveSpec(ref as never)).toThrow(message);
    }
    expect(() => resolveSpec(EffectPerson as never)).toThrow(REFUSED);
  });

  it("nested in a JSON Schema, or as the JSON that serialises one; passed whole it is a spec", () => {
    expect(isSpec(defineSpec({ schema: vPersonSpec }))).toBe(true);
    expect(defineSpec({ name: "person", schema: vPersonSpec }).schema).toMatchObject({ properties: { age: { type: "number", minimum: 18 } } });
    expect(defineSpec({ name: "person", schema: arkPerson }).name).toBe("person");
    expect(() => resolveSpec({ schema: { type: "object", properties: { age: vNumber } } } as never)).toThrow(
      /^The spec \(at #\/schema\/properties\/age\) is a Valibot schema/,
    );
    expect(() => resolveSpec({ schema: { type: "object", properties: { age: vNumber } } } as never)).toThrow(REFUSED);
    expect(() => resolveSpec({ schema: { type: "object", properties: { age: vNumber } } } as never)).toThrow(VALIBOT_WRAP);
    expect(() => resolveSpec({ schema: { type: "object", properties: { age: vPersonSpec } } } as never)).toThrow(/is a Valibot schema/);
    expect(vPersonJson()).toMatchObject({ type: "object", "~standard": { vendor: "valibot" } });
    expect(() => resolveSpec(JSON.stringify(vPerson))).toThrow(/is a Valibot schema/);
    expect(() => resolveSpec(vPersonJson())).toThrow(/is a Valibot schema/);
    expect(() => resolveSpec(JSON.stringify({ name: "person", schema: vPerson }))).toThrow(/^The schema of spec "person" is a Valibot schema/);
    // Valibot before Standard Schema, by its shape alone.
    const { "~standard": _marker, ...older } = vPersonJson();
    expect(() => resolveSpec(older)).toThrow(/is a Valibot schema/);
  });

  it("generateValidated, streamValidated, the graphs' builder and run settings, checkValue: nothing runs, {age: 12} never passes", async () => {
    const model = scriptedModel([JSON.stringify(UNDERAGE), JSON.stringify(UNDERAGE)]);
    await expect(generateValidated({ model, spec: vPersonJson(), request: "a person" })).rejects.toThrow(/Valibot/);
    const stream = async () => {
      for await (const event of streamValidated({ model, spec: EffectPerson as never, request: "a person" })) void event;
    };
    await expect(stream()).rejects.toThrow(/Effect Schema/);
    expect(() => buildValidationGraph({ model, spec: vPersonJson() })).toThrow(/Valibot/);
    const graph = buildValidationGraph({ model });
    await expect(graph.invoke({ request: "a person" }, { context: { spec: vPersonJson() } } as never)).rejects.toThrow(/Valibot/);
    const reflexion = buildReflexionGraph({ model });
    await expect(reflexion.invoke({ tasks: ["a person"] }, { context: { spec: vPersonJson() } } as never)).rejects.toThrow(/Valibot/);
    expect(model.calls).toHaveLength(0);
    const verdict = await checkValue(vPersonJson(), UNDERAGE);
    expect(verdict.valid).toBe(false);
    expect(verdict.errors[0]).toMatch(/Valibot/);
    // Passed whole, the schemas judge it themselves.
    expect((await checkValue(vPersonSpec, UNDERAGE)).errors).toEqual(["age is 12; it must be >= 18"]);
    expect(checkValueSync(arkPerson, UNDERAGE).valid).toBe(false);
  });

  it("guarded tools and the createAgent middleware refuse it when built", () => {
    expect(() => guardedTool({ spec: vPersonJson(), name: "t", func: () => "ran" })).toThrow(/Valibot/);
    expect(() => validatedResponseMiddleware({ spec: EffectPerson as never })).toThrow(/Effect Schema/);
    expect(() => guardToolsMiddleware({ tools: { t: EffectPerson as never } })).toThrow(/Effect Schema/);
  });

  describe("the command line's --spec file", () => {
    const dir = mkdtempSync(join(tmpdir(), "spec-file-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("a file holding a Valibot schema's JSON is refused, with the usage exit status", async () => {
      const file = join(dir, "person.json");
      writeFileSync(file, JSON.stringify(vPerson));
      let out = "";
      const code = await runGenerateCli(
        ["--spec", file, "--model", "simulated", "a person"],
        { stdout: (t) => (out += t), stderr: () => {} },
        { env: {}, cwd: dir, progress: false },
      );
      expect(code).toBe(2);
      expect(JSON.parse(out)).toMatchObject({ success: false, error: { name: "SpecError", message: expect.stringMatching(/is a Valibot schema/) } });
    });
  });
});

describe("what is recognised as a spec", () => {
  it("a JSON Schema must be JSON data: no function, class instance or getter anywhere in it", () => {
    expect(() => resolveSpec({ type: "object", properties: { a: { type: "string", check: () => true } } } as never)).toThrow(
      /^The spec holds a function at #\/properties\/a\/check/,
    );
    expect(() => defineSpec({ schema: { type: "string", pattern: /^a/ } as never })).toThrow(/holds an instance of RegExp at #\/pattern, not JSON data/);
    const computed = {
      type: "object",
      get required() {
        return ["a"];
      },
    };
    expect(() => defineSpec({ schema: computed })).toThrow(/a field computed by a getter at #\/required/);
  });

  it("a bare JSON Schema is recognised only when its root fields are keywords of its dialect (or x-… and _… notes)", () => {
    expect(() => resolveSpec({ type: "object", entries: { age: { type: "number" } } } as never)).toThrow(
      /read as a bare JSON Schema its fields "entries" are not JSON Schema keywords, so it is not recognised as one/,
    );
    expect(resolveSpec({ type: "object", "x-owner": "team", _format: "x", title: "T", $comment: "c" } as never).ignoredKeywords).toHaveLength(2);
    // Wrapped, its unknown keywords are annotations, as the standard says, and listed.
    expect(resolveSpec({ schema: { type: "object", entries: {} } }).ignoredKeywords).toEqual([{ keyword: "entries", at: "#" }]);
    // A field may be named anything, "~standard" included; symbol keys (TypeBox's Kind) are not JSON and are not read.
    const spec = resolveSpec({ type: "object", properties: { "~standard": { type: "string" } }, [Symbol.for("TypeBox.Kind")]: "Object" } as never);
    expect(checkValueSync(spec, { "~standard": 1 }).valid).toBe(false);
  });

  it("an inline spec has only name, description and schema: code rules beside a JSON Schema are refused, not dropped", () => {
    const rules: BusinessRule[] = [{ id: "adult", description: "age >= 18", inputs: { age: "number" }, check: (v) => (v.age >= 18 ? null : "under 18") }];
    expect(() => resolveSpec({ name: "person", schema: { type: "object" }, rules } as never)).toThrow(
      /An inline spec has only the fields "name", "description", "schema"; "rules" would not be read \(a spec with code rules is made with defineSpec\)/,
    );
    expect(checkValueSync(defineSpec({ name: "person", schema: { type: "object" }, rules }), UNDERAGE).valid).toBe(false);
  });

  it("a Spec is one defineSpec made, or a field-for-field copy of one (a settings parse makes those): not a look-alike", () => {
    const spec = defineSpec({ name: "person", schema: { type: "object", required: ["age"], properties: { age: { type: "integer", minimum: 18 } } } });
    expect(isSpec(spec)).toBe(true);
    expect(resolveSpec({ ...spec })).toBe(spec);
    // Its validator with another schema: the validator would judge by the old schema, the prompt show the new one.
    expect(isSpec({ ...spec, schema: { type: "object" } })).toBe(false);
    expect(() => resolveSpec({ ...spec, schema: { type: "object" } } as never)).toThrow(/has the shape of a Spec but is not one defineSpec made/);
    const handMade = { name: "x", description: "x", schema: { type: "object" }, rules: [], checkSchema: () => true, validateSchema: () => true };
    expect(isSpec(handMade)).toBe(false);
    expect(checkValueSync(handMade as never, UNDERAGE).valid).toBe(false);
    // zod 4 stays a spec as it is, and so does its JSON Schema (z.toJSONSchema marks it with a non-enumerable "~standard").
    const converted = z.toJSONSchema(z.object({ age: z.number().min(18) }));
    expect(Object.getOwnPropertyDescriptor(converted, "~standard")).toMatchObject({ enumerable: false, value: { vendor: "zod" } });
    expect(checkValueSync(defineSpec({ schema: converted as never }), UNDERAGE).valid).toBe(false);
    expect(checkValueSync(resolveSpec({ schema: converted as never }), { age: 18 }).valid).toBe(true);
    expect(checkValueSync(z.object({ age: z.number().min(18) }), UNDERAGE).valid).toBe(false);
  });
});
