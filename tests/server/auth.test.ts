/** The server's custom auth, as plain functions: key parsing, key lookup and the owner rules. */
import { describe, expect, it } from "vitest";
import { apiKeyOf, BUILTIN_ASSISTANTS, builtinAssistantId, createAuth, ownsNamespace, parseApiKeys } from "../../src/server/auth.js";
import { memoryNamespace } from "../../src/reflexion/memory-store.js";

describe("parseApiKeys (LANGGRAPH_API_KEYS)", () => {
  it("unset, empty or blank: no keys (auth off)", () => {
    expect(parseApiKeys(undefined).size).toBe(0);
    expect(parseApiKeys("").size).toBe(0);
    expect(parseApiKeys("  \n ").size).toBe(0);
  });

  it("key:user pairs, comma-separated, whitespace ignored", () => {
    expect([...parseApiKeys("alice-key:alice, bob-key : bob ,k3:alice")]).toEqual([
      ["alice-key", "alice"],
      ["bob-key", "bob"],
      ["k3", "alice"],
    ]);
  });

  it("the last colon separates key and user, so a key may contain colons", () => {
    expect([...parseApiKeys("sk:live:123:carol")]).toEqual([["sk:live:123", "carol"]]);
  });

  it.each([
    ["alice-key", /no ":"/],
    ["alice-key:alice,", /entry 2 of 2 is empty/],
    [":alice", /empty key/],
    ["alice-key:", /empty user/],
    ["k:alice,k:bob", /repeats a key/],
  ])("refuses %j with a message that names the problem", (raw, message) => {
    expect(() => parseApiKeys(raw)).toThrow(message);
  });

  it("names the variable it reads in its messages (the service uses SERVICE_API_KEYS)", () => {
    expect(() => parseApiKeys("nope", "SERVICE_API_KEYS")).toThrow(/^SERVICE_API_KEYS entry 1 of 1/);
  });

  it("never echoes a key in its errors", () => {
    const messageOf = (raw: string) => {
      try {
        parseApiKeys(raw);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error(`no error for ${raw}`);
    };
    expect(messageOf("s3cret-value")).not.toContain("s3cret");
    expect(messageOf("s3cret:a,s3cret:b")).not.toContain("s3cret");
  });
});

describe("apiKeyOf", () => {
  it("reads x-api-key, else Authorization: Bearer", () => {
    expect(apiKeyOf(new Headers({ "x-api-key": " k1 " }))).toBe("k1");
    expect(apiKeyOf(new Headers({ authorization: "Bearer k2" }))).toBe("k2");
    expect(apiKeyOf(new Headers({ authorization: "bearer   k3" }))).toBe("k3");
    expect(apiKeyOf(new Headers({ "x-api-key": "k1", authorization: "Bearer k2" }))).toBe("k1");
    expect(apiKeyOf(new Headers({ authorization: "Basic a2V5" }))).toBeUndefined();
    expect(apiKeyOf(new Headers())).toBeUndefined();
  });
});

describe("ownsNamespace", () => {
  it("the user's own namespaces are [purpose, user, …], as the Reflexion memory lays them out", () => {
    expect(ownsNamespace(memoryNamespace("alice", "reflexion-agent"), "alice")).toBe(true);
    expect(ownsNamespace([...memoryNamespace("alice", "agent"), "entries"], "alice")).toBe(true);
    expect(ownsNamespace(memoryNamespace("bob", "alice"), "alice")).toBe(false);
    expect(ownsNamespace(["alice"], "alice")).toBe(false);
    expect(ownsNamespace(["reflexion"], "alice")).toBe(false);
    expect(ownsNamespace([], "alice")).toBe(false);
    expect(ownsNamespace(undefined, "alice")).toBe(false);
  });

  it("compares with the encoded label, as memoryNamespace stores an identity with '.' or ':'", () => {
    expect(ownsNamespace(memoryNamespace("a.b@example.com", "agent"), "a.b@example.com")).toBe(true);
    expect(ownsNamespace(["reflexion", "a.b@example.com"], "a.b@example.com")).toBe(false);
  });
});

describe("createAuth", () => {
  type Handlers = {
    authenticate?: (request: Request) => Promise<unknown> | unknown;
    callbacks?: Record<string, (arg: Record<string, unknown>) => unknown>;
  };
  const handlers = (keys: string) => (createAuth(parseApiKeys(keys)) as unknown as { "~handlerCache": Handlers })["~handlerCache"];
  const request = (headers: Record<string, string> = {}, path = "/threads/search", method = "POST") =>
    new Request(`http://127.0.0.1:1${path}`, { method, headers });

  it("without keys there are no handlers: every request is served, without a user", () => {
    const h = handlers("");
    expect(h.authenticate).toBeUndefined();
    expect(h.callbacks).toBeUndefined();
  });

  it("with keys: a known key is its user; a missing or unknown key is 401; GET /ok stays open", async () => {
    const h = handlers("alice-key:alice");
    await expect(Promise.resolve(h.authenticate!(request({ "x-api-key": "alice-key" })))).resolves.toMatchObject({ identity: "alice" });
    await expect(Promise.resolve(h.authenticate!(request({ authorization: "Bearer alice-key" })))).resolves.toMatchObject({ identity: "alice" });
    const refused: Record<string, string>[] = [{}, { "x-api-key": "nope" }, { authorization: "Bearer nope" }];
    for (const headers of refused) {
      expect(() => h.authenticate!(request(headers))).toThrow(expect.objectContaining({ status: 401 }));
    }
    expect(h.authenticate!(request({}, "/ok", "GET"))).toMatchObject({ is_authenticated: false });
  });

  it("refusals carry a JSON body {error, message}", () => {
    const h = handlers("alice-key:alice");
    try {
      h.authenticate!(request({}));
      throw new Error("not refused");
    } catch (error) {
      const e = error as { status: number; message: string; headers: Record<string, string> };
      expect(e.status).toBe(401);
      expect(JSON.parse(e.message)).toMatchObject({ error: "Unauthorized", message: expect.stringMatching(/Missing API key/) });
      expect(e.headers["content-type"]).toMatch(/application\/json/);
    }
  });

  it("/internal/* is refused (403) to every authenticated user, however the path is spelt; without a key it is 401", () => {
    const h = handlers("alice-key:alice");
    for (const path of ["/internal/truncate", "/internal", "/%69nternal/truncate", "/Internal/truncate", "/internal/anything"]) {
      expect(() => h.authenticate!(request({ "x-api-key": "alice-key" }, path)), path).toThrow(expect.objectContaining({ status: 403 }));
    }
    expect(() => h.authenticate!(request({}, "/internal/truncate"))).toThrow(expect.objectContaining({ status: 401 }));
    expect(h.authenticate!(request({ "x-api-key": "alice-key" }, "/internals-of-nothing"))).toMatchObject({ identity: "alice" });
  });

  it("threads: the owner is stamped on create (a caller cannot choose it) and filters everything else", () => {
    const h = handlers("alice-key:alice");
    const user = { identity: "alice" };
    const value: { metadata?: Record<string, unknown> } = { metadata: { owner: "bob", topic: "x" } };
    expect(h.callbacks!["threads:create"]({ user, value })).toEqual({ owner: "alice" });
    expect(value.metadata).toEqual({ owner: "alice", topic: "x" });
    const run: { metadata?: Record<string, unknown> } = {};
    expect(h.callbacks!["threads:create_run"]({ user, value: run })).toEqual({ owner: "alice" });
    expect(run.metadata).toEqual({ owner: "alice" });
    const update = { metadata: { owner: "bob" } };
    expect(h.callbacks!["threads:update"]({ user, value: update })).toEqual({ owner: "alice" });
    expect(update.metadata).toEqual({ owner: "alice" });
    for (const event of ["threads:read", "threads:delete", "threads:search"]) {
      expect(h.callbacks![event]({ user, value: {} })).toEqual({ owner: "alice" });
    }
    expect(h.callbacks!["*"]).toBeUndefined(); // the built-in assistants stay visible
  });

  it("assistants: built-in ones readable by all and changeable by none; a user's own stamped and filtered by owner", () => {
    const h = handlers("alice-key:alice");
    const user = { identity: "alice" };
    const builtin = builtinAssistantId("validation");
    expect(BUILTIN_ASSISTANTS.has("validation") && BUILTIN_ASSISTANTS.has(builtin)).toBe(true);

    const created: { metadata?: Record<string, unknown> } = { metadata: { owner: "bob", created_by: "system", topic: "x" } };
    expect(h.callbacks!["assistants:create"]({ user, value: created })).toEqual({ owner: "alice" });
    expect(created.metadata).toEqual({ owner: "alice", topic: "x" });

    expect(h.callbacks!["assistants:read"]({ user, value: { assistant_id: builtin } })).toBe(true);
    expect(h.callbacks!["assistants:read"]({ user, value: { assistant_id: "01a230cd-0000-7000-8000-000000000000" } })).toEqual({ owner: "alice" });
    for (const event of ["assistants:update", "assistants:delete"]) {
      for (const id of [builtin, builtinAssistantId("reflexion")]) {
        expect(() => h.callbacks![event]({ user, value: { assistant_id: id } }), event).toThrow(expect.objectContaining({ status: 403 }));
      }
    }
    const update = { assistant_id: "01a230cd-0000-7000-8000-000000000000", metadata: { owner: "bob", created_by: "system" } };
    expect(h.callbacks!["assistants:update"]({ user, value: update })).toEqual({ owner: "alice" });
    expect(update.metadata).toEqual({ owner: "alice" });

    expect(h.callbacks!["assistants:search"]({ user, value: {} })).toEqual({ owner: "alice" });
    expect(h.callbacks!["assistants:search"]({ user, value: { metadata: { created_by: "system" } } })).toBe(true);
  });

  it("store: only the user's own namespaces", () => {
    const h = handlers("alice-key:alice");
    const user = { identity: "alice" };
    expect(h.callbacks!.store({ user, value: { namespace: ["reflexion", "alice", "reflexion-agent"] } })).toBe(true);
    for (const namespace of [["reflexion", "bob"], ["reflexion"], [], undefined, ["alice"]]) {
      expect(() => h.callbacks!.store({ user, value: { namespace } })).toThrow(expect.objectContaining({ status: 403 }));
    }
  });
});
