/**
 * The rule that the verdict cannot be written (src/server/state-writes.ts), as
 * plain functions, and its place in the HTTP app (with the server's loopback
 * replaced by an in-process fake, so no server runs here).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createHttpApp } from "../../src/server/http.js";
import {
  commandRefusal,
  graphChangeRefusal,
  INPUT_NODE,
  pendingRefusal,
  protocolCommandRefusal,
  runBodyRefusal,
  stateWriteRefusal,
  superstepsRefusal,
  WRITABLE,
} from "../../src/server/state-writes.js";

const REQUEST = "A deployment config for payments-api with 8 replicas";
/** The fields the finding names: every one of them alone forges the outcome when written. */
const OUTCOME_FIELDS = ["success", "value", "run", "history", "errors", "stopReason", "attempts", "usage", "spec"];

describe("which fields a state write may set", () => {
  it("validation: only request is writable; every outcome and record field is protected", () => {
    expect(WRITABLE.validation.writable).toEqual(["request"]);
    // Every field the state defines but the input, whatever fields are added later (they are read from the schema).
    expect([...WRITABLE.validation.protected].sort()).toEqual([...OUTCOME_FIELDS, "draft", "refusal", "usageByModel"].sort());
    expect(WRITABLE.reflexion.writable).toEqual(["tasks"]);
    expect(WRITABLE.reflexion.protected).toEqual(expect.arrayContaining(["results", "outcomes", "steps", "usage"]));
  });

  it("the forging write is refused with 403, naming the fields, the validator and how to resume", () => {
    const refusal = stateWriteRefusal("validation", { values: { success: true, value: { forged: true } }, as_node: "review" });
    expect(refusal?.status).toBe(403);
    expect(refusal?.body.error).toBe("Forbidden");
    expect(refusal?.body.message).toMatch(/^Not writable: "success", "value" \(the run's outcome and records\)/);
    expect(refusal?.body.message).toMatch(/only "request"/);
    expect(refusal?.body.message).toMatch(/validator/);
    expect(refusal?.body.message).toMatch(/Command\(\{ resume \}\)/);
  });

  it.each(OUTCOME_FIELDS)("writing %s alone is refused, whatever node it is written as", (field) => {
    for (const as_node of ["review", "validate", INPUT_NODE, undefined]) {
      const refusal = stateWriteRefusal("validation", { values: { [field]: true }, as_node });
      expect(refusal?.status).toBe(403);
      expect(refusal?.body.message).toContain(`Not writable: "${field}"`);
    }
  });

  it("an outcome field beside request is refused too, and unknown fields are named as such", () => {
    const refusal = stateWriteRefusal("validation", { values: { request: REQUEST, success: true, nope: 1 }, as_node: INPUT_NODE });
    expect(refusal?.status).toBe(403);
    expect(refusal?.body.message).toMatch(/Not writable: "success" \(the run's outcome and records\); "nope" \(not fields of the graph's state\)/);
  });

  it("request written as the input is accepted", () => {
    expect(stateWriteRefusal("validation", { values: { request: REQUEST }, as_node: INPUT_NODE })).toBeUndefined();
  });

  it("request written as any other node, or with no node, is refused: it would sit beside the last run's outcome", () => {
    for (const as_node of ["review", "generate", "__input__", undefined]) {
      const refusal = stateWriteRefusal("validation", { values: { request: REQUEST }, as_node });
      expect(refusal?.status).toBe(403);
      expect(refusal?.body.message).toMatch(/only as the input \(as_node "__start__"\)/);
    }
  });

  it("a write that sets nothing is refused: written as a node it would move the run past that node", () => {
    for (const values of [null, undefined, {}, [], [{ request: REQUEST }], "text"]) {
      const refusal = stateWriteRefusal("validation", { values, as_node: "review" });
      expect(refusal?.status).toBe(403);
    }
    expect(stateWriteRefusal("validation", { values: [{ request: REQUEST }], as_node: INPUT_NODE })?.body.message).toMatch(/not a list/);
  });

  it("a write at an earlier checkpoint is refused", () => {
    const write = { values: { request: REQUEST }, as_node: INPUT_NODE };
    expect(stateWriteRefusal("validation", { ...write, checkpoint_id: "1f0" })?.body.message).toMatch(/latest state only/);
    expect(stateWriteRefusal("validation", { ...write, checkpoint: { checkpoint_id: "1f0" } })?.status).toBe(403);
    expect(stateWriteRefusal("validation", { ...write, checkpoint: null })).toBeUndefined();
  });

  it("a bad request is refused with 422 and the graph's own message", () => {
    expect(stateWriteRefusal("validation", { values: { request: "  " }, as_node: INPUT_NODE })).toEqual({
      status: 422,
      body: { error: "UnprocessableEntity", message: "request is empty; say what to generate." },
    });
    expect(stateWriteRefusal("validation", { values: { request: 7 }, as_node: INPUT_NODE })?.body.message).toBe("request must be a string; got number.");
  });

  it("reflexion: its results and outcomes are protected; tasks written as the input are accepted", () => {
    const forged = stateWriteRefusal("reflexion", { values: { results: ["forged"], outcomes: [] }, as_node: "each_task" });
    expect(forged?.status).toBe(403);
    expect(forged?.body.message).toMatch(/Not writable: "outcomes", "results"/);
    expect(forged?.body.message).toMatch(/only "tasks"/);
    expect(stateWriteRefusal("reflexion", { values: { tasks: ["Explain recursion"] }, as_node: INPUT_NODE })).toBeUndefined();
    expect(stateWriteRefusal("reflexion", { values: { tasks: "Explain recursion" }, as_node: INPUT_NODE })?.status).toBe(422);
  });

  it("a thread of no graph, or of a graph with no rule, accepts no write (the default is closed)", () => {
    for (const graph of [undefined, null, "other", "constructor", "__proto__", 7]) {
      const refusal = stateWriteRefusal(graph, { values: { request: REQUEST }, as_node: INPUT_NODE });
      expect(refusal?.status).toBe(403);
    }
    expect(stateWriteRefusal(undefined, {})?.body.message).toMatch(/no graph_id/);
  });
});

describe("a thread with something pending accepts no write", () => {
  it("paused for review: 409, saying to resume with Command({ resume })", () => {
    const refusal = pendingRefusal("validation", { next: ["review"], tasks: [{ name: "review", interrupts: [{ value: {} }] }] });
    expect(refusal?.status).toBe(409);
    expect(refusal?.body.error).toBe("Conflict");
    expect(refusal?.body.message).toMatch(/paused for review/);
    expect(refusal?.body.message).toMatch(/Command\(\{ resume \}\)/);
  });

  it("a run not finished (a pending input, an error mid-run) is refused; an ended run is not", () => {
    expect(pendingRefusal("validation", { next: ["generate"], tasks: [] })?.body.message).toMatch(/not finished \(next: "generate"\)/);
    expect(pendingRefusal("validation", { next: [], tasks: [{ interrupts: [{}] }] })?.status).toBe(409);
    expect(pendingRefusal("validation", { next: [], tasks: [] })).toBeUndefined();
    expect(pendingRefusal("validation", {})).toBeUndefined();
  });
});

describe("a run's command may carry only resume", () => {
  it("update and goto are refused, in every form", () => {
    for (const command of [
      { update: { success: true } },
      { resume: { type: "reject" }, update: { success: true, value: 1 } },
      { update: [["success", true]] },
      { goto: "validate" },
      { goto: { node: "validate", input: { draft: { output: "{}" } } } },
      { goto: ["generate"] },
    ]) {
      const refusal = commandRefusal(command);
      expect(refusal?.status).toBe(403);
      expect(refusal?.body.message).toMatch(/only "resume"/);
    }
    expect(commandRefusal({ goto: "validate", update: { success: true } })?.body.message).toMatch(/not "command.update" or "command.goto"/);
  });

  it("a resume alone, or empty update/goto, is accepted", () => {
    for (const command of [
      { resume: { type: "edit", value: {} } },
      { resume: { type: "reject" }, update: {}, goto: [] },
      { resume: null, update: null },
      undefined,
      null,
    ]) {
      expect(commandRefusal(command)).toBeUndefined();
    }
  });

  it("a batch is refused when any of its runs carries a write", () => {
    const ok = { assistant_id: "validation", input: { request: REQUEST } };
    expect(runBodyRefusal([ok, ok])).toBeUndefined();
    expect(runBodyRefusal([ok, { ...ok, command: { update: { success: true } } }])?.status).toBe(403);
    expect(runBodyRefusal({ ...ok, command: { resume: { type: "edit", value: {} } } })).toBeUndefined();
  });

  it("the protocol's input.respond may not carry update or goto; run.start and plain responses pass", () => {
    expect(protocolCommandRefusal({ id: 1, method: "input.respond", params: { interrupt_id: "i", response: {}, update: { success: true } } })?.status).toBe(
      403,
    );
    expect(protocolCommandRefusal({ id: 1, method: "input.respond", params: { interrupt_id: "i", response: {}, goto: "validate" } })?.status).toBe(403);
    expect(protocolCommandRefusal({ id: 1, method: "input.respond", params: { interrupt_id: "i", response: { type: "reject" } } })).toBeUndefined();
    expect(protocolCommandRefusal({ id: 1, method: "run.start", params: { assistant_id: "validation", input: { request: REQUEST } } })).toBeUndefined();
  });
});

describe("a new thread's supersteps, and its graph", () => {
  const create = (updates: unknown[], extra: Record<string, unknown> = {}) => ({ metadata: { graph_id: "validation" }, supersteps: [{ updates }], ...extra });

  it("the forging superstep is refused; the input alone is accepted; no supersteps: nothing to check", () => {
    expect(superstepsRefusal(create([{ values: { success: true, value: 1 }, as_node: "review" }]))?.status).toBe(403);
    expect(superstepsRefusal(create([{ values: { request: REQUEST }, as_node: INPUT_NODE }]))).toBeUndefined();
    expect(superstepsRefusal({ metadata: { graph_id: "validation" } })).toBeUndefined();
    expect(superstepsRefusal({ supersteps: [] })).toBeUndefined();
  });

  it("more than one update, a command, a possibly existing thread, or no graph: refused", () => {
    const input = { values: { request: REQUEST }, as_node: INPUT_NODE };
    expect(superstepsRefusal(create([input, input]))?.body.message).toMatch(/one update only/);
    expect(superstepsRefusal({ metadata: { graph_id: "validation" }, supersteps: [{ updates: [input] }, { updates: [input] }] })?.status).toBe(403);
    expect(superstepsRefusal(create([{ ...input, command: { update: { success: true } } }]))?.body.message).toMatch(/may not carry a command/);
    expect(superstepsRefusal(create([input], { if_exists: "do_nothing" }))?.body.message).toMatch(/do_nothing/);
    expect(superstepsRefusal({ supersteps: [{ updates: [input] }] })?.body.message).toMatch(/no graph_id/);
  });

  it("a thread's graph_id cannot be patched to another graph", () => {
    expect(graphChangeRefusal("validation", { metadata: { graph_id: "reflexion" } })?.status).toBe(403);
    expect(graphChangeRefusal(undefined, { metadata: { graph_id: "validation" } })?.status).toBe(403);
    expect(graphChangeRefusal("validation", { metadata: { graph_id: "validation", note: "x" } })).toBeUndefined();
    expect(graphChangeRefusal("validation", { metadata: { note: "x" } })).toBeUndefined();
  });
});

describe("the HTTP app applies the rule before the server's routes", () => {
  const LOOPBACK = Symbol.for("langgraph_api:fetch");
  const globals = globalThis as Record<symbol, unknown>;
  const saved = globals[LOOPBACK];
  afterEach(() => {
    if (saved === undefined) delete globals[LOOPBACK];
    else globals[LOOPBACK] = saved;
  });

  const THREAD = "0195f0a0-0000-7000-8000-000000000001";
  /** The server, as the loopback sees it: one validation thread, in the given state. */
  function fakeServer(state: { next: string[]; tasks: unknown[] }) {
    const asked: string[] = [];
    globals[LOOPBACK] = async (path: string) => {
      asked.push(path);
      if (path === `/threads/${THREAD}`) return Response.json({ thread_id: THREAD, metadata: { graph_id: "validation" } });
      if (path === `/threads/${THREAD}/state`) return Response.json(state);
      return Response.json({ error: "NotFound", message: "no such thread" }, { status: 404 });
    };
    return asked;
  }
  const idle = { next: [], tasks: [] };
  const paused = { next: ["review"], tasks: [{ interrupts: [{ value: {} }] }] };

  /** A request to the app; 404 "404 Not Found" from Hono means it was passed on to the server's routes. */
  async function send(method: string, path: string, body: unknown, auth = false) {
    const res = await createHttpApp({ auth }).request(path, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, passed: res.status === 404 && text === "404 Not Found", json: text.startsWith("{") ? JSON.parse(text) : undefined };
  }

  it.each([false, true])("auth %s: the forging write is refused; request as the input passes on an idle thread, not on a paused one", async (auth) => {
    fakeServer(paused);
    const forged = await send("POST", `/threads/${THREAD}/state`, { values: { success: true, value: 1 }, as_node: "review" }, auth);
    expect(forged.status).toBe(403);
    expect(forged.json.message).toMatch(/Not writable: "success", "value"/);
    const onPaused = await send("POST", `/threads/${THREAD}/state`, { values: { request: REQUEST }, as_node: INPUT_NODE }, auth);
    expect(onPaused.status).toBe(409);
    fakeServer(idle);
    expect((await send("POST", `/threads/${THREAD}/state`, { values: { request: REQUEST }, as_node: INPUT_NODE }, auth)).passed).toBe(true);
  });

  it("an unknown thread is the server's answer (404), before any rule is told", async () => {
    fakeServer(idle);
    const other = "0195f0a0-0000-7000-8000-000000000002";
    const res = await send("POST", `/threads/${other}/state`, { values: { success: true }, as_node: "review" });
    expect(res.status).toBe(404);
    expect(res.json.message).toBe("no such thread");
  });

  it("run routes, supersteps, graph_id patches and protocol commands are checked; the protocol WebSocket is refused", async () => {
    const asked = fakeServer(idle);
    const update = { assistant_id: "validation", command: { resume: { type: "reject" }, update: { success: true } } };
    for (const path of ["/runs", "/runs/wait", "/runs/stream", `/threads/${THREAD}/runs`, `/threads/${THREAD}/runs/wait`, `/threads/${THREAD}/runs/stream`]) {
      expect((await send("POST", path, update)).status, path).toBe(403);
    }
    expect((await send("POST", "/runs/batch", [update])).status).toBe(403);
    expect(
      (await send("POST", "/threads", { metadata: { graph_id: "validation" }, supersteps: [{ updates: [{ values: { success: true }, as_node: "review" }] }] }))
        .status,
    ).toBe(403);
    expect((await send("PATCH", `/threads/${THREAD}`, { metadata: { graph_id: "reflexion" } })).status).toBe(403);
    expect(
      (
        await send("POST", `/threads/${THREAD}/commands`, {
          id: 1,
          method: "input.respond",
          params: { interrupt_id: "i", response: {}, update: { success: true } },
        })
      ).status,
    ).toBe(403);
    const ws = await createHttpApp({ auth: false }).request(`/threads/${THREAD}/stream/events`);
    expect(ws.status).toBe(403);
    expect(((await ws.json()) as { message: string }).message).toMatch(/SSE transport/);
    expect(asked).toEqual([`/threads/${THREAD}`]); // only the patch needed the thread's graph

    // What the rule allows is passed on untouched.
    expect((await send("POST", "/runs/wait", { assistant_id: "validation", input: { request: REQUEST } })).passed).toBe(true);
    expect((await send("POST", `/threads/${THREAD}/runs/wait`, { assistant_id: "validation", command: { resume: { type: "edit", value: {} } } })).passed).toBe(
      true,
    );
    expect((await send("PATCH", `/threads/${THREAD}`, { metadata: { note: "x" } })).passed).toBe(true);
    expect((await send("POST", "/threads", { metadata: { graph_id: "validation" } })).passed).toBe(true);
  });
});
