/**
 * `langgraph-trustworthy-output/agents`: the package's guarantee inside
 * LangChain v1's `createAgent`, as middleware. `validatedResponseMiddleware`
 * holds the agent's structured answer to a spec (exact errors back to the
 * model, retries, a typed outcome); `guardToolsMiddleware` holds existing
 * tools' arguments to specs.
 *
 * `langchain` is an optional peer dependency, needed only here. It is looked
 * for before the middleware modules load, so an app without it gets one error
 * that says what to install, not a module-resolution failure from deep inside.
 */
import { ConfigurationError } from "../errors.js";
import { importPeer } from "../peers.js";

/** The LangChain release line the middleware is written against. */
const LANGCHAIN_RANGE = "^1.5.14";

async function loadMiddleware() {
  const langchain = await importPeer<{ createMiddleware?: unknown }>("langgraph-trustworthy-output/agents", {
    name: "langchain",
    range: LANGCHAIN_RANGE,
  });
  if (typeof langchain.createMiddleware !== "function") {
    throw new ConfigurationError(
      `langgraph-trustworthy-output/agents needs LangChain v1 (langchain ${LANGCHAIN_RANGE}, with createMiddleware); the installed "langchain" is another version.`,
    );
  }
  const [response, tools] = await Promise.all([import("./validated-response.js"), import("./guard-tools.js")]);
  return { ...response, ...tools };
}

const middleware = await loadMiddleware();

/** Middleware that holds the agent's structured answer to a spec; the outcome is `responseOutcome` in the agent's state. */
export const validatedResponseMiddleware: typeof import("./validated-response.js").validatedResponseMiddleware = middleware.validatedResponseMiddleware;
/** Middleware that holds existing tools' arguments to specs, by tool name. */
export const guardToolsMiddleware: typeof import("./guard-tools.js").guardToolsMiddleware = middleware.guardToolsMiddleware;

export type { ValidatedResponseOptions } from "./validated-response.js";
export type { GuardToolsOptions } from "./guard-tools.js";
export type { ResponseOutcome } from "./outcome.js";
