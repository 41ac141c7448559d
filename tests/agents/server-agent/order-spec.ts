/** The order spec of the streamed-answer tests (in process and through the dev server). */
import { defineSpec } from "../../../src/specs/spec.js";

export const orderSpec = defineSpec({
  name: "order",
  schema: {
    type: "object",
    required: ["item", "quantity", "note"],
    additionalProperties: false,
    properties: { item: { type: "string" }, quantity: { type: "integer", maximum: 5 }, note: { type: "string" } },
  },
});
