/**
 * When an agent's answer is finished: through createAgent with the real ChatOpenAI against a server on
 * 127.0.0.1 that sends OpenAI's bytes (SSE, or one JSON body). The spec's answer is `{"n": 12345678}`,
 * and every prefix of the number from four digits on would pass it, so an answer cut short and taken as
 * finished would be seen. An answer is valid only on the provider's finished stop: streamed (LangGraph's
 * messages mode, as on the LangGraph server, where LangChain aggregates the pieces without the
 * `finish_reason`) and not; a stream that ends before its `finish_reason`, or a body without one, is an
 * attempt whose one error says the answer did not finish. A guard pins where the client leaves
 * `finish_reason` on each path, which the middleware relies on.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import { RunnableBinding } from "@langchain/core/runnables";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent, initChatModel, modelRetryMiddleware } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validatedResponseMiddleware } from "../../src/agents/index.js";
import { answerToolName } from "../../src/agents/answer.js";
import { unfinishedAnswerError } from "../../src/protocol/feedback.js";
import { answerEnd, providerOf } from "../../src/providers/model-call.js";
import { loadChatModel } from "../../src/models.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { startWireServer, wireEnvironment, type WireServer } from "../support/wire-server.js";

const SPEC = resolveSpec({
  name: "count",
  description: "A count of at least 1000",
  schema: { type: "object", required: ["n"], properties: { n: { type: "integer", minimum: 1000 } }, additionalProperties: false },
});
const TOOL = answerToolName(SPEC);
/** The answer's arguments, as the model streams them: cut after the second piece, `{"n": 123456` reads as `{n: 123456}`. */
const PIECES = ['{"n": 12', "3456", "78}"];
const NO_STOP = unfinishedAnswerError("no finish_reason: the answer ended without the provider's stop");

const SSE = { "content-type": "text/event-stream" };
const chunk = (delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The streamed answer: a tool call in pieces, then (unless `cut`) the finish_reason, usage and [DONE]. */
function streamed(options: { cut?: boolean; finish?: string } = {}): string {
  const call = { index: 0, id: "call_1", type: "function", function: { name: TOOL, arguments: "" } };
  const parts = [
    chunk({ role: "assistant", content: null, tool_calls: [call] }, null),
    ...PIECES.map((args) => chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }, null)),
  ];
  if (options.cut) return parts.slice(0, 3).join("");
  parts.push(
    chunk({}, options.finish ?? "tool_calls"),
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [], usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } })}\n\n`,
    "data: [DONE]\n\n",
  );
  return parts.join("");
}

/** The whole answer in one body, with the given finish_reason (null: none). */
function whole(args: string, finish: string | null): string {
  const message = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: TOOL, arguments: args } }] };
  return JSON.stringify({
    id: "c",
    object: "chat.completion",
    created: 0,
    model: "m",
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
  });
}

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => server?.close());

/** The server answers streamed requests with `sse` and the others with `json`. */
function answerWith(sse: string, json: string) {
  server.requests.length = 0;
  server.answer((request) =>
    request.body?.stream === true
      ? { headers: SSE, body: Buffer.from(sse), end: "close" }
      : { headers: { "content-type": "application/json" }, body: Buffer.from(json), end: "close" },
  );
}

function agent() {
  const model = new ChatOpenAI({ model: "m", apiKey: "test", configuration: { baseURL: `${server.baseURL}/v1` }, maxRetries: 0 });
  return createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: SPEC, maxAttempts: 1 })] });
}

/** The agent's run in messages mode (its model calls stream), and its last state. */
async function streamedRun() {
  let final: { responseOutcome?: unknown } | undefined;
  for await (const [mode, part] of await agent().stream({ messages: [new HumanMessage("Count them.")] }, { streamMode: ["messages", "values"] })) {
    if (mode === "values") final = part as typeof final;
  }
  expect(server.requests.map((r) => r.body.stream)).toEqual([true]);
  return final?.responseOutcome;
}

async function wholeRun() {
  const out = await agent().invoke({ messages: [new HumanMessage("Count them.")] });
  expect(server.requests.map((r) => r.body.stream ?? false)).toEqual([false]);
  return out.responseOutcome;
}

describe("an agent's answer through ChatOpenAI is valid only when OpenAI said it finished", () => {
  it("streamed, with finish_reason: valid", async () => {
    answerWith(streamed(), "");
    expect(await streamedRun()).toMatchObject({ success: true, stopReason: "valid", value: { n: 12345678 }, attempts: 1 });
  });

  it("streamed, cut before its finish_reason: not valid, the attempt says the answer did not finish", async () => {
    answerWith(streamed({ cut: true }), "");
    expect(await streamedRun()).toMatchObject({ success: false, stopReason: "max_attempts", errors: [NO_STOP], attempts: 1 });
  });

  it("streamed, with a finish_reason OpenAI does not document: not valid, in its words", async () => {
    answerWith(streamed({ finish: "eos_token" }), "");
    expect(await streamedRun()).toMatchObject({ success: false, errors: [unfinishedAnswerError('finish_reason "eos_token"')] });
  });

  it("not streamed, with finish_reason: valid", async () => {
    answerWith("", whole(PIECES.join(""), "tool_calls"));
    expect(await wholeRun()).toMatchObject({ success: true, stopReason: "valid", value: { n: 12345678 }, attempts: 1 });
  });

  it("not streamed, a body without finish_reason: not valid, the attempt says the answer did not finish", async () => {
    answerWith("", whole('{"n": 123456}', null));
    expect(await wholeRun()).toMatchObject({ success: false, stopReason: "max_attempts", errors: [NO_STOP], attempts: 1 });
  });

  it("a call made again inside the model step (LangChain's modelRetryMiddleware): the answer returned is judged by its own stop", async () => {
    server.requests.length = 0;
    server.answer((request) =>
      server.requests.length === 1
        ? { status: 500, headers: { "content-type": "application/json" }, body: Buffer.from('{"error": {"message": "try again"}}'), end: "close" }
        : { headers: request.body?.stream === true ? SSE : { "content-type": "application/json" }, body: Buffer.from(streamed()), end: "close" },
    );
    const model = new ChatOpenAI({ model: "m", apiKey: "test", configuration: { baseURL: `${server.baseURL}/v1` }, maxRetries: 0 });
    const retry = modelRetryMiddleware({ maxRetries: 1, initialDelayMs: 0, jitter: false });
    const run = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: SPEC, maxAttempts: 1 }), retry] });
    let final: { responseOutcome?: unknown } | undefined;
    for await (const [mode, part] of await run.stream({ messages: [new HumanMessage("Count them.")] }, { streamMode: ["messages", "values"] })) {
      if (mode === "values") final = part as typeof final;
    }
    expect(server.requests.map((r) => r.body.stream)).toEqual([true, true]);
    expect(final?.responseOutcome).toMatchObject({ success: true, value: { n: 12345678 } });
  });

  it("a model given as a binding with listeners of its own is listened to the same way, and its listeners still hear the call", async () => {
    answerWith(streamed({ cut: true }), "");
    const model = new ChatOpenAI({ model: "m", apiKey: "test", configuration: { baseURL: `${server.baseURL}/v1` }, maxRetries: 0 });
    const own = new StreamingListener();
    const bound = new RunnableBinding({ bound: model, kwargs: {}, config: { callbacks: [own] } });
    const run = createAgent({ model: bound, tools: [], middleware: [validatedResponseMiddleware({ spec: SPEC, maxAttempts: 1 })] });
    let final: { responseOutcome?: unknown } | undefined;
    for await (const [mode, part] of await run.stream({ messages: [new HumanMessage("Count them.")] }, { streamMode: ["messages", "values"] })) {
      if (mode === "values") final = part as typeof final;
    }
    expect(final?.responseOutcome).toMatchObject({ success: false, errors: [NO_STOP] });
    expect(own.generationInfo).toBeDefined();
  });
});

/** The agent's run on LangGraph's v3 event stream (LangChain's content-block events): its last state. */
async function v3Run() {
  let final: { responseOutcome?: unknown } | undefined;
  const run = agent() as unknown as { stream(input: unknown, options: object): Promise<AsyncIterable<unknown>> };
  for await (const part of await run.stream({ messages: [new HumanMessage("Count them.")] }, { streamMode: ["messages", "values"], version: "v3" })) {
    if (Array.isArray(part) && part[0] === "values") final = part[1] as typeof final;
  }
  expect(server.requests.map((r) => r.body.stream)).toEqual([true]);
  return final?.responseOutcome;
}

describe("on LangGraph's v3 event stream, where LangChain maps OpenAI's finish_reason to its own words", () => {
  it("finish_reason tool_calls (LangChain's tool_use): valid", async () => {
    answerWith(streamed(), "");
    expect(await v3Run()).toMatchObject({ success: true, value: { n: 12345678 } });
  });

  it("a finish_reason OpenAI does not document (LangChain's stop): not valid, in the provider's words", async () => {
    answerWith(streamed({ finish: "eos_token" }), "");
    expect(await v3Run()).toMatchObject({ success: false, errors: [unfinishedAnswerError('finish_reason "eos_token"')] });
  });

  it("cut before its finish_reason: not valid", async () => {
    answerWith(streamed({ cut: true }), "");
    expect(await v3Run()).toMatchObject({ success: false, errors: [NO_STOP] });
  });
});

/** A listener that asks for streamed calls (as LangGraph's messages mode does) and keeps what the call's end reports. */
class StreamingListener extends BaseCallbackHandler {
  name = "StreamingListener";
  lc_prefer_streaming = true;
  generationInfo: Record<string, unknown> | undefined;
  constructor() {
    super({ _awaitHandler: true });
  }
  override handleLLMEnd(output: LLMResult): void {
    this.generationInfo = output.generations[0]?.[0]?.generationInfo;
  }
}

describe("where @langchain/core and @langchain/openai leave OpenAI's finish_reason (what the middleware relies on)", () => {
  it("invoke() with a streaming listener: on the call's generation info, not on the message", async () => {
    answerWith(streamed(), "");
    const model = new ChatOpenAI({ model: "m", apiKey: "test", configuration: { baseURL: `${server.baseURL}/v1` }, maxRetries: 0 });
    const listener = new StreamingListener();
    const message = (await model.invoke([new HumanMessage("Count them.")], { callbacks: [listener] })) as AIMessage;
    expect(server.requests.map((r) => r.body.stream)).toEqual([true]);
    // Should a release keep it on the message, the listener the middleware adds is no longer needed: simplify it.
    expect(message.response_metadata.finish_reason).toBeUndefined();
    expect(message.additional_kwargs).not.toHaveProperty("finish_reason");
    expect(listener.generationInfo).toMatchObject({ finish_reason: "tool_calls" });
    expect(answerEnd(message, providerOf(model))).toMatchObject({ kind: "unfinished" });
    expect(answerEnd(message, providerOf(model), listener.generationInfo)).toEqual({ kind: "finished" });
  });

  it("stream(): on the piece that carries it, in response_metadata (the validation graph's path)", async () => {
    answerWith(streamed(), "");
    const model = new ChatOpenAI({ model: "m", apiKey: "test", configuration: { baseURL: `${server.baseURL}/v1` }, maxRetries: 0 });
    const reasons: unknown[] = [];
    for await (const piece of await model.stream([new HumanMessage("Count them.")])) reasons.push(piece.response_metadata.finish_reason);
    expect(reasons.filter((r) => r !== undefined)).toEqual(["tool_calls"]);
  });

  it("invoke() without a listener: on the message", async () => {
    answerWith("", whole(PIECES.join(""), "tool_calls"));
    const model = new ChatOpenAI({ model: "m", apiKey: "test", configuration: { baseURL: `${server.baseURL}/v1` }, maxRetries: 0 });
    const message = (await model.invoke([new HumanMessage("Count them.")])) as AIMessage;
    expect(message.response_metadata.finish_reason).toBe("tool_calls");
  });
});

/** Each provider's streamed tool-call answer `{"n": 12345678}`, with its finished stop or none. */
const PROVIDERS: Array<{ name: string; model: string; headers: Record<string, string>; render(stop: boolean): string }> = [
  {
    name: "Anthropic SSE",
    model: "anthropic/claude-x",
    headers: SSE,
    render: (stop) => {
      const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      const parts = [
        event("message_start", { message: { id: "msg", role: "assistant", content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
        event("content_block_start", { index: 0, content_block: { type: "tool_use", id: "toolu_1", name: TOOL, input: {} } }),
        ...PIECES.map((partial_json) => event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json } })),
        event("content_block_stop", { index: 0 }),
      ];
      if (stop)
        parts.push(event("message_delta", { delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 4 } }), event("message_stop", {}));
      return parts.join("");
    },
  },
  {
    name: "Gemini SSE",
    model: "google-genai/gemini-x",
    headers: SSE,
    render: (stop) =>
      `data: ${JSON.stringify({
        candidates: [
          { content: { role: "model", parts: [{ functionCall: { name: TOOL, args: { n: 12345678 } } }] }, ...(stop ? { finishReason: "STOP" } : {}) },
        ],
      })}\r\n\r\n`,
  },
  {
    name: "Ollama NDJSON",
    model: "ollama/llama-x",
    headers: { "content-type": "application/x-ndjson" },
    render: (stop) =>
      [
        { message: { role: "assistant", content: "", tool_calls: [{ function: { name: TOOL, arguments: { n: 12345678 } } }] }, done: false },
        { message: { role: "assistant", content: "" }, done: true, ...(stop ? { done_reason: "stop" } : {}), prompt_eval_count: 5, eval_count: 4 },
      ]
        .map((line) => `${JSON.stringify(line)}\n`)
        .join(""),
  },
];

describe.each(PROVIDERS)("$name through createAgent, streamed: valid only on the provider's finished stop", (provider) => {
  async function run(stop: boolean) {
    server.requests.length = 0;
    server.answer(() => ({ headers: provider.headers, body: Buffer.from(provider.render(stop)), end: "close" }));
    const model = await loadChatModel({ model: provider.model, role: "generate" }, wireEnvironment(server.baseURL));
    const agent = createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: SPEC, maxAttempts: 1 })] });
    let final: { responseOutcome?: unknown } | undefined;
    for await (const [mode, part] of await agent.stream({ messages: [new HumanMessage("Count them.")] }, { streamMode: ["messages", "values"] })) {
      if (mode === "values") final = part as typeof final;
    }
    expect(server.requests).toHaveLength(1);
    return final?.responseOutcome;
  }

  it("with its finished stop: valid", async () => {
    expect(await run(true)).toMatchObject({ success: true, value: { n: 12345678 } });
  });

  it("without a stop: not valid, the attempt says the answer did not finish", async () => {
    expect(await run(false)).toMatchObject({
      success: false,
      errors: [expect.stringMatching(/^The answer did not finish \(no \w+: the answer ended without the provider's stop\)/)],
    });
  });
});

/**
 * A model given by name: what createAgent makes of `model: "openai:…"` is LangChain's configurable model
 * (initChatModel), whose `_llmType` names no provider. The middleware listens to it, learns the provider
 * from the chat model that answers (its `ls_provider`), and judges by that provider's stops; a model of a
 * provider the table does not have that reports no stop is unfinished (fail-closed), never taken as finished.
 */
describe('a model given by name (initChatModel, createAgent\'s model: "provider:name")', () => {
  const NAMED_NO_STOP = unfinishedAnswerError("no stop: the answer of a model given by name ended without a stop reason this package reads");

  async function namedAgent(name: string, fields: Record<string, unknown>) {
    const model = await initChatModel(name, { ...fields, maxRetries: 0 });
    return createAgent({ model, tools: [], middleware: [validatedResponseMiddleware({ spec: SPEC, maxAttempts: 1 })] });
  }
  const openaiFields = () => ({ apiKey: "test", configuration: { baseURL: `${server.baseURL}/v1` } });

  async function streamedOutcome(run: Awaited<ReturnType<typeof namedAgent>>) {
    let final: { responseOutcome?: unknown } | undefined;
    for await (const [mode, part] of await run.stream({ messages: [new HumanMessage("Count them.")] }, { streamMode: ["messages", "values"] })) {
      if (mode === "values") final = part as typeof final;
    }
    return final?.responseOutcome;
  }

  it("the configurable model is of no provider the package can read from its class (what made it take no stop as finished)", async () => {
    const model = await initChatModel("openai:m", openaiFields());
    expect(providerOf(model)).toBeUndefined();
  });

  it("OpenAI by name, streamed: valid with finish_reason, not valid when cut before it (in OpenAI's words)", async () => {
    answerWith(streamed(), "");
    expect(await streamedOutcome(await namedAgent("openai:m", openaiFields()))).toMatchObject({ success: true, value: { n: 12345678 } });
    answerWith(streamed({ cut: true }), "");
    expect(await streamedOutcome(await namedAgent("openai:m", openaiFields()))).toMatchObject({
      success: false,
      stopReason: "max_attempts",
      errors: [NO_STOP],
    });
    expect(server.requests.map((r) => [r.path, r.body.stream])).toEqual([["/v1/chat/completions", true]]);
  });

  it("OpenAI by name, not streamed: a body without finish_reason is not valid; with it, valid", async () => {
    answerWith("", whole('{"n": 123456}', null));
    const run = await namedAgent("openai:m", openaiFields());
    expect((await run.invoke({ messages: [new HumanMessage("Count them.")] })).responseOutcome).toMatchObject({ success: false, errors: [NO_STOP] });
    answerWith("", whole(PIECES.join(""), "tool_calls"));
    expect((await run.invoke({ messages: [new HumanMessage("Count them.")] })).responseOutcome).toMatchObject({ success: true, value: { n: 12345678 } });
  });

  it('createAgent({ model: "openai:m" }) (the Responses API, OpenAI\'s client reading OPENAI_BASE_URL): valid only with the response\'s status "completed"', async () => {
    const item = (args: string) => ({ type: "function_call", id: "fc_1", call_id: "call_1", name: TOOL, arguments: args, status: "completed" });
    const response = (args: string, status?: string) => ({
      id: "resp_1",
      object: "response",
      created_at: 0,
      model: "m",
      ...(status === undefined ? {} : { status }),
      output: [item(args)],
      usage: { input_tokens: 5, output_tokens: 4, total_tokens: 9 },
    });
    const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const sse = (cut: boolean) =>
      [
        event("response.created", { response: { id: "resp_1", model: "m", status: "in_progress", output: [] } }),
        event("response.output_item.added", { output_index: 0, item: { ...item(""), status: "in_progress" } }),
        ...PIECES.map((delta) => event("response.function_call_arguments.delta", { item_id: "fc_1", output_index: 0, delta })),
        ...(cut ? [] : [event("response.completed", { response: response(PIECES.join(""), "completed") })]),
      ]
        .slice(0, cut ? 4 : undefined)
        .join("");
    const saved = { base: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
    process.env.OPENAI_BASE_URL = `${server.baseURL}/v1`;
    process.env.OPENAI_API_KEY = "test";
    try {
      const run = createAgent({ model: "openai:m", tools: [], middleware: [validatedResponseMiddleware({ spec: SPEC, maxAttempts: 1 })] });
      const invoked = async () => (await run.invoke({ messages: [new HumanMessage("Count them.")] })).responseOutcome;
      answerWith("", JSON.stringify(response(PIECES.join(""), "completed")));
      expect(await invoked()).toMatchObject({ success: true, value: { n: 12345678 } });
      expect(server.requests.map((r) => r.path)).toEqual(["/v1/responses"]);
      answerWith("", JSON.stringify(response('{"n": 123456}')));
      expect(await invoked()).toMatchObject({ success: false, errors: [NO_STOP] });
      answerWith("", JSON.stringify(response('{"n": 123456}', "incomplete")));
      expect(await invoked()).toMatchObject({ success: false, errors: [unfinishedAnswerError('status "incomplete"')] });
      answerWith(sse(true), "");
      expect(await streamedOutcome(run as never)).toMatchObject({ success: false, errors: [NO_STOP] });
      answerWith(sse(false), "");
      expect(await streamedOutcome(run as never)).toMatchObject({ success: true, value: { n: 12345678 } });
    } finally {
      for (const [name, value] of [
        ["OPENAI_BASE_URL", saved.base],
        ["OPENAI_API_KEY", saved.key],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it("a provider the table does not have (Azure OpenAI, ls_provider azure): no stop at all is not valid; its finish_reason is read by the table", async () => {
    const azure = {
      azureOpenAIApiKey: "test",
      azureOpenAIBasePath: `${server.baseURL}/openai/deployments`,
      azureOpenAIApiDeploymentName: "m",
      azureOpenAIApiVersion: "2024-10-21",
    };
    answerWith("", whole('{"n": 123456}', null));
    const run = await namedAgent("azure_openai:m", azure);
    expect((await run.invoke({ messages: [new HumanMessage("Count them.")] })).responseOutcome).toMatchObject({
      success: false,
      errors: [NAMED_NO_STOP],
    });
    expect(server.requests.map((r) => r.path.split("?")[0])).toEqual(["/openai/deployments/m/chat/completions"]);
    answerWith(streamed({ cut: true }), "");
    expect(await streamedOutcome(run)).toMatchObject({ success: false, errors: [NAMED_NO_STOP] });
    answerWith(streamed(), "");
    expect(await streamedOutcome(run)).toMatchObject({ success: true, value: { n: 12345678 } });
    answerWith(streamed({ finish: "eos_token" }), "");
    expect(await streamedOutcome(run)).toMatchObject({ success: false, errors: [unfinishedAnswerError('finish_reason "eos_token"')] });
  });
});
