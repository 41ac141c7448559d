/**
 * Consumer fixture in a CommonJS project ("type": "commonjs", as `npm init -y` writes): the package is an ES
 * module, loaded with import() inside a function (CommonJS has no top-level await), its results typed from a
 * zod spec. Compiled by a strict `tsc --noEmit`.
 */
import { z } from "zod";

// @ts-expect-error require() of the package offers no declarations: it is an ES module (its "require" condition says so)
import { generateValidated as required } from "langgraph-trustworthy-output";

export async function discountPercent(): Promise<number | null> {
  const { defineSpec, generateValidated } = await import("langgraph-trustworthy-output");
  const spec = defineSpec({ name: "discount", description: "A discount.", schema: z.object({ code: z.string(), percent: z.number().int() }) });
  const outcome = await generateValidated({ spec, request: "A discount", maxAttempts: 1 });
  return outcome.success ? outcome.value.percent : null;
}

void required;
