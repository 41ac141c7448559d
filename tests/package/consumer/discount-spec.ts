/**
 * Consumer fixture: a spec of the consumer's own, written against the
 * installed package. Compiled by a strict `tsc --noEmit` in the pack test;
 * other spec forms (e.g. a zod schema) get their own file beside this one.
 */
import { defineSpec } from "langgraph-trustworthy-output";

export interface Discount {
  code: string;
  percent: number;
}

export const discountSpec = defineSpec({
  name: "discount",
  description: "A discount code with its percentage.",
  schema: {
    type: "object",
    required: ["code", "percent"],
    additionalProperties: false,
    properties: { code: { type: "string", minLength: 3 }, percent: { type: "integer", minimum: 1, maximum: 90 } },
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
