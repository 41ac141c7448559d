/** guardedTool: valid arguments run the function; invalid ones never do and come back as the validator's exact messages; the budget; hostile arguments. */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool as lcTool, ToolInputParsingException } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { ConfigurationError, SpecError } from "../../src/errors.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { defineSpec } from "../../src/specs/spec.js";
import { guardRecordOf } from "../../src/tools/budget.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { checkValueSync } from "../../src/specs/check.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const spec = builtinSpecs.get("deployment-config")!;
const valid = {
  service_name: "payments-api",
  replicas: 8,
  resources: { cpu_limit: 1.5, memory_limit_mb: 512 },
  health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
};
const lowCpu = { ...valid, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } };
const LOW_CPU_ERROR = RULES.replicasNeedCpu(0.5, 8);

/** A deploy tool that records every configuration its function received. */
function deployTool(maxAttempts?: number) {
  const received: unknown[] = [];
  const tool = guardedTool({
    spec: "deployment-config",
    name: "deploy_service",
    description: "Deploy a service.",
    maxAttempts,
    func: async (config: { service_name: string }) => {
      received.push(config);
      return `deployed ${config.service_name}`;
    },
  });
  return { tool, received };
}

const call = (args: unknown, id = "call_1") => ({ type: "tool_call" as const, id, name: "deploy_service", args: args as Record<string, unknown> });

function invalidText(attempt: number, max: number, errors: string[]): string {
  const last = attempt >= max;
  return [
    `deploy_service call ${attempt} of ${max} was not run: its arguments do not match the deployment-config spec.`,
    `Errors:\n${errors.map((e, i) => `${i + 1}. ${e}`).join("\n")}`,
    last
      ? `That was the last of ${max} attempts: deploy_service will refuse further calls until the user writes again. Tell the user what could not be made valid.`
      : "Fix these and call deploy_service again with the corrected arguments, keeping everything that was already right.",
  ].join("\n");
}
const refusal = (max: number) =>
  `deploy_service refused this call without running it: ${max} of ${max} attempts already failed the deployment-config spec, ` +
  "so it accepts no more calls until the user writes again. Do not call deploy_service again; tell the user the arguments could not be made valid.";

const toolResults = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => m.getType() === "tool");

describe("guardedTool: one call", () => {
  it("its spec's rules read the run's context: a value, or computed from the call's runtime", async () => {
    const spec = defineSpec<Record<string, unknown>, { services: string[] }>({
      name: "restart",
      description: "",
      schema: { type: "object", required: ["service"], properties: { service: { type: "string" } } },
      rules: [
        {
          id: "exists",
          description: "the service exists",
          inputs: { service: "string" },
          check: async (v, _d, c) => (c.services.includes(v.service) ? null : `service is ${JSON.stringify(v.service)}; no such service`),
        },
      ],
    });
    const ran: unknown[] = [];
    const fixed = guardedTool({ spec, name: "restart", func: (args) => (ran.push(args), "restarted"), ruleContext: { services: ["api"] } });
    expect(await fixed.invoke({ service: "api" })).toBe("restarted");
    expect(await fixed.invoke({ service: "db" })).toContain('1. service is "db"; no such service');
    const computed = guardedTool({ spec, name: "restart", func: () => "restarted", ruleContext: () => ({ services: ["db"] }) });
    expect(await computed.invoke({ service: "db" })).toBe("restarted");
    expect(ran).toEqual([{ service: "api" }]);
  });

  it("runs the function with valid arguments, as a fresh copy, and returns its result", async () => {
    const { tool, received } = deployTool();
    const args = structuredClone(valid);
    const result = (await tool.invoke(call(args))) as ToolMessage;
    expect(result.content).toBe("deployed payments-api");
    expect(result.status).toBe("success");
    expect(guardRecordOf(result)).toBeUndefined();
    expect(received).toEqual([valid]);
    expect(received[0]).not.toBe(args);
  });

  it("never runs the function with arguments that break a business rule, and returns the validator's exact messages", async () => {
    const { tool, received } = deployTool();
    const result = (await tool.invoke(call(lowCpu))) as ToolMessage;
    expect(received).toEqual([]);
    expect(result.status).toBe("error");
    expect(result.tool_call_id).toBe("call_1");
    expect(result.name).toBe("deploy_service");
    expect(result.content).toBe(invalidText(1, 3, [LOW_CPU_ERROR]));
    expect(guardRecordOf(result)).toEqual({ outcome: "invalid", spec: "deployment-config", attempt: 1, maxAttempts: 3, errors: [LOW_CPU_ERROR] });
    // Where docs/guarded-tools.md tells a user to read it.
    expect((result.artifact as { guardedTool?: unknown }).guardedTool).toEqual(guardRecordOf(result));
  });

  it("answers schema failures itself, not with LangChain's generic parsing error, in the validation graph's words", async () => {
    const { tool, received } = deployTool();
    const bad = {
      service_name: "Payments API",
      replicas: 0,
      resources: { cpu_limit: "lots" },
      health_check: { path: "healthz", timeout_seconds: 10, interval_seconds: 10 },
    };
    const result = (await tool.invoke(call(bad))) as ToolMessage;
    const errors = checkValueSync(spec, bad).errors;
    expect(errors).toEqual([
      'service_name is "Payments API"; it must match the pattern ^[a-z][a-z0-9-]*$',
      "replicas is 0; it must be >= 1",
      "resources.memory_limit_mb is missing; it is required",
      'resources.cpu_limit is "lots" (string); it must be a number',
      'health_check.path is "healthz"; it must match the pattern ^/',
      RULES.timeoutBelowInterval(10, 10),
    ]);
    expect(result.content).toBe(invalidText(1, 3, errors));
    expect(received).toEqual([]);
  });

  it("without a tool call id returns the text itself, and still never runs the function", async () => {
    const { tool, received } = deployTool();
    await expect(tool.invoke(lowCpu)).resolves.toBe(invalidText(1, 3, [LOW_CPU_ERROR]));
    await expect(tool.invoke(valid)).resolves.toBe("deployed payments-api");
    expect(received).toEqual([valid]);
  });

  it("outside a graph there is no conversation to count: every call is validated, none is budgeted", async () => {
    const { tool, received } = deployTool(2);
    for (let i = 0; i < 4; i++) expect(await tool.invoke(call(lowCpu, `c${i}`))).toMatchObject({ content: invalidText(1, 2, [LOW_CPU_ERROR]) });
    expect(received).toEqual([]);
  });

  it("reads text arguments exactly: one JSON value and nothing else, no field named twice", async () => {
    const { tool, received } = deployTool();
    await expect(tool.invoke(` ${JSON.stringify(valid)}\n`)).resolves.toBe("deployed payments-api");
    // A fence or trailing text is not an argument list: the model is told, and the function does not run.
    const fenced = (await tool.invoke("```json\n" + JSON.stringify(valid) + "\n```")) as string;
    expect(fenced).toContain(
      "1. The arguments are not valid JSON (exactly one JSON value is expected, nothing before or after it): Unexpected token '`' at line 1, column 1",
    );
    const trailing = (await tool.invoke(`${JSON.stringify(valid)} and then more`)) as string;
    expect(trailing).toContain("Unexpected non-whitespace character after JSON");
    const text = (await tool.invoke('{"service_name": "a", "service_name": "b"}')) as string;
    expect(text).toContain('1. The JSON names the field "service_name" twice in the top-level object; each field may appear only once.');
    expect(received).toEqual([valid]);
  });

  it("works with a Spec from defineSpec and an inline JSON spec", async () => {
    const discount = defineSpec({
      name: "discount",
      description: "A discount code.",
      schema: {
        type: "object",
        required: ["code", "percent"],
        properties: { code: { type: "string" }, percent: { type: "integer", minimum: 1, maximum: 90 } },
      },
      rules: [
        {
          id: "vip",
          description: "percent > 30 requires a code starting with VIP-.",
          inputs: { code: "string", percent: "integer" },
          check: (v) =>
            v.percent > 30 && !v.code.startsWith("VIP-")
              ? `code is ${JSON.stringify(v.code)}; percent=${v.percent} requires a code starting with "VIP-"`
              : null,
        },
      ],
    });
    const seen: unknown[] = [];
    const coded = guardedTool({ spec: discount, name: "make_discount", func: (d) => (seen.push(d), "ok") });
    expect(coded.description).toBe("A discount code.\n\nThe arguments must also satisfy:\n- percent > 30 requires a code starting with VIP-.");
    expect(await coded.invoke({ code: "SAVE40", percent: 40 })).toContain('1. code is "SAVE40"; percent=40 requires a code starting with "VIP-"');
    expect(await coded.invoke({ code: "VIP-40", percent: 40 })).toBe("ok");

    const inline = guardedTool({
      spec: JSON.stringify({
        name: "page",
        schema: { type: "object", required: ["page"], properties: { page: { type: "integer", minimum: 1 } }, additionalProperties: false },
      }),
      name: "fetch_page",
      func: (a) => (seen.push(a), "fetched"),
    });
    expect(await inline.invoke({ page: 0, extra: 1 })).toBe(
      [
        "fetch_page call 1 of 3 was not run: its arguments do not match the page spec.",
        "Errors:",
        '1. the object has an unexpected field "extra"; remove it',
        "2. page is 0; it must be >= 1",
        "Fix these and call fetch_page again with the corrected arguments, keeping everything that was already right.",
      ].join("\n"),
    );
    expect(await inline.invoke({ page: 2 })).toBe("fetched");
    expect(seen).toEqual([{ code: "VIP-40", percent: 40 }, { page: 2 }]);
  });

  it("passes its limits to the parser and the validator", async () => {
    const t = guardedTool({ spec, name: "deploy_service", func: () => "ran", limits: { maxErrors: 1, maxDepth: 2 } });
    expect(await t.invoke({})).toContain("Errors:\n1. service_name is missing; it is required\n2. …and 3 more problems\n");
    expect(await t.invoke({ ...valid, extra: { a: { b: {} } } })).toContain("1. the arguments nest deeper than 2 levels; the expected value is shallower");
  });

  it("refuses, when built, what it cannot guard", () => {
    const func = () => "x";
    expect(() => guardedTool({ spec: "no-such-spec", name: "t", func })).toThrow(SpecError);
    expect(() => guardedTool({ spec: { type: "array" }, name: "t", func })).toThrow(/needs "type": "object"/);
    // A top-level "id" (draft-04's name for "$id") is one zod reads as its own: the model must not be shown a changed schema.
    expect(() => guardedTool({ spec: defineSpec({ schema: { id: "legacy", type: "object" } }), name: "t", func })).toThrow(
      /does not convert to tool parameters unchanged/,
    );
    // A Spec's fields with another schema is no Spec: its validator is the old schema's.
    expect(() => guardedTool({ spec: { ...spec, schema: { type: "object" } } as never, name: "t", func })).toThrow(/not one defineSpec made/);
    expect(() => guardedTool({ spec, name: "deploy service", func })).toThrow(ConfigurationError);
    for (const maxAttempts of [0, 11, 1.5, Number.NaN])
      expect(() => guardedTool({ spec, name: "t", func, maxAttempts })).toThrow(/maxAttempts must be an integer from 1 to 10/);
  });
});

describe("guardedTool: what the model sees", () => {
  it("bindTools gets the spec's JSON Schema as the tool's parameters, and the rules in the description", () => {
    const { tool } = deployTool();
    const definition = convertToOpenAITool(tool);
    expect(definition.function.name).toBe("deploy_service");
    expect(definition.function.parameters).toEqual({ $schema: "http://json-schema.org/draft-07/schema#", ...spec.schema });
    expect(definition.function.description).toBe(
      "Deploy a service.\n\nThe arguments must also satisfy:\n" + spec.rules.map((rule) => `- ${rule.description}`).join("\n"),
    );
    // Every built-in spec can guard a tool.
    for (const builtin of builtinSpecs.values()) {
      const t = guardedTool({ spec: builtin, name: "t", func: () => "x" });
      expect(convertToOpenAITool(t).function.parameters).toEqual({ $schema: "http://json-schema.org/draft-07/schema#", ...builtin.schema });
    }
  });
});

describe("guardedTool: hostile arguments", () => {
  const hostile: Array<[string, () => unknown, RegExp | string]> = [
    ["a huge string field", () => ({ ...valid, service_name: "a".repeat(2_000_000) }), "the arguments are over the limit of 1000000 characters of JSON"],
    ["deep nesting", () => nest(200), "the arguments nest deeper than 64 levels; the expected value is shallower"],
    ["nesting deeper than the stack", () => nest(200_000), "the arguments nest deeper than 64 levels; the expected value is shallower"],
    [
      "a cycle",
      () => {
        const a: Record<string, unknown> = { ...valid };
        a.self = a;
        return a;
      },
      "self refers to itself (a cycle), which JSON cannot hold",
    ],
    ["a BigInt", () => ({ ...valid, replicas: 8n }), "replicas is a BigInt, which JSON has no form for; use a number or a string"],
    [
      "a throwing getter",
      () => ({
        get replicas() {
          throw new Error("boom");
        },
      }),
      "replicas is computed by a getter, not plain JSON data",
    ],
    ["no arguments", () => undefined, "the arguments are undefined, which JSON has no form for"],
    ["null", () => null, "the value is null; it must be an object"],
    ["a number", () => 42, "the value is 42 (integer); it must be an object"],
    ["an array", () => [valid], "the value is an array of 1 item; it must be an object"],
    ["a huge key", () => ({ ...valid, ["k".repeat(100_000)]: 1 }), ""],
  ];
  it.each(hostile)("%s: a bounded message or a clean pass, never a crash", async (_label, make, expected) => {
    const { tool, received } = deployTool();
    const result = (await tool.invoke(call(make()))) as ToolMessage;
    const text = String(result.content);
    expect(text.length).toBeLessThan(10_000);
    if (expected === "") {
      // No rule or schema keyword forbids extra fields here: it passes, as in the validation graph.
      expect(result.status).toBe("success");
      expect(received).toHaveLength(1);
      return;
    }
    expect(received).toEqual([]);
    expect(guardRecordOf(result)?.errors).toHaveLength(1);
    const [error] = guardRecordOf(result)!.errors;
    if (typeof expected === "string") expect(error).toBe(expected);
    else expect(error).toMatch(expected);
  });

  it("a field named __proto__ is refused with the reason (a checkpoint would not keep it), never polluting prototypes", async () => {
    const args = JSON.parse(`{"__proto__": {"polluted": true}, "method": "GET", "url": "https://example.com"}`);
    const seen: unknown[] = [];
    const t = guardedTool({ spec: "api-request", name: "send_request", func: (a) => (seen.push(a), "sent") });
    const text = String(await t.invoke(args));
    expect(text).toContain('the arguments have a field named "__proto__", which a checkpoint would not give back as written; rename the field');
    expect(seen).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("LangChain's own argument check never intercepts a call (it would, with the spec's JSON Schema as a plain tool schema)", async () => {
    const plain = lcTool(() => "ran", { name: "deploy_service", description: "d", schema: spec.schema as Record<string, unknown> });
    await expect(plain.invoke(call({ replicas: 0 }))).rejects.toThrow(ToolInputParsingException);
    const { tool } = deployTool();
    for (const args of [lowCpu, {}, { replicas: "8" }, { replicas: 0 }]) {
      const result = (await tool.invoke(call(args))) as ToolMessage;
      expect(guardRecordOf(result)?.errors).toEqual(checkValueSync(spec, args).errors);
    }
  });
});

function nest(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return { ...valid, extra: value };
}

describe("guardedTool: the attempt budget in an agent", () => {
  it("counts failed calls in a turn, says when the last one is spent, then refuses even valid arguments", async () => {
    const { tool, received } = deployTool(3);
    const model = fakeModel()
      .respondWithTools([{ name: "deploy_service", args: lowCpu, id: "c1" }])
      .respondWithTools([{ name: "deploy_service", args: { ...lowCpu, replicas: 9 }, id: "c2" }])
      .respondWithTools([{ name: "deploy_service", args: {}, id: "c3" }])
      .respondWithTools([{ name: "deploy_service", args: valid, id: "c4" }])
      .respondWithTools([{ name: "deploy_service", args: valid, id: "c5" }])
      .respond(new AIMessage("I could not deploy it."));
    const agent = createReactAgent({ llm: model, tools: [tool] });
    const out = await agent.invoke({ messages: [new HumanMessage("deploy payments-api")] });
    const results = toolResults(out.messages);
    expect(results.map((m) => m.content)).toEqual([
      invalidText(1, 3, [LOW_CPU_ERROR]),
      invalidText(2, 3, [RULES.replicasNeedCpu(0.5, 9)]),
      invalidText(3, 3, checkValueSync(spec, {}).errors),
      refusal(3),
      refusal(3),
    ]);
    expect(results.map((m) => guardRecordOf(m)?.outcome)).toEqual(["invalid", "invalid", "invalid", "refused", "refused"]);
    expect(results.every((m) => m.status === "error")).toBe(true);
    expect(received).toEqual([]);
    expect(model.callCount).toBe(6);
  });

  it("a call that runs resets the count; a new message from the user starts a fresh budget on the same thread", async () => {
    const { tool, received } = deployTool(2);
    const model = fakeModel()
      .respondWithTools([{ name: "deploy_service", args: lowCpu }])
      .respondWithTools([{ name: "deploy_service", args: valid }])
      .respondWithTools([{ name: "deploy_service", args: lowCpu }])
      .respondWithTools([{ name: "deploy_service", args: lowCpu }])
      .respondWithTools([{ name: "deploy_service", args: valid }])
      .respond(new AIMessage("refused"))
      // The next turn.
      .respondWithTools([{ name: "deploy_service", args: valid }])
      .respond(new AIMessage("deployed"));
    const agent = createReactAgent({ llm: model, tools: [tool], checkpointer: new MemorySaver() });
    const thread = { configurable: { thread_id: "t1" } };
    const first = await agent.invoke({ messages: [new HumanMessage("deploy")] }, thread);
    expect(toolResults(first.messages).map((m) => m.content)).toEqual([
      invalidText(1, 2, [LOW_CPU_ERROR]),
      "deployed payments-api",
      invalidText(1, 2, [LOW_CPU_ERROR]),
      invalidText(2, 2, [LOW_CPU_ERROR]),
      refusal(2),
    ]);
    // The records the budget counts survive the checkpointer's serialisation.
    const saved = toolResults((await agent.getState(thread)).values.messages as BaseMessage[]);
    expect(saved.map((m) => guardRecordOf(m)?.outcome ?? "ran")).toEqual(["invalid", "ran", "invalid", "invalid", "refused"]);
    const second = await agent.invoke({ messages: [new HumanMessage("try again")] }, thread);
    expect(toolResults(second.messages).at(-1)!.content).toBe("deployed payments-api");
    expect(received).toEqual([valid, valid]);
  });

  it.each(["v1", "v2"] as const)("numbers parallel calls in one model message as if made one after another (createReactAgent %s)", async (version) => {
    const { tool, received } = deployTool(2);
    const model = fakeModel()
      .respondWithTools([
        { name: "deploy_service", args: lowCpu, id: "p1" },
        { name: "deploy_service", args: valid, id: "p2" },
        { name: "deploy_service", args: lowCpu, id: "p3" },
        { name: "deploy_service", args: lowCpu, id: "p4" },
        { name: "deploy_service", args: valid, id: "p5" },
      ])
      .respond(new AIMessage("done"));
    const out = await createReactAgent({ llm: model, tools: [tool], version }).invoke({ messages: [new HumanMessage("deploy")] });
    expect(toolResults(out.messages).map((m) => [m.tool_call_id, m.content])).toEqual([
      ["p1", invalidText(1, 2, [LOW_CPU_ERROR])],
      ["p2", "deployed payments-api"],
      ["p3", invalidText(1, 2, [LOW_CPU_ERROR])],
      ["p4", invalidText(2, 2, [LOW_CPU_ERROR])],
      ["p5", refusal(2)],
    ]);
    expect(received).toEqual([valid]);
  });

  it("keeps two concurrent runs' budgets apart: one agent, one tool instance, with and without threads", async () => {
    const { tool, received } = deployTool(2);
    // Run A spends its budget; run B fails once, then succeeds, while A is still going.
    const script: Record<string, Array<Record<string, unknown> | string>> = { A: [lowCpu, lowCpu, lowCpu, valid, "gave up"], B: [lowCpu, valid, "done"] };
    const order: string[] = [];
    /** One model for both runs: each answer depends only on the run's own conversation. */
    const scriptedModel = () => {
      const model = fakeModel();
      for (let i = 0; i < script.A.length + script.B.length; i++) {
        model.respond((messages) => {
          const run = String(messages.find((m) => m.getType() === "human")!.content);
          const step = messages.filter((m) => m.getType() === "tool").length;
          order.push(run);
          const answer = script[run][step];
          return typeof answer === "string"
            ? new AIMessage(answer)
            : new AIMessage({ content: "", tool_calls: [{ name: "deploy_service", args: answer, id: `${run}${step}` }] });
        });
      }
      return model;
    };
    for (const threaded of [true, false]) {
      received.length = 0;
      order.length = 0;
      const agent = createReactAgent({ llm: scriptedModel(), tools: [tool], checkpointer: threaded ? new MemorySaver() : undefined });
      const config = (id: string) => (threaded ? { configurable: { thread_id: `thread-${id}` } } : {});
      const [outA, outB] = await Promise.all([
        agent.invoke({ messages: [new HumanMessage("A")] }, config("a")),
        agent.invoke({ messages: [new HumanMessage("B")] }, config("b")),
      ]);
      expect(order.slice(0, 4).sort()).toEqual(["A", "A", "B", "B"]); // the runs interleaved
      expect(toolResults(outA.messages).map((m) => guardRecordOf(m)?.outcome ?? "ran")).toEqual(["invalid", "invalid", "refused", "refused"]);
      expect(toolResults(outB.messages).map((m) => m.content)).toEqual([invalidText(1, 2, [LOW_CPU_ERROR]), "deployed payments-api"]);
      expect(received).toEqual([valid]);
    }
  });

  it("returns its errors as results even where a ToolNode would rethrow errors", async () => {
    const { tool } = deployTool();
    const node = new ToolNode([tool], { handleToolErrors: false });
    const out = await node.invoke({
      messages: [new HumanMessage("deploy"), new AIMessage({ content: "", tool_calls: [{ name: "deploy_service", args: lowCpu, id: "x1" }] })],
    });
    expect(out.messages[0].content).toBe(invalidText(1, 3, [LOW_CPU_ERROR]));
  });
});
