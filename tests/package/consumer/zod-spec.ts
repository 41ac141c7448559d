/**
 * Consumer fixture: a zod spec and the typed outcome of generateValidated,
 * written against the installed package. Compiled by the pack test's strict
 * `tsc --noEmit`; `run.mjs` runs the same calls.
 */
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { z } from "zod";
import { defineSpec, generateValidated, type ValidationOutcome } from "langgraph-trustworthy-output";

export const Window = z
  .object({ start: z.number().int().min(0), end: z.number().int(), label: z.string().default("window") })
  .refine((w) => w.end > w.start, { path: ["end"], message: "end must be greater than start" });

export const windowSpec = defineSpec({ name: "window", description: "A time window in whole seconds.", schema: Window });

/** The label of the first valid window the model gives: typed from the zod schema (a string, its default applied). */
export async function windowLabel(answers: string[]): Promise<string | null> {
  const model = fakeModel();
  for (const answer of answers) model.respond(new AIMessage(answer));
  const outcome: ValidationOutcome<z.output<typeof Window>> = await generateValidated({ model, spec: windowSpec, request: "a window", maxAttempts: 2 });
  if (!outcome.success) {
    // @ts-expect-error on failure the value is unknown, not the spec's type
    const unchecked: string = outcome.value.label;
    void unchecked;
    return null;
  }
  const label: string = outcome.value.label;
  // @ts-expect-error the value is typed from the zod schema: there is no field `duration`
  void outcome.value.duration;
  return label;
}

// @ts-expect-error a misspelt setting is a compile error
void generateValidated({ spec: windowSpec, request: "a window", maxAttempt: 2 });
