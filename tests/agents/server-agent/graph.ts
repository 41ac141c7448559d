/**
 * A createAgent graph with the validated answer middleware, for the LangGraph dev server in
 * tests/agents/streamed-answer.int.test.ts: ChatOpenAI against the test's scripted OpenAI-compatible server
 * (OPENAI_BASE_URL), an answer held to the order spec, read as it streams (streamAnswer: the client reads only the custom
 * stream, not the tokens) and stopped at its first certain error.
 */
import { ChatOpenAI } from "@langchain/openai";
import { createAgent } from "langchain";
import { validatedResponseMiddleware } from "../../../src/agents/index.js";
import { orderSpec } from "./order-spec.js";

export const graph = createAgent({
  model: new ChatOpenAI({ model: "scripted", maxRetries: 0 }),
  tools: [],
  middleware: [validatedResponseMiddleware({ spec: orderSpec, maxAttempts: 2, stopEarly: "first-error", streamAnswer: true })],
});
