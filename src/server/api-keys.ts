/**
 * API keys in the `key:user,…` form shared by the LangGraph server
 * (LANGGRAPH_API_KEYS) and the example service (SERVICE_API_KEYS): parsing,
 * reading the key a request presents, and looking up its user.
 */
import { ConfigurationError } from "../errors.js";
import { createHash } from "node:crypto";

/**
 * Parse comma-separated `key:user` pairs (whitespace around entries, keys and
 * users is ignored; the last ":" separates key and user). Unset, empty or
 * blank: an empty map, meaning auth is off. A malformed value throws (without
 * echoing any key), so a typo never silently disables auth. `variable` names
 * the setting in messages.
 */
export function parseApiKeys(raw: string | undefined, variable = "LANGGRAPH_API_KEYS"): Map<string, string> {
  const keys = new Map<string, string>();
  if (raw === undefined || raw.trim() === "") return keys;
  const entries = raw.split(",");
  entries.forEach((entry, i) => {
    const where = `${variable} entry ${i + 1} of ${entries.length}`;
    const text = entry.trim();
    if (text === "") {
      throw new ConfigurationError(`${where} is empty; the format is key1:user1,key2:user2.`);
    }
    const colon = text.lastIndexOf(":");
    if (colon < 0) throw new ConfigurationError(`${where} has no ":"; the format is key1:user1,key2:user2.`);
    const key = text.slice(0, colon).trim();
    const user = text.slice(colon + 1).trim();
    if (key === "") throw new ConfigurationError(`${where} has an empty key; the format is key1:user1,key2:user2.`);
    if (user === "") throw new ConfigurationError(`${where} has an empty user name; the format is key1:user1,key2:user2.`);
    if (keys.has(key)) throw new ConfigurationError(`${where} repeats a key already given to user ${JSON.stringify(keys.get(key))}; each key must be unique.`);
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

/** What a caller is told when a request carries no key, or an unknown one. */
export const MISSING_API_KEY = "Missing API key: send it in the x-api-key header (or Authorization: Bearer <key>).";
export const INVALID_API_KEY = "Invalid API key.";

const digest = (key: string) => createHash("sha256").update(key).digest("hex");

/**
 * A lookup from a presented key to its user (undefined for an unknown key).
 * Keys are compared by digest, so the lookup's timing says nothing about a
 * key's characters.
 */
export function userLookup(apiKeys: ReadonlyMap<string, string>): (key: string | undefined) => string | undefined {
  const users = new Map([...apiKeys].map(([key, user]) => [digest(key), user]));
  return (key) => (key === undefined ? undefined : users.get(digest(key)));
}
