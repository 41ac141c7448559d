/**
 * One vocabulary for every outcome: generateValidated's (ValidationOutcome)
 * and the createAgent middleware's (ResponseOutcome) share one base type, name
 * the judged value `value`, and fail with the same fields. The types are
 * asserted with expectTypeOf (checked by `npm run typecheck`); the same field
 * names are asserted on real outcomes at run time.
 */
import { HumanMessage } from "@langchain/core/messages";
import { createAgent } from "langchain";
import { describe, expect, expectTypeOf, it } from "vitest";
import { validatedResponseMiddleware, type ResponseOutcome } from "../../src/agents/index.js";
import type { OutcomeBase, OutcomeFailure, OutcomeSuccess } from "../../src/shared/outcome.js";
import { generateValidated, type ValidationOutcome, type ValidationOutcomeBase } from "../../src/validation/generate.js";
import { scriptedModel } from "../../testkit/scripted-model.js";
import { answerTurn, REQUEST, scriptedTurns, threeDefects, valid } from "../agents/agent.support.js";

type Deployment = typeof valid;
type Accepted<O> = Extract<O, { success: true }>;
type Refused<O> = Extract<O, { success: false }>;

/** Every success's fields, and every failure's: the type test below ties each list to its type. */
const SUCCESS_FIELDS = ["success", "stopReason", "value", "by", "errors", "attempts", "spec"] as const;
const FAILURE_FIELDS = ["success", "stopReason", "errors", "lastAnswer", "attempts", "spec"] as const;

describe("every outcome speaks one vocabulary", () => {
  it("the types: one base, one success, one failure; the judged value is `value`, typed from the spec", () => {
    expectTypeOf<ValidationOutcome<Deployment>>().toExtend<OutcomeBase>();
    expectTypeOf<ResponseOutcome<Deployment>>().toExtend<OutcomeBase>();
    expectTypeOf<ValidationOutcomeBase>().toExtend<OutcomeBase>();

    expectTypeOf<Accepted<ValidationOutcome<Deployment>>>().toExtend<OutcomeSuccess<Deployment>>();
    expectTypeOf<Accepted<ResponseOutcome<Deployment>>>().toEqualTypeOf<OutcomeSuccess<Deployment>>();
    expectTypeOf<Accepted<ValidationOutcome<Deployment>>["value"]>().toEqualTypeOf<Deployment>();
    expectTypeOf<Accepted<ResponseOutcome<Deployment>>["value"]>().toEqualTypeOf<Deployment>();

    expectTypeOf<Refused<ValidationOutcome<Deployment>>>().toExtend<OutcomeFailure>();
    expectTypeOf<Refused<ResponseOutcome<Deployment>>>().toExtend<OutcomeFailure>();

    // The same field names on both sides, and no other shared ones.
    expectTypeOf<keyof OutcomeSuccess>().toEqualTypeOf<(typeof SUCCESS_FIELDS)[number]>();
    expectTypeOf<keyof OutcomeFailure>().toEqualTypeOf<(typeof FAILURE_FIELDS)[number]>();
    expectTypeOf<keyof OutcomeSuccess>().toExtend<keyof Accepted<ValidationOutcome> & keyof Accepted<ResponseOutcome>>();
    expectTypeOf<keyof OutcomeFailure>().toExtend<keyof Refused<ValidationOutcome> & keyof Refused<ResponseOutcome>>();

    // One name for the judged value: no other.
    expectTypeOf<"result">().not.toExtend<keyof Accepted<ValidationOutcome> | keyof Refused<ValidationOutcome>>();
  });

  it("generateValidated and the middleware end with the same fields, valid and not", async () => {
    const broken = JSON.stringify(threeDefects);
    const model = scriptedModel([broken, JSON.stringify(valid), broken]);
    const validated = await generateValidated({ model, spec: "deployment-config", request: REQUEST, maxAttempts: 2 });
    const notValidated = await generateValidated({ model, spec: "deployment-config", request: REQUEST, maxAttempts: 1 });

    const answering = (turns: unknown[], maxAttempts: number) =>
      createAgent({
        model: scriptedTurns(turns.map((args) => () => answerTurn(args))),
        tools: [],
        middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts })],
      }).invoke({ messages: [new HumanMessage(REQUEST)] });
    const answered = (await answering([threeDefects, valid], 2)).responseOutcome!;
    const notAnswered = (await answering([threeDefects], 1)).responseOutcome!;

    const shared = (outcome: object, fields: readonly string[]) =>
      Object.fromEntries(fields.map((field) => [field, (outcome as Record<string, unknown>)[field]]));
    const success = { success: true, stopReason: "valid", value: valid, by: "model", errors: [], attempts: 2, spec: "deployment-config" };
    expect(shared(validated, SUCCESS_FIELDS)).toEqual(success);
    expect(shared(answered, SUCCESS_FIELDS)).toEqual(success);
    expect(answered).toEqual(success);

    const errors = validated.history[0].errors;
    expect(errors.length).toBeGreaterThan(0);
    const failure = { success: false, stopReason: "max_attempts", errors, attempts: 1, spec: "deployment-config" };
    expect(shared(notValidated, FAILURE_FIELDS)).toEqual({ ...failure, lastAnswer: broken });
    expect(shared(notAnswered, FAILURE_FIELDS)).toEqual({ ...failure, lastAnswer: JSON.stringify(threeDefects) });
    expect(notAnswered).toEqual({ ...failure, lastAnswer: JSON.stringify(threeDefects) });
    // The validation outcome also keeps the JSON value the last answer was read as.
    expect(notValidated.value).toEqual(threeDefects);
  });

  it("the validation outcome has the value under one name, `value`, as the graph's state has", async () => {
    const outcome = await generateValidated({ model: scriptedModel([JSON.stringify(valid)]), spec: "deployment-config", request: REQUEST });
    expect(outcome.success).toBe(true);
    expect(outcome.value).toEqual(valid);
    expect(outcome).not.toHaveProperty("result");
  });
});
