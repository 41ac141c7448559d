/**
 * `langgraph-trustworthy-output/agents`: the package's guarantee inside
 * LangChain v1's `createAgent`, as middleware. `validatedResponseMiddleware`
 * holds the agent's structured answer to a spec (exact errors back to the
 * model, retries, a typed outcome); `guardToolsMiddleware` holds existing
 * tools' arguments to specs.
 *
 * `langchain` is an optional peer dependency, needed only here: the middleware
 * modules import it as they load, so an app without it gets the runtime's own
 * "cannot find package 'langchain'" error when it loads this entry point.
 * Nothing here waits at load, so the CommonJS build can be `require()`d.
 */
/** Middleware that holds the agent's structured answer to a spec; the outcome is `responseOutcome` in the agent's state. */
export { validatedResponseMiddleware } from "./validated-response.js";
/** Middleware that holds existing tools' arguments to specs, by tool name. */
export { guardToolsMiddleware } from "./guard-tools.js";

export type { ValidatedResponseOptions } from "./validated-response.js";
export type { GuardToolsOptions } from "./guard-tools.js";
export type { ResponseOutcome } from "./outcome.js";
