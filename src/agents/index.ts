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
import { guardTools as guardToolsFactory } from "./guard-tools.js";
import { validatedResponse as validatedResponseFactory } from "./validated-response.js";

/** Middleware that holds the agent's structured answer to a spec; the outcome is `responseOutcome` in the agent's state. */
export const validatedResponseMiddleware: typeof validatedResponseFactory = validatedResponseFactory;
/** Middleware that holds existing tools' arguments to specs, by tool name. */
export const guardToolsMiddleware: typeof guardToolsFactory = guardToolsFactory;

/** @deprecated Renamed `validatedResponseMiddleware` (LangChain's `…Middleware` naming); this name goes in 0.3. */
export const validatedResponse = validatedResponseMiddleware;
/** @deprecated Renamed `guardToolsMiddleware` (LangChain's `…Middleware` naming, and no longer one letter from `guardedTool`); this name goes in 0.3. */
export const guardTools = guardToolsMiddleware;

export type { ValidatedResponseOptions } from "./validated-response.js";
export type { GuardToolsOptions } from "./guard-tools.js";
export type { AnswerProgress, ResponseFailureBase, ResponseOutcome, ResponseOutcomeBase, ResponseStopReason } from "./outcome.js";
export type { OutcomeBase, OutcomeFailure, OutcomeSuccess } from "../shared/outcome.js";
