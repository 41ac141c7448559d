/**
 * Custom authentication for the LangGraph server (registered in langgraph.json).
 *
 * Off unless configured: with LANGGRAPH_API_KEYS unset or empty, `auth` has no
 * handlers, so every request is served without a user (Studio and the SDK
 * need no header). With LANGGRAPH_API_KEYS="key1:alice,key2:bob":
 *   - a request must carry a known key in `x-api-key` (what the SDK's
 *     `apiKey` sends) or `Authorization: Bearer <key>`; otherwise 401
 *     (except the readiness probe `GET /ok`);
 *   - `/internal/*` is refused (403): it acts on every user's data at once;
 *   - threads, and the runs on them, belong to the user who created them:
 *     another user's thread is not found;
 *   - the built-in assistants (one per graph) are readable and runnable by
 *     every user and changeable by none; an assistant a user creates belongs
 *     to that user (the server stamps the owner) and is invisible to others;
 *   - store namespaces are `[purpose, user, …]` (the Reflexion memory uses
 *     `["reflexion", user, agentName]`): a user reaches only namespaces whose
 *     second label is their own identity;
 *   - runs see the user in `configurable.langgraph_auth_user`, which keys the
 *     Reflexion memory, so one user never gets another user's reflections.
 * The routes these handlers cannot scope (the thread-centric protocol routes,
 * `GET /runs/{run_id}/stream`) are refused by the HTTP app in ./http.ts; the
 * README's route table lists the rule of every route.
 */
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import { v5 as uuid5 } from "@langchain/core/utils/uuid";
import { namespaceLabel } from "../reflexion/memory-store.js";
import { apiKeyOf, INVALID_API_KEY, MISSING_API_KEY, parseApiKeys, userLookup } from "./api-keys.js";

export { apiKeyOf, parseApiKeys } from "./api-keys.js";

export const API_KEYS_ENV = "LANGGRAPH_API_KEYS";

/** Owner metadata key set on every thread, run and user assistant created by an authenticated user. */
export const OWNER_KEY = "owner";

/** The graphs langgraph.json serves; the server creates one shared assistant for each. */
export const BUILTIN_GRAPHS = ["validation", "reflexion"] as const;

/** The namespace the server derives a built-in assistant's id from (uuid v5 of the graph id). */
const ASSISTANT_NAMESPACE = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/** The id of the built-in assistant of a graph, as the server assigns it. */
export function builtinAssistantId(graphId: string): string {
  return uuid5(graphId, ASSISTANT_NAMESPACE);
}

/** Built-in assistant ids, and the graph ids that address them in requests. */
export const BUILTIN_ASSISTANTS: ReadonlySet<string> = new Set(BUILTIN_GRAPHS.flatMap((graph) => [graph, builtinAssistantId(graph)]));

/** The metadata mark of the built-in assistants; never allowed on a user's assistant. */
export const BUILTIN_MARK = { key: "created_by", value: "system" } as const;

/** Whether auth is on for this process (LANGGRAPH_API_KEYS has at least one key). */
export function authEnabled(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return parseApiKeys(env[API_KEYS_ENV], API_KEYS_ENV).size > 0;
}

/**
 * An HTTP error whose body is JSON `{"error", "message"}`, like the server's
 * own errors (the server sends an auth error's message as the body as is).
 */
export function jsonHttpError(status: number, error: string, message: string, headers: Record<string, string> = {}): HTTPException {
  return new HTTPException(status, {
    message: JSON.stringify({ error, message }),
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

/** Whether a store namespace belongs to a user: its second label is the user's identity (as a namespace label). */
export function ownsNamespace(namespace: readonly string[] | null | undefined, identity: string): boolean {
  return Array.isArray(namespace) && namespace.length >= 2 && namespace[1] === namespaceLabel(identity);
}

/** The path a request addresses, decoded as the server's router decodes it (so "%69nternal" is "internal"). */
function routedPath(request: Request): string {
  const path = new URL(request.url).pathname;
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

/** An authorization handler as the server calls it: an event's arguments in, a filter, a boolean or nothing out. */
type AuthCallback = (args: { event: string; resource: string; action: string }) => unknown;
type AuthenticateCallback = Parameters<Auth["authenticate"]>[0];
/** The handlers an Auth holds, as the server reads them (`"~handlerCache"`, the SDK's public field the server looks up). */
interface AuthHandlers {
  authenticate?: AuthenticateCallback;
  callbacks?: Record<string, AuthCallback>;
}
const handlersOf = (auth: Auth): AuthHandlers => (auth as unknown as { "~handlerCache": AuthHandlers })["~handlerCache"];

/** The handler the server would call for an event: the most specific key first, as `@langchain/langgraph-api` looks it up. */
function handlerFor(handlers: AuthHandlers, resource: string, action: string): AuthCallback | undefined {
  const key = [`${resource}:${action}`, resource, `*:${action}`, "*"].find((k) => handlers.callbacks?.[k]);
  return key === undefined ? undefined : handlers.callbacks?.[key];
}

/** /internal/* wipes every user's data and is answered before any authorization event: no API user may reach it. */
function refuseInternal(request: Request): void {
  const path = routedPath(request);
  if (/^\/internal(\/|$)/i.test(path)) {
    throw jsonHttpError(403, "Forbidden", `${path} is not available when auth is on: it acts on every user's data.`);
  }
}

/**
 * The owner rules, on an Auth whose `authenticate` says who the caller is: threads and their runs, a user's
 * assistants and store namespaces belong to the user; the built-in assistants are shared and read-only; crons are
 * refused.
 */
function addOwnerRules(auth: Auth): Auth {
  const withOwner = (metadata: Record<string, unknown> | null | undefined, identity: string) => ({ ...(metadata ?? {}), [OWNER_KEY]: identity });
  /** A user assistant's metadata: owned by the caller, never marked as built-in. */
  const userAssistantMetadata = (metadata: Record<string, unknown> | null | undefined, identity: string) => {
    const { [BUILTIN_MARK.key]: _mark, ...rest } = metadata ?? {};
    return withOwner(rest, identity);
  };
  const readOnly = (assistantId: unknown) =>
    jsonHttpError(
      403,
      "Forbidden",
      `The built-in assistant ${JSON.stringify(assistantId)} is shared by every user and read-only. ` +
        "Pass settings per run (context), or create your own assistant (POST /assistants).",
    );
  // Threads and their runs: stamp the owner on create, filter everything else by owner.
  auth.on("threads:create", ({ user, value }) => {
    value.metadata = withOwner(value.metadata, user.identity);
    return { [OWNER_KEY]: user.identity };
  });
  auth.on("threads:create_run", ({ user, value }) => {
    value.metadata = withOwner(value.metadata, user.identity);
    return { [OWNER_KEY]: user.identity };
  });
  auth.on("threads:update", ({ user, value }) => {
    // A metadata update may not hand a thread to someone else.
    if (value.metadata != null) value.metadata = withOwner(value.metadata, user.identity);
    return { [OWNER_KEY]: user.identity };
  });
  auth.on(["threads:read", "threads:delete", "threads:search"], ({ user }) => ({ [OWNER_KEY]: user.identity }));

  // Assistants: the built-in ones are shared and read-only; a user's own are the user's alone.
  auth.on("assistants:create", ({ user, value }) => {
    value.metadata = userAssistantMetadata(value.metadata, user.identity);
    // An existing id (a built-in or another user's assistant) answers 409, as the filter does not match it.
    return { [OWNER_KEY]: user.identity };
  });
  auth.on("assistants:read", ({ user, value }) => (BUILTIN_ASSISTANTS.has(String(value.assistant_id)) ? true : { [OWNER_KEY]: user.identity }));
  auth.on("assistants:update", ({ user, value }) => {
    if (BUILTIN_ASSISTANTS.has(String(value.assistant_id))) throw readOnly(value.assistant_id);
    if (value.metadata != null) value.metadata = userAssistantMetadata(value.metadata, user.identity);
    return { [OWNER_KEY]: user.identity };
  });
  auth.on("assistants:delete", ({ user, value }) => {
    if (BUILTIN_ASSISTANTS.has(String(value.assistant_id))) throw readOnly(value.assistant_id);
    return { [OWNER_KEY]: user.identity };
  });
  auth.on("assistants:search", ({ user, value }) => {
    // A search for the built-in mark can only match built-in assistants (no user assistant carries it): no owner
    // filter then. Any other search sees the caller's own assistants; ./http.ts merges the two for plain searches.
    const metadata = value.metadata as Record<string, unknown> | null | undefined;
    return metadata?.[BUILTIN_MARK.key] === BUILTIN_MARK.value ? true : { [OWNER_KEY]: user.identity };
  });

  // The store: only the user's own namespaces, [purpose, user, …].
  auth.on("store", ({ user, value }) => {
    if (!ownsNamespace(value.namespace, user.identity)) {
      const label = namespaceLabel(user.identity);
      throw jsonHttpError(
        403,
        "Forbidden",
        `Store access is limited to your own namespaces, [<purpose>, ${JSON.stringify(label)}, …] ` +
          `(e.g. ["reflexion", ${JSON.stringify(label)}]); got ${JSON.stringify(value.namespace ?? [])}.`,
      );
    }
    return true;
  });

  // Crons are not implemented by this server; refuse them plainly rather than leave them unscoped.
  auth.on("crons", () => {
    throw jsonHttpError(403, "Forbidden", "Crons are not available on this server.");
  });

  return auth;
}

/** The server's Auth for a set of keys (key → user); no keys: an Auth without handlers, i.e. no authentication. */
export function createAuth(apiKeys: ReadonlyMap<string, string>): Auth {
  const auth = new Auth();
  if (apiKeys.size === 0) return auth;
  const userOf = userLookup(apiKeys);
  auth.authenticate((request: Request) => {
    const path = routedPath(request);
    // The readiness probe stays open, as health checks carry no credentials; it reads nothing.
    if (request.method === "GET" && path === "/ok") {
      return { identity: "anonymous", display_name: "anonymous", permissions: [], is_authenticated: false };
    }
    const key = apiKeyOf(request.headers);
    const identity = userOf(key);
    if (identity === undefined) {
      throw jsonHttpError(401, "Unauthorized", key === undefined ? MISSING_API_KEY : INVALID_API_KEY, { "WWW-Authenticate": "Bearer" });
    }
    refuseInternal(request);
    return { identity, display_name: identity, permissions: [], is_authenticated: true };
  });

  return addOwnerRules(auth);
}

/**
 * A project's own Auth with the package's rules added, as a new Auth (the project's is left as it is): the
 * project's `authenticate` says who the caller is, then `/internal/*` is refused; on every authorization
 * event the project's own handler (looked up as the server would) runs first, then the owner rule. A refusal
 * by either refuses; filters of both apply (the owner key is the rule's). Without an `authenticate`, the
 * project's Auth authenticates no one, and the result is an Auth without handlers: no authentication.
 */
export function withOwnerRules(own: Auth): Auth {
  const theirs = handlersOf(own);
  const authenticate = theirs.authenticate;
  const auth = new Auth();
  if (authenticate === undefined) return auth;
  auth.authenticate(async (request) => {
    const user = await authenticate(request);
    refuseInternal(request);
    return user;
  });
  const ours = handlersOf(addOwnerRules(new Auth()));
  // An empty filter matches everything, as `true` does (one return type, as the SDK's callback type wants).
  auth.on("*", async (args): Promise<Record<string, string>> => {
    const own = handlerFor(theirs, args.resource, args.action);
    const first = own === undefined ? undefined : await own(args);
    if (first === false) throw jsonHttpError(403, "Forbidden", `Refused by this server's own rule for ${args.event}.`);
    const rule = handlerFor(ours, args.resource, args.action);
    const second = rule === undefined ? undefined : await rule(args);
    if (second === false) throw jsonHttpError(403, "Forbidden", `Refused by the owner rule for ${args.event}.`);
    const filtersOf = (result: unknown) => (typeof result === "object" && result !== null ? (result as Record<string, string>) : {});
    return { ...filtersOf(first), ...filtersOf(second) };
  });
  return auth;
}

/** Whether an Auth authenticates callers (has an `authenticate` handler): auth is on. */
export function authenticates(auth: Auth): boolean {
  return handlersOf(auth).authenticate !== undefined;
}

export const auth: Auth = createAuth(parseApiKeys(process.env[API_KEYS_ENV], API_KEYS_ENV));
