/**
 * A plain zod schema is a spec wherever a spec is taken, typed from the schema
 * without annotations; its name and description come from its metadata or a
 * default. The type assertions (expectTypeOf) are checked by `tsc --noEmit`.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { checkText, checkValue, checkValueSync } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type Spec, type SpecOutput } from "../../src/specs/spec.js";
import { SpecError } from "../../src/errors.js";
import { generateValidated, type ValidationOutcome } from "../../src/validation/generate.js";
import { streamValidated } from "../../src/validation/stream.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { validatedResponseMiddleware } from "../../src/agents/validated-response.js";
import { guardToolsMiddleware } from "../../src/agents/guard-tools.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

const Account = z
  .object({
    handle: z.string().startsWith("@"),
    id: z.cuid(),
    phone: z.e164(),
    nickname: z.string().lowercase().optional(),
    credits: z.number().int().min(0),
    spent: z.number().int().min(0),
  })
  .refine((account) => account.spent <= account.credits, { message: "spent must not exceed credits", path: ["spent"] });

const good = { handle: "@ada", id: "cjld2cjxh0000qzrmn831i7rn", phone: "+14155552671", credits: 10, spent: 3 };

describe("a zod schema is a spec", () => {
  it("generateValidated takes a plain zod schema (startsWith, cuid, e164, a refinement) and gives a typed, validated result", async () => {
    const model = scriptedModel([JSON.stringify({ ...good, handle: "ada", phone: "4155552671", spent: 30 }), JSON.stringify(good)]);
    const outcome = await generateValidated({ model, spec: Account, request: "an account for Ada", maxAttempts: 3 });
    expectTypeOf(outcome).toEqualTypeOf<ValidationOutcome<z.output<typeof Account>>>();
    expect(outcome.success).toBe(true);
    if (!outcome.success) throw new Error("unreachable");
    expectTypeOf(outcome.value.phone).toEqualTypeOf<string>();
    expectTypeOf(outcome.value.nickname).toEqualTypeOf<string | undefined>();
    expect(outcome.value).toEqual(good);
    expect(outcome.attempts).toBe(2);
    expect(outcome.spec).toBe("output");
    const feedback = String(model.calls[1].messages.at(-1)!.content);
    expect(feedback).toContain('handle is "ada"; it must match the pattern ^@.*');
    expect(feedback).toContain('phone is "4155552671"; it must match the pattern ^\\+[1-9]\\d{6,14}$');
  });

  it("the refinement runs when the schema passes, with the field and the value", async () => {
    const outcome = await generateValidated({ model: scriptedModel([JSON.stringify({ ...good, spent: 30 })]), spec: Account, request: "x", maxAttempts: 1 });
    expect(outcome).toMatchObject({ success: false, errors: ["spent is 30; spent must not exceed credits"] });
  });

  it("streamValidated and the graph builder take it too; its spec is made once per schema", async () => {
    const events = [];
    for await (const event of streamValidated({ model: scriptedModel([JSON.stringify(good)]), spec: Account, request: "x" })) events.push(event);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ kind: "outcome", outcome: { success: true, value: good } });
    const graph = buildValidationGraph({ model: scriptedModel([JSON.stringify(good)]), spec: Account });
    expect(await graph.invoke({ request: "x" })).toMatchObject({ success: true, value: good });
    expect(resolveSpec(Account)).toBe(resolveSpec(Account));
  });

  it("checkValue, checkText and checkValueSync take it, typed", async () => {
    const verdict = await checkValue(Account, good);
    expectTypeOf(verdict.value).toEqualTypeOf<z.output<typeof Account> | undefined>();
    expect(verdict.valid).toBe(true);
    expect((await checkText(Account, JSON.stringify({ ...good, id: "nope" }), "exact")).errors).toEqual([
      'id is "nope"; it must match the pattern ^[cC][0-9a-z]{6,}$',
    ]);
    expect(checkValueSync(Account, good).valid).toBe(true);
    expect(checkValueSync("deployment-config", {}).valid).toBe(false);
  });

  it("guardedTool takes it, and its function's arguments are typed from it", async () => {
    const seen: string[] = [];
    const tool = guardedTool({
      name: "open_account",
      spec: Account,
      func: (args) => {
        expectTypeOf(args.handle).toEqualTypeOf<string>();
        seen.push(args.handle);
        return "opened";
      },
    });
    expect(await tool.invoke(good)).toBe("opened");
    expect(String(await tool.invoke({ ...good, id: "x" }))).toContain('id is "x"; it must match the pattern');
    expect(seen).toEqual(["@ada"]);
  });

  it("validatedResponseMiddleware and guardToolsMiddleware take it; the answer is typed from it", () => {
    const middleware = validatedResponseMiddleware({ spec: Account });
    expectTypeOf(middleware).toEqualTypeOf<ReturnType<typeof validatedResponseMiddleware<z.output<typeof Account>>>>();
    expect(middleware.name).toBe("validatedResponseMiddleware");
    expect(guardToolsMiddleware({ tools: { open_account: Account } }).name).toBeTypeOf("string");
    expect(() => validatedResponseMiddleware({ spec: z.string() })).toThrow(/needs "type": "object"/);
  });

  it("name and description come from the schema's metadata, else defaults; defineSpec needs neither", () => {
    const titled = resolveSpec(z.object({ a: z.string() }).meta({ title: "Shipping Label", description: "A parcel's label." }));
    expect([titled.name, titled.description]).toEqual(["shipping-label", "A parcel's label."]);
    expect(resolveSpec(z.object({ a: z.string() }).describe("Just a.")).description).toBe("Just a.");
    const bare = defineSpec({ schema: { type: "object" } });
    expect(bare.name).toBe("output");
    expect(bare.description).toMatch(/JSON Schema below/);
    expect(resolveSpec({ name: "wrapped", schema: z.object({ a: z.number() }) }).name).toBe("wrapped");
  });

  it("a wrong value says what is accepted", async () => {
    expect(() => resolveSpec(42 as never)).toThrow(SpecError);
    expect(() => resolveSpec(42 as never)).toThrow(/a Spec from defineSpec, or a schema in code \(zod, or a Standard Schema library's\); got number/);
    const verdict = await checkValue(42 as never, good);
    expect(verdict.valid).toBe(false);
    expect(verdict.errors[0]).toMatch(/the spec given could not be used .*a schema in code \(zod, or a Standard Schema library's\); got number/);
    await expect(generateValidated({ model: scriptedModel([]), spec: 42 as never, request: "x" })).rejects.toThrow(
      /or a Spec \(resolveSpec\(schema\) makes one of a zod, Valibot, ArkType or Effect schema; generateValidated and the builders take the schema as it is\); got 42/,
    );
  });
});

describe("SpecOutput", () => {
  it("is the output type for a zod schema and for a Spec alike", () => {
    const spec = defineSpec({ schema: Account });
    expectTypeOf<SpecOutput<typeof Account>>().toEqualTypeOf<z.output<typeof Account>>();
    expectTypeOf<SpecOutput<typeof spec>>().toEqualTypeOf<z.output<typeof Account>>();
    expectTypeOf(spec).toEqualTypeOf<Spec<z.output<typeof Account>>>();
    expectTypeOf<SpecOutput<"deployment-config">>().toEqualTypeOf<unknown>();
    expectTypeOf(resolveSpec(Account)).toEqualTypeOf<Spec<z.output<typeof Account>>>();
    expect(spec.name).toBe("output");
  });

  it("a transform's output is the result type", async () => {
    const Trimmed = z.object({ tag: z.string().transform((s) => s.length) });
    const outcome = await generateValidated({ model: scriptedModel([JSON.stringify({ tag: "abc" })]), spec: Trimmed, request: "x", maxAttempts: 1 });
    if (!outcome.success) throw new Error(outcome.errors.join("; "));
    expectTypeOf(outcome.value.tag).toEqualTypeOf<number>();
    expect(outcome.value.tag).toBe(3);
  });
});

describe("checks the JSON Schema cannot carry", () => {
  it("are judged by zod with a message naming the check, even beside schema errors, and are told to the model in words", () => {
    const Login = z.object({ token: z.jwt(), user: z.string().regex(/^[a-z]+$/i), age: z.number() });
    const spec = resolveSpec(Login);
    const token = (spec.schema.properties as Record<string, Record<string, unknown>>).token;
    expect(token).toEqual({ type: "string", description: "must pass zod's jwt check" });
    expect((spec.schema.properties as Record<string, Record<string, unknown>>).user).toEqual({ type: "string", description: "must match /^[a-z]+$/i" });
    expect(checkValueSync(spec, { token: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.c2ln", user: "AdA", age: 3 }).valid).toBe(true);
    expect(checkValueSync(spec, { token: "abc", user: "a1", age: "3" }).errors).toEqual([
      'age is "3" (string); it must be a number',
      'token is "abc"; Invalid JWT (zod check jwt)',
      'user is "a1"; Invalid string: must match pattern /^[a-z]+$/i (zod check regex)',
    ]);
  });
});
