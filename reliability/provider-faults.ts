/**
 * Provider faults through the real ChatOpenAI client against the scripted
 * OpenAI-compatible server: each fault strikes between attempt 1 and attempt 2
 * of a validation run, in plain-JSON and in SSE-streaming mode. Also: faults that
 * persist (run error, checkpoint kept, resume), the whole-answer deadline
 * (stalled body, dripped answer) and a provider echoing the Authorization header.
 */
import { MemorySaver } from "@langchain/langgraph";
import { readEnvironment } from "../src/environment.js";
import { createChatModel, type ModelRequest } from "../src/models.js";
import { builtinSpecs } from "../src/specs/registry.js";
import { ProviderError } from "../src/errors.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { mapConcurrent } from "../testkit/concurrent.js";
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedReply, type ScriptedServer } from "../testkit/openai-server.js";
import type { CaseResult } from "./hostile.js";

const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const VALID = JSON.stringify(example);
const BROKEN = JSON.stringify({ ...example, replicas: 8 });

export const FAULTS: Array<{ name: string; fault: ScriptedReply }> = [
  { name: "429 with retry-after", fault: { fault: "status", status: 429, headers: { "retry-after": "0" } } },
  { name: "429 without retry-after", fault: { fault: "status", status: 429 } },
  { name: "500", fault: { fault: "status", status: 500 } },
  { name: "503", fault: { fault: "status", status: 503, body: { error: { message: "The engine is currently overloaded" } } } },
  { name: "connection reset", fault: { fault: "reset" } },
  { name: "server never answers", fault: { fault: "hang" } },
  { name: "body stalls after the headers", fault: { fault: "stall-after-headers" } },
  { name: "answer dripped one byte a second", fault: { fault: "drip", content: VALID } },
  { name: "stream cut off mid-answer", fault: { fault: "cut-stream", partial: VALID.slice(0, 30) } },
  { name: "invalid JSON body", fault: { fault: "invalid-json" } },
  { name: "no choices", fault: { fault: "no-choices" } },
];

/**
 * The client's deadline per request. It ends the faults that never answer in time (a hang, a stalled body, a
 * dripped answer). A healthy reply from the in-process server usually beats it, but on a loaded machine it
 * may not (at 1 s one missed it with four spinning processes on two cores; at 3 s one missed it with the load
 * average near 10): no check depends on that. The scripted server answers by what a request asks for (see
 * `replyFor`), so a healthy reply that missed the deadline is retried and answered again the same way.
 */
export const TIMEOUT_MS = 3_000;

/**
 * The reply to a validation request, chosen by what it asks, never by the order requests arrive in: attempt 1
 * (a first prompt) gets BROKEN; attempt 2 (a retry prompt, which quotes BROKEN) gets `retry()`. A real provider
 * answers a retried request like the first one, and so does this: a healthy reply the client gave up on under
 * load is answered again, instead of the next reply of a script meeting the wrong request.
 */
function replyFor(request: RecordedRequest, retry: () => ScriptedReply): ScriptedReply {
  const asksAgain = request.messages.some((m) => m.role === "user" && m.content.includes(BROKEN));
  return asksAgain ? retry() : BROKEN;
}

/** The client settings the suite runs with: a short timeout, two client retries. */
function modelFor(server: ScriptedServer, settings: { apiKey?: string; maxRetries?: number } = {}) {
  const env = {
    ...readEnvironment({}),
    providers: { openai: { apiKey: settings.apiKey ?? "test-key", baseUrl: server.baseURL } },
    maxRetries: settings.maxRetries ?? 2,
    timeoutMs: TIMEOUT_MS,
  };
  return (request: ModelRequest) => createChatModel(request, env);
}

async function runOnce(server: ScriptedServer, streaming: boolean, threadId: string, checkpointer: MemorySaver, model = modelFor(server)) {
  const graph = buildValidationGraph({ model, checkpointer });
  const config = { configurable: { thread_id: threadId } };
  if (!streaming) return graph.invoke({ request: "A deployment config for payments-api" }, config);
  let final: Record<string, any> = {};
  for await (const [mode, chunk] of await graph.stream(
    { request: "A deployment config for payments-api" },
    { ...config, streamMode: ["messages", "values"] },
  )) {
    if (mode === "values") final = chunk as Record<string, any>;
  }
  return final;
}

/**
 * How many cases of one group run at once. Each case has its own scripted server and thread, so cases cannot
 * see each other's replies; most of a case's time is spent waiting on the client's timeout and retry back-off,
 * so running a few side by side shortens a group several times over. The test runs its four groups side by
 * side too (at most 17 runs at once, mostly waiting): about 15 s for all, against about 90 s one by one.
 */
const CASES_AT_ONCE = 6;

/** Runs `cases` at most CASES_AT_ONCE at a time, each with a scripted server of its own; results keep the cases' order. */
function eachOnOwnServer<T>(cases: T[], run: (c: T, server: ScriptedServer) => Promise<CaseResult>): Promise<CaseResult[]> {
  return mapConcurrent(cases, CASES_AT_ONCE, async (c) => {
    const server = await startScriptedOpenAIServer();
    try {
      return await run(c, server);
    } finally {
      await server.close();
    }
  });
}

const bothModes = <T>(cases: T[]) => [false, true].flatMap((streaming) => cases.map((c) => ({ ...c, streaming })));

export interface TransientOptions {
  /** Only these faults (by name); default all. */
  faults?: string[];
  /**
   * The first healthy reply after the fault arrives only after the client's deadline, as it can on a loaded
   * machine: the client gives up on it and asks again. The case must hold all the same.
   */
  lateFirstRecovery?: boolean;
}

/**
 * A transient fault: the run recovers, and the fault never counts as an attempt. Attempt 2's first request
 * meets the fault, once; every other request is answered healthily. What is checked does not depend on
 * timing: the fault was served once and retried (a request of attempt 2 came after it), and the run ended
 * valid after exactly 2 attempts. The number of calls is 3 unless a healthy reply missed the client's
 * deadline on a loaded machine and was asked again; the detail says so when it happens.
 */
export function runTransientFaults(options: TransientOptions = {}): Promise<CaseResult[]> {
  const faults = options.faults ? FAULTS.filter((f) => options.faults!.includes(f.name)) : FAULTS;
  return eachOnOwnServer(bothModes(faults), async ({ name, fault, streaming }, server) => {
    const label = `${name} (${streaming ? "SSE" : "JSON"}), then recovery${options.lateFirstRecovery ? " that first misses the deadline" : ""}`;
    const attempt2: ScriptedReply[] = [];
    server.setResponder((request) =>
      replyFor(request, () => {
        const late = options.lateFirstRecovery === true && attempt2.length === 1;
        const reply: ScriptedReply = attempt2.length === 0 ? fault : late ? { content: VALID, delayMs: TIMEOUT_MS + 1_000 } : VALID;
        attempt2.push(reply);
        return reply;
      }),
    );
    try {
      // Three client retries: the fault, the late reply and one spare, so a healthy reply that also misses the
      // deadline on a loaded machine is asked for again instead of ending the run (with two, the late case had
      // no slack left: its last healthy reply had to beat the deadline, and under load one did not).
      const out = await runOnce(server, streaming, label, new MemorySaver(), modelFor(server, { maxRetries: 3 }));
      const calls = server.requests.length;
      const served = attempt2.filter((r) => r === fault).length;
      const held = out.success === true && out.attempts === 2 && out.history.length === 2 && served === 1 && attempt2.length >= 2;
      const extra = calls - 3;
      return {
        name: label,
        held,
        detail: held
          ? `recovered; not counted as an attempt${extra > 0 ? ` (${calls} calls: a healthy reply was asked for again ${extra} time(s); on a loaded machine one can miss the ${TIMEOUT_MS / 1000} s deadline)` : ""}`
          : `success=${out.success} attempts=${out.attempts} history=${out.history.length} fault served ${served} time(s), ${attempt2.length} request(s) of attempt 2, ${calls} calls`,
      };
    } catch (error) {
      return { name: label, held: false, detail: `threw ${(error as Error).message}` };
    }
  });
}

/** A persistent fault: a run error that names what the provider said, with attempt 1 kept for a resume. */
export function runPersistentFaults(): Promise<CaseResult[]> {
  const cases: Array<{ name: string; fault: ScriptedReply; says: RegExp }> = [
    {
      name: "503 that persists",
      fault: { fault: "status", status: 503, body: { error: { message: "The engine is currently overloaded" } } },
      says: /HTTP 503.*overloaded/,
    },
    { name: "429 that persists", fault: { fault: "status", status: 429, headers: { "retry-after": "0" } }, says: /HTTP 429.*Rate limit/ },
    { name: "server that never answers", fault: { fault: "hang" }, says: /timed out/i },
    { name: "connection that keeps resetting", fault: { fault: "reset" }, says: /Connection error/i },
  ];
  return eachOnOwnServer(cases, async ({ name, fault, says }, server) => {
    server.setResponder((request) => replyFor(request, () => fault));
    const checkpointer = new MemorySaver();
    const config = { configurable: { thread_id: name } };
    let problem = "";
    // One client retry: the node's retry policy makes three attempts in all, so a fault that never answers
    // costs 3 × 2 timeouts before the run fails.
    const model = modelFor(server, { maxRetries: 1 });
    try {
      await runOnce(server, false, name, checkpointer, model);
      problem = "the run did not fail";
    } catch (error) {
      if (!says.test((error as Error).message)) problem = `error does not say what the provider said: ${(error as Error).message}`;
    }
    const graph = buildValidationGraph({ model, checkpointer });
    const saved = await graph.getState(config);
    if (!problem && (saved.values.attempts !== 1 || saved.values.history?.length !== 1)) problem = `checkpoint has attempts=${saved.values.attempts}`;
    if (!problem) {
      server.setResponder((request) => replyFor(request, () => VALID));
      const resumed = await graph.invoke(null, config);
      if (resumed.success !== true || resumed.attempts !== 2) problem = `resume ended success=${resumed.success} attempts=${resumed.attempts}`;
    }
    return {
      name: `${name}: run error, attempt 1 kept, resumed`,
      held: problem === "",
      detail: problem || "run error names the provider's words; resumed to valid",
    };
  });
}

/**
 * An answer with no content is a call the provider billed: it is an attempt like any other (counted against
 * the attempts and the token budget, its usage kept), and the reader's message tells the model what was wrong.
 * Attempt 2 meets an empty answer (JSON and SSE); attempt 3 is valid.
 */
export function runEmptyAnswers(): Promise<CaseResult[]> {
  return eachOnOwnServer(bothModes([{ name: "an answer with no content" }]), async ({ name, streaming }, server) => {
    // Chosen by what the request asks, as replyFor does: the retry after the empty answer quotes the reader's message.
    server.setResponder((request) =>
      request.messages.some((m) => m.role === "user" && m.content.includes("The answer was empty"))
        ? VALID
        : replyFor(request, () => ({ fault: "null-content" })),
    );
    const label = `${name} (${streaming ? "SSE" : "JSON"}): counted as an attempt, then valid`;
    try {
      const out = await runOnce(server, streaming, label, new MemorySaver(), modelFor(server));
      const empty = out.history?.[1];
      const held = out.success === true && out.attempts === 3 && out.usage?.calls === 3 && empty?.output === "" && /empty/.test(String(empty?.errors?.[0]));
      return {
        name: label,
        held,
        detail: held
          ? "the empty answer was attempt 2, counted, with the reader's message fed back"
          : `success=${out.success} attempts=${out.attempts} calls=${out.usage?.calls} attempt 2=${JSON.stringify(empty)?.slice(0, 200)}`,
      };
    } catch (error) {
      return { name: label, held: false, detail: `threw ${(error as Error).message}` };
    }
  });
}

/**
 * LLM_TIMEOUT_MS bounds the whole answer: a server that stalls after its headers, or drips its answer
 * one byte a second, ends the run with a ProviderError naming the timeout (after the retries), never a hang.
 */
export function runDeadlineFaults(): Promise<CaseResult[]> {
  const faults: Array<{ name: string; fault: ScriptedReply }> = [
    { name: "body that stalls after the headers", fault: { fault: "stall-after-headers" } },
    { name: "answer dripped one byte a second", fault: { fault: "drip", content: VALID } },
  ];
  return eachOnOwnServer(bothModes(faults), async ({ name, fault, streaming }, server) => {
    server.setResponder(() => fault);
    const label = `${name} (${streaming ? "SSE" : "JSON"}): the run fails with a timeout`;
    const started = Date.now();
    let problem = "";
    try {
      await runOnce(server, streaming, label, new MemorySaver(), modelFor(server, { maxRetries: 1 }));
      problem = "the run did not fail";
    } catch (error) {
      if (!(error instanceof ProviderError)) problem = `threw ${(error as Error).name}, not a ProviderError: ${(error as Error).message}`;
      else if (!error.message.includes(`timed out: no complete answer within ${TIMEOUT_MS} ms (LLM_TIMEOUT_MS)`))
        problem = `error does not name the timeout: ${error.message}`;
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    return {
      name: label,
      held: problem === "",
      detail: problem || `ProviderError naming LLM_TIMEOUT_MS after ${seconds} s (${TIMEOUT_MS / 1000} s timeout, retries included)`,
    };
  });
}

/** A provider that echoes the Authorization header in its error body: the run error names the 401, never the key. */
export function runSecretEchoFaults(): Promise<CaseResult[]> {
  const apiKey = "sk-proj-Echo0123456789abcdefSECRET";
  return eachOnOwnServer(bothModes([{}]), async ({ streaming }, server) => {
    server.setResponder(() => ({ fault: "echo-auth" }));
    const label = `provider echoes the Authorization header (${streaming ? "SSE" : "JSON"}): key redacted`;
    let problem = "";
    try {
      await runOnce(server, streaming, label, new MemorySaver(), modelFor(server, { apiKey }));
      problem = "the run did not fail";
    } catch (error) {
      const message = (error as Error).message;
      if (message.includes(apiKey) || message.includes("Echo0123456789")) problem = `the key leaked: ${message}`;
      else if (!/HTTP 401.*Authorization: Bearer \[redacted\]/s.test(message)) problem = `error does not say what the provider said: ${message}`;
    }
    const seen = server.requests.at(-1)?.headers.authorization;
    if (!problem && seen !== `Bearer ${apiKey}`) problem = `the server did not receive the key (${String(seen)}), so nothing was tested`;
    return { name: label, held: problem === "", detail: problem || "HTTP 401 and the provider's words passed on; the key replaced by [redacted]" };
  });
}
