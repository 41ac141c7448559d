/**
 * The attack suite of the served API with auth on: Alice and Bob, each with a
 * valid key, and Bob trying every way the server's routes offer to read,
 * change or run as Alice's data, or to change what everyone runs. Each case
 * returns a result instead of throwing, so the same suite runs as a test
 * (tests/server/attacks.int.test.ts) and in the reliability report.
 *
 *   const results = await runAuthAttackSuite();   // starts its own servers
 *   const results = await runAuthAttacks(target); // against a running target
 *
 * The target is a dev server started by startAttackTarget(): auth on with
 * ATTACK_KEYS, and the scripted model below, whose Reflexion actor echoes the
 * prompt it was given, so a run's result shows which memories it saw.
 * Case ids are cited by the README's route table; the route guard
 * (routes.test.ts) checks that each row's cases exist and name its route.
 */
import { request as httpRequest } from "node:http";
import { randomBytes, randomUUID } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";
import { builtinAssistantId } from "../src/server/auth.js";
import { MAX_BODY_BYTES } from "../src/server/http.js";
import { REFLEXION_PROMPT } from "../src/reflexion/prompts.js";
import { builtinSpecs } from "../src/specs/registry.js";
import type { CaseResult } from "./hostile.js";
import { startDevServer, type DevServer } from "../testkit/dev-server.js";
import {
  systemPromptOf as system,
  userTextOf as userText,
  startScriptedOpenAIServer,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedServer,
} from "../testkit/openai-server.js";
import { installedRoutes, type RouteKey } from "./server-routes.js";

export const ATTACK_KEYS = { alice: "alice-key", bob: "bob-key" } as const;

const VALID_CONFIG = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
/** A request the scripted model answers with garbage (not a deployment config). */
const GARBAGE = "garbage please";
/** A request the scripted model answers slowly, to have a run in flight. */
const SLOW = "slowly please";
/** A word only Alice's memories contain. */
const MARKER = "zebra-alice-only";

const taskOf = (prompt: string) => /Task:\n(.*)/.exec(prompt)?.[1] ?? prompt.slice(0, 200);

/** The scripted model of the attack target: one role per system prompt. */
export function attackModelResponder(req: RecordedRequest): ScriptedReply {
  const sys = system(req);
  const prompt = userText(req);
  if (sys.startsWith("You write JSON objects of this kind")) {
    const content = prompt.includes(GARBAGE) ? JSON.stringify({ not: "a deployment config" }) : JSON.stringify(VALID_CONFIG);
    return prompt.includes(SLOW) ? { content, delayMs: 4_000 } : content;
  }
  if (sys === REFLEXION_PROMPT) return `Answer. The prompt I was given: ${prompt}`;
  if (/evaluator/i.test(sys)) return "Accurate but thin.\nFinal score: 7/10";
  if (/reflect/i.test(sys)) return `Lesson from "${taskOf(prompt)}": open with one concrete example.`;
  return `Answer. The prompt I was given: ${prompt}`;
}

export interface AttackTarget {
  url: string;
  stop(): Promise<void>;
}

/** A dev server with auth on (ATTACK_KEYS) and the scripted model. */
export async function startAttackTarget(): Promise<AttackTarget & { server: DevServer; model: ScriptedServer }> {
  const model = await startScriptedOpenAIServer({ responder: attackModelResponder });
  try {
    const server = await startDevServer({
      env: {
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_API_KEY: "test",
        LLM_MAX_RETRIES: "0",
        LANGGRAPH_API_KEYS: `${ATTACK_KEYS.alice}:alice,${ATTACK_KEYS.bob}:bob`,
      },
    });
    return {
      url: server.url,
      server,
      model,
      async stop() {
        await server.stop();
        await model.close();
      },
    };
  } catch (error) {
    await model.close();
    throw error;
  }
}

// ---------------------------------------------------------------------------
// Raw HTTP

interface Reply {
  status: number;
  text: string;
  json: any;
}

type Who = "alice" | "bob" | "nobody";

async function call(url: string, who: Who, method: string, path: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  if (who !== "nobody") headers["x-api-key"] = ATTACK_KEYS[who];
  const res = await fetch(`${url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

/**
 * Bob's oversized request, answered before the body is sent: "declared" announces 20 MiB by its length and sends
 * none of it; "chunked" sends one byte over the limit without a length, then waits. Either way the server has read
 * every byte it was sent when it answers, so it closes the connection cleanly and the answer always arrives.
 */
function oversized(url: string, method: string, path: string, how: "declared" | "chunked"): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { "x-api-key": ATTACK_KEYS.bob, "content-type": "application/json" };
    if (how === "declared") headers["content-length"] = 20 * 1024 * 1024;
    const req = httpRequest(`${url}${path}`, { method, headers, timeout: 60_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        req.destroy();
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, text, json });
      });
    });
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`no answer to ${method} ${path} within 60 s`)));
    if (how === "declared") req.flushHeaders();
    else req.write("x".repeat(MAX_BODY_BYTES + 1));
  });
}

class Breach extends Error {}

function expectStatus(what: string, reply: Reply, ...allowed: number[]): Reply {
  if (!allowed.includes(reply.status)) throw new Breach(`${what}: HTTP ${reply.status} (expected ${allowed.join(" or ")}): ${reply.text.slice(0, 200)}`);
  return reply;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Breach(what);
}

/** A WebSocket upgrade request; resolves with the HTTP status the server answered instead of upgrading (101 if it upgraded). */
function websocketStatus(url: string, path: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, {
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": randomBytes(16).toString("base64"),
        "x-api-key": key,
      },
      timeout: 30_000,
    });
    req.on("upgrade", (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

// ---------------------------------------------------------------------------
// The cases

interface World {
  url: string;
  alice: Client;
  bob: Client;
  validation: string;
  reflexion: string;
  aliceThread: string;
  aliceRun: string;
  aliceAssistant: string;
  bobThread: string;
  aliceItem: { namespace: string[]; key: string };
}

export interface AttackCase {
  id: string;
  /** What Bob (or a caller without a key) tries, and what must hold. */
  title: string;
  /** The routes the case drives (as the route table writes them). */
  routes: RouteKey[];
  run(world: World): Promise<void>;
}

const u = () => randomUUID();

async function allRoutes(): Promise<RouteKey[]> {
  return [...(await installedRoutes()).keys()];
}

/** A route key with its parameters filled in. */
function concrete(route: RouteKey, params: Record<string, string>): { method: string; path: string } {
  const [method, template] = route.split(" ");
  const path = template.replace(/\{(\w+)\??\}/g, (_, name: string) => params[name] ?? u());
  return { method, path };
}

const validationRun = (client: Client, request: string, assistant = "validation") =>
  client.runs.wait(null, assistant, { input: { request }, context: { maxAttempts: 1 } }) as Promise<{ success: boolean; spec: string }>;

const reflexionRun = (client: Client, task: string, configurable: Record<string, unknown> = {}, assistant = "reflexion") =>
  client.runs.wait(null, assistant, { input: { tasks: [task] }, context: { maxLoops: 1 }, config: { configurable } }) as Promise<{ results: string[] }>;

export const ATTACK_CASES: AttackCase[] = [
  {
    id: "no-key",
    title: "every route but GET /ok and GET /info answers 401 without a key, or with an unknown one",
    routes: [], // every installed route: filled in at run time
    async run(w) {
      const open = new Set(["GET /ok", "GET /info"]);
      for (const route of await allRoutes()) {
        const { method, path } = concrete(route, {});
        if (open.has(route)) continue;
        const body = method === "GET" || method === "DELETE" ? undefined : {};
        expectStatus(`${route} without a key`, await call(w.url, "nobody", method, path, body), 401);
        const res = await fetch(`${w.url}${path}`, { method, headers: { "x-api-key": "mallory-key", "content-type": "application/json" }, body: body && "{}" });
        await res.arrayBuffer();
        check(res.status === 401, `${route} with an unknown key: HTTP ${res.status}`);
      }
      const bearer = await fetch(`${w.url}/threads/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${ATTACK_KEYS.bob}`, "content-type": "application/json" },
        body: "{}",
      });
      check(bearer.status === 200, `Authorization: Bearer with a valid key: HTTP ${bearer.status}`);
    },
  },
  {
    id: "open-probes",
    title: "GET /ok and GET /info answer without a key and say nothing about any user",
    routes: ["GET /ok", "GET /info"],
    async run(w) {
      expectStatus("GET /ok", await call(w.url, "nobody", "GET", "/ok"), 200);
      const info = expectStatus("GET /info", await call(w.url, "nobody", "GET", "/info"), 200);
      check(!/alice|bob|thread_id/.test(info.text), `GET /info mentions user data: ${info.text.slice(0, 200)}`);
    },
  },
  {
    id: "builtin-readable",
    title: "every user sees and reads the built-in assistants: search, count, get, graph, schemas, subgraphs, versions",
    routes: [
      "POST /assistants/search",
      "POST /assistants/count",
      "GET /assistants/{assistant_id}",
      "GET /assistants/{assistant_id}/graph",
      "GET /assistants/{assistant_id}/schemas",
      "GET /assistants/{assistant_id}/subgraphs/{namespace?}",
      "POST /assistants/{assistant_id}/versions",
    ],
    async run(w) {
      const listed = (await w.bob.assistants.search({ limit: 100 })).map((a) => a.assistant_id);
      check(listed.includes(w.validation) && listed.includes(w.reflexion), `Bob's search lacks a built-in assistant: ${listed.join(", ")}`);
      const count = expectStatus("count", await call(w.url, "bob", "POST", "/assistants/count", {}), 200);
      check(count.json === 2, `Bob counts ${count.text} assistants, expected the 2 built-in ones`);
      for (const id of [w.validation, w.reflexion, "validation"]) {
        for (const path of [`/assistants/${id}`, `/assistants/${id}/graph`, `/assistants/${id}/schemas`, `/assistants/${id}/subgraphs`]) {
          expectStatus(`Bob GET ${path}`, await call(w.url, "bob", "GET", path), 200);
        }
        expectStatus(`Bob versions of ${id}`, await call(w.url, "bob", "POST", `/assistants/${id}/versions`, {}), 200);
      }
    },
  },
  {
    id: "builtin-read-only",
    title: "no user can change, re-point, roll back, overwrite or delete a built-in assistant; other users' runs keep their spec",
    routes: ["PATCH /assistants/{assistant_id}", "POST /assistants/{assistant_id}/latest", "DELETE /assistants/{assistant_id}", "POST /assistants"],
    async run(w) {
      const before = await w.alice.assistants.get(w.validation);
      const attempts: Array<[string, string, unknown]> = [
        ["PATCH", `/assistants/${w.validation}`, { context: { spec: { name: "deployment-config", schema: {} } } }],
        ["PATCH", `/assistants/validation`, { graph_id: "reflexion" }],
        ["PATCH", `/assistants/${w.validation}`, { config: { configurable: { spec: "anything" } }, metadata: { owner: "bob" } }],
        ["POST", `/assistants/${w.validation}/latest`, { version: 1 }],
        ["DELETE", `/assistants/${w.validation}`, undefined],
        ["DELETE", `/assistants/reflexion`, undefined],
      ];
      for (const [method, path, body] of attempts) {
        const reply = expectStatus(`Bob ${method} ${path}`, await call(w.url, "bob", method, path, body), 403);
        check(/read-only/.test(reply.json?.message ?? ""), `Bob ${method} ${path}: the refusal does not say why: ${reply.text.slice(0, 200)}`);
      }
      for (const if_exists of ["raise", "do_nothing"]) {
        const reply = await call(w.url, "bob", "POST", "/assistants", {
          assistant_id: w.validation,
          graph_id: "validation",
          context: { spec: { name: "x", schema: {} } },
          if_exists,
        });
        expectStatus(`Bob POST /assistants over the built-in id (${if_exists})`, reply, 409);
      }
      const after = await w.alice.assistants.get(w.validation);
      check(JSON.stringify(after) === JSON.stringify(before), "the built-in validation assistant changed");
      const out = await validationRun(w.alice, GARBAGE);
      check(out.success === false && out.spec === "deployment-config", `Alice's default run on garbage: success ${out.success}, spec ${out.spec}`);
    },
  },
  {
    id: "own-assistant",
    title: "a user's assistant is stamped with its owner by the server, listed with the built-in ones, and usable by its owner",
    routes: [
      "POST /assistants",
      "POST /assistants/search",
      "POST /assistants/count",
      "PATCH /assistants/{assistant_id}",
      "POST /assistants/{assistant_id}/latest",
    ],
    async run(w) {
      const mine = await w.alice.assistants.get(w.aliceAssistant);
      check(mine.metadata?.owner === "alice" && !("created_by" in (mine.metadata ?? {})), `Alice's assistant metadata: ${JSON.stringify(mine.metadata)}`);
      const listed = (await w.alice.assistants.search({ limit: 100 })).map((a) => a.assistant_id);
      check(
        [w.aliceAssistant, w.validation, w.reflexion].every((id) => listed.includes(id)),
        `Alice's search: ${listed.join(", ")}`,
      );
      const count = expectStatus("Alice count", await call(w.url, "alice", "POST", "/assistants/count", {}), 200);
      check(count.json === 3, `Alice counts ${count.text}, expected 3`);
      const paged = await w.alice.assistants.search({ limit: 1, offset: 2 });
      check(paged.length === 1, `Alice's third assistant by offset: ${paged.length} results`);
      const patched = expectStatus(
        "Alice PATCH her assistant",
        await call(w.url, "alice", "PATCH", `/assistants/${w.aliceAssistant}`, { metadata: { owner: "bob", note: "x" } }),
        200,
      );
      check(patched.json?.metadata?.owner === "alice", `a metadata patch moved Alice's assistant to ${patched.json?.metadata?.owner}`);
      expectStatus("Alice rolls back her assistant", await call(w.url, "alice", "POST", `/assistants/${w.aliceAssistant}/latest`, { version: 1 }), 200);
      const out = await validationRun(w.alice, "A deployment config", w.aliceAssistant);
      check(out.success === true, "Alice's run on her own assistant did not succeed");
    },
  },
  {
    id: "own-assistant-private",
    title: "another user's assistant is invisible, unchangeable and unusable: not listed or counted, 404 on every route",
    routes: [
      "POST /assistants/search",
      "POST /assistants/count",
      "GET /assistants/{assistant_id}",
      "GET /assistants/{assistant_id}/graph",
      "GET /assistants/{assistant_id}/schemas",
      "GET /assistants/{assistant_id}/subgraphs/{namespace?}",
      "POST /assistants/{assistant_id}/versions",
      "PATCH /assistants/{assistant_id}",
      "POST /assistants/{assistant_id}/latest",
      "DELETE /assistants/{assistant_id}",
      "POST /runs",
      "POST /runs/wait",
      "POST /runs/stream",
      "POST /runs/batch",
      "POST /threads/{thread_id}/runs",
      "POST /threads/{thread_id}/runs/wait",
      "POST /threads/{thread_id}/runs/stream",
    ],
    async run(w) {
      const a = w.aliceAssistant;
      const listed = (await w.bob.assistants.search({ limit: 100, metadata: {} })).map((x) => x.assistant_id);
      check(!listed.includes(a), "Bob's search lists Alice's assistant");
      const byOwner = (await w.bob.assistants.search({ limit: 100, metadata: { owner: "alice" } })).map((x) => x.assistant_id);
      check(byOwner.length === 0, `Bob's search for owner alice: ${byOwner.join(", ")}`);
      const asBuiltin = (await w.bob.assistants.search({ limit: 100, metadata: { created_by: "system" } })).map((x) => x.assistant_id);
      check(!asBuiltin.includes(a), "Bob's search for the built-in mark lists Alice's assistant");
      const count = await call(w.url, "bob", "POST", "/assistants/count", { metadata: { owner: "alice" } });
      check(count.json === 0, `Bob counts ${count.text} of Alice's assistants`);
      for (const [method, path, body] of [
        ["GET", `/assistants/${a}`, undefined],
        ["GET", `/assistants/${a}/graph`, undefined],
        ["GET", `/assistants/${a}/schemas`, undefined],
        ["GET", `/assistants/${a}/subgraphs`, undefined],
        ["POST", `/assistants/${a}/versions`, {}],
        ["PATCH", `/assistants/${a}`, { context: { spec: { name: "x", schema: {} } } }],
        ["POST", `/assistants/${a}/latest`, { version: 1 }],
        ["DELETE", `/assistants/${a}`, undefined],
      ] as Array<[string, string, unknown]>) {
        expectStatus(`Bob ${method} ${path}`, await call(w.url, "bob", method, path, body), 404);
      }
      const run = { assistant_id: a, input: { request: "A deployment config" } };
      for (const [path, body] of [
        ["/runs", run],
        ["/runs/wait", run],
        ["/runs/stream", run],
        ["/runs/batch", [run]],
        [`/threads/${w.bobThread}/runs`, run],
        [`/threads/${w.bobThread}/runs/wait`, run],
        [`/threads/${w.bobThread}/runs/stream`, run],
      ] as Array<[string, unknown]>) {
        expectStatus(`Bob runs Alice's assistant via POST ${path}`, await call(w.url, "bob", "POST", path, body), 404);
      }
      const still = await w.alice.assistants.get(a);
      check(still.metadata?.owner === "alice", "Alice's assistant changed hands");
    },
  },
  {
    id: "internal-refused",
    title: "POST /internal/truncate is refused to every user (403); nobody's threads or memories are wiped",
    routes: ["POST /internal/truncate"],
    async run(w) {
      for (const path of ["/internal/truncate", "/%69nternal/truncate", "/INTERNAL/truncate"]) {
        const reply = await call(w.url, "bob", "POST", path, { threads: true, runs: true, store: true, checkpointer: true });
        if (path === "/INTERNAL/truncate") check(reply.status !== 200, `${path}: HTTP 200`);
        else expectStatus(`Bob POST ${path}`, reply, 403);
      }
      expectStatus("Alice POST /internal/truncate", await call(w.url, "alice", "POST", "/internal/truncate", { threads: true }), 403);
      expectStatus("Alice's thread afterwards", await call(w.url, "alice", "GET", `/threads/${w.aliceThread}`), 200);
      const items = await w.alice.store.searchItems(w.aliceItem.namespace, { limit: 10 });
      check(items.items.length > 0, "Alice's store items are gone");
    },
  },
  {
    id: "protocol-refused",
    title: "the thread-centric protocol routes (commands, SSE events, WebSocket) are refused with 403 for every user",
    routes: ["POST /threads/{thread_id}/commands", "POST /threads/{thread_id}/stream/events", "GET /threads/{thread_id}/stream/events"],
    async run(w) {
      for (const who of ["bob", "alice"] as const) {
        for (const command of [
          { id: 1, method: "state.get" },
          { id: 2, method: "run.start", params: { assistant_id: "reflexion", input: { tasks: ["What did Alice learn?"] } } },
        ]) {
          const reply = expectStatus(
            `${who} ${command.method} on Alice's thread`,
            await call(w.url, who, "POST", `/threads/${w.aliceThread}/commands`, command),
            403,
          );
          check(/protocol routes are not available/.test(reply.json?.message ?? ""), `the refusal does not say why: ${reply.text.slice(0, 200)}`);
        }
        expectStatus(
          `${who} SSE events of Alice's thread`,
          await call(w.url, who, "POST", `/threads/${w.aliceThread}/stream/events`, { channels: ["values"] }),
          403,
        );
        const ws = await websocketStatus(w.url, `/threads/${w.aliceThread}/stream/events`, ATTACK_KEYS[who]);
        check(ws === 403, `${who}'s WebSocket upgrade on Alice's thread: ${ws}`);
        expectStatus(
          `${who} commands, encoded path`,
          await call(w.url, who, "POST", `/threads/${w.aliceThread}/%63ommands`, { id: 1, method: "state.get" }),
          403,
        );
      }
    },
  },
  {
    id: "run-stream-refused",
    title: "GET /runs/{run_id}/stream (no thread to check) is refused with 403, even on another user's run in flight",
    routes: ["GET /runs/{run_id}/stream", "GET /threads/{thread_id}/runs/{run_id}/stream", "POST /threads/{thread_id}/runs/{run_id}/cancel"],
    async run(w) {
      const run = await w.alice.runs.create(w.aliceThread, "validation", { input: { request: `A deployment config, ${SLOW}` }, context: { maxAttempts: 1 } });
      try {
        const reply = expectStatus("Bob GET /runs/{Alice's run}/stream", await call(w.url, "bob", "GET", `/runs/${run.run_id}/stream`), 403);
        check(/joinStream/.test(reply.json?.message ?? ""), `the refusal does not name the alternative: ${reply.text.slice(0, 200)}`);
        expectStatus("Bob streams Alice's run by thread", await call(w.url, "bob", "GET", `/threads/${w.aliceThread}/runs/${run.run_id}/stream`), 404);
        expectStatus("Bob cancels Alice's run", await call(w.url, "bob", "POST", `/threads/${w.aliceThread}/runs/${run.run_id}/cancel`), 404);
        expectStatus("Alice GET /runs/{run}/stream", await call(w.url, "alice", "GET", `/runs/${run.run_id}/stream`), 403);
      } finally {
        await w.alice.runs.join(w.aliceThread, run.run_id);
      }
      const done = await w.alice.runs.get(w.aliceThread, run.run_id);
      check(done.status === "success", `Alice's run ended ${done.status}`);
    },
  },
  {
    id: "threads-private",
    title: "another user's thread is not found on every thread route, and never listed or counted",
    routes: [
      "GET /threads/{thread_id}",
      "PATCH /threads/{thread_id}",
      "DELETE /threads/{thread_id}",
      "GET /threads/{thread_id}/state",
      "POST /threads/{thread_id}/state",
      "GET /threads/{thread_id}/state/{checkpoint_id}",
      "POST /threads/{thread_id}/state/checkpoint",
      "GET /threads/{thread_id}/history",
      "POST /threads/{thread_id}/history",
      "POST /threads/{thread_id}/copy",
      "POST /threads/search",
      "POST /threads/count",
      "POST /threads",
    ],
    async run(w) {
      const t = w.aliceThread;
      const state = (await w.alice.threads.getState(t)) as { checkpoint?: { checkpoint_id?: string } };
      const checkpoint = state.checkpoint?.checkpoint_id ?? u();
      for (const [method, path, body, allowed] of [
        ["GET", `/threads/${t}`, undefined, [404]],
        ["PATCH", `/threads/${t}`, { metadata: { owner: "bob" } }, [404]],
        ["GET", `/threads/${t}/state`, undefined, [404]],
        ["POST", `/threads/${t}/state`, { values: { request: GARBAGE } }, [403, 404]],
        ["GET", `/threads/${t}/state/${checkpoint}`, undefined, [404]],
        ["POST", `/threads/${t}/state/checkpoint`, { checkpoint: { checkpoint_id: checkpoint } }, [404]],
        ["GET", `/threads/${t}/history`, undefined, [404]],
        ["POST", `/threads/${t}/history`, { limit: 10 }, [404]],
        ["POST", `/threads/${t}/copy`, undefined, [404, 409]],
        ["DELETE", `/threads/${t}`, undefined, [404]],
        ["POST", `/threads`, { thread_id: t, if_exists: "do_nothing" }, [409]],
        ["POST", `/threads`, { thread_id: t }, [409]],
      ] as Array<[string, string, unknown, number[]]>) {
        expectStatus(`Bob ${method} ${path}`, await call(w.url, "bob", method, path, body), ...allowed);
      }
      const found = await call(w.url, "bob", "POST", "/threads/search", { limit: 1000, metadata: { owner: "alice" } });
      check(Array.isArray(found.json) && found.json.length === 0, `Bob's thread search for owner alice: ${found.text.slice(0, 200)}`);
      const all = (await w.bob.threads.search({ limit: 1000 })).map((x) => x.thread_id);
      check(!all.includes(t), "Bob's thread search lists Alice's thread");
      const count = await call(w.url, "bob", "POST", "/threads/count", { metadata: { owner: "alice" } });
      check(count.json === 0, `Bob counts ${count.text} of Alice's threads`);
      const stamped = await w.bob.threads.create({ metadata: { owner: "alice" } });
      check(stamped.metadata?.owner === "bob", `Bob's new thread is owned by ${stamped.metadata?.owner}`);
      const after = await w.alice.threads.get(t);
      check(after.metadata?.owner === "alice", "Alice's thread changed hands");
      const out = (await w.alice.threads.getState(t)) as { values?: { request?: string } };
      check(out.values?.request !== GARBAGE, "Bob changed Alice's thread state");
    },
  },
  {
    id: "thread-runs-private",
    title: "another user's runs are not found: list, get, join, stream, cancel, delete, and no run can start on the thread",
    routes: [
      "GET /threads/{thread_id}/runs",
      "GET /threads/{thread_id}/runs/{run_id}",
      "GET /threads/{thread_id}/runs/{run_id}/join",
      "GET /threads/{thread_id}/runs/{run_id}/stream",
      "POST /threads/{thread_id}/runs/{run_id}/cancel",
      "DELETE /threads/{thread_id}/runs/{run_id}",
      "POST /threads/{thread_id}/runs",
      "POST /threads/{thread_id}/runs/wait",
      "POST /threads/{thread_id}/runs/stream",
    ],
    async run(w) {
      const [t, r] = [w.aliceThread, w.aliceRun];
      for (const [method, path, body] of [
        ["GET", `/threads/${t}/runs`, undefined],
        ["GET", `/threads/${t}/runs/${r}`, undefined],
        ["GET", `/threads/${t}/runs/${r}/join`, undefined],
        ["GET", `/threads/${t}/runs/${r}/stream`, undefined],
        ["POST", `/threads/${t}/runs/${r}/cancel`, undefined],
        ["DELETE", `/threads/${t}/runs/${r}`, undefined],
        ["POST", `/threads/${t}/runs`, { assistant_id: "validation", input: { request: GARBAGE } }],
        ["POST", `/threads/${t}/runs/wait`, { assistant_id: "reflexion", input: { tasks: ["What did Alice learn?"] } }],
        ["POST", `/threads/${t}/runs/stream`, { assistant_id: "validation", input: { request: GARBAGE } }],
      ] as Array<[string, string, unknown]>) {
        const reply = await call(w.url, "bob", method, path, body);
        // A streamed answer has already sent 200 when the run is refused: its only event must be the 404.
        if (reply.status === 200 && /stream$/.test(path))
          check(/404|not found/i.test(reply.text) && !/"values"|success/.test(reply.text), `Bob ${method} ${path}: ${reply.text.slice(0, 200)}`);
        else expectStatus(`Bob ${method} ${path}`, reply, 404);
      }
      expectStatus("Alice's run afterwards", await call(w.url, "alice", "GET", `/threads/${t}/runs/${r}`), 200);
      const runs = await w.alice.runs.list(t);
      check(
        runs.every((x) => x.metadata?.owner === "alice"),
        "a run on Alice's thread is not Alice's",
      );
    },
  },
  {
    id: "unknown-run-ids",
    title: "streaming or joining a run id that does not exist answers 404 at once and allocates nothing",
    routes: ["GET /threads/{thread_id}/runs/{run_id}/stream", "GET /threads/{thread_id}/runs/{run_id}/join", "POST /threads/{thread_id}/runs/{run_id}/cancel"],
    async run(w) {
      for (const [method, suffix] of [
        ["GET", "stream"],
        ["GET", "join"],
        ["POST", "cancel"],
      ]) {
        expectStatus(`Bob ${suffix} of a new run id on his thread`, await call(w.url, "bob", method, `/threads/${w.bobThread}/runs/${u()}/${suffix}`), 404);
        expectStatus(`Bob ${suffix} on a new thread id`, await call(w.url, "bob", method, `/threads/${u()}/runs/${u()}/${suffix}`), 404);
      }
    },
  },
  {
    id: "store-private",
    title: "the store reaches only the caller's own namespaces [purpose, user, …]: reading, listing, writing, deleting others' is 403",
    routes: ["GET /store/items", "PUT /store/items", "DELETE /store/items", "POST /store/items/search", "POST /store/namespaces"],
    async run(w) {
      const { namespace, key } = w.aliceItem;
      const q = (ns: string[]) => encodeURIComponent(ns.join("."));
      for (const [method, path, body] of [
        ["GET", `/store/items?namespace=${q(namespace)}&key=${encodeURIComponent(key)}`, undefined],
        ["PUT", "/store/items", { namespace, key: "planted", value: { reflection: `${MARKER} planted by bob` } }],
        ["DELETE", "/store/items", { namespace, key }],
        ["POST", "/store/items/search", { namespace_prefix: ["reflexion", "alice"] }],
        ["POST", "/store/items/search", { namespace_prefix: ["reflexion"] }],
        ["POST", "/store/items/search", { namespace_prefix: [] }],
        ["POST", "/store/namespaces", { prefix: ["reflexion"] }],
        ["POST", "/store/namespaces", {}],
      ] as Array<[string, string, unknown]>) {
        expectStatus(`Bob ${method} ${path}`, await call(w.url, "bob", method, path, body), 403);
      }
      await w.bob.store.putItem(["notes", "bob"], "k", { text: "mine" });
      const own = await w.bob.store.getItem(["notes", "bob"], "k");
      check((own?.value as { text?: string } | undefined)?.text === "mine", "Bob cannot use his own namespace");
      const aliceStill = await w.alice.store.getItem(namespace, key);
      check(aliceStill !== null, "Alice's item is gone");
    },
  },
  {
    id: "memory-follows-identity",
    title: "a run reads and writes only its caller's Reflexion memory, whatever the run, thread or assistant configuration says",
    routes: ["POST /runs/wait", "POST /threads/{thread_id}/runs/wait", "POST /assistants"],
    async run(w) {
      const forged = { memoryOwner: "alice", langgraph_auth_user: { identity: "alice" }, langgraph_auth_user_id: "alice", user_id: "alice" };
      const seen: string[] = [];
      seen.push(...(await reflexionRun(w.bob, "Explain recursion simply", forged)).results);
      seen.push(
        ...(
          (await w.bob.runs.wait(w.bobThread, "reflexion", {
            input: { tasks: ["Explain recursion again"] },
            context: { maxLoops: 1 },
            config: { configurable: forged },
          })) as { results: string[] }
        ).results,
      );
      const bobAssistant = await w.bob.assistants.create({ graphId: "reflexion", config: { configurable: forged }, metadata: { owner: "alice" } });
      check(bobAssistant.metadata?.owner === "bob", `Bob's assistant is owned by ${bobAssistant.metadata?.owner}`);
      seen.push(...(await reflexionRun(w.bob, "Explain recursion once more", {}, bobAssistant.assistant_id)).results);
      for (const text of seen) check(!text.includes(MARKER), `a run of Bob's saw Alice's memory: ${text.slice(0, 200)}`);
      const bobItems = (await w.bob.store.searchItems(["reflexion", "bob"], { limit: 100 })).items;
      check(bobItems.length > 0 && bobItems.every((i) => i.namespace[1] === "bob"), "Bob's memories are not in his namespace");
      const aliceItems = (await w.alice.store.searchItems(["reflexion", "alice"], { limit: 100 })).items;
      check(!JSON.stringify(aliceItems).includes("Explain recursion once more"), "Bob's run wrote into Alice's memory");
      // Alice's own next run does see her memory: memory works with auth on.
      const again = await reflexionRun(w.alice, "Explain recursion with an example");
      check(again.results[0].includes(MARKER), "Alice's run did not see her own memory");
    },
  },
  {
    id: "crons-refused",
    title: "the cron routes (not implemented by this server) are refused with 403",
    routes: ["POST /runs/crons", "POST /runs/crons/search", "DELETE /runs/crons/{cron_id}", "POST /threads/{thread_id}/runs/crons"],
    async run(w) {
      for (const [method, path] of [
        ["POST", "/runs/crons"],
        ["POST", "/runs/crons/search"],
        ["DELETE", `/runs/crons/${u()}`],
        ["POST", `/threads/${w.bobThread}/runs/crons`],
      ]) {
        expectStatus(
          `Bob ${method} ${path}`,
          await call(w.url, "bob", method, path, method === "POST" ? { assistant_id: "validation", schedule: "* * * * *" } : undefined),
          403,
        );
      }
    },
  },
  {
    id: "body-limit",
    title: `a body over ${MAX_BODY_BYTES} bytes is answered 413 before any route reads it (declared by its length, or chunked), and the server keeps serving`,
    routes: ["POST /threads/search", "POST /runs/wait", "PUT /store/items"],
    async run(w) {
      // A raw client that reads the answer before sending more: what it gets does not depend on how fast the machine
      // is. (A client that keeps uploading past the answer may instead see the connection closed: the server drains
      // an unread body for 500 ms, then closes it, which is how @hono/node-server ends such a request.)
      for (const [method, path] of [
        ["POST", "/threads/search"],
        ["POST", "/runs/wait"],
        ["PUT", "/store/items"],
      ]) {
        const declared = await oversized(w.url, method, path, "declared");
        expectStatus(`Bob ${method} ${path} declaring ${20 * 1024 * 1024} bytes`, declared, 413);
        check(/larger than/.test(declared.json?.message ?? ""), `the 413 does not say why: ${declared.text.slice(0, 200)}`);
      }
      const chunked = await oversized(w.url, "POST", "/threads/search", "chunked");
      expectStatus(`Bob POST /threads/search chunked, ${MAX_BODY_BYTES + 1} bytes`, chunked, 413);
      expectStatus("the server afterwards", await call(w.url, "bob", "POST", "/threads/search", {}), 200);
    },
  },
];

async function setUp(url: string): Promise<World> {
  const alice = new Client({ apiUrl: url, apiKey: ATTACK_KEYS.alice });
  const bob = new Client({ apiUrl: url, apiKey: ATTACK_KEYS.bob });
  const aliceThread = (await alice.threads.create()).thread_id;
  const run = await alice.runs.create(aliceThread, "validation", { input: { request: "A deployment config for payments-api" }, context: { maxAttempts: 1 } });
  await alice.runs.join(aliceThread, run.run_id);
  const aliceAssistant = (
    await alice.assistants.create({ graphId: "validation", context: { maxAttempts: 2 }, metadata: { owner: "bob", created_by: "system" } })
  ).assistant_id;
  await reflexionRun(alice, `Explain recursion ${MARKER}`);
  const items = (await alice.store.searchItems(["reflexion", "alice"], { limit: 100 })).items;
  const item = items.find((i) => JSON.stringify(i.value).includes(MARKER));
  if (!item) throw new Error(`setting up: Alice's Reflexion run stored no memory with the marker (${items.length} items)`);
  const bobThread = (await bob.threads.create()).thread_id;
  return {
    url,
    alice,
    bob,
    validation: builtinAssistantId("validation"),
    reflexion: builtinAssistantId("reflexion"),
    aliceThread,
    aliceRun: run.run_id,
    aliceAssistant,
    bobThread,
    aliceItem: { namespace: item.namespace, key: item.key },
  };
}

/** Every case against a running attack target; one result per case, never throws for a breach. */
export async function runAuthAttacks(url: string): Promise<CaseResult[]> {
  const world = await setUp(url);
  const results: CaseResult[] = [];
  for (const c of ATTACK_CASES) {
    try {
      await c.run(world);
      results.push({ name: `${c.id}: ${c.title}`, held: true, detail: "held" });
    } catch (error) {
      const detail = error instanceof Breach ? error.message : `error: ${(error as Error)?.message ?? String(error)}`;
      results.push({ name: `${c.id}: ${c.title}`, held: false, detail: detail.slice(0, 500) });
    }
  }
  return results;
}

/** Starts an attack target, runs every case, stops the target. */
export async function runAuthAttackSuite(): Promise<CaseResult[]> {
  const target = await startAttackTarget();
  try {
    return await runAuthAttacks(target.url);
  } finally {
    await target.stop();
  }
}
