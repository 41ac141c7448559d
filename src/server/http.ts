/**
 * The LangGraph server's custom HTTP app (langgraph.json `http.app`). The
 * server mounts it after authentication and before its own routes, so each
 * handler here either answers a request itself or passes it on (`next()`).
 *
 * Always:
 *   - a body over MAX_BODY_BYTES is answered 413 before any route reads it,
 *     and every part of a JSON body (input, context, config, metadata,
 *     command, a store value, …) is held to its size and depth
 *     (./request-bounds.ts: 413 or 422, naming the field and the limit);
 *   - streaming or joining a run (`/threads/{id}/runs/{id}/stream|join|cancel`)
 *     first checks that the run exists and is the caller's, because the
 *     server allocates a stream queue for any run id it is asked about and
 *     never frees it.
 *   - the verdict cannot be written (./state-writes.ts, docs/verdict.md): a
 *     state write (`POST /threads/{id}/state`, a new thread's `supersteps`)
 *     may set only the graph's input field, as the input, on an idle thread;
 *     a run's `command` (and a protocol `input.respond`) may carry only a
 *     resume; a thread's `graph_id` cannot be patched; the protocol
 *     WebSocket (whose commands cannot be checked) is refused;
 *   - a run's error reaches a waiting client as it was thrown (./wait-errors.ts).
 * With auth on (LANGGRAPH_API_KEYS), in addition:
 *   - the routes the auth handlers cannot scope to their owner are refused
 *     with 403: the thread-centric protocol routes (`/threads/{id}/commands`,
 *     `/threads/{id}/stream/events`, their WebSocket), `GET /runs/{id}/stream`
 *     (no thread to check), and the cron routes (not implemented here);
 *   - an assistant search or count lists the built-in assistants and the
 *     caller's own, merged (the auth filter can express only one of the two);
 *   - a run may use a built-in assistant or one of the caller's own only.
 * Access rules themselves live in ./auth.ts; the README's route table lists
 * the rule of every route.
 */
import { Hono, type Context, type Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { authEnabled, BUILTIN_ASSISTANTS, BUILTIN_MARK, OWNER_KEY } from "./auth.js";
import {
  graphChangeRefusal,
  pendingRefusal,
  protocolCommandRefusal,
  runBodyRefusal,
  stateWriteRefusal,
  superstepsRefusal,
  type Refusal,
} from "./state-writes.js";
import { requestBoundsRefusal } from "./request-bounds.js";
import { repairWaitBody } from "./wait-errors.js";

/** The largest request body the server accepts (10 MiB); larger ones get 413. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

type Json = Record<string, unknown>;
type Loopback = (path: string, init?: RequestInit) => Promise<Response>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The server's in-process fetch (`app.request`), which it binds for custom
 * routes. Requests through it pass the server's authentication and auth
 * handlers like any other, with the caller's credentials forwarded. Missing
 * (another server version): refuse rather than skip the check.
 */
function loopback(): Loopback {
  const fetchImpl = (globalThis as Record<symbol, unknown>)[Symbol.for("langgraph_api:fetch")];
  if (typeof fetchImpl !== "function")
    throw new Error("The LangGraph server's loopback fetch is not bound; this server version is not supported by src/server/http.ts.");
  return fetchImpl as Loopback;
}

/** The caller's credentials, for a loopback request made on the caller's behalf. */
function credentials(c: Context): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  for (const name of ["x-api-key", "authorization"]) {
    const value = c.req.header(name);
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/** Each request's body as parsed at the door, so that the checks here parse it once. */
const parsedBodies = new WeakMap<Request, unknown>();

/**
 * The request body as JSON, or undefined when it is not JSON (the route's own
 * validator then answers). A body over MAX_BODY_BYTES fails the read, and the
 * body limit answers 413.
 */
async function jsonBody(c: Context): Promise<unknown> {
  if (!parsedBodies.has(c.req.raw)) {
    const text = await c.req.text();
    let value: unknown;
    try {
      // Not recursive in V8: a body nested as deep as its size allows parses, and the bounds below refuse it.
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    parsedBodies.set(c.req.raw, value);
  }
  return parsedBodies.get(c.req.raw);
}

const identityOf = (c: Context): string | undefined => (c.var as { auth?: { user?: { identity?: string } } }).auth?.user?.identity;

function refuse(message: string) {
  return (c: Context) => c.json({ error: "Forbidden", message }, 403);
}

/** A loopback answer passed on to the client as is (status and JSON body). */
async function relay(res: Response): Promise<Response> {
  return new Response(await res.text(), { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "application/json" } });
}

/** The routes that create runs (each body a RunCreate; `/runs/batch` a list of them). */
const RUN_ROUTES = [
  "/runs",
  "/runs/wait",
  "/runs/stream",
  "/runs/batch",
  "/threads/:thread_id/runs",
  "/threads/:thread_id/runs/wait",
  "/threads/:thread_id/runs/stream",
];

const refused = (c: Context, refusal: Refusal) => c.json(refusal.body, refusal.status);

/** A thread's graph as the server records it (metadata graph_id), read with the caller's credentials; or the server's error response. */
async function graphOf(c: Context, threadId: string): Promise<{ graphId: unknown } | Response> {
  const res = await loopback()(`/threads/${encodeURIComponent(threadId)}`, { headers: credentials(c) });
  if (!res.ok) return relay(res);
  const thread = (await res.json()) as Json;
  return { graphId: isObject(thread.metadata) ? thread.metadata.graph_id : undefined };
}

/** The verdict cannot be written: the checks of ./state-writes.ts on every route that writes a thread's state. */
function guardStateWrites(app: Hono): void {
  app.post("/threads/:thread_id/state", async (c, next) => {
    const body = await jsonBody(c);
    if (!isObject(body)) return next();
    const threadId = c.req.param("thread_id");
    const thread = await graphOf(c, threadId);
    if (thread instanceof Response) return thread;
    const refusal = stateWriteRefusal(thread.graphId, body);
    if (refusal) return refused(c, refusal);
    // An accepted write is the input of a new run: only on a thread with nothing pending.
    const res = await loopback()(`/threads/${encodeURIComponent(threadId)}/state`, { headers: credentials(c) });
    if (!res.ok) return relay(res);
    const pending = pendingRefusal(thread.graphId as string, (await res.json()) as Json);
    return pending ? refused(c, pending) : next();
  });

  app.post("/threads", async (c, next) => {
    const refusal = superstepsRefusal(await jsonBody(c));
    return refusal ? refused(c, refusal) : next();
  });

  app.patch("/threads/:thread_id", async (c, next) => {
    const body = await jsonBody(c);
    if (!isObject(body) || !isObject(body.metadata) || !Object.hasOwn(body.metadata, "graph_id")) return next();
    const thread = await graphOf(c, c.req.param("thread_id"));
    if (thread instanceof Response) return thread;
    const refusal = graphChangeRefusal(thread.graphId, body);
    return refusal ? refused(c, refusal) : next();
  });

  const checkRuns = async (c: Context, next: Next) => {
    const refusal = runBodyRefusal(await jsonBody(c));
    return refusal ? refused(c, refusal) : next();
  };
  for (const path of RUN_ROUTES) app.post(path, checkRuns);

  app.post("/threads/:thread_id/commands", async (c, next) => {
    const refusal = protocolCommandRefusal(await jsonBody(c));
    return refusal ? refused(c, refusal) : next();
  });
}

export function createHttpApp(options: { auth: boolean }): Hono {
  const app = new Hono();

  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => c.json({ error: "PayloadTooLarge", message: `The request body is larger than ${MAX_BODY_BYTES} bytes.` }, 413),
    }),
  );

  // Every part of a JSON body within its bounds (./request-bounds.ts), before any route reads or stores it.
  app.use("*", async (c, next) => {
    if (c.req.raw.body === null) return next();
    const refusal = requestBoundsRefusal(await jsonBody(c));
    return refusal ? refused(c, refusal) : next();
  });

  // Ask about a run before streaming or joining it, so an unknown run id allocates nothing.
  const checkRun = async (c: Context, next: Next) => {
    const threadId = encodeURIComponent(c.req.param("thread_id") ?? "");
    const runId = encodeURIComponent(c.req.param("run_id") ?? "");
    const res = await loopback()(`/threads/${threadId}/runs/${runId}`, { headers: credentials(c) });
    if (!res.ok) return relay(res);
    await res.arrayBuffer();
    return next();
  };
  app.get("/threads/:thread_id/runs/:run_id/stream", checkRun);
  app.get("/threads/:thread_id/runs/:run_id/join", checkRun);
  app.post("/threads/:thread_id/runs/:run_id/cancel", checkRun);

  guardStateWrites(app);

  // A run's error as it was thrown, not serialized twice (./wait-errors.ts).
  const repairWaitError = async (c: Context, next: Next) => {
    await next();
    if (c.res.body !== null) c.res = new Response(repairWaitBody(c.res.body), c.res);
  };
  for (const path of ["/runs/wait", "/threads/:thread_id/runs/wait"]) app.post(path, repairWaitError);
  app.get("/threads/:thread_id/runs/:run_id/join", repairWaitError);

  if (!options.auth) {
    // Its commands (input.respond with update or goto) arrive as WebSocket messages, which no route here can check.
    app.get(
      "/threads/:thread_id/stream/events",
      refuse(
        "The protocol WebSocket is not available on this server: its commands cannot be checked against the rule that state writes may not set a run's outcome. " +
          'Use the SSE transport (POST /threads/{thread_id}/commands and POST /threads/{thread_id}/stream/events; the SDK\'s default, transport "sse").',
      ),
    );
    return app;
  }

  const protocol = refuse(
    "The thread-centric protocol routes are not available when auth is on: they do not check who owns a thread. " +
      "Use the runs API instead (client.runs.stream / client.runs.wait on /threads/{thread_id}/runs/…).",
  );
  app.all("/threads/:thread_id/commands", protocol);
  app.all("/threads/:thread_id/stream/events", protocol);
  app.get(
    "/runs/:run_id/stream",
    refuse(
      "GET /runs/{run_id}/stream is not available when auth is on: it cannot check who owns the run. Use GET /threads/{thread_id}/runs/{run_id}/stream (client.runs.joinStream).",
    ),
  );
  const crons = refuse("Crons are not available on this server.");
  app.all("/runs/crons", crons);
  app.all("/runs/crons/*", crons);
  app.all("/threads/:thread_id/runs/crons", crons);

  // Assistant search and count: the built-in assistants plus the caller's own.
  /** Whether a search already names one group (built-in or owned), so the server's own answer is complete. */
  const namesOneGroup = (metadata: unknown) => isObject(metadata) && (metadata[BUILTIN_MARK.key] === BUILTIN_MARK.value || OWNER_KEY in metadata);

  app.post("/assistants/search", async (c, next) => {
    const body = await jsonBody(c);
    if (!isObject(body) || namesOneGroup(body.metadata)) return next();
    const limit = body.limit ?? 10;
    const offset = body.offset ?? 0;
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 1000 || !Number.isInteger(offset) || (offset as number) < 0) return next();
    const need = (offset as number) + (limit as number);
    const { select, ...query } = body;
    const metadata = isObject(body.metadata) ? body.metadata : {};

    /** Up to `need` assistants of one group, in the server's order; or the server's error response. */
    const collect = async (groupMetadata: Json): Promise<Json[] | Response> => {
      const items: Json[] = [];
      while (items.length < need) {
        const page = Math.min(1000, need - items.length);
        const res = await loopback()("/assistants/search", {
          method: "POST",
          headers: credentials(c),
          body: JSON.stringify({ ...query, metadata: groupMetadata, limit: page, offset: items.length }),
        });
        if (!res.ok) return res;
        const batch = (await res.json()) as Json[];
        items.push(...batch);
        if (batch.length < page) break;
      }
      return items;
    };
    const identity = identityOf(c) ?? "";
    const groups = await Promise.all([collect({ ...metadata, [BUILTIN_MARK.key]: BUILTIN_MARK.value }), collect({ ...metadata, [OWNER_KEY]: identity })]);
    for (const group of groups) if (group instanceof Response) return relay(group);
    const [builtin, own] = groups as Json[][];

    const sortBy = typeof body.sort_by === "string" ? body.sort_by : "created_at";
    const ascending = body.sort_order === "asc";
    const merged = [...new Map([...builtin, ...own].map((a) => [String(a.assistant_id), a])).values()].sort((a, b) => {
      const [x, y] = [String(a[sortBy] ?? ""), String(b[sortBy] ?? "")];
      return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
    });
    const exhausted = builtin.length < need && own.length < need;
    const pageItems = merged
      .slice(offset as number, need)
      .map((a) => (Array.isArray(select) ? Object.fromEntries(Object.entries(a).filter(([k]) => select.includes(k))) : a));
    if (exhausted) c.header("X-Pagination-Total", String(merged.length));
    else {
      c.header("X-Pagination-Next", String(need));
      c.header("X-Pagination-Total", String(need + 1));
    }
    return c.json(pageItems);
  });

  app.post("/assistants/count", async (c, next) => {
    const body = await jsonBody(c);
    if (!isObject(body) || namesOneGroup(body.metadata)) return next();
    const metadata = isObject(body.metadata) ? body.metadata : {};
    const identity = identityOf(c) ?? "";
    let total = 0;
    for (const groupMetadata of [
      { ...metadata, [BUILTIN_MARK.key]: BUILTIN_MARK.value },
      { ...metadata, [OWNER_KEY]: identity },
    ]) {
      const res = await loopback()("/assistants/count", {
        method: "POST",
        headers: credentials(c),
        body: JSON.stringify({ ...body, metadata: groupMetadata }),
      });
      if (!res.ok) return relay(res);
      total += Number(await res.json());
    }
    return c.json(total);
  });

  // A run may use a built-in assistant or the caller's own: ask the assistant route, which applies the read rule.
  const checkAssistants = async (c: Context, next: Next) => {
    const body = await jsonBody(c);
    const requested = (Array.isArray(body) ? body : [body]).map((run) => (isObject(run) ? run.assistant_id : undefined));
    for (const id of new Set(requested.filter((id): id is string => typeof id === "string" && !BUILTIN_ASSISTANTS.has(id)))) {
      const res = await loopback()(`/assistants/${encodeURIComponent(id)}`, { headers: credentials(c) });
      await res.arrayBuffer();
      if (!res.ok) return c.json({ error: "NotFound", message: `No assistant found for "${id}".` }, 404);
    }
    return next();
  };
  for (const path of RUN_ROUTES) app.post(path, checkAssistants);

  return app;
}

export const app: Hono = createHttpApp({ auth: authEnabled() });
