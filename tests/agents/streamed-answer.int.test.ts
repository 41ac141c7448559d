/**
 * The createAgent middleware's streamed answer through the LangGraph dev server: a graph of the test's own
 * (tests/agents/server-agent/) with ChatOpenAI against the scripted OpenAI-compatible server, which streams
 * the answer tool call's arguments (SSE). A client of the official SDK reading `streamMode: "custom"` sees the
 * validation graph's partial events; the first answer, hopeless, is stopped at its first certain error and the
 * model is given it; the second is the outcome.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerToolName } from "../../src/agents/answer.js";
import type { StreamEvent } from "../../src/streaming/attempt.js";
import { REPO_ROOT, startDevServer, type DevServer } from "../../testkit/dev-server.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { orderSpec } from "./server-agent/order-spec.js";

const TOOL = answerToolName(orderSpec);
const HOPELESS = { item: "apple", quantity: 50, note: "a long note that the model would otherwise keep writing for a while" };
const VALID = { item: "apple", quantity: 2, note: "green ones" };

let openai: ScriptedServer;
let server: DevServer;
let dir: string | undefined;
beforeAll(async () => {
  openai = await startScriptedOpenAIServer();
  // The graph's own langgraph.json, in a folder of the test's (the server keeps its state there), served by this repository's CLI.
  dir = await mkdtemp(join(tmpdir(), "streamed-answer-"));
  const config = join(dir, "langgraph.json");
  await writeFile(
    config,
    JSON.stringify({ node_version: "20", graphs: { order_agent: `${relative(dir, join(import.meta.dirname, "server-agent", "graph.ts"))}:graph` } }),
  );
  server = await startDevServer({
    project: { config, bin: join(REPO_ROOT, "node_modules", ".bin", "langgraphjs") },
    env: { OPENAI_BASE_URL: openai.baseURL, OPENAI_API_KEY: "test" },
  });
}, 200_000);
afterAll(async () => {
  await server?.stop();
  await openai?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the middleware's streamed answer under the LangGraph server", () => {
  it('a client reading streamMode "custom" sees the partial events; a hopeless answer is stopped and the next one is the outcome', async () => {
    openai.setReplies([
      { content: null, toolCalls: [{ id: "call_0", name: TOOL, arguments: JSON.stringify(HOPELESS) }] },
      { content: null, toolCalls: [{ id: "call_1", name: TOOL, arguments: JSON.stringify(VALID) }] },
    ]);
    const client = new Client({ apiUrl: server.url, apiKey: null });
    const events: StreamEvent[] = [];
    let state: Record<string, unknown> | undefined;
    for await (const part of client.runs.stream(null, "order_agent", {
      input: { messages: [{ role: "user", content: "two apples" }] },
      streamMode: ["custom", "values"],
    })) {
      if (part.event === "custom") events.push(part.data as StreamEvent);
      if (part.event === "values") state = part.data as Record<string, unknown>;
    }
    expect(events.some((event) => event.kind === "partial" && event.attempt === 1)).toBe(true);
    expect(events.find((event) => event.kind === "final" && event.attempt === 1)).toMatchObject({
      errors: ["quantity is 50; it must be <= 5"],
      stopped: { reason: "first-error" },
    });
    expect(events.find((event) => event.kind === "final" && event.attempt === 2)).toMatchObject({ value: VALID, complete: [""], stopped: null });
    expect(state?.responseOutcome).toMatchObject({ success: true, value: VALID, attempts: 2 });
    expect(openai.requests).toHaveLength(2);
    expect(JSON.stringify(openai.requests[1].body.messages.at(-1))).toContain("quantity is 50; it must be <= 5");
  }, 120_000);
});
