/**
 * Consumer fixture in a CommonJS TypeScript project (`"module": "commonjs"`, as NestJS and many services compile,
 * with TypeScript's default module resolution for it): the package is imported statically, as LangChain's own
 * packages are, and the compiled `require()` gets its CommonJS build. Value and type imports need no
 * `resolution-mode`; `/agents`' types are found too. Compiled by a strict `tsc`.
 */
import { z } from "zod";
import { defineSpec, generateValidated, type SpecOutput, type ValidationOutcome } from "langgraph-trustworthy-output";
import type { ResponseOutcome } from "langgraph-trustworthy-output/agents";

const Discount = z.object({ code: z.string(), percent: z.number().int() });
const spec = defineSpec({ name: "discount", description: "A discount.", schema: Discount });

export async function discountPercent(): Promise<number | null> {
  const outcome: ValidationOutcome<SpecOutput<typeof spec>> = await generateValidated({ spec, request: "A discount", maxAttempts: 1 });
  return outcome.success ? outcome.value.percent : null;
}

export function answerCode(outcome: ResponseOutcome<z.output<typeof Discount>>): string | null {
  // @ts-expect-error the value is typed from the zod schema: there is no field `total`
  void (outcome.success && outcome.value.total);
  return outcome.success ? outcome.value.code : null;
}
