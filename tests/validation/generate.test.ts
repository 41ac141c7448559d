/** generateValidated: one compiled graph per model and checkpointer, with each call's spec and settings in its own run. */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { builtinSpecs } from "../../src/specs/registry.js";
import { defineSpec } from "../../src/specs/spec.js";
import { generateValidated } from "../../src/validation/generate.js";
import { ScriptedChatModel, scriptedModel } from "../../testkit/scripted-model.js";

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;

describe("generateValidated", () => {
  it("calls sharing a model keep their own specs and settings, one after another and at once", async () => {
    const model = scriptedModel(['{"n": 2}', JSON.stringify(VALID), '{"n": 200}', '{"n": 3}']);
    const small = defineSpec({ name: "small", description: "", schema: z.object({ n: z.number().max(10) }).transform((v) => ({ doubled: v.n * 2 })) });
    const first = await generateValidated({ model, spec: small, request: "a small number" });
    expect(first).toMatchObject({ success: true, value: { doubled: 4 }, spec: "small" });
    const second = await generateValidated({ model, spec: "deployment-config", request: "a deployment", maxAttempts: 1 });
    expect(second).toMatchObject({ success: true, value: VALID, spec: "deployment-config" });
    const third = await generateValidated({ model, spec: small, request: "a small number", maxAttempts: 2 });
    expect(third).toMatchObject({ success: true, attempts: 2, value: { doubled: 6 } });
    expect(third.history[0].errors).toEqual(["n is 200; it must be <= 10"]);
  });

  it("two specs of the same name but different rules are told apart, even at once", async () => {
    const limit = (max: number) =>
      defineSpec({
        name: "limited",
        description: "",
        schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
        rules: [{ id: "max", description: `n <= ${max}`, inputs: { n: "integer" }, check: (v) => (v.n <= max ? null : `n is ${v.n}; it must be <= ${max}`) }],
      });
    const model = new ScriptedChatModel({ answers: ['{"n": 5}'], repeat: true });
    const [loose, strict] = await Promise.all([
      generateValidated({ model, spec: limit(10), request: "n", maxAttempts: 1 }),
      generateValidated({ model, spec: limit(1), request: "n", maxAttempts: 1 }),
    ]);
    expect(loose.success).toBe(true);
    expect(strict).toMatchObject({ success: false, errors: ["n is 5; it must be <= 1"] });
  });

  it("with a checkpointer, each call is its own thread", async () => {
    const checkpointer = new MemorySaver();
    const model = new ScriptedChatModel({ answers: [JSON.stringify(VALID)], repeat: true });
    const a = await generateValidated({ model, checkpointer, spec: "deployment-config", request: "a", threadId: "one" });
    const b = await generateValidated({ model, checkpointer, spec: "deployment-config", request: "b", threadId: "two" });
    expect([a.success, b.success, a.attempts, b.attempts]).toEqual([true, true, 1, 1]);
  });

  it("many calls at once with distinct code-defined specs each keep their spec for the whole run", async () => {
    const model = new ScriptedChatModel({ answers: ['{"n": 5}'], repeat: true });
    const specs = Array.from({ length: 80 }, (_, i) =>
      defineSpec({
        name: `limited-${i}`,
        description: "",
        schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
        rules: [{ id: "max", description: `n <= ${i}`, inputs: { n: "integer" }, check: (v) => (v.n <= i ? null : `n is ${v.n}; it must be <= ${i}`) }],
      }),
    );
    const outcomes = await Promise.all(specs.map((spec) => generateValidated({ model, spec, request: "n", maxAttempts: 1 })));
    expect(outcomes.map((o) => o.success)).toEqual(specs.map((_, i) => 5 <= i));
  });
});
