/**
 * Both graphs embedded in Node code. Runs against whatever OPENAI_API_KEY /
 * OPENAI_BASE_URL point to:
 *
 *   npx tsx examples/embedded.ts
 */
import { buildValidationGraph, defineSpec, ReflexionAgent } from "langgraph-trustworthy-output";

// 1. A built-in spec, chosen per run.
const validation = buildValidationGraph();
const out = await validation.invoke(
  { request: "A deployment config for payments-api with 8 replicas" },
  { context: { spec: "deployment-config", maxAttempts: 3 } },
);
if (out.success) console.log("valid after", out.attempts, "attempt(s):", JSON.stringify(out.value));
else console.error("not valid:", out.stopReason, out.errors); // never silently passed off as valid

// 2. Your own spec: a JSON Schema plus cross-field rules written in code.
const discountSpec = defineSpec({
  name: "discount",
  description: "A discount code with its percentage.",
  schema: {
    type: "object",
    required: ["code", "percent"],
    properties: { code: { type: "string", pattern: "^[A-Z0-9-]+$" }, percent: { type: "integer", minimum: 1, maximum: 90 } },
  },
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
const discount = await buildValidationGraph({ spec: discountSpec, maxAttempts: 3 }).invoke({ request: "A 40% discount code for our best customers" });
console.log("discount:", discount.success ? JSON.stringify(discount.value) : discount.errors);

// 3. Reflexion: the best response per task.
const agent = new ReflexionAgent({ maxLoops: 2 });
const [best] = await agent.run(["Explain in two sentences why deterministic validators beat self-review for JSON."]);
console.log("reflexion:", best);
