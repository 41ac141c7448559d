// Compiled by tests/types/types.test.ts: each line marked @ts-expect-error must fail to type-check.
import { z } from "zod";
import { defineSpec, generateValidated } from "../../src/index.js";

const spec = defineSpec({ name: "point", description: "A point.", schema: z.object({ x: z.number(), y: z.number() }) });

export async function typed() {
  const outcome = await generateValidated({ spec, request: "a point", maxAttempts: 2 });
  if (outcome.success) {
    const x: number = outcome.result.x;
    // @ts-expect-error result is typed from the spec: there is no field z
    outcome.result.z;
    return x;
  }
  // @ts-expect-error on failure the result is unknown, not the spec's type
  const y: number = outcome.result.y;
  return y;
}

export async function misspelt() {
  // @ts-expect-error a misspelt setting is a compile error
  await generateValidated({ spec, request: "a point", maxAttempt: 2 });
}
