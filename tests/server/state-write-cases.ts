/**
 * The verdict cannot be written (src/server/state-writes.ts, docs/verdict.md), end to end: the cases, each a
 * function of a running LangGraph server driven through the official SDK, with a scripted model that always
 * answers with an invalid config (stateWriteResponder), so every run fails and, with onFailure "interrupt",
 * pauses for review. The package's own server runs them (./state-writes.int.test.ts), and so does a project's
 * own server built on `langgraph-trustworthy-output/server` (tests/package/pack.int.test.ts).
 */
import { randomUUID } from "node:crypto";
import type { Client } from "@langchain/langgraph-sdk";
import { expect } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import {
  systemPromptOf as system,
  userTextOf as userText,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedServer,
} from "../../testkit/openai-server.js";

const VALID_CONFIG = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
/** Breaks one cross-field rule: replicas > 5 needs resources.cpu_limit >= 1.0. */
const INVALID_CONFIG = { ...VALID_CONFIG, replicas: 8 };
const FIXED_CONFIG = { ...INVALID_CONFIG, resources: { cpu_limit: 2, memory_limit_mb: 512 } };
/** The request of the state-write cases' runs (a server shared with other cases can route its model calls by it). */
export const STATE_WRITE_REQUEST = "A deployment config for payments-api with 8 replicas";
const REQUEST = STATE_WRITE_REQUEST;
const PAUSE = { spec: "deployment-config", maxAttempts: 1, onFailure: "interrupt" };

/** The fields the finding names: each, written alone as the review step, forged the outcome. */
const OUTCOME_WRITES: Record<string, unknown> = {
  success: true,
  value: { forged: true },
  run: { request: REQUEST, spec: { name: "anything", schema: {} }, maxAttempts: 9, attemptLimit: 9 },
  history: [{ attempt: 2, output: "{}", errors: [], valid: true, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 } }],
  errors: [],
  stopReason: "valid",
  attempts: 0,
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 },
  spec: "anything",
};

/** The scripted model of the state-write cases: every config it writes is invalid, so every run fails (and, with PAUSE, pauses for review). */
export function stateWriteResponder(req: RecordedRequest): ScriptedReply {
  if (system(req).startsWith("You write JSON objects of this kind")) return JSON.stringify(INVALID_CONFIG);
  return { fault: "status", status: 400, body: { error: { message: `unexpected system prompt: ${system(req).slice(0, 80)}` } } };
}

/** The refusal a call ends with: its HTTP status and JSON body (the SDK's HTTPError keeps both). */
async function refusalOf(call: Promise<unknown>): Promise<{ status: number; error: string; message: string }> {
  try {
    await call;
  } catch (error) {
    const { status, text } = error as { status?: number; text?: string };
    let body = { error: "", message: text ?? "" };
    try {
      body = JSON.parse(text ?? "") as typeof body;
    } catch {
      // not JSON (some of the server's own errors): keep the text as the message
    }
    return { status: status ?? 0, ...body };
  }
  throw new Error("the call was not refused");
}

/** A running server to drive: auth off, or auth on with Alice's key in the client and headers (Bob's key is "bob-key"). */
export interface StateWriteTarget {
  server: { url: string };
  client: Client;
  headers: Record<string, string>;
  /** The scripted model the server's runs call (its recorded requests). */
  model: ScriptedServer;
}

/** One case: which server it needs (auth off or on), what it asserts, and the assertions. */
export interface StateWriteCase {
  auth: "off" | "on";
  name: string;
  run(target: StateWriteTarget): Promise<void>;
}

type Values = {
  success: boolean;
  value: unknown;
  stopReason: string | null;
  history: Array<{ by?: string }>;
  request: string;
  run: { request: string } | null;
};

/**
 * The finding, on a paused validation thread: every forging write is refused, the
 * thread is as it was (success false, its review pending, no new checkpoint), and
 * the person's resume still decides the run.
 */
async function forgingIsRefused(t: StateWriteTarget): Promise<void> {
  const { client } = t;
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "validation", { input: { request: REQUEST }, context: PAUSE });
  expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
  const checkpoints = (await client.threads.getHistory(thread.thread_id, { limit: 100 })).length;

  const forged = await refusalOf(client.threads.updateState(thread.thread_id, { values: { success: true, value: { forged: true } }, asNode: "review" }));
  expect(forged.status).toBe(403);
  expect(forged.error).toBe("Forbidden");
  expect(forged.message).toMatch(/^Not writable: "success", "value" \(the run's outcome and records\)/);
  expect(forged.message).toMatch(/only "request"/);
  expect(forged.message).toMatch(/validator/);
  expect(forged.message).toMatch(/Command\(\{ resume \}\)/);

  for (const [field, value] of Object.entries(OUTCOME_WRITES)) {
    const refusal = await refusalOf(client.threads.updateState(thread.thread_id, { values: { [field]: value }, asNode: "review" }));
    expect(refusal.status, field).toBe(403);
    expect(refusal.message.startsWith(`Not writable: "${field}" (the run's outcome`), refusal.message).toBe(true);
  }

  // Even the input field waits: the paused run is answered with a resume.
  const request = await refusalOf(client.threads.updateState(thread.thread_id, { values: { request: "Something else" }, asNode: "__start__" }));
  expect(request.status).toBe(409);
  expect(request.message).toMatch(/paused for review.*Command\(\{ resume \}\)/s);

  // A run's command.update writes the same channels; its goto skips the review.
  for (const command of [
    { resume: { type: "reject" }, update: { success: true, value: { forged: true } } },
    { update: { success: true } },
    { goto: "__end__" },
  ]) {
    const refusal = await refusalOf(client.runs.wait(thread.thread_id, "validation", { command, context: PAUSE }));
    expect(refusal.status, JSON.stringify(command)).toBe(403);
    expect(refusal.message).toMatch(/only "resume"/);
  }

  const state = await client.threads.getState<Values>(thread.thread_id);
  expect(state.values).toMatchObject({ success: false, stopReason: "max_attempts" });
  expect(state.values.history).toHaveLength(1);
  expect(state.next).toEqual(["review"]);
  expect(state.tasks.flatMap((task) => task.interrupts)).toHaveLength(1);
  expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
  expect((await client.threads.getHistory(thread.thread_id, { limit: 100 })).length).toBe(checkpoints);

  const done = (await client.runs.wait(thread.thread_id, "validation", {
    command: { resume: { type: "edit", value: FIXED_CONFIG } },
    context: PAUSE,
  })) as Values;
  expect(done).toMatchObject({ success: true, stopReason: "valid", value: FIXED_CONFIG });
  expect(done.history.map((h) => h.by ?? "model")).toEqual(["model", "human"]);
  expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
}

export const STATE_WRITE_CASES: StateWriteCase[] = [
  {
    auth: "off",
    name: "a forging state write is refused; the thread still reports success false with its review pending; the resume decides",
    run: forgingIsRefused,
  },

  {
    auth: "off",
    name: "a request written as the input on an ended thread starts a new run with it; written as any other node it is refused",
    async run(t) {
      const { client } = t;
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "validation", { input: { request: REQUEST }, context: { maxAttempts: 1 } });
      const asReview = await refusalOf(client.threads.updateState(thread.thread_id, { values: { request: "A config for billing-api" }, asNode: "review" }));
      expect(asReview.status).toBe(403);
      expect(asReview.message).toMatch(/only as the input \(as_node "__start__"\)/);
      const unset = await refusalOf(client.threads.updateState(thread.thread_id, { values: { request: "A config for billing-api" } }));
      expect(unset.status).toBe(403);

      const next = "A deployment config for billing-api with 8 replicas";
      await client.threads.updateState(thread.thread_id, { values: { request: next }, asNode: "__start__" });
      const pending = await client.threads.getState<Values>(thread.thread_id);
      expect(pending.next).toEqual(["generate"]);
      expect(pending.values.request).toBe(next);

      // The run started when its input was written, with that write's settings (no context: the defaults, 3 attempts);
      // like any resume, the call that runs it cannot change them.
      const before = t.model.requests.length;
      const out = (await client.runs.wait(thread.thread_id, "validation", { input: null, context: { maxAttempts: 1 } })) as Values & { attempts: number };
      expect(out).toMatchObject({ success: false, attempts: 3, stopReason: "max_attempts" });
      expect(out.history).toHaveLength(3);
      expect((await client.threads.getState<Values>(thread.thread_id)).values.run?.request).toBe(next);
      expect(t.model.requests.slice(before).map(userText).join("\n")).toContain(next);
    },
  },

  {
    auth: "off",
    name: "every other route that writes state is refused: stateless and batch runs, supersteps, a graph_id patch, protocol commands",
    async run(t) {
      const { client, server, headers } = t;
      const stateless = await refusalOf(client.runs.wait(null, "validation", { command: { update: { success: true, value: { forged: true } } } }));
      expect(stateless.status).toBe(403);
      const batch = await fetch(`${server.url}/runs/batch`, {
        method: "POST",
        headers,
        body: JSON.stringify([{ assistant_id: "validation", command: { update: { success: true } } }]),
      });
      expect(batch.status).toBe(403);

      const threadId = randomUUID();
      const superstep = await refusalOf(
        client.threads.create({
          threadId,
          graphId: "validation",
          supersteps: [{ updates: [{ values: { success: true, value: { forged: true } }, asNode: "review" }] }],
        }),
      );
      expect(superstep.status).toBe(403);
      expect(superstep.message).toMatch(/Not writable: "success", "value"/);
      expect((await refusalOf(client.threads.get(threadId))).status).toBe(404); // refused before the thread was made
      const created = await client.threads.create({
        graphId: "validation",
        supersteps: [{ updates: [{ values: { request: REQUEST }, asNode: "__start__" }] }],
      });
      expect((await client.threads.getState(created.thread_id)).next).toEqual(["generate"]);

      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "validation", { input: { request: REQUEST }, context: PAUSE });
      const moved = await refusalOf(client.threads.update(thread.thread_id, { metadata: { graph_id: "reflexion" } }));
      expect(moved.status).toBe(403);
      expect(moved.message).toMatch(/graph_id cannot be changed/);
      const respond = await fetch(`${server.url}/threads/${thread.thread_id}/commands`, {
        method: "POST",
        headers,
        body: JSON.stringify({ id: 1, method: "input.respond", params: { interrupt_id: "any", response: { type: "reject" }, update: { success: true } } }),
      });
      expect(respond.status).toBe(403);
      const socket = await fetch(`${server.url}/threads/${thread.thread_id}/stream/events`);
      expect(socket.status).toBe(403);
      expect(((await socket.json()) as { message: string }).message).toMatch(/SSE transport/);
      const still = await client.threads.getState<Values>(thread.thread_id);
      expect([still.values.success, still.next]).toEqual([false, ["review"]]);
    },
  },

  {
    auth: "off",
    name: "a resume value the server could not store (nested 10,000 deep) is refused with the reason; the thread stays paused and answers as before",
    async run(t) {
      const { client, server, headers } = t;
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "validation", { input: { request: REQUEST }, context: PAUSE });
      const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
      const res = await fetch(`${server.url}/threads/${thread.thread_id}/runs/wait`, {
        method: "POST",
        headers,
        body: `{"assistant_id":"validation","context":${JSON.stringify(PAUSE)},"command":{"resume":{"type":"edit","value":${deep}}}}`,
      });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { message: string }).message).toMatch(/^command\.resume nests deeper than 68 levels.*a paused run is still paused/);
      const still = await client.threads.getState<Values>(thread.thread_id);
      expect([still.values.success, still.next, still.tasks.flatMap((t) => t.interrupts).length]).toEqual([false, ["review"], 1]);
      expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
      expect(Array.isArray(await client.runs.list(thread.thread_id))).toBe(true);

      // A person's text with something after the JSON is refused, and the run pauses again with the reason.
      await client.runs.wait(thread.thread_id, "validation", {
        command: { resume: { type: "edit", value: `${JSON.stringify(FIXED_CONFIG)} thanks!` } },
        context: PAUSE,
      });
      const again = await client.threads.getState<Values & { errors: string[] }>(thread.thread_id);
      expect([again.values.success, again.next]).toEqual([false, ["review"]]);
      expect(again.values.errors[0]).toMatch(/exactly one JSON value is expected/);
      const done = (await client.runs.wait(thread.thread_id, "validation", {
        command: { resume: { type: "edit", value: FIXED_CONFIG } },
        context: PAUSE,
      })) as Values;
      expect(done).toMatchObject({ success: true, value: FIXED_CONFIG });
    },
  },

  {
    auth: "off",
    name: "reflexion: its results and outcomes are not writable either",
    async run(t) {
      const { client } = t;
      const thread = await client.threads.create({ graphId: "reflexion" });
      const refusal = await refusalOf(client.threads.updateState(thread.thread_id, { values: { results: ["forged"], outcomes: [] }, asNode: "each_task" }));
      expect(refusal.status).toBe(403);
      expect(refusal.message).toMatch(/Not writable: "outcomes", "results".*only "tasks"/s);
    },
  },
  {
    auth: "on",
    name: "a forging state write by the thread's owner is refused; the thread still reports success false with its review pending; the resume decides",
    run: forgingIsRefused,
  },

  {
    auth: "on",
    name: "a stateless run's command.update is refused; to another user, the thread is not found rather than refused by the rule",
    async run(t) {
      const { client, server } = t;
      expect((await refusalOf(client.runs.wait(null, "validation", { command: { update: { success: true } } }))).status).toBe(403);
      const thread = await client.threads.create({ graphId: "validation" });
      const bob = await fetch(`${server.url}/threads/${thread.thread_id}/state`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "bob-key" },
        body: JSON.stringify({ values: { success: true }, as_node: "review" }),
      });
      expect(bob.status).toBe(404);
    },
  },
];
