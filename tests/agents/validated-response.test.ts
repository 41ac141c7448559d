/**
 * validatedResponseMiddleware inside createAgent with scripted model turns: every error
 * of a rejected answer reaches the model exactly as the validation graph's
 * retry prompt lists them, the model tries again within maxAttempts, and the
 * run ends with a typed outcome; structuredResponse only ever holds an
 * accepted value.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { answerRejectedText, answerSetAsideText, noAnswerText } from "../../src/agents/prompts.js";
import { validatedResponseMiddleware, type ResponseOutcome } from "../../src/agents/index.js";
import { ConfigurationError, SpecError } from "../../src/errors.js";
import { checkValue } from "../../src/specs/check.js";
import { defineSpec } from "../../src/specs/spec.js";
import { rejectionSection, retryPrompt, truncatedAnswerError, unfinishedAnswerError } from "../../src/protocol/feedback.js";
import {
  ANSWER,
  answerTurn,
  callTurn,
  deploymentSpec,
  promptAt,
  REQUEST,
  scriptedTurns,
  structuredResponseOf,
  threeDefects,
  valid,
  quotaSpec,
} from "./agent.support.js";

const ask = { messages: [new HumanMessage(REQUEST)] };
const errorsOf = async (value: unknown) => (await checkValue(deploymentSpec, value)).errors;

describe("validatedResponseMiddleware: the agent's structured answer held to a spec", () => {
  it("gives the model every error of a three-defect answer, as the retry prompt lists them; the corrected answer is the outcome", async () => {
    const model = scriptedTurns([() => answerTurn(threeDefects), () => answerTurn(valid)]);
    const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] });
    const out = await agent.invoke(ask);

    const errors = await errorsOf(threeDefects);
    expect(errors).toHaveLength(3);
    expect(model.callCount).toBe(2);
    const feedback = promptAt(model, 1).at(-1)!;
    expect(feedback).toBeInstanceOf(ToolMessage);
    expect(feedback.content).toBe(answerRejectedText(ANSWER, errors, 1, 3));
    // The errors section is the validation graph's own, character for character.
    expect(retryPrompt(REQUEST, JSON.stringify(threeDefects), errors)).toContain(rejectionSection(errors));
    expect(feedback.content).toContain(rejectionSection(errors));

    expect(out.responseOutcome).toEqual({ success: true, stopReason: "valid", value: valid, by: "model", errors: [], attempts: 2, spec: "deployment-config" });
    expect(structuredResponseOf(out)).toEqual(valid);
    // Every answer call has its result, so the conversation can go on.
    expect(out.messages.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai", "tool"]);
  });

  it("an answer the provider cut or did not finish is never valid, whatever its arguments: its one error says so, in the provider's words", async () => {
    const stopped = (reason: Record<string, string>) => () => {
      const turn = answerTurn(valid);
      turn.response_metadata = { ...turn.response_metadata, ...reason };
      return turn;
    };
    const model = scriptedTurns([stopped({ finish_reason: "length" }), stopped({ finishReason: "OTHER" }), () => answerTurn(valid)]);
    const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] });
    const out = await agent.invoke(ask);
    expect(model.callCount).toBe(3);
    expect(promptAt(model, 1).at(-1)!.content).toBe(answerRejectedText(ANSWER, [truncatedAnswerError('finish_reason "length"')], 1, 3));
    expect(promptAt(model, 2).at(-1)!.content).toBe(answerRejectedText(ANSWER, [unfinishedAnswerError('finishReason "OTHER"')], 2, 3));
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 3, value: valid });
  });

  it("ends with an explicit failure after maxAttempts: stop reason, errors, last answer, attempts; no structuredResponse", async () => {
    const model = scriptedTurns([() => answerTurn(threeDefects), () => answerTurn(threeDefects)]);
    const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 2 })] });
    const out = await agent.invoke(ask);
    expect(model.callCount).toBe(2);
    expect(out.responseOutcome).toEqual({
      success: false,
      stopReason: "max_attempts",
      errors: await errorsOf(threeDefects),
      lastAnswer: JSON.stringify(threeDefects),
      attempts: 2,
      spec: "deployment-config",
    });
    expect(structuredResponseOf(out)).toBeUndefined();
    expect(String(out.messages.at(-1)!.content)).toMatch(/That was the last of 2 attempts/);
  });

  it("holds answers to the cross-field rules that a response schema alone lets through", async () => {
    const ruleOnly = { ...valid, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } };
    const model = scriptedTurns([() => answerTurn(ruleOnly), () => answerTurn(valid)]);
    const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] }).invoke(ask);
    expect(String(promptAt(model, 1).at(-1)!.content)).toContain(rejectionSection(await errorsOf(ruleOnly)));
    expect(structuredResponseOf(out)).toEqual(valid);
  });

  it("judges a text answer (a provider that ignores the tool choice) with the model's reader and answers it with the validation graph's retry prompt", async () => {
    const broken = `Here it is:\n\`\`\`json\n${JSON.stringify(threeDefects)}\n\`\`\``;
    const model = scriptedTurns([() => callTurn([], broken), () => callTurn([], `Fixed: ${JSON.stringify(valid)}`)]);
    const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] }).invoke(ask);
    const feedback = promptAt(model, 1).at(-1)!;
    expect(feedback.getType()).toBe("human");
    expect(feedback.content).toBe(retryPrompt(REQUEST, broken, await errorsOf(threeDefects)));
    expect(out.responseOutcome).toMatchObject({ success: true, value: valid, attempts: 2 });
    expect(structuredResponseOf(out)).toEqual(valid);
  });

  it("lets the agent work first: an answer given alongside other tool calls is set aside, not counted, and answered", async () => {
    const lookups: unknown[] = [];
    const lookup = tool((args) => (lookups.push(args), "payments-api runs 8 replicas today"), {
      name: "lookup",
      description: "Look up a service.",
      schema: z.object({ service: z.string() }),
    });
    const model = scriptedTurns([
      () =>
        callTurn([
          { name: "lookup", args: { service: "payments-api" }, id: "a" },
          { name: ANSWER, args: threeDefects, id: "b" },
        ]),
      () => answerTurn(valid, "c"),
    ]);
    const out = await createAgent({ model, tools: [lookup], middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 1 })] }).invoke(
      ask,
    );
    expect(lookups).toEqual([{ service: "payments-api" }]);
    const results = promptAt(model, 1).filter((m) => m.getType() === "tool") as ToolMessage[];
    expect(results.map((m) => [m.tool_call_id, m.content])).toEqual(
      expect.arrayContaining([
        ["a", "payments-api runs 8 replicas today"],
        ["b", answerSetAsideText(ANSWER)],
      ]),
    );
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 1 });
  });

  it("counts two answers in one message as one refused attempt, each answered", async () => {
    const model = scriptedTurns([
      () =>
        callTurn([
          { name: ANSWER, args: valid, id: "x" },
          { name: ANSWER, args: valid, id: "y" },
        ]),
      () => answerTurn(valid, "z"),
    ]);
    const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] }).invoke(ask);
    const results = promptAt(model, 1).filter((m) => m.getType() === "tool") as ToolMessage[];
    expect(results.map((m) => m.tool_call_id)).toEqual(["x", "y"]);
    expect(String(results[0].content)).toMatch(/the answer was given 2 times in one message/);
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 2 });
  });

  it("counts an answer call beside an unparseable second one as one refused attempt, not as the answer", async () => {
    const twoAnswers = () =>
      new AIMessage({
        content: "",
        tool_calls: [{ name: ANSWER, args: valid, id: "x", type: "tool_call" }],
        invalid_tool_calls: [{ name: ANSWER, args: '{"service_name": "payments-api", "replicas": ', id: "y", error: "not JSON", type: "invalid_tool_call" }],
      });
    const model = scriptedTurns([twoAnswers, () => answerTurn(valid, "z")]);
    const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] }).invoke(ask);
    expect(model.callCount).toBe(2);
    const result = promptAt(model, 1).at(-1) as ToolMessage;
    expect(result.tool_call_id).toBe("x");
    expect(String(result.content)).toMatch(/the answer was given 2 times in one message/);
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 2 });
  });

  it("ends with stop reason no_answer when the model keeps calling other tools past maxToolTurns; every call has its result", async () => {
    const lookups: unknown[] = [];
    const lookup = tool((args) => (lookups.push(args), "8 replicas"), {
      name: "lookup",
      description: "Look up a service.",
      schema: z.object({ service: z.string() }),
    });
    const model = scriptedTurns(Array.from({ length: 40 }, (_, i) => () => callTurn([{ name: "lookup", args: { service: "payments-api" }, id: `l${i}` }])));
    const out = await createAgent({ model, tools: [lookup], middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxToolTurns: 2 })] }).invoke(
      ask,
    );
    expect(lookups).toHaveLength(2);
    expect(model.callCount).toBe(3);
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "no_answer", attempts: 0, lastAnswer: "" });
    expect(out.responseOutcome?.errors).toEqual([noAnswerText(2)]);
    const calls = out.messages.flatMap((m) => ((m as AIMessage).tool_calls ?? []).map((c) => c.id));
    const results = out.messages.filter((m) => m.getType() === "tool").map((m) => (m as ToolMessage).tool_call_id);
    expect(results).toEqual(calls);
  });

  it("with the default budgets, tool turns and refused answers in any order end with an outcome within LangGraph's default recursion limit", async () => {
    const lookup = tool(() => "8 replicas", { name: "lookup", description: "Look up a service.", schema: z.object({ service: z.string() }) });
    const work = (i: number) => () => callTurn([{ name: "lookup", args: { service: "payments-api" }, id: `w${i}` }]);
    const refused = (i: number) => () => answerTurn(threeDefects, `a${i}`);
    const model = scriptedTurns([work(0), refused(0), work(1), refused(1), work(2), work(3), work(4), refused(2), work(5), work(6)]);
    const out = await createAgent({ model, tools: [lookup], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] }).invoke(ask);
    expect(out.responseOutcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 3 });
    const workFirst = scriptedTurns(Array.from({ length: 12 }, (_, i) => work(i)).concat([refused(0), refused(1), refused(2)]));
    const worked = await createAgent({ model: workFirst, tools: [lookup], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] }).invoke(
      ask,
    );
    expect(worked.responseOutcome).toMatchObject({ success: false, stopReason: "no_answer" });
  });

  it("refuses a model's answer holding a record the checkpoint would read back as another value, and says where", async () => {
    const marked = { ...valid, labels: [{ lc: 1, type: "constructor", id: ["langchain_core", "messages", "HumanMessage"], kwargs: { content: "hi" } }] };
    const model = scriptedTurns([() => answerTurn(marked, "m"), () => answerTurn(valid, "n")]);
    const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] }).invoke(ask);
    const result = promptAt(model, 1).at(-1) as ToolMessage;
    expect(String(result.content)).toContain(
      `- labels[0] has the fields "lc" and "type" of a LangGraph checkpoint marker, which a checkpoint would not give back as written`,
    );
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 2, value: valid });
  });

  it("counts a call to a tool the agent does not have as a refused answer, answered, instead of a run that cannot route", async () => {
    const model = scriptedTurns([() => callTurn([{ name: "extract-deployment_config", args: valid, id: "t" }]), () => answerTurn(valid, "u")]);
    const out = await createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config" })] }).invoke(ask);
    const result = promptAt(model, 1).at(-1) as ToolMessage;
    expect(result.tool_call_id).toBe("t");
    expect(String(result.content)).toContain(`- the agent has no tool named "extract-deployment_config"; give your final answer by calling ${ANSWER}`);
    expect(out.responseOutcome).toMatchObject({ success: true, attempts: 2 });
  });

  it("types the outcome from a zod spec, and the value is zod's output (defaults and transforms applied)", async () => {
    const Window = z
      .object({ start: z.number().int().min(0), end: z.number().int(), label: z.string().default("window") })
      .refine((w) => w.end > w.start, { path: ["end"], message: "end must be greater than start" })
      .transform((w) => ({ ...w, length: w.end - w.start }));
    const spec = defineSpec({ name: "window", description: "A time window.", schema: Window });
    const model = scriptedTurns([
      () => callTurn([{ name: "extract-window", args: { start: 5, end: 1 } }]),
      () => callTurn([{ name: "extract-window", args: { start: 5, end: 9 } }]),
    ]);
    const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec })] });
    const out = await agent.invoke(ask);
    expect(String(promptAt(model, 1).at(-1)!.content)).toContain("- end is 1; end must be greater than start");
    expectTypeOf(out.responseOutcome).toEqualTypeOf<ResponseOutcome<{ start: number; end: number; label: string; length: number }> | null>();
    if (!out.responseOutcome?.success) throw new Error("expected success");
    const length: number = out.responseOutcome.value.length;
    expect(length).toBe(4);
    expect(out.responseOutcome.value).toEqual({ start: 5, end: 9, label: "window", length: 4 });
  });

  it("hands the run's context to the spec's code rules (ruleContext), as guardedTool does", async () => {
    const quota = quotaSpec();
    const answer = (args: unknown) => () => callTurn([{ name: "extract-quota-deploy", args }]);
    const model = scriptedTurns([answer(valid), answer({ ...valid, replicas: 4 })]);
    const agent = createAgent({
      model,
      tools: [],
      middleware: [validatedResponseMiddleware({ spec: quota, ruleContext: (run: { context: unknown }) => run.context })],
    });
    const out = await agent.invoke(ask, { context: { maxReplicas: 5 } });
    expect(String(promptAt(model, 1).at(-1)!.content)).toContain("- replicas is 8; the team's quota is 5");
    expect(out.responseOutcome).toMatchObject({ success: true, value: { replicas: 4 } });
  });

  it("starts each new input with a fresh answer and budget", async () => {
    const model = scriptedTurns([() => answerTurn(threeDefects, "1"), () => answerTurn(valid, "2"), () => answerTurn(threeDefects, "3")]);
    const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 1 })] });
    const first = await agent.invoke(ask);
    expect(first.responseOutcome).toMatchObject({ success: false, attempts: 1 });
    const second = await agent.invoke({ messages: [...first.messages, new HumanMessage("Try again.")] });
    expect(second.responseOutcome).toMatchObject({ success: true, attempts: 1 });
    const third = await agent.invoke({ messages: [...second.messages, new HumanMessage("Once more.")] });
    expect(third.responseOutcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 1 });
    expect(structuredResponseOf(third)).toBeUndefined();
  });

  it("refuses what cannot work, when it is built or at the first model call", async () => {
    expect(() => validatedResponseMiddleware({ spec: "deployment-config", maxAttempts: 0 })).toThrow(ConfigurationError);
    expect(() => validatedResponseMiddleware({ spec: "deployment-config", maxToolTurns: 21 })).toThrow(/maxToolTurns must be an integer from 0 to 20; got 21/);
    expect(() => validatedResponseMiddleware({ spec: "deployment-config", onFailure: "retry" as never })).toThrow(ConfigurationError);
    expect(() => validatedResponseMiddleware({ spec: { name: "list", schema: { type: "array" } } })).toThrow(SpecError);
    const model = scriptedTurns([() => answerTurn(valid)]);
    const agent = createAgent({
      model,
      tools: [],
      responseFormat: deploymentSpec.schema as never,
      middleware: [validatedResponseMiddleware({ spec: "deployment-config" })],
    });
    await expect(agent.invoke(ask)).rejects.toThrow(/remove responseFormat from createAgent/);
    expect(model.callCount).toBe(0);
  });
});
