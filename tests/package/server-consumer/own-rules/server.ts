// A project with its own Auth and Hono app: withServerRules adds the package's rules to both.
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import { Hono } from "hono";
import { withServerRules } from "langgraph-trustworthy-output/server";

export { reflexionGraph, validationGraph } from "langgraph-trustworthy-output/server";

// The project's own users: {"<key>": "<user>"} (the test passes the attack suite's keys).
const users = new Map(Object.entries(JSON.parse(process.env.PROJECT_API_KEYS ?? "{}") as Record<string, string>));

const projectAuth = new Auth()
  .authenticate((request: Request) => {
    if (new URL(request.url).pathname === "/ok") return { identity: "anonymous", permissions: [], is_authenticated: false };
    const key = request.headers.get("x-api-key") ?? /^Bearer\s+(.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    const identity = key === undefined ? undefined : users.get(key);
    if (identity === undefined) throw new HTTPException(401, { message: "Unknown or missing API key." });
    return identity;
  })
  // The project's own rule, kept beside the package's: every thread is tagged with the project.
  .on("threads:create", ({ value }) => {
    value.metadata = { ...(value.metadata ?? {}), project: "consumer" };
  });

const projectApp = new Hono().get("/hello", (c) => c.json({ hello: "from the project's own app" }));

const served = withServerRules({ app: projectApp, auth: projectAuth });
export const app: Hono = served.app;
export const auth: Auth = served.auth;
