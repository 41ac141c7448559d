/**
 * Custom authentication for the LangGraph server (registered in langgraph.json).
 *
 * Off unless configured: with LANGGRAPH_API_KEYS unset or empty, `auth` has no
 * handlers, so every request is served without a user (Studio and the SDK
 * need no header). With LANGGRAPH_API_KEYS="key1:alice,key2:bob":
 *   - a request must carry a known key in `x-api-key` (what the SDK's
 *     `apiKey` sends) or `Authorization: Bearer <key>`; otherwise 401
 *     (except the readiness probe `GET /ok`);
 *   - threads, and the runs on them, belong to the user who created them:
 *     another user's thread is not found;
 *   - store namespaces are `[purpose, user, …]` (the Reflexion memory uses
 *     `["reflexion", user, agentName]`): a user reaches only namespaces whose
 *     second label is their own identity;
 *   - runs see the user in `configurable.langgraph_auth_user`, which keys the
 *     Reflexion memory, so one user never gets another user's reflections.
 * Assistants (the built-in one per graph) are shared by every user.
 */
import { createHash } from "node:crypto";
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import { namespaceLabel } from "../reflexion/memory-store.js";

export const API_KEYS_ENV = "LANGGRAPH_API_KEYS";

/** Owner metadata key set on every thread (and run) created by an authenticated user. */
export const OWNER_KEY = "owner";

/**
 * Parse LANGGRAPH_API_KEYS: comma-separated `key:user` pairs (whitespace around
 * entries, keys and users is ignored; the last ":" separates key and user).
 * Unset, empty or blank: an empty map, meaning auth is off. A malformed value
 * throws (without echoing any key), so a typo never silently disables auth.
 */
export function parseApiKeys(raw: string | undefined): Map<string, string> {
  const keys = new Map<string, string>();
  if (raw === undefined || raw.trim() === "") return keys;
  const entries = raw.split(",");
  entries.forEach((entry, i) => {
    const where = `${API_KEYS_ENV} entry ${i + 1} of ${entries.length}`;
    const text = entry.trim();
    if (text === "") {
      throw new Error(`${where} is empty; the format is key1:user1,key2:user2.`);
    }
    const colon = text.lastIndexOf(":");
    if (colon < 0) throw new Error(`${where} has no ":"; the format is key1:user1,key2:user2.`);
    const key = text.slice(0, colon).trim();
    const user = text.slice(colon + 1).trim();
    if (key === "") throw new Error(`${where} has an empty key; the format is key1:user1,key2:user2.`);
    if (user === "") throw new Error(`${where} has an empty user name; the format is key1:user1,key2:user2.`);
    if (keys.has(key)) throw new Error(`${where} repeats a key already given to user ${JSON.stringify(keys.get(key))}; each key must be unique.`);
    keys.set(key, user);
  });
  return keys;
}

/** The API key a request presents: `x-api-key`, else `Authorization: Bearer <key>`. */
export function apiKeyOf(headers: Headers): string | undefined {
  const direct = headers.get("x-api-key")?.trim();
  if (direct) return direct;
  const match = /^Bearer\s+(.+)$/i.exec(headers.get("authorization")?.trim() ?? "");
  return match ? match[1].trim() : undefined;
}

/** Whether a store namespace belongs to a user: its second label is the user's identity (as a namespace label). */
export function ownsNamespace(namespace: readonly string[] | null | undefined, identity: string): boolean {
  return Array.isArray(namespace) && namespace.length >= 2 && namespace[1] === namespaceLabel(identity);
}

const digest = (key: string) => createHash("sha256").update(key).digest("hex");

/** The server's Auth for a set of keys (key → user); no keys: an Auth without handlers, i.e. no authentication. */
export function createAuth(apiKeys: ReadonlyMap<string, string>): Auth {
  const auth = new Auth();
  if (apiKeys.size === 0) return auth;

  // Keys are looked up by digest, so the lookup's timing says nothing about a key's characters.
  const users = new Map([...apiKeys].map(([key, user]) => [digest(key), user]));
  const withOwner = (metadata: Record<string, unknown> | null | undefined, identity: string) => ({ ...(metadata ?? {}), [OWNER_KEY]: identity });

  auth.authenticate((request: Request) => {
    // The readiness probe stays open, as health checks carry no credentials; it reads nothing.
    if (request.method === "GET" && new URL(request.url).pathname === "/ok") {
      return { identity: "anonymous", display_name: "anonymous", permissions: [], is_authenticated: false };
    }
    const key = apiKeyOf(request.headers);
    const identity = key === undefined ? undefined : users.get(digest(key));
    if (identity === undefined) {
      throw new HTTPException(401, {
        message: key === undefined ? "Missing API key: send it in the x-api-key header (or Authorization: Bearer <key>)." : "Invalid API key.",
        headers: { "WWW-Authenticate": "Bearer" },
      });
    }
    return { identity, display_name: identity, permissions: [], is_authenticated: true };
  });

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

  // The store: only the user's own namespaces, [purpose, user, …].
  auth.on("store", ({ user, value }) => {
    if (!ownsNamespace(value.namespace, user.identity)) {
      const label = namespaceLabel(user.identity);
      throw new HTTPException(403, {
        message:
          `Store access is limited to your own namespaces, [<purpose>, ${JSON.stringify(label)}, …] ` +
          `(e.g. ["reflexion", ${JSON.stringify(label)}]); got ${JSON.stringify(value.namespace ?? [])}.`,
      });
    }
    return true;
  });

  return auth;
}

export const auth: Auth = createAuth(parseApiKeys(process.env[API_KEYS_ENV]));
