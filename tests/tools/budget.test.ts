/**
 * The attempt budget against a model (or an OpenAI-compatible server) whose tool-call ids cannot be trusted: ids
 * shared by parallel calls, reused from an earlier message, or missing. Whatever the ids, once maxAttempts calls
 * in a row have failed the function never runs again until the user writes. Driven through LangGraph's own
 * ToolNode and createReactAgent with a scripted model. And parallel calls are validated once each for their
 * message (plus each call's own check), not once for every later call.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool as lcTool, type ToolRuntime } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineSpec } from "../../src/specs/spec.js";
import { decideBudget, GUARD_ARTIFACT_KEY, guardRecordOf, type GuardRecord } from "../../src/tools/budget.js";
import { guardedTool } from "../../src/tools/guarded-tool.js";
import { seededRandom } from "../../testkit/random.js";

const valid = {
  service_name: "payments-api",
  replicas: 8,
  resources: { cpu_limit: 1.5, memory_limit_mb: 512 },
  health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
};
/** Breaks a business rule (replicas > 5 needs cpu_limit >= 1.0); `n` makes each such call's arguments different. */
const bad = (n = 0) => ({ ...valid, replicas: 6 + n, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } });

function deployTool(maxAttempts: number) {
  const received: unknown[] = [];
  const tool = guardedTool({
    spec: "deployment-config",
    name: "deploy_service",
    maxAttempts,
    func: (config: { service_name: string }) => {
      received.push(config);
      return `deployed ${config.service_name}`;
    },
  });
  return { tool, received };
}

type Call = { args: unknown; id?: string };
/** One model message of deploy_service calls, each with its own copy of the arguments (as a provider's parsed JSON); an id left out is missing. */
const calls = (list: Call[]) =>
  new AIMessage({
    content: "",
    tool_calls: list.map((c) => ({ type: "tool_call" as const, name: "deploy_service", args: structuredClone(c.args) as Record<string, unknown>, id: c.id })),
  });
const same = (n: number, args: unknown, id?: string): Call[] => Array.from({ length: n }, () => ({ args, id }));

const results = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => m.getType() === "tool");
const outcomes = (messages: BaseMessage[]) => results(messages).map((m) => guardRecordOf(m)?.outcome ?? "ran");
const attempts = (messages: BaseMessage[]) => results(messages).map((m) => guardRecordOf(m)?.attempt);

/** An agent whose model sends the given messages in turn, then stops. */
async function runAgent(tool: ReturnType<typeof deployTool>["tool"], version: "v1" | "v2", script: AIMessage[]) {
  const model = fakeModel();
  for (const message of script) model.respond(message);
  model.respond(new AIMessage("done"));
  const out = await createReactAgent({ llm: model, tools: [tool], version }).invoke({ messages: [new HumanMessage("deploy payments-api")] });
  return out.messages as BaseMessage[];
}

describe("what ToolNode hands a tool (the budget relies on it)", () => {
  it.each(["v1", "v2"] as const)(
    "createReactAgent %s: the call with JSON-equal arguments (a copy, so identity cannot locate it); a missing id stays missing",
    async (version) => {
      const seen: ToolRuntime[] = [];
      const probe = lcTool((_input: unknown, runtime: ToolRuntime) => (seen.push(runtime), "ok"), { name: "probe", description: "p", schema: z.unknown() });
      const message = new AIMessage({
        content: "",
        tool_calls: [
          { name: "probe", args: { a: 0 }, id: "call_0" },
          { name: "probe", args: { a: 1 } },
        ],
      });
      const model = fakeModel().respond(message).respond(new AIMessage("done"));
      await createReactAgent({ llm: model, tools: [probe], version }).invoke({ messages: [new HumanMessage("go")] });
      expect(seen).toHaveLength(2);
      for (const runtime of seen) {
        const messages = (runtime.state as { messages: BaseMessage[] }).messages;
        const entry = (messages.findLast((m) => m.getType() === "ai") as AIMessage).tool_calls![(runtime.toolCall!.args as { a: number }).a];
        expect(JSON.stringify(runtime.toolCall!.args)).toBe(JSON.stringify(entry.args));
        expect(runtime.toolCall!.id).toBe(entry.id);
      }
      const idless = seen.find((r) => r.toolCall!.id === undefined)!;
      expect(idless.toolCallId).toBe("");
    },
  );
});

describe("the budget whatever the tool-call ids", () => {
  describe.each(["v1", "v2"] as const)("createReactAgent %s", (version) => {
    it.each([
      ["alike", () => same(20, bad(), "call_0")],
      ["each different", () => Array.from({ length: 20 }, (_, i) => ({ args: bad(i), id: "call_0" }))],
    ])("20 parallel failing calls all with id call_0 (%s), then 20 valid ones with the same id: 3 invalid, every other refused", async (_label, failing) => {
      const { tool, received } = deployTool(3);
      const messages = await runAgent(tool, version, [calls(failing()), calls(same(20, valid, "call_0"))]);
      const first = outcomes(messages).slice(0, 20);
      expect(first).toEqual([...Array(3).fill("invalid"), ...Array(17).fill("refused")]);
      expect(attempts(messages).slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      // v1's ToolNode skips a call whose id already has a result; v2 runs it, and the tool refuses it.
      expect(outcomes(messages).slice(20)).toEqual(version === "v1" ? [] : Array(20).fill("refused"));
      expect(received).toEqual([]);
    });

    it("an id reused from an earlier message does not hide the earlier failures", async () => {
      const { tool, received } = deployTool(3);
      const script = [
        calls([{ args: bad(), id: "call_0" }]),
        calls([{ args: bad(1), id: "call_0" }]),
        calls([{ args: bad(2), id: "call_0" }]),
        calls([{ args: valid, id: "call_0" }]),
      ];
      const messages = await runAgent(tool, version, script);
      expect(received).toEqual([]);
      if (version === "v2") expect(outcomes(messages)).toEqual(["invalid", "invalid", "invalid", "refused"]);
    });

    it("calls without ids, one per message: every failure counts, and the result still carries its record", async () => {
      const { tool, received } = deployTool(3);
      const messages = await runAgent(tool, version, [
        calls([{ args: bad() }]),
        calls([{ args: bad(1) }]),
        calls([{ args: bad(2) }]),
        calls([{ args: valid }]),
      ]);
      expect(outcomes(messages)).toEqual(["invalid", "invalid", "invalid", "refused"]);
      expect(results(messages).every((m) => m.status === "error")).toBe(true);
      expect(received).toEqual([]);
    });

    it("parallel calls without ids: numbered one after another, then refused", async () => {
      const { tool, received } = deployTool(3);
      const messages = await runAgent(tool, version, [calls([{ args: bad() }, { args: bad(1) }, { args: bad() }, { args: valid }, { args: valid }])]);
      expect(outcomes(messages)).toEqual(["invalid", "invalid", "invalid", "refused", "refused"]);
      expect(attempts(messages)).toEqual([1, 2, 3, 4, 5]);
      expect(results(messages).map((m) => guardRecordOf(m)?.callIndex)).toEqual([0, 1, 2, 3, 4]);
      expect(received).toEqual([]);
    });

    it("two parallel calls with the same id are two attempts", async () => {
      const { tool, received } = deployTool(1);
      const messages = await runAgent(tool, version, [
        calls([
          { args: bad(), id: "call_0" },
          { args: valid, id: "call_0" },
        ]),
      ]);
      expect(outcomes(messages)).toEqual(["invalid", "refused"]);
      expect(received).toEqual([]);
    });

    it("a call that ran still resets the count when its id is shared", async () => {
      const { tool, received } = deployTool(2);
      const messages = await runAgent(tool, version, [
        calls([
          { args: bad(), id: "call_0" },
          { args: valid, id: "call_0" },
          { args: bad(1), id: "call_0" },
          { args: bad(2), id: "call_0" },
        ]),
      ]);
      expect(outcomes(messages)).toEqual(["invalid", "ran", "invalid", "invalid"]);
      expect(attempts(messages)).toEqual([1, undefined, 1, 2]);
      expect(received).toEqual([valid]);
    });

    it("alike calls (same id and arguments) share the strictest verdict: were one of them refused, all are", async () => {
      const { tool, received } = deployTool(2);
      const script = [
        calls([
          { args: valid, id: "call_0" },
          { args: bad(1), id: "call_0" },
          { args: bad(2), id: "call_0" },
          { args: valid, id: "call_0" },
        ]),
      ];
      const messages = await runAgent(tool, version, script);
      expect(outcomes(messages)).toEqual(["refused", "invalid", "refused", "refused"]);
      expect(received).toEqual([]);
    });
  });

  it("a thread resumed from its checkpoint before every tool step (each parallel call then reads its own copy of the messages) keeps the budget", async () => {
    const { tool, received } = deployTool(2);
    const model = fakeModel()
      .respond(
        calls([
          { args: valid, id: "call_0" },
          { args: bad(1), id: "call_0" },
          { args: bad(2), id: "call_0" },
          { args: valid, id: "call_0" },
        ]),
      )
      .respond(calls([{ args: valid }]))
      .respond(new AIMessage("done"));
    const agent = createReactAgent({ llm: model, tools: [tool], version: "v2", checkpointer: new MemorySaver(), interruptBefore: ["tools"] });
    const thread = { configurable: { thread_id: "resumed" } };
    let out = await agent.invoke({ messages: [new HumanMessage("deploy")] }, thread);
    for (let step = 0; step < 5 && (await agent.getState(thread)).next.length > 0; step++) out = await agent.invoke(null, thread);
    expect(model.callCount).toBe(3);
    // The two alike valid calls cannot tell which of them comes last: both are refused, as in a run never resumed.
    expect(outcomes(out.messages)).toEqual(["refused", "invalid", "refused", "refused", "refused"]);
    expect(received).toEqual([]);
  });

  it("a ToolNode in a graph without a human message counts from the first message; a new human message starts afresh", async () => {
    const { tool, received } = deployTool(1);
    const node = new ToolNode([tool]);
    const history: BaseMessage[] = [calls([{ args: bad() }])];
    history.push(...(await node.invoke({ messages: history })).messages);
    history.push(calls([{ args: valid }]));
    history.push(...(await node.invoke({ messages: history })).messages);
    expect(outcomes(history)).toEqual(["invalid", "refused"]);
    history.push(new HumanMessage("try again"), calls([{ args: valid }]));
    history.push(...(await node.invoke({ messages: history })).messages);
    expect(outcomes(history)).toEqual(["invalid", "refused", "ran"]);
    expect(received).toEqual([valid]);
  });

  it("outside any conversation (a direct call, no graph state) there is nothing to count: every call is validated, none budgeted", async () => {
    const { tool, received } = deployTool(1);
    for (let i = 0; i < 3; i++) {
      const result = (await tool.invoke({ type: "tool_call", name: "deploy_service", args: bad(), id: "call_0" })) as ToolMessage;
      expect(guardRecordOf(result)).toMatchObject({ outcome: "invalid", attempt: 1 });
    }
    await expect(tool.invoke(valid)).resolves.toBe("deployed payments-api");
    expect(received).toEqual([valid]);
  });
});

describe("the guarantee, for random conversations with untrustworthy ids", () => {
  /** A turn of 2-5 model messages of 1-8 calls each, ids drawn from call_0, call_1 or none, arguments from three (so alike calls occur). */
  function scenario(seed: number) {
    const random = seededRandom(seed);
    const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)];
    const maxAttempts = 1 + Math.floor(random() * 3);
    const script = Array.from({ length: 2 + Math.floor(random() * 4) }, () =>
      calls(
        Array.from({ length: 1 + Math.floor(random() * 8) }, () => ({ args: pick([valid, valid, bad(), bad(1)]), id: pick(["call_0", "call_1", undefined]) })),
      ),
    );
    return { maxAttempts, script };
  }

  it.each(["v1", "v2", "v2, resumed before every tool step"] as const)(
    "createReactAgent %s: the function never runs after maxAttempts failed calls in a row",
    async (mode) => {
      for (let seed = 1; seed <= 30; seed++) {
        const { maxAttempts, script } = scenario(seed);
        const { tool, received } = deployTool(maxAttempts);
        const model = fakeModel();
        for (const message of script) model.respond(message);
        model.respond(new AIMessage("done"));
        const resumed = mode.includes("resumed");
        const agent = createReactAgent({
          llm: model,
          tools: [tool],
          version: mode === "v1" ? "v1" : "v2",
          checkpointer: new MemorySaver(),
          interruptBefore: resumed ? ["tools"] : undefined,
        });
        const thread = { configurable: { thread_id: `seed-${seed}` } };
        let out = await agent.invoke({ messages: [new HumanMessage("deploy")] }, thread);
        for (let step = 0; resumed && step < 10 && (await agent.getState(thread)).next.length > 0; step++) out = await agent.invoke(null, thread);
        // ToolNode writes each message's results in call order, so this is the order the calls were made in.
        let inARow = 0;
        for (const [i, outcome] of outcomes(out.messages).entries()) {
          if (outcome === "ran") {
            expect(inARow, `seed ${seed}, result ${i}`).toBeLessThan(maxAttempts);
            inARow = 0;
          } else inARow++;
        }
        expect(received).toHaveLength(outcomes(out.messages).filter((o) => o === "ran").length);
      }
    },
  );
});

describe("results matched to their calls by the guard record, not by order or id", () => {
  const record = (outcome: GuardRecord["outcome"], callIndex?: number) => ({
    [GUARD_ARTIFACT_KEY]: { outcome, spec: "s", attempt: 1, maxAttempts: 2, errors: [], callIndex },
  });
  const result = (fields: { id?: string; artifact?: unknown; content?: string }) =>
    new ToolMessage({ content: fields.content ?? "x", name: "deploy_service", tool_call_id: fields.id ?? "", artifact: fields.artifact });
  const passes = (args: unknown) => (args as { ok: boolean }).ok;
  const query = (call: { id?: string; args: unknown }) => ({ tool: "deploy_service", maxAttempts: 2, passes, call: { name: "deploy_service", ...call } });
  const ai = (list: Array<{ id?: string; args: unknown }>) =>
    new AIMessage({ content: "", tool_calls: list.map((c) => ({ name: "deploy_service", id: c.id, args: c.args as Record<string, unknown> })) });

  it("a failure written after the result of a call that ran, both with id call_0, still belongs to the first call", () => {
    const next = { id: "call_0", args: { ok: false, n: 2 } };
    const messages = [
      new HumanMessage("go"),
      ai([
        { id: "call_0", args: { ok: false } },
        { id: "call_0", args: { ok: true } },
      ]),
      result({ id: "call_0", content: "ran" }),
      result({ id: "call_0", artifact: record("invalid", 0) }),
      ai([next]),
    ];
    // In call order: failed, ran. Read in result order it would be ran, failed: one failure before the next call.
    expect(decideBudget(messages, query(next))).toEqual({ failures: 0, callIndex: 0 });
  });

  it("results without ids (or with the empty id ToolNode gives) go to the calls in order; records from before call indexes still count", () => {
    const next = { args: { ok: true } };
    const messages = [
      new HumanMessage("go"),
      ai([{ args: { ok: true } }, { args: { ok: false } }]),
      result({ content: "ran" }),
      result({ artifact: record("invalid") }),
      ai([{ args: { ok: false, n: 1 } }]),
      new ToolMessage({ content: "x", name: "deploy_service", tool_call_id: undefined as unknown as string, artifact: record("invalid") }),
      ai([next]),
    ];
    expect(decideBudget(messages, query(next))).toEqual({ failures: 2, callIndex: 0 });
  });

  it("a call no AI message holds is counted after every call so far", () => {
    const messages = [
      new HumanMessage("go"),
      ai([
        { id: "a", args: { ok: false } },
        { id: "b", args: { ok: false } },
      ]),
    ];
    expect(decideBudget(messages, query({ id: "zzz", args: { ok: true } }))).toEqual({ failures: 2 });
    expect(decideBudget(messages, { tool: "deploy_service", maxAttempts: 2, passes })).toEqual({ failures: 2 });
    expect(decideBudget(undefined, query({ id: "a", args: { ok: false } }))).toEqual({ failures: 0 });
  });
});

describe("parallel calls are judged once each", () => {
  /** A spec whose only rule counts how often it is checked. */
  function countingTool(maxAttempts: number) {
    const counter = { validations: 0 };
    const spec = defineSpec({
      name: "counted",
      description: "A value n >= 0.",
      schema: { type: "object", required: ["n"], properties: { n: { type: "integer" } } },
      rules: [
        {
          id: "non-negative",
          description: "n >= 0.",
          inputs: { n: "integer" },
          check: (v) => (counter.validations++, v.n < 0 ? `n is ${v.n}; it must be >= 0` : null),
        },
      ],
    });
    const tool = guardedTool({ spec, name: "counted_tool", maxAttempts, func: () => "ran" });
    return { tool, counter };
  }
  const message = (ns: number[]) =>
    new AIMessage({ content: "", tool_calls: ns.map((n, i) => ({ type: "tool_call" as const, name: "counted_tool", args: { n }, id: `call_${i}` })) });
  const N = 200;

  it.each([
    [
      "ToolNode",
      async (tool: ReturnType<typeof countingTool>["tool"], ai: AIMessage) =>
        (await new ToolNode([tool]).invoke({ messages: [new HumanMessage("go"), ai] })).messages as BaseMessage[],
    ],
    [
      "createReactAgent v2",
      async (tool: ReturnType<typeof countingTool>["tool"], ai: AIMessage) =>
        (
          await createReactAgent({ llm: fakeModel().respond(ai).respond(new AIMessage("done")), tools: [tool], version: "v2" }).invoke({
            messages: [new HumanMessage("go")],
          })
        ).messages as BaseMessage[],
    ],
  ])("%s: 200 failing calls in one message, and 200 alternating failing and valid ones, cost at most two validations a call", async (_label, run) => {
    const failing = countingTool(3);
    const out = await run(failing.tool, message(Array.from({ length: N }, (_, i) => -1 - i)));
    expect(outcomes(out)).toEqual([...Array(3).fill("invalid"), ...Array(N - 3).fill("refused")]);
    expect(failing.counter.validations).toBeLessThanOrEqual(2 * N);

    const alternating = countingTool(10);
    const mixed = await run(alternating.tool, message(Array.from({ length: N }, (_, i) => (i % 2 === 0 ? -1 : i))));
    expect(outcomes(mixed)).toEqual(Array.from({ length: N }, (_, i) => (i % 2 === 0 ? "invalid" : "ran")));
    expect(alternating.counter.validations).toBeLessThanOrEqual(2 * N);
  });
});
