/**
 * Consumer fixture: a plain ESM script that imports the installed package,
 * runs the validation graph with a scripted model (one wrong answer, then a
 * right one) and prints what happened as one JSON line for the pack test.
 */
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { z } from "zod";
import { buildValidationGraph, builtinSpecs, defineSpec, generateValidated } from "langgraph-trustworthy-output";

const spec = defineSpec({
  name: "discount",
  description: "A discount code with its percentage.",
  schema: { type: "object", required: ["code", "percent"], properties: { code: { type: "string" }, percent: { type: "integer", minimum: 1, maximum: 90 } } },
  rules: [
    {
      id: "big-discounts-need-vip-codes",
      description: "percent > 30 requires a code starting with VIP-.",
      inputs: { code: "string", percent: "integer" },
      check: (v) =>
        v.percent > 30 && !v.code.startsWith("VIP-") ? `code is ${JSON.stringify(v.code)}; percent=${v.percent} requires a code starting with "VIP-"` : null,
    },
  ],
});

const model = fakeModel().respond(new AIMessage('{"code": "SAVE40", "percent": 40}')).respond(new AIMessage('{"code": "VIP-SAVE40", "percent": 40}'));
const out = await buildValidationGraph({ model, spec, maxAttempts: 3 }).invoke({ request: "A 40% discount code" });

// A zod spec: its refinement is a business rule fed back to the model, and the result is zod's output.
const Window = z
  .object({ start: z.number().int().min(0), end: z.number().int(), label: z.string().default("window") })
  .refine((w) => w.end > w.start, { path: ["end"], message: "end must be greater than start" });
const windowModel = fakeModel().respond(new AIMessage('{"start": 5, "end": 1}')).respond(new AIMessage('{"start": 5, "end": 9}'));
const zodOutcome = await generateValidated({
  model: windowModel,
  spec: defineSpec({ name: "window", description: "A time window.", schema: Window }),
  request: "a window",
  maxAttempts: 2,
});

// Internals stay internal: only the package's entry point is exported.
let deepImport = "resolved";
try {
  await import("langgraph-trustworthy-output/dist/src/specs/spec.js");
} catch (error) {
  deepImport = error.code;
}

console.log(
  JSON.stringify({
    success: out.success,
    value: out.value,
    attempts: out.attempts,
    firstErrors: out.history[0].errors,
    builtins: [...builtinSpecs.keys()],
    zod: { success: zodOutcome.success, value: zodOutcome.value, attempts: zodOutcome.attempts, firstErrors: zodOutcome.history[0].errors },
    deepImport,
  }),
);
