/**
 * End to end: both graphs on the LangGraph dev server (`langgraphjs dev`),
 * driven through the official SDK, with a scripted OpenAI-compatible model
 * server (no network, no API key). The model's replies depend only on who is
 * asking (the system prompt) and what (the user prompt), never on call order.
 *
 * One server instance, with auth off (the default); the Studio-schema tests
 * (studio-schemas.ts) run against it too. With auth on, the attack
 * suite (attacks.int.test.ts) drives every route as two users.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MODEL } from "../../src/environment.js";
import { REFLEXION_PROMPT } from "../../src/reflexion/prompts.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { BAD_INPUTS } from "../../reliability/bad-input.js";
import { mapConcurrent } from "../../testkit/concurrent.js";
import { describeStudioSchemas } from "./studio-schemas.js";
import { describeProductionLoops } from "./production-loops.js";
import { startDevServer, type DevServer } from "../../testkit/dev-server.js";
import {
  systemPromptOf as system,
  startScriptedOpenAIServer,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedServer,
} from "../../testkit/openai-server.js";
import { deploymentConfigMessages as RULES } from "../../src/specs/builtin/deployment-config.js";

const TEST_TIMEOUT = 120_000;
const START_TIMEOUT = 180_000;

const VALID_CONFIG = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
/** Breaks one cross-field rule: replicas > 5 needs resources.cpu_limit >= 1.0 (it is 0.5). */
const INVALID_CONFIG = { ...VALID_CONFIG, replicas: 8 };
const CPU_ERROR = RULES.replicasNeedCpu(0.5, 8);

const TIME_WINDOW_SPEC = {
  name: "time-window",
  description: "A time window in whole seconds.",
  schema: {
    type: "object",
    required: ["start", "end"],
    properties: {
      start: { type: "integer", minimum: 0 },
      end: { type: "integer", exclusiveMinimum: { $data: "1/start" } },
    },
  },
};

/** Judged is kept: answers whose parts a checkpoint would not give back as written, then near-misses that it would. */
const KEPT_SPEC = {
  name: "kept-probe",
  description: "A probe of what a checkpoint keeps.",
  schema: { type: "object", required: ["body"], properties: { body: { type: ["object", "null"] }, n: { maximum: 1e308 } } },
};
const KEPT_REFUSED = '{"body": {"lc": 2, "type": "undefined"}, "n": -1e400}';
const KEPT_VALID = {
  body: { lc: "2", type: "undefined", nested: [{ lc: 2 }, { type: "constructor", id: ["Set"] }], lg_name: "send" },
  n: -1.7976931348623157e308,
};
/** A spec the scripted model never satisfies: every attempt is refused. */
const NEVER_SPEC = {
  name: "never-met",
  description: "A count the model never gives.",
  schema: { type: "object", required: ["count"], properties: { count: { type: "integer" } } },
};

const user = (req: RecordedRequest) =>
  req.messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n");
/** The task named in a Reflexion prompt ("Task:\n<task>\n\n…"). */
const taskOf = (prompt: string) => /Task:\n(.*)/.exec(prompt)?.[1] ?? "";

/** The scripted model: one role per system prompt. */
function respond(req: RecordedRequest): ScriptedReply {
  const sys = system(req);
  const prompt = user(req);
  if (sys.startsWith("You write JSON objects of this kind")) {
    const retry = prompt.includes("A validator rejected it");
    if (sys.includes(TIME_WINDOW_SPEC.description)) return JSON.stringify(retry ? { start: 10, end: 20 } : { start: 10, end: 5 });
    if (sys.includes(KEPT_SPEC.description)) return retry ? JSON.stringify(KEPT_VALID) : KEPT_REFUSED;
    if (sys.includes(NEVER_SPEC.description)) return JSON.stringify({ total: "many" });
    return JSON.stringify(retry ? VALID_CONFIG : INVALID_CONFIG);
  }
  if (sys.includes("evaluator")) return "Accurate but thin: it lacks a concrete example.\nFinal score: 7/10";
  if (sys.includes("reflect")) return `Lesson from "${taskOf(prompt)}": open with one concrete example.`;
  if (sys === REFLEXION_PROMPT) return `An answer to: ${taskOf(prompt)}`;
  return { fault: "status", status: 400, body: { error: { message: `unexpected system prompt: ${sys.slice(0, 80)}` } } };
}

const actorPrompts = (requests: RecordedRequest[]) => requests.filter((r) => system(r) === REFLEXION_PROMPT).map(user);

/** Runs `fn`; on failure, appends the server's recent output to the error. */
function withServerOutput(server: () => DevServer | undefined, fn: () => Promise<void>) {
  return async () => {
    try {
      await fn();
    } catch (error) {
      const tail = server()?.tail(6_000);
      if (tail && error instanceof Error) error.message += `\n--- langgraphjs dev output (tail) ---\n${tail}`;
      throw error;
    }
  };
}

async function startAll(env: Record<string, string>): Promise<{ model: ScriptedServer; server: DevServer }> {
  const model = await startScriptedOpenAIServer({ responder: respond });
  try {
    const server = await startDevServer({
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: "test", LLM_MAX_RETRIES: "0", ...env },
      startTimeoutMs: START_TIMEOUT - 20_000,
    });
    return { model, server };
  } catch (error) {
    await model.close();
    throw error;
  }
}

describe("LangGraph server, auth off", () => {
  let model: ScriptedServer;
  let server: DevServer | undefined;
  let client: Client;
  const test = (name: string, fn: () => Promise<void>) =>
    it(
      name,
      withServerOutput(() => server, fn),
      TEST_TIMEOUT,
    );

  beforeAll(async () => {
    ({ model, server } = await startAll({ LANGGRAPH_API_KEYS: "" }));
    client = new Client({ apiUrl: server.url, apiKey: null });
  }, START_TIMEOUT);

  afterAll(async () => {
    await server?.stop();
    await model?.close();
  }, 60_000);

  test("lists both graphs; their schemas carry descriptions and defaults; their graphs show the design's nodes", async () => {
    const assistants = await client.assistants.search({ limit: 100 });
    const byGraph = new Map(assistants.map((a) => [a.graph_id, a.assistant_id]));
    expect([...byGraph.keys()].sort()).toEqual(["reflexion", "validation"]);

    const validation = await client.assistants.getSchemas(byGraph.get("validation")!);
    const vInput = validation.input_schema as { properties: Record<string, { description?: string }> };
    expect(vInput.properties.request.description).toMatch(/What to generate/);
    for (const config of [validation.config_schema, validation.context_schema]) {
      const props = (config as { properties: Record<string, { description?: string; default?: unknown }> }).properties;
      expect(props.spec).toMatchObject({ default: "deployment-config" });
      expect(props.spec.description).toMatch(/built-in name/);
      expect(props.maxAttempts).toMatchObject({ default: 3 });
      expect(props.maxAttempts.description).toMatch(/1-20/);
      expect(props.model.description).toMatch(/LLM_MODEL/);
      // The model a run uses when it names none (no LLM_MODEL here), shown as the field's default (Studio shows null without one).
      expect(props.model).toMatchObject({ default: DEFAULT_MODEL });
      expect(props.stopOnNoProgress).toMatchObject({ default: false });
    }
    const vOutput = validation.output_schema as { properties: Record<string, { description?: string }> };
    expect(Object.keys(vOutput.properties)).toEqual(expect.arrayContaining(["success", "value", "errors", "attempts", "stopReason", "history", "usage"]));
    expect(vOutput.properties.success.description).toMatch(/validator/);

    const reflexion = await client.assistants.getSchemas(byGraph.get("reflexion")!);
    const rInput = reflexion.input_schema as { properties: Record<string, { description?: string; type?: string }> };
    expect(rInput.properties.tasks).toMatchObject({ type: "array" });
    expect(rInput.properties.tasks.description).toMatch(/Tasks to run/);
    for (const config of [reflexion.config_schema, reflexion.context_schema]) {
      const props = (config as { properties: Record<string, { description?: string; default?: unknown }> }).properties;
      expect(props.maxLoops).toMatchObject({ default: 3 });
      expect(props.maxLoops.description).toMatch(/1-10/);
      expect(props.memoryCapacity).toMatchObject({ default: 100 });
      expect(props.useMemory).toMatchObject({ default: true });
      expect(props.agentName).toMatchObject({ default: "reflexion-agent" });
      expect(props.model).toMatchObject({ default: DEFAULT_MODEL });
      for (const field of ["model", "actorModel", "evaluatorModel", "reflectorModel", "systemPrompt", "spec"]) {
        expect(props[field]?.description, field).toBeTruthy();
      }
    }
    const rOutput = reflexion.output_schema as { properties: Record<string, { description?: string }> };
    expect(rOutput.properties.results.description).toMatch(/best response per task/);

    const nodes = async (graphId: string, xray = false) =>
      (await client.assistants.getGraph(byGraph.get(graphId)!, { xray })).nodes.map((n) => String(n.id)).sort();
    expect(await nodes("validation")).toEqual(["__end__", "__start__", "generate", "review", "validate"]);
    expect(await nodes("reflexion")).toEqual(["__end__", "__start__", "each_task"]);
    expect(await nodes("reflexion", true)).toEqual(
      expect.arrayContaining(["each_task:memory", "each_task:actor", "each_task:evaluator", "each_task:reflector", "each_task:refine"]),
    );
  });

  describe("what Studio builds its forms from", () => describeStudioSchemas(() => client));

  describe("escalation, token budgets and refusals", () =>
    describeProductionLoops(
      () => client,
      () => model,
      respond,
    ));

  test("a validation run ends valid after one corrected attempt; the thread's history shows each attempt", async () => {
    const thread = await client.threads.create();
    const out = (await client.runs.wait(thread.thread_id, "validation", {
      input: { request: "A deployment config for payments-api with 8 replicas" },
      context: { maxAttempts: 3 },
    })) as Record<string, unknown> & { history: Array<{ attempt: number; valid: boolean; errors: string[] }> };
    expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 2, errors: [], value: VALID_CONFIG, spec: "deployment-config" });
    expect(out.history.map((h) => [h.attempt, h.valid])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(out.history[0].errors).toContain(CPU_ERROR);

    const states = await client.threads.getHistory<{ attempts: number; history?: unknown[]; errors?: string[] }>(thread.thread_id, { limit: 50 });
    const chronological = [...states].reverse();
    // Step by step: input, then generate → validate per attempt, then done.
    expect(chronological.map((s) => s.next)).toEqual([["__start__"], ["generate"], ["validate"], ["generate"], ["validate"], []]);
    const afterValidate = chronological.filter((_, i) => i > 0 && chronological[i - 1].next[0] === "validate");
    expect(afterValidate.map((s) => [s.values.attempts, s.values.history?.length, s.values.errors])).toEqual([
      [1, 1, [CPU_ERROR]],
      [2, 2, []],
    ]);
  });

  test("a streamed validation run yields per-node updates in order, and model tokens", async () => {
    const thread = await client.threads.create();
    const updates: Array<[string, Record<string, unknown>]> = [];
    for await (const chunk of client.runs.stream(thread.thread_id, "validation", {
      input: { request: "A deployment config for payments-api with 8 replicas" },
      streamMode: "updates",
    })) {
      if (chunk.event === "updates")
        for (const [node, update] of Object.entries(chunk.data as Record<string, Record<string, unknown>>)) updates.push([node, update]);
    }
    expect(updates.map(([node]) => node)).toEqual(["generate", "validate", "generate", "validate"]);
    expect(updates[1][1]).toMatchObject({ success: false, errors: [CPU_ERROR], stopReason: null });
    expect(updates[3][1]).toMatchObject({ success: true, errors: [], stopReason: "valid" });

    const before = model.requests.length;
    const tokens: Array<{ node: string; id: string; content: string }> = [];
    for await (const chunk of client.runs.stream(null, "validation", {
      input: { request: "A deployment config for payments-api with 8 replicas" },
      streamMode: "messages-tuple",
    })) {
      if (chunk.event !== "messages") continue;
      const [message, metadata] = chunk.data as [{ id?: string; content?: unknown }, { langgraph_node?: string }];
      if (typeof message.content === "string" && message.content.length > 0) {
        tokens.push({ node: metadata.langgraph_node ?? "", id: message.id ?? "", content: message.content });
      }
    }
    expect(model.requests.slice(before).every((r) => r.stream)).toBe(true);
    const messageIds = [...new Set(tokens.map((t) => t.id))];
    expect(messageIds).toHaveLength(2); // one streamed answer per attempt
    expect(tokens.every((t) => t.node === "generate")).toBe(true);
    const texts = messageIds.map((id) => tokens.filter((t) => t.id === id).map((t) => t.content));
    for (const pieces of texts) expect(pieces.length).toBeGreaterThan(1); // several chunks, not one final message
    expect(texts.map((pieces) => JSON.parse(pieces.join("")))).toEqual([INVALID_CONFIG, VALID_CONFIG]);
  });

  test("reflexion: one result per task; memories go to the store and reach the next run's actor", async () => {
    const first = (await client.runs.wait(null, "reflexion", {
      input: { tasks: ["Explain recursion to a beginner", "Explain closures in JavaScript"] },
      context: { maxLoops: 1 },
    })) as { results: string[]; outcomes: Array<{ stopReason: string }>; steps: unknown[][] };
    expect(first.results).toEqual(["An answer to: Explain recursion to a beginner", "An answer to: Explain closures in JavaScript"]);
    expect(first.outcomes.map((o) => o.stopReason)).toEqual(["max_loops", "max_loops"]);
    expect(first.steps.map((s) => s.length)).toEqual([1, 1]);

    const { items } = await client.store.searchItems(["reflexion", "anonymous", "reflexion-agent", "entries"], { limit: 100 });
    const reflections = items.map((i) => (i.value as { reflection: string }).reflection);
    const lesson = 'Lesson from "Explain recursion to a beginner": open with one concrete example.';
    expect(reflections).toContain(lesson);

    const before = model.requests.length;
    const thread = await client.threads.create();
    const second = (await client.runs.wait(thread.thread_id, "reflexion", {
      input: { tasks: ["Explain recursion with an example"] },
      context: { maxLoops: 1 },
    })) as { results: string[] };
    expect(second.results).toEqual(["An answer to: Explain recursion with an example"]);
    const [actorPrompt] = actorPrompts(model.requests.slice(before));
    expect(actorPrompt).toContain("Lessons from earlier attempts");
    expect(actorPrompt).toContain(lesson);
  });

  test("a run configured with an inline JSON spec through context works", async () => {
    const out = (await client.runs.wait(null, "validation", {
      input: { request: "A window from second 10 to second 20" },
      context: { spec: TIME_WINDOW_SPEC, maxAttempts: 2 },
    })) as { success: boolean; spec: string; value: unknown; history: Array<{ errors: string[] }> };
    expect(out).toMatchObject({ success: true, spec: "time-window", value: { start: 10, end: 20 } });
    expect(out.history).toHaveLength(2);
    expect(out.history[0].errors.join("\n")).toMatch(/end/);
  });

  test("a served run of 20 attempts, every one refused, ends max_attempts: the served graph's recursion limit follows the attempt bound", async () => {
    const out = (await client.runs.wait(null, "validation", {
      input: { request: "A count" },
      context: { spec: NEVER_SPEC, maxAttempts: 20 },
    })) as { success: boolean; stopReason: string; attempts: number };
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 20 });
  });

  test("judged is kept: a marker-shaped or out-of-range answer is refused, and the accepted value comes back from /state and /history exactly as returned", async () => {
    const thread = await client.threads.create();
    const out = (await client.runs.wait(thread.thread_id, "validation", { input: { request: "a probe" }, context: { spec: KEPT_SPEC, maxAttempts: 2 } })) as {
      success: boolean;
      value: unknown;
      history: Array<{ errors: string[] }>;
    };
    expect(out.history[0].errors.join("\n")).toMatch(/cannot be kept as written: (body has the fields "lc" and "type"|n is a number out of range)/);
    expect(out).toMatchObject({ success: true, value: KEPT_VALID });
    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as { value: unknown }).value).toEqual(KEPT_VALID);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    const values = history.map((h) => (h.values as { value?: unknown }).value).filter((v) => v !== null && v !== undefined);
    expect(values.length).toBeGreaterThan(0);
    for (const value of values) expect(value).toEqual(KEPT_VALID);
  });

  test("a bad configuration is refused with a clear error before any model call, not a hung run", async () => {
    const before = model.requests.length;
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "validation", {
      input: { request: "A deployment config for payments-api" },
      context: { maxAttempts: 0 },
    });
    await client.runs.join(thread.thread_id, run.run_id);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("error");
    expect((await client.threads.get(thread.thread_id)).status).toBe("error");

    // The error reads as it was thrown: its name, then its message as plain text (not a JSON string).
    const error = await client.runs.wait(null, "validation", { input: { request: "A deployment config for payments-api" }, context: { maxAttempts: 0 } }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toBe("ConfigurationError: maxAttempts must be an integer from 1 to 20; got 0");
    expect(model.requests.length).toBe(before);
  });

  test("with auth off: /internal/truncate works (tests reset with it), bodies over 10 MiB get 413, an unknown run id is 404", async () => {
    const post = (path: string, body: string) => fetch(`${server!.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const truncate = await post("/internal/truncate", JSON.stringify({ runs: false }));
    expect(truncate.status).toBe(200);
    expect(await truncate.json()).toEqual({ ok: true });
    const big = await post("/threads/search", "x".repeat(20 * 1024 * 1024));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { message: string }).message).toMatch(/larger than 10485760 bytes/);
    const thread = await client.threads.create();
    const join = await fetch(`${server!.url}/threads/${thread.thread_id}/runs/${crypto.randomUUID()}/join`);
    expect(join.status).toBe(404);
    // The protocol routes stay with auth off (single-tenant).
    const commands = await post(`/threads/${thread.thread_id}/commands`, JSON.stringify({ id: 1, method: "state.get" }));
    expect(commands.status).not.toBe(403);
  });

  test("every bad request and configuration of the reliability suite is refused through the server too", async () => {
    const before = model.requests.length;
    // A few at a time: each case is a run of its own (a thread each), and the server runs several at once.
    const unclear = await mapConcurrent(BAD_INPUTS, 6, async (c) => {
      try {
        await client.runs.wait(null, c.graph, { input: c.input, context: c.context });
        return `${c.name}: not refused`;
      } catch (error) {
        // The SDK's error message reads "<name>: <message>", as the run threw it (src/server/wait-errors.ts).
        const raw = (error as Error).message;
        const named = /^(ConfigurationError|SpecError): ([\s\S]*)$/.exec(raw);
        return named && c.says.test(named[2]) ? "" : `${c.name}: ${raw.slice(0, 200)}`;
      }
    });
    expect(unclear.filter(Boolean)).toEqual([]);
    expect(model.requests.length).toBe(before);
  });

  test("human review through the server: the thread is interrupted with the errors; a person's invalid value is refused, a valid one ends the run", async () => {
    const thread = await client.threads.create();
    const context = { spec: "deployment-config", maxAttempts: 1, onFailure: "interrupt" };
    await client.runs.wait(thread.thread_id, "validation", { input: { request: "A deployment config for payments-api with 8 replicas" }, context });
    const paused = await client.threads.get(thread.thread_id);
    expect(paused.status).toBe("interrupted");
    const state = await client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(["review"]);
    const payload = state.tasks.flatMap((t) => t.interrupts).at(-1)?.value as { errors: string[]; output: string };
    expect(payload.errors).toEqual([CPU_ERROR]);
    // The answers allowed, as JSON Schema built from the spec: what Studio renders as a typed form.
    const pending = state.tasks.flatMap((t) => t.interrupts).at(-1) as {
      response_schema?: { oneOf?: Array<{ title: string; properties: Record<string, unknown> }> };
    };
    expect(pending.response_schema?.oneOf?.map((o) => o.title)).toEqual(["Corrected value", "New request", "Reject"]);
    expect(pending.response_schema?.oneOf?.[0].properties.value).toMatchObject({
      type: "object",
      required: ["service_name", "replicas", "resources", "health_check"],
    });

    // Held to the same spec: still invalid, asked again.
    await client.runs.wait(thread.thread_id, "validation", { command: { resume: { type: "edit", value: INVALID_CONFIG } }, context });
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    expect(((await client.threads.getState(thread.thread_id)).values as { errors: string[] }).errors).toEqual([CPU_ERROR]);

    const fixed = { ...INVALID_CONFIG, resources: { cpu_limit: 2, memory_limit_mb: 512 } };
    const done = (await client.runs.wait(thread.thread_id, "validation", { command: { resume: { type: "edit", value: fixed } }, context })) as Record<
      string,
      any
    >;
    expect(done).toMatchObject({ success: true, stopReason: "valid", value: fixed });
    expect(done.history.map((h: { by?: string }) => h.by ?? "model")).toEqual(["model", "human", "human"]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });
});
