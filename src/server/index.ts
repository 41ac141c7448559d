/**
 * `langgraph-trustworthy-output/server`: what a LangGraph server's langgraph.json names to serve the package's
 * graphs with the package's rules (docs/server.md, "Serve from your own project and on the LangGraph platform"):
 *   - `validationGraph` and `reflexionGraph`, for the graph ids `validation` and `reflexion`;
 *   - `auth` (langgraph.json `auth.path`): API keys from LANGGRAPH_API_KEYS and the owner rules (./auth.ts);
 *   - `app` (langgraph.json `http.app`): the HTTP app with the rules the auth handlers cannot express, the
 *     verdict that cannot be written among them (./http.ts);
 *   - `withServerRules`, for a project with its own Hono app or Auth: the same rules added to them.
 * langgraph.json names files of the project, not packages: a file of the project re-exports these names.
 *
 * `hono` and `@langchain/langgraph-sdk` are optional peer dependencies, needed only here (a LangGraph server
 * project has both): the server modules import them as they load. Nothing here waits at load, so the CommonJS
 * build can be `require()`d.
 */
import type { Auth } from "@langchain/langgraph-sdk/auth";
import type { Hono } from "hono";
import { auth as serverAuth, authenticates, withOwnerRules } from "./auth.js";
import * as graphs from "./graphs.js";
import { app as serverApp, createHttpApp } from "./http.js";

/** The validation graph; name it `validation` in langgraph.json (the state-write rules know it by that id). */
export const validationGraph: typeof graphs.validationGraph = graphs.validationGraph;
/** The Reflexion graph; name it `reflexion` in langgraph.json. */
export const reflexionGraph: typeof graphs.reflexionGraph = graphs.reflexionGraph;
/** The server's Auth (langgraph.json `auth.path`): off without LANGGRAPH_API_KEYS; with it, API keys and the owner rules. */
export const auth: Auth = serverAuth;
/** The server's HTTP app (langgraph.json `http.app`): the rules the auth handlers cannot express, with auth on or off as `auth` is. */
export const app: Hono = serverApp;

/**
 * The package's rules added to a project's own Hono app and Auth, for langgraph.json: `auth`, the project's Auth with
 * `/internal/*` refused and the owner rules after its own handlers (or, without one, the API keys of
 * LANGGRAPH_API_KEYS); `app`, a new app that applies the rules (the auth-on ones when `auth` authenticates) and then
 * serves the project's routes, as they are when this is called. The project's objects are left as they are.
 */
export function withServerRules(parts: { app?: Hono; auth?: Auth } = {}): { app: Hono; auth: Auth } {
  const auth = parts.auth === undefined ? serverAuth : withOwnerRules(parts.auth);
  const app = createHttpApp({ auth: authenticates(auth) });
  if (parts.app !== undefined) app.route("/", parts.app);
  return { app, auth };
}
