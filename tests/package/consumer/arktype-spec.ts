/**
 * Consumer fixture: an ArkType schema as the spec, as a user of another Standard Schema library writes it.
 * The pack test's strict tsc compiles it: the outcome is typed from the schema (the assertions below fail to
 * compile otherwise), so the tarball's declarations carry a Standard Schema's output type.
 */
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { type } from "arktype";
import { generateValidated, type SpecOutput } from "langgraph-trustworthy-output";

export const Person = type({ name: "string >= 2", age: "number.integer >= 0" });

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(): T | void {}

assertType<Equal<SpecOutput<typeof Person>, { name: string; age: number }>>();

/** The age of the first valid person the model gives, typed from the ArkType schema. */
export async function personAge(answers: object[]): Promise<number | null> {
  const model = fakeModel();
  for (const answer of answers) model.respond(new AIMessage(JSON.stringify(answer)));
  const outcome = await generateValidated({ model, spec: Person, request: "Ada, 36", maxAttempts: 2 });
  if (!outcome.success) return null;
  assertType<Equal<typeof outcome.value, { name: string; age: number }>>();
  // @ts-expect-error the value is typed from the ArkType schema: there is no field `email`
  void outcome.value.email;
  return outcome.value.age;
}
