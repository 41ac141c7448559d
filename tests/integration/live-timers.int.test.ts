/**
 * A finished request keeps no timer: 50 requests through the real ChatOpenAI built by `createChatModel`, against
 * the scripted server, as whole answers, streamed answers, HTTP 500s, cut connections, cut streams, and streams
 * the caller aborts or stops reading mid-answer, and 50 `generateValidated` runs end to end; once they have
 * settled, no timer created meanwhile is still live, ref'd or not.
 *
 * Each phase has a server of its own, closed before the count: a keep-alive socket holds a timer at each end
 * (Node's server and undici's parser) for as long as it stays open, one per pooled connection rather than per
 * request, so the count waits until every socket the phase opened is closed. Two timers are the process's own,
 * at most one of each at a time, whichever phase happens to start them: Node's cache of the Date header and
 * undici's coarse clock. The tracker (testkit/live-timers.ts) sees unref'd timers, which
 * `process.getActiveResourcesInfo()` does not list; the deadline timer of the package's fetch is one, as the
 * first test shows on requests still in flight.
 */
import { HumanMessage } from "@langchain/core/messages";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel, type ModelRequest } from "../../src/models.js";
import { generateValidated } from "../../src/validation/generate.js";
import { replyFor } from "../../bench/model-server.js";
import { refTimers, trackTimers, type LiveTimer, type TimerTracker } from "../../testkit/live-timers.js";
import { startScriptedOpenAIServer, type Responder, type ScriptedServer } from "../../testkit/openai-server.js";

const N = 50;
const SOURCE = fileURLToPath(new URL("../../src/", import.meta.url));
/** Timers the process keeps one of at most, whatever the number of requests: Node's Date-header cache, undici's clock. */
const PROCESS_WIDE = [/at utcDate \(node:internal\/http/, /at refreshTimeout \(node:internal\/deps\/undici/];

let tracker: TimerTracker;
beforeAll(() => {
  tracker = trackTimers();
});
afterAll(() => tracker?.stop());

/** The chat model of the package's factory against `server`: no retries, and a deadline no phase comes near (so only a finished request clears it). */
function factoryFor(server: ScriptedServer) {
  const env = { ...readEnvironment({}), providers: { openai: { apiKey: "test-key", baseUrl: server.baseURL } }, maxRetries: 0, timeoutMs: 600_000 };
  return (request: ModelRequest) => createChatModel(request, env);
}

const ask = [new HumanMessage("hi")];

/**
 * Runs `requests` N at once against a server of their own answering with `responder`, closes the server, waits for
 * every socket of the phase to close, and says which timers created meanwhile are still live (their creation stacks)
 * and how the count of ref'd timers in `process.getActiveResourcesInfo()` moved.
 */
async function phase<T>(responder: Responder, request: (model: ReturnType<typeof factoryFor>, server: ScriptedServer) => Promise<T>) {
  const refBefore = refTimers();
  tracker.reset();
  const server = await startScriptedOpenAIServer({ responder });
  const model = factoryFor(server);
  const settled = await Promise.allSettled(Array.from({ length: N }, () => request(model, server)));
  await server.close();
  await tracker.socketsClosed();
  const live = tracker.liveTimers().map((timer) => timer.stack);
  return {
    settled,
    requests: server.requests.length,
    packageTimers: live.filter((stack) => stack.includes(SOURCE)),
    otherTimers: live.filter((stack) => !stack.includes(SOURCE) && !PROCESS_WIDE.some((p) => p.test(stack))),
    processWide: PROCESS_WIDE.map((p) => live.filter((stack) => p.test(stack)).length),
    refGrowth: refTimers() - refBefore,
  };
}

function expectNoTimerLeft(result: Awaited<ReturnType<typeof phase<unknown>>>): void {
  expect(result.packageTimers).toEqual([]);
  expect(result.otherTimers).toEqual([]);
  for (const count of result.processWide) expect(count).toBeLessThanOrEqual(1);
  // Not 0 exactly: the test runner's own ref'd timer (a call to the main process) may be pending when the phase starts.
  expect(result.refGrowth).toBeLessThanOrEqual(0);
}

const fulfilled = (settled: PromiseSettledResult<unknown>[]) => settled.filter((s) => s.status === "fulfilled").length;
const reasons = (settled: PromiseSettledResult<unknown>[]) =>
  settled.flatMap((s) => (s.status === "rejected" ? [String((s.reason as Error)?.message ?? s.reason)] : []));

async function readStream(model: ReturnType<ReturnType<typeof factoryFor>>, signal?: AbortSignal, onChunk?: () => void): Promise<string> {
  let text = "";
  for await (const chunk of await model.stream(ask, { signal })) {
    text += String(chunk.content);
    onChunk?.();
  }
  return text;
}

const chat = (model: ReturnType<typeof factoryFor>) => model({ model: "timers", role: "generate" });

describe("the package's model client keeps no timer once a request has finished (50 requests at once per case)", () => {
  it("the count sees the deadline timers while the requests are in flight, unref'd, where getActiveResourcesInfo does not", async () => {
    // Requests the server never answers, counted once all have arrived; closing the server then cuts every connection.
    let inFlight: LiveTimer[] = [];
    let arrived!: () => void;
    const allArrived = new Promise<void>((resolve) => (arrived = resolve));
    const result = await phase(
      (_req, index) => {
        if (index === N - 1) arrived();
        return { fault: "hang" };
      },
      async (model, server) => {
        const call = chat(model).invoke(ask);
        await allArrived;
        if (inFlight.length === 0) inFlight = tracker.liveTimers().filter((timer) => timer.stack.includes(`${SOURCE}providers/deadline.ts`));
        void server.close();
        return call;
      },
    );
    expect(inFlight).toHaveLength(N);
    expect(inFlight.filter((timer) => timer.refed)).toEqual([]);
    expect(result.requests).toBe(N);
    expect(fulfilled(result.settled)).toBe(0);
    expectNoTimerLeft(result);
  });

  it("whole answers (invoke, JSON)", async () => {
    const result = await phase(
      () => "a whole answer",
      (model) => chat(model).invoke(ask),
    );
    expect(fulfilled(result.settled)).toBe(N);
    expect(result.requests).toBe(N);
    expectNoTimerLeft(result);
  });

  it("streamed answers (stream, SSE) read to the end", async () => {
    const result = await phase(
      () => "a streamed answer in pieces",
      (model) => readStream(chat(model)),
    );
    expect(result.settled.map((s) => s.status === "fulfilled" && s.value)).toEqual(Array(N).fill("a streamed answer in pieces"));
    expectNoTimerLeft(result);
  });

  it("HTTP 500 answers", async () => {
    const result = await phase(
      () => ({ fault: "status", status: 500 }),
      (model) => chat(model).invoke(ask),
    );
    expect(reasons(result.settled)).toHaveLength(N);
    expect(reasons(result.settled)[0]).toMatch(/500/);
    expectNoTimerLeft(result);
  });

  it("connections cut before the answer", async () => {
    const result = await phase(
      () => ({ fault: "reset" }),
      (model) => chat(model).invoke(ask),
    );
    expect(reasons(result.settled)).toHaveLength(N);
    expectNoTimerLeft(result);
  });

  it("streams cut halfway", async () => {
    const result = await phase(
      () => ({ fault: "cut-stream", partial: "half an answer" }),
      (model) => readStream(chat(model)),
    );
    expect(result.requests).toBe(N);
    expectNoTimerLeft(result);
  });

  it("streams the caller aborts after the first chunk, while the server still owes the rest", async () => {
    const result = await phase(
      () => ({ fault: "stall-after-headers" }),
      (model) => {
        const caller = new AbortController();
        return readStream(chat(model), caller.signal, () => caller.abort(new Error("the caller stopped reading")));
      },
    );
    expect(result.requests).toBe(N);
    expect(reasons(result.settled).filter((r) => /stopped reading|abort/i.test(r))).toHaveLength(N);
    expectNoTimerLeft(result);
  });

  it("streams the caller stops reading (break) after the first chunk, while the server still owes the rest", async () => {
    const result = await phase(
      () => ({ fault: "stall-after-headers" }),
      async (model) => {
        for await (const _ of await chat(model).stream(ask)) break;
      },
    );
    expect(fulfilled(result.settled)).toBe(N);
    expectNoTimerLeft(result);
  });

  it("generateValidated end to end: a broken first answer, a valid retry", async () => {
    const result = await phase(
      (req) => replyFor("invalid-then-valid", req),
      (model) => generateValidated({ model, spec: "deployment-config", request: "A deployment config for payments-api with 8 replicas", maxAttempts: 3 }),
    );
    expect(result.settled.map((s) => s.status === "fulfilled" && s.value.success && s.value.attempts)).toEqual(Array(N).fill(2));
    expect(result.requests).toBe(2 * N);
    expectNoTimerLeft(result);
  });
});
