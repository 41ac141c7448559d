/**
 * The example service, started as the README says (node --import tsx
 * examples/service.ts):
 *   - as two instances on one fresh database started at the same moment: both
 *     come up, share the work, answer bad requests with 400 and a clear
 *     message, report provider failures as 502, and exit 0 on SIGTERM; a run
 *     cut short on one instance is finished on the other ({"threadId"} alone);
 *   - one run per thread across the two instances: a run that finds its thread
 *     held answers 409 with "multitaskStrategy": "reject", waits and says
 *     "queued": true by default;
 *   - with SERVICE_API_KEYS on PostgreSQL: callers need a key, the memory
 *     owner is the key's user whatever the body says, and two users naming the
 *     same threadId get two threads;
 *   - in memory, against every input of the reliability suites (bad requests
 *     and configurations, hostile model answers, provider faults, hostile
 *     specs) and malformed HTTP: it is still serving after each one.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { BAD_INPUTS } from "../../reliability/bad-input.js";
import { hostileFixtures } from "../../reliability/hostile-fixtures.js";
import { FAULTS } from "../../reliability/provider-faults.js";
import { freePort, REPO_ROOT } from "../../testkit/dev-server.js";
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedReply, type ScriptedServer } from "../../testkit/openai-server.js";
import { describeWithPostgres, waitFor, waitForAdvisoryLockWaiter } from "../support/postgres.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const BROKEN = JSON.stringify({ ...(builtinSpecs.get("deployment-config")!.example as object), replicas: 8 });
const PROVIDER_DOWN = "provider-down";
/** A request with this marker: the model hangs on its first retry, once, so the client can leave mid-run. */
const HANG_ONCE = "hang-once";
/** A request with this marker: the model answers its first attempt only when the test opens the gate. */
const HELD = "held-run";

interface Service {
  url: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startService(env: Record<string, string>, port: number): Service {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/service.ts"], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  return { url: `http://127.0.0.1:${port}`, child, output: () => output, exited };
}

async function waitHealthy(service: Service): Promise<void> {
  let exited = false;
  void service.exited.then(() => (exited = true));
  await waitFor(
    `${service.url}/healthz`,
    async () => {
      if (exited) throw new Error(`the service exited during start-up:\n${service.output()}`);
      try {
        return (await fetch(`${service.url}/healthz`)).status === 200;
      } catch {
        return false;
      }
    },
    90_000,
    100,
  );
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, any> }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

function stopAll(services: Service[]): Promise<unknown> {
  for (const s of services) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
  return Promise.all(services.map((s) => s.exited));
}

describeWithPostgres("the example service on PostgreSQL", (db) => {
  let server: ScriptedServer;
  let services: Service[] = [];
  let hung = false;
  let openHeld: (() => void) | undefined;
  const held = new Promise<void>((resolve) => (openHeld = resolve));

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      latencyMs: 20,
      responder: (req) => {
        const last = req.messages.at(-1)?.content ?? "";
        if (last.includes(PROVIDER_DOWN)) return { fault: "status", status: 400, body: { error: { message: "The model `nope` does not exist" } } };
        const retry = last.includes("A validator rejected it");
        if (last.includes(HELD)) return held.then(() => VALID);
        if (retry && last.includes(HANG_ONCE) && !hung) {
          hung = true;
          return { fault: "hang" };
        }
        return retry ? VALID : BROKEN;
      },
    });
    // Two instances on one new database, started together: the first start's table creation is shared safely.
    const ports = [await freePort()];
    while (ports.length < 2) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    services = ports.map((port) => startService({ DATABASE_URL: db.url, OPENAI_BASE_URL: server.baseURL }, port));
    await Promise.all(services.map(waitHealthy));
  }, 120_000);

  afterAll(async () => {
    for (const s of services) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
    await Promise.all(services.map((s) => s.exited));
    await server?.close();
  });

  it('a run cut short (its client left during attempt 2) is finished by the other instance from {"threadId"} alone; ids with control characters are refused', async () => {
    const threadId = `resume-${Date.now()}`;
    const left = new AbortController();
    const cut = fetch(`${services[0].url}/validate`, {
      method: "POST",
      body: JSON.stringify({ request: `A deployment config ${HANG_ONCE}`, threadId }),
      signal: left.signal,
    }).catch(() => undefined);
    // The retry reaching the model means attempt 1 is checkpointed (durability "sync"): then the client leaves.
    await waitFor("the hanging retry", async () => hung, 30_000, 50);
    left.abort();
    await cut;

    const resumed = await post(`${services[1].url}/validate`, JSON.stringify({ threadId }));
    expect(resumed.status, JSON.stringify(resumed.json)).toBe(200);
    expect(resumed.json).toMatchObject({ threadId, success: true, stopReason: "valid", attempts: 2, value: JSON.parse(VALID) });
    expect(resumed.json.history.map((h: { attempt: number }) => h.attempt)).toEqual([1, 2]);

    const again = await post(`${services[0].url}/validate`, JSON.stringify({ threadId }));
    expect(again.status).toBe(409);
    expect(again.json.error).toMatch(/Nothing to resume on thread "resume-\d+": its last run finished/);
    const unknown = await post(`${services[0].url}/validate`, JSON.stringify({ threadId: `${threadId}-never` }));
    expect(unknown.status).toBe(409);
    expect(unknown.json.error).toMatch(/it has no run/);
    const withSettings = await post(`${services[0].url}/validate`, JSON.stringify({ threadId, maxAttempts: 5 }));
    expect(withSettings.status).toBe(400);
    expect(withSettings.json.error).toMatch(/keeps the spec and maxAttempts it started with/);

    for (const [path, body] of [
      ["/validate", { request: "A deployment config", threadId: "a\u0000b" }],
      ["/validate", { threadId: "a\u0000b" }],
      ["/validate", { request: "A deployment config", threadId: "line\nbreak" }],
      ["/reflexion", { tasks: ["Explain recursion"], owner: "team\u0000a" }],
    ] as const) {
      const refused = await post(`${services[0].url}${path}`, JSON.stringify(body));
      expect(refused.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(refused.json.error).toMatch(/must not contain control characters/);
    }
    expect(services.map((s) => s.output()).join("\n")).not.toMatch(/internal error/);
  }, 120_000);

  it('one run per thread across instances: "reject" answers 409 while the thread is held, the default waits and says "queued"', async () => {
    const threadId = `busy-${Date.now()}`;
    const before = server.requests.length;
    const first = post(`${services[0].url}/validate`, JSON.stringify({ request: `A deployment config ${HELD}`, threadId }));
    await waitFor("the held run's model request", () => server.requests.slice(before).some((r) => JSON.stringify(r.messages).includes(HELD)), 30_000, 50);

    const refused = await post(`${services[1].url}/validate`, JSON.stringify({ request: "A deployment config", threadId, multitaskStrategy: "reject" }));
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ threadId, reason: "running" });
    expect(refused.json.error).toMatch(/is busy: another run is in progress on it; nothing was run/);
    const bad = await post(`${services[1].url}/validate`, JSON.stringify({ request: "A deployment config", threadId, multitaskStrategy: "interrupt" }));
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/multitaskStrategy must be "enqueue" or "reject"/);

    const second = post(`${services[1].url}/validate`, JSON.stringify({ request: "A deployment config", threadId }));
    // The second instance waits in PostgreSQL's lock queue for the thread.
    await waitForAdvisoryLockWaiter(db.url, "the second run to wait for the thread", 30_000);
    expect(server.requests.length - before).toBe(1);
    openHeld!();
    const [one, two] = await Promise.all([first, second]);
    expect(one.status, JSON.stringify(one.json)).toBe(200);
    expect(one.json).toMatchObject({ threadId, success: true, attempts: 1 });
    expect(one.json.queued).toBeUndefined();
    expect(two.status, JSON.stringify(two.json)).toBe(200);
    expect(two.json).toMatchObject({ threadId, queued: true, success: true, attempts: 2 });
    expect(two.json.history.map((h: { attempt: number }) => h.attempt)).toEqual([1, 2]);
  }, 120_000);

  it("answers concurrent POST /validate on both instances, refuses bad requests clearly, and stops on SIGTERM with exit 0", async () => {
    const health = await fetch(`${services[0].url}/healthz`);
    expect(await health.json()).toEqual({ status: "ok", persistence: "postgres" });

    // 20 concurrent runs, spread over the two instances.
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post(
          `${services[i % 2].url}/validate`,
          JSON.stringify({ request: `A deployment config for service-${i}`, maxAttempts: 3, threadId: `svc-${i}-${Date.now()}` }),
        ),
      ),
    );
    for (const { status, json } of runs) {
      expect(status, JSON.stringify(json)).toBe(200);
      expect(json.success).toBe(true);
      expect(json.stopReason).toBe("valid");
      expect(json.attempts).toBe(2);
      expect(json.value).toEqual(JSON.parse(VALID));
      expect(json.errors).toEqual([]);
      expect(json.history.map((h: { attempt: number }) => h.attempt)).toEqual([1, 2]);
      expect(json.usage.calls).toBe(2);
    }

    // Bad requests: 400 with a message that says what is wrong.
    const bad: Array<[string, string, RegExp]> = [
      ["/validate", "{not json", /not valid JSON/],
      ["/validate", "[1, 2]", /must be a JSON object; got an array/],
      ["/validate", "{}", /request is required/],
      ["/validate", JSON.stringify({ request: "" }), /request is empty/],
      ["/validate", JSON.stringify({ request: "x", maxAttempts: 0 }), /maxAttempts must be an integer from 1 to 20; got 0/],
      ["/validate", JSON.stringify({ request: "x", spec: "no-such-spec" }), /no-such-spec/],
      ["/validate", JSON.stringify({ request: "x", maxAttempt: 2 }), /Unknown field "maxAttempt"/],
      ["/reflexion", JSON.stringify({ tasks: "Explain recursion" }), /tasks must be a list of strings/],
      ["/reflexion", JSON.stringify({ tasks: ["x"], maxLoops: 11 }), /maxLoops must be an integer from 1 to 10/],
    ];
    for (const [path, body, message] of bad) {
      const { status, json } = await post(`${services[1].url}${path}`, body);
      expect(status, `${path} ${body}`).toBe(400);
      expect(json.error).toMatch(message);
    }

    // Provider failure: 502 with what the provider said.
    const failed = await post(`${services[0].url}/validate`, JSON.stringify({ request: `${PROVIDER_DOWN}: a config` }));
    expect(failed.status).toBe(502);
    expect(failed.json.error).toMatch(/HTTP 400.*does not exist/);

    // Unknown route, wrong method, body too large.
    expect((await post(`${services[0].url}/nope`, "{}")).status).toBe(404);
    expect((await fetch(`${services[0].url}/validate`)).status).toBe(405);
    const huge = await post(`${services[0].url}/validate`, JSON.stringify({ request: "x".repeat(1_100_000) }));
    expect(huge.status).toBe(413);
    expect(huge.json.error).toMatch(/larger than 1048576 bytes/);
    // However large: 20 MB, declared or chunked, is still answered 413 (not a reset connection).
    const twenty = "x".repeat(20 * 1024 * 1024);
    expect((await post(`${services[0].url}/validate`, twenty)).status).toBe(413);
    const chunked = await fetch(`${services[1].url}/validate`, { method: "POST", body: new Blob([twenty]).stream(), duplex: "half" } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { error: string }).error).toMatch(/larger than/);
    expect(services[0].output()).toContain("single-tenant: SERVICE_API_KEYS is not set");

    // Graceful shutdown.
    for (const s of services) s.child.kill("SIGTERM");
    const exits = await Promise.all(services.map((s) => s.exited));
    for (const [i, exit] of exits.entries()) expect(exit, services[i].output()).toEqual({ code: 0, signal: null });
    expect(services[0].output()).toContain("stopped");
  }, 120_000);
});

// ---------------------------------------------------------------------------
// Callers with keys

const KEYS = "alice-key:alice,bob-key:bob";
const MARKER = "zebra-alice-only";
const as = (key: string) => ({ "x-api-key": key });

/** The scripted model for the keyed and hostile runs: the answer is chosen by markers in the request. */
function markedResponder(req: RecordedRequest): ScriptedReply {
  const sys = req.messages.find((m) => m.role === "system")?.content ?? "";
  const prompt = req.messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n");
  const hostile = /hostile#(\d+)/.exec(prompt);
  if (hostile) return hostileFixtures[Number(hostile[1])].answer();
  const fault = /fault#(\d+)/.exec(prompt);
  if (fault) return FAULTS[Number(fault[1])].fault;
  if (sys.startsWith("You write JSON objects of this kind")) return prompt.includes("A validator rejected it") ? VALID : BROKEN;
  if (/evaluator/i.test(sys)) return "Accurate but thin.\nFinal score: 7/10";
  if (/reflect/i.test(sys)) return `Lesson from "${/Task:\n(.*)/.exec(prompt)?.[1] ?? ""}": open with one concrete example.`;
  // The Reflexion actor echoes its prompt, so an answer shows which memories the run saw.
  return `Answer. The prompt I was given: ${prompt}`;
}

/**
 * One service for a describe block, started against a scripted model that answers by the request's marker
 * (`markedResponder`), with the variables `env()` gives when the block starts; stopped after the block.
 */
function serviceForBlock(env: () => Record<string, string>): () => Service {
  let model: ScriptedServer | undefined;
  let service: Service | undefined;
  beforeAll(async () => {
    model = await startScriptedOpenAIServer({ responder: markedResponder });
    service = startService({ OPENAI_BASE_URL: model.baseURL, ...env() }, await freePort());
    await waitHealthy(service);
  }, 120_000);
  afterAll(async () => {
    if (service) await stopAll([service]);
    await model?.close();
  });
  return () => service!;
}

describeWithPostgres("the example service with SERVICE_API_KEYS", (db) => {
  const started = serviceForBlock(() => ({ DATABASE_URL: db.url, SERVICE_API_KEYS: KEYS }));

  it("needs a key; the memory owner is the key's user, never the body; two users' same threadId are two threads", async () => {
    const service = started();
    const url = service.url;
    expect(service.output()).toContain("auth on: 2 API key(s) from SERVICE_API_KEYS");
    const body = JSON.stringify({ request: "A deployment config", threadId: "t1" });
    expect((await post(`${url}/validate`, body)).status).toBe(401);
    expect((await post(`${url}/validate`, body, as("mallory-key"))).status).toBe(401);
    expect((await post(`${url}/reflexion`, JSON.stringify({ tasks: ["x"] }), { authorization: "Bearer nope" })).status).toBe(401);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    // Threads: Alice and Bob both name "t1"; each gets a run of their own on a thread of their own.
    for (const key of ["alice-key", "bob-key"]) {
      const out = await post(`${url}/validate`, body, as(key));
      expect(out.status, JSON.stringify(out.json)).toBe(200);
      expect(out.json).toMatchObject({ threadId: "t1", success: true, attempts: 2 });
      expect(out.json.history.map((h: { attempt: number }) => h.attempt)).toEqual([1, 2]);
    }
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ thread_id: string }>("SELECT DISTINCT thread_id FROM checkpoints WHERE thread_id LIKE '%t1' ORDER BY thread_id");
      expect(rows.map((r) => r.thread_id)).toEqual(["alice:t1", "bob:t1"]);
    } finally {
      await client.end();
    }

    // Memory: Alice's reflections are hers; Bob cannot name her as the owner, and his runs never see them.
    const reflexion = (key: string, task: string, extra: Record<string, unknown> = {}) =>
      post(`${url}/reflexion`, JSON.stringify({ tasks: [task], maxLoops: 1, ...extra }), as(key));
    expect((await reflexion("alice-key", `Explain recursion ${MARKER}`)).status).toBe(200);
    const named = await reflexion("bob-key", "Explain recursion simply", { owner: "alice" });
    expect(named.status).toBe(400);
    expect(named.json.error).toMatch(/owner is taken from your API key/);
    const bob = await reflexion("bob-key", "Explain recursion simply");
    expect(bob.status).toBe(200);
    expect(JSON.stringify(bob.json.results)).not.toContain(MARKER);
    const alice = await reflexion("alice-key", "Explain recursion with an example");
    expect(JSON.stringify(alice.json.results)).toContain(MARKER);
  }, 120_000);
});

// ---------------------------------------------------------------------------
// Every input of the reliability suites: the service is still serving after each

describe("the example service under every input of the reliability suites", () => {
  const started = serviceForBlock(() => ({ LLM_TIMEOUT_MS: "2000" }));

  it("answers each bad request, hostile answer, provider fault, hostile spec and malformed HTTP request, then still answers GET /healthz", async () => {
    const service = started();
    const url = service.url;
    expect(service.output()).toContain("single-tenant");
    const cases: Array<{ name: string; send: () => Promise<number>; expect: number[] }> = [];
    const postBody = (path: string, body: string) => async () => {
      const res = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(60_000) });
      await res.arrayBuffer();
      return res.status;
    };

    for (const c of BAD_INPUTS) {
      const path = c.graph === "validation" ? "/validate" : "/reflexion";
      cases.push({ name: `bad input: ${c.name}`, send: postBody(path, JSON.stringify({ ...c.input, ...c.context })), expect: [400, 413] });
    }
    hostileFixtures.forEach((f, i) => {
      cases.push({
        name: `hostile answer: ${f.name}`,
        send: postBody("/validate", JSON.stringify({ request: `A config hostile#${i}`, maxAttempts: 1 })),
        expect: [200, 502],
      });
    });
    // The provider faults are sent all at once (each waits seconds on the graph's retry back-off) and the
    // service must keep answering /healthz while they are in flight, then after they end.
    const faults = FAULTS.map((f, i) => ({
      name: `provider fault: ${f.name}`,
      send: postBody("/validate", JSON.stringify({ request: `A config fault#${i}`, maxAttempts: 1 })),
      expect: [200, 502],
    }));
    const specs: Array<[string, unknown]> = [
      ["$async", { name: "async", schema: { $async: true, type: "object", required: ["never"] } }],
      ["required constructor", { name: "proto", schema: { type: "object", required: ["constructor"] } }],
      ["recursive $ref", { name: "tree", schema: { type: "array", items: { $ref: "#" } } }],
      ["draft 2020-12", { name: "d2020", schema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" } }],
      ["unknown $schema", { name: "dx", schema: { $schema: "https://example.com/nope", type: "object" } }],
      [
        "3,200 patterns",
        {
          name: "many",
          schema: {
            type: "object",
            properties: Object.fromEntries(Array.from({ length: 3200 }, (_, i) => [`p${i}`, { type: "string", pattern: `^a{${i % 50}}b$` }])),
          },
        },
      ],
      ["uniqueItems on an untyped array", { name: "uniq", schema: { type: "array", uniqueItems: true } }],
    ];
    for (const [name, spec] of specs) {
      cases.push({
        name: `hostile spec: ${name}`,
        send: postBody("/validate", JSON.stringify({ request: "A config", spec, maxAttempts: 1 })),
        expect: [200, 400, 413],
      });
    }
    const raw = (name: string, bytes: string, close = true) =>
      cases.push({
        name: `malformed HTTP: ${name}`,
        expect: [0],
        send: () =>
          new Promise<number>((resolve) => {
            const socket = connect({ host: "127.0.0.1", port: Number(new URL(url).port) });
            socket.on("error", () => resolve(0));
            socket.on("close", () => resolve(0));
            socket.write(bytes, () => {
              if (close) setTimeout(() => socket.destroy(), 200);
            });
          }),
      });
    raw(
      "body cut off before its declared length",
      'POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"request": "a',
    );
    raw("garbage instead of HTTP", "\x00\x01\x02 not http at all\r\n\r\n");
    raw("invalid chunked encoding", "POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnope\r\n");
    cases.push({ name: "invalid UTF-8 body", send: postBody("/validate", Buffer.from([0x7b, 0xff, 0xfe, 0x7d]).toString("latin1")), expect: [400] });
    cases.push({ name: "deeply nested body", send: postBody("/validate", "[".repeat(200_000) + "]".repeat(200_000)), expect: [400] });
    cases.push({
      name: "client gone mid-run",
      expect: [0],
      send: async () => {
        await fetch(`${url}/validate`, {
          method: "POST",
          body: JSON.stringify({ request: `A config fault#${FAULTS.findIndex((f) => f.name === "server never answers")}` }),
          signal: AbortSignal.timeout(300),
        }).catch(() => undefined);
        return 0;
      },
    });

    const problems: string[] = [];
    const health = () =>
      fetch(`${url}/healthz`, { signal: AbortSignal.timeout(30_000) }).then(
        (r) => r.status,
        (e: Error) => e.message,
      );
    const send = async (c: (typeof cases)[number]) => {
      const status = await c.send().catch((error: unknown) => `error ${(error as Error).message}`);
      if (!c.expect.includes(status as number)) problems.push(`${c.name}: answered ${status}, expected ${c.expect.join(" or ")}`);
    };
    const exited = () => service.child.exitCode !== null || service.child.signalCode !== null;
    for (const c of cases) {
      await send(c);
      const after = await health();
      if (after !== 200) problems.push(`${c.name}: afterwards GET /healthz gave ${after}`);
      if (exited()) {
        problems.push(`${c.name}: the service exited\n${service.output().slice(-2_000)}`);
        break;
      }
    }
    if (!exited()) {
      let inFlight = true;
      const sent = Promise.all(faults.map(send)).finally(() => (inFlight = false));
      let checks = 0;
      while (inFlight) {
        const during = await health();
        checks++;
        if (during !== 200) problems.push(`while ${faults.length} provider faults were in flight, GET /healthz gave ${during}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await sent;
      expect(checks).toBeGreaterThan(0);
      const after = await health();
      if (after !== 200) problems.push(`after the provider faults GET /healthz gave ${after}`);
      if (exited()) problems.push(`the service exited during the provider faults\n${service.output().slice(-2_000)}`);
    }
    expect(problems).toEqual([]);
    expect(cases.length + faults.length).toBeGreaterThan(100);
    // No request met a failure the service did not foresee (a 500), and none left a stray promise
    // rejection (the service would log it as "unhandled rejection: …" and keep serving).
    expect(service.output()).not.toMatch(/internal error|unhandled rejection/);
  }, 600_000);
});
