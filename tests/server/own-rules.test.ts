/** withOwnerRules: a project's own Auth with the package's owner rules added, as plain calls of its handlers. */
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import { describe, expect, it } from "vitest";
import { authenticates, builtinAssistantId, withOwnerRules } from "../../src/server/auth.js";

type Handlers = {
  authenticate?: (request: Request) => Promise<unknown> | unknown;
  callbacks?: Record<string, (arg: Record<string, unknown>) => unknown>;
};
const handlersOf = (auth: Auth) => (auth as unknown as { "~handlerCache": Handlers })["~handlerCache"];
const request = (headers: Record<string, string> = {}, path = "/threads/search") => new Request(`http://127.0.0.1:1${path}`, { method: "POST", headers });

/** A project's Auth: its own users by key, a tag on every thread it creates, a rule refusing deletes and one searching by team. */
function projectAuth(): Auth {
  return new Auth()
    .authenticate((req: Request) => {
      const identity = ({ "k-alice": "alice" } as Record<string, string>)[req.headers.get("x-api-key") ?? ""];
      if (identity === undefined) throw new HTTPException(401, { message: "no" });
      return identity;
    })
    .on("threads:create", ({ value }) => {
      value.metadata = { ...(value.metadata ?? {}), project: "billing", owner: "mallory" };
    })
    .on("threads:delete", () => false)
    .on("threads", () => ({ team: "red" }));
}

/** What the server does with an event: the handler its lookup finds, called with the event's arguments. */
function authorize(auth: Auth, event: string, value: Record<string, unknown>) {
  const [resource, action] = event.split(":");
  const h = handlersOf(auth);
  const key = [event, resource, `*:${action}`, "*"].find((k) => h.callbacks?.[k]);
  return h.callbacks![key!]({ event, resource, action, value, user: { identity: "alice" }, permissions: [] });
}

describe("withOwnerRules", () => {
  it("asks the project's authenticate who the caller is, then refuses /internal/* (403); the project's Auth is left as it was", async () => {
    const own = projectAuth();
    const before = { ...handlersOf(own).callbacks };
    const auth = withOwnerRules(own);
    expect(authenticates(auth)).toBe(true);
    await expect(Promise.resolve(handlersOf(auth).authenticate!(request({ "x-api-key": "k-alice" })))).resolves.toBe("alice");
    await expect(Promise.resolve(handlersOf(auth).authenticate!(request({})))).rejects.toMatchObject({ status: 401 });
    await expect(Promise.resolve(handlersOf(auth).authenticate!(request({ "x-api-key": "k-alice" }, "/%69nternal/truncate")))).rejects.toMatchObject({
      status: 403,
    });
    expect(handlersOf(own).callbacks).toEqual(before);
  });

  it("runs the project's own handler, then the owner rule: both filters apply, the owner is the rule's, a refusal by the project refuses", async () => {
    const auth = withOwnerRules(projectAuth());
    const created: { metadata?: Record<string, unknown> } = { metadata: { topic: "x" } };
    expect(await authorize(auth, "threads:create", created)).toEqual({ owner: "alice" });
    expect(created.metadata).toEqual({ topic: "x", project: "billing", owner: "alice" });
    // The project's resource-level handler ("threads") and the rule's event handler both hold for a read.
    expect(await authorize(auth, "threads:read", {})).toEqual({ team: "red", owner: "alice" });
    await expect(authorize(auth, "threads:delete", {})).rejects.toMatchObject({ status: 403 });
    // Events only the rules know: the store, the built-in assistants, crons.
    await expect(authorize(auth, "store:put", { namespace: ["reflexion", "bob"] })).rejects.toMatchObject({ status: 403 });
    expect(await authorize(auth, "store:put", { namespace: ["reflexion", "alice"] })).toEqual({});
    await expect(authorize(auth, "assistants:update", { assistant_id: builtinAssistantId("validation") })).rejects.toMatchObject({ status: 403 });
    await expect(authorize(auth, "crons:create", {})).rejects.toMatchObject({ status: 403 });
  });

  it("a project Auth that authenticates no one gives an Auth without handlers: auth stays off", () => {
    const auth = withOwnerRules(new Auth().on("threads", () => ({ team: "red" })));
    expect(authenticates(auth)).toBe(false);
    expect(handlersOf(auth).callbacks).toBeUndefined();
  });
});
