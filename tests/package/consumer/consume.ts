/**
 * Consumer fixture: runs the validation graph from the installed package with
 * a scripted model and uses the outcome. Compiled by a strict `tsc --noEmit`;
 * every name and type comes from the tarball's declarations.
 */
import { fakeModel } from "@langchain/core/testing";
import { AIMessage } from "@langchain/core/messages";
import { buildValidationGraph, ConfigurationError, checkValueSync, type StopReason, type Verdict } from "langgraph-trustworthy-output";
import { discountSpec, type Discount } from "./discount-spec.js";

export async function firstValidDiscount(answers: string[]): Promise<{ discount: Discount | null; attempts: number; stopReason: StopReason | null }> {
  const model = fakeModel();
  for (const answer of answers) model.respond(new AIMessage(answer));
  const graph = buildValidationGraph({ model, spec: discountSpec, maxAttempts: 3 });
  const out = await graph.invoke({ request: "A 40% discount code" }, { context: { stopOnNoProgress: true } });
  const attempts: number = out.attempts;
  const errors: string[] = out.errors;
  if (!out.success) return { discount: null, attempts, stopReason: out.stopReason };
  void errors;
  return { discount: out.value as Discount, attempts, stopReason: out.stopReason };
}

// The package's declarations are really read: were they missing (everything `any`), this directive would be unused and fail.
// @ts-expect-error maxAttempts is a number, not a string
buildValidationGraph({ maxAttempts: "3" });

export function check(value: unknown): Verdict {
  return checkValueSync(discountSpec, value);
}

export function isConfigurationError(error: unknown): error is ConfigurationError {
  return error instanceof ConfigurationError;
}
