/**
 * Consumer fixture in a CommonJS project: a plain zod schema (no defineSpec) with `startsWith`, `cuid`,
 * `e164` and a refinement, passed as the spec. The package and LangChain's test model are imported statically;
 * the pack test's strict tsc (`"module": "commonjs"`) compiles it (the result is typed from the schema) and emits
 * build/plain-zod.js, a CommonJS script whose require() calls get the package's CommonJS build, which the test
 * runs: a scripted model's first answer breaks every check, its second is valid. Prints one JSON line.
 */
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { z } from "zod";
import { checkValue, generateValidated, type SpecOutput } from "langgraph-trustworthy-output";

const Order = z
  .object({
    id: z.string().startsWith("ord_"),
    customer: z.cuid(),
    phone: z.e164(),
    quantity: z.number().int().min(1),
    shipBy: z.iso.date(),
    deliverBy: z.iso.date(),
  })
  .refine((order) => order.deliverBy >= order.shipBy, { path: ["deliverBy"], message: "deliverBy must not be before shipBy" });

type Order = z.output<typeof Order>;

/** True only when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(): T | void {}

const VALID: Order = { id: "ord_42", customer: "cjld2cjxh0000qzrmn831i7rn", phone: "+14155550123", quantity: 2, shipBy: "2026-03-02", deliverBy: "2026-03-05" };
const BROKEN = { ...VALID, id: "42", customer: "customer 7", phone: "0415 555 012", deliverBy: "2026-03-01" };

async function main(): Promise<void> {
  assertType<Equal<SpecOutput<typeof Order>, Order>>();

  async function run(answers: object[], maxAttempts: number) {
    const model = fakeModel();
    for (const answer of answers) model.respond(new AIMessage(JSON.stringify(answer)));
    const outcome = await generateValidated({ model, spec: Order, request: "Order 42 for customer cjld2cjxh0000qzrmn831i7rn", maxAttempts });
    if (outcome.success) {
      assertType<Equal<typeof outcome.value, Order>>();
      const phone: string = outcome.value.phone;
      // @ts-expect-error the value is typed from the zod schema: there is no field `total`
      void outcome.value.total;
      return {
        success: true,
        stopReason: outcome.stopReason,
        attempts: outcome.attempts,
        phone,
        value: outcome.value,
        firstErrors: outcome.history[0]?.errors,
      };
    }
    // @ts-expect-error on failure the value is unknown, not the schema's type
    const unchecked: string = outcome.value.phone;
    void unchecked;
    return { success: false, stopReason: outcome.stopReason, attempts: outcome.attempts, errors: outcome.errors };
  }

  const fixed = await run([BROKEN, VALID], 3);
  const refused = await run([BROKEN], 1);
  // The check step itself, on the same schema: the messages the run fed back and reported are its messages.
  const direct = await checkValue(Order, BROKEN);
  console.log(JSON.stringify({ fixed, refused, direct: { valid: direct.valid, errors: direct.errors } }));
}

// A failure ends the process with its error and exit status 1 (an unhandled rejection).
void main();
