/**
 * Provider faults through the real ChatOpenAI client against the scripted
 * OpenAI-compatible server: each fault strikes between attempt 1 and attempt 2
 * of a validation run, in plain-JSON and in SSE-streaming mode.
 */
import { MemorySaver } from "@langchain/langgraph";
import { readEnvironment } from "../src/configuration.js";
import { createChatModel, type ModelRequest } from "../src/models.js";
import { builtinSpecs } from "../src/specs/registry.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { startScriptedOpenAIServer, type ScriptedReply, type ScriptedServer } from "../testkit/openai-server.js";
import type { CaseResult } from "./hostile.js";

const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const VALID = JSON.stringify(example);
const BROKEN = JSON.stringify({ ...example, replicas: 8 });

export const FAULTS: Array<{ name: string; fault: ScriptedReply }> = [
  { name: "429 with retry-after", fault: { fault: "status", status: 429, headers: { "retry-after": "0" } } },
  { name: "429 without retry-after", fault: { fault: "status", status: 429 } },
  { name: "500", fault: { fault: "status", status: 500 } },
  { name: "503", fault: { fault: "status", status: 503, body: { error: { message: "The engine is currently overloaded" } } } },
  { name: "connection reset", fault: { fault: "reset" } },
  { name: "server never answers", fault: { fault: "hang" } },
  { name: "stream cut off mid-answer", fault: { fault: "cut-stream", partial: VALID.slice(0, 30) } },
  { name: "invalid JSON body", fault: { fault: "invalid-json" } },
  { name: "no choices", fault: { fault: "no-choices" } },
  { name: "null content", fault: { fault: "null-content" } },
];

/** The client settings the suite runs with: short timeout, two client retries. */
function modelFor(server: ScriptedServer) {
  const env = { ...readEnvironment({}), openaiApiKey: "test-key", openaiBaseUrl: server.baseURL, maxRetries: 2, timeoutMs: 1_000 };
  return (request: ModelRequest) => createChatModel(request, env);
}

async function runOnce(server: ScriptedServer, streaming: boolean, threadId: string, checkpointer: MemorySaver) {
  const graph = buildValidationGraph({ model: modelFor(server), checkpointer });
  const config = { configurable: { thread_id: threadId } };
  if (!streaming) return graph.invoke({ request: "A deployment config for payments-api" }, config);
  let final: Record<string, any> = {};
  for await (const [mode, chunk] of await graph.stream({ request: "A deployment config for payments-api" }, { ...config, streamMode: ["messages", "values"] })) {
    if (mode === "values") final = chunk as Record<string, any>;
  }
  return final;
}

/** A transient fault: the run recovers, and the fault never counts as an attempt. */
export async function runTransientFaults(): Promise<CaseResult[]> {
  const server = await startScriptedOpenAIServer();
  const results: CaseResult[] = [];
  try {
    for (const streaming of [false, true]) {
      for (const { name, fault } of FAULTS) {
        const label = `${name} (${streaming ? "SSE" : "JSON"}), then recovery`;
        server.setReplies([BROKEN, fault, VALID]);
        const before = server.requests.length;
        try {
          const out = await runOnce(server, streaming, `${label}-${Date.now()}`, new MemorySaver());
          const calls = server.requests.length - before;
          const held = out.success === true && out.attempts === 2 && out.history.length === 2 && calls === 3;
          results.push({ name: label, held, detail: held ? "recovered; not counted as an attempt" : `success=${out.success} attempts=${out.attempts} calls=${calls}` });
        } catch (error) {
          results.push({ name: label, held: false, detail: `threw ${(error as Error).message}` });
        }
      }
    }
  } finally {
    await server.close();
  }
  return results;
}

/** A persistent fault: a run error that names what the provider said, with attempt 1 kept for a resume. */
export async function runPersistentFaults(): Promise<CaseResult[]> {
  const server = await startScriptedOpenAIServer();
  const results: CaseResult[] = [];
  const cases: Array<{ name: string; fault: ScriptedReply; says: RegExp }> = [
    { name: "503 that persists", fault: { fault: "status", status: 503, body: { error: { message: "The engine is currently overloaded" } } }, says: /HTTP 503.*overloaded/ },
    { name: "429 that persists", fault: { fault: "status", status: 429, headers: { "retry-after": "0" } }, says: /HTTP 429.*Rate limit/ },
    { name: "server that never answers", fault: { fault: "hang" }, says: /timed out/i },
    { name: "connection that keeps resetting", fault: { fault: "reset" }, says: /Connection error/i },
    { name: "answers with no content", fault: { fault: "null-content" }, says: /no message content/ },
  ];
  try {
    for (const { name, fault, says } of cases) {
      let index = 0;
      server.setResponder(() => (index++ === 0 ? BROKEN : fault));
      const checkpointer = new MemorySaver();
      const threadId = `${name}-${Date.now()}`;
      let problem = "";
      try {
        await runOnce(server, false, threadId, checkpointer);
        problem = "the run did not fail";
      } catch (error) {
        if (!says.test((error as Error).message)) problem = `error does not say what the provider said: ${(error as Error).message}`;
      }
      const graph = buildValidationGraph({ model: modelFor(server), checkpointer });
      const saved = await graph.getState({ configurable: { thread_id: threadId } });
      if (!problem && (saved.values.attempts !== 1 || saved.values.history?.length !== 1)) problem = `checkpoint has attempts=${saved.values.attempts}`;
      if (!problem) {
        server.setReplies([VALID]);
        const resumed = await graph.invoke(null, { configurable: { thread_id: threadId } });
        if (resumed.success !== true || resumed.attempts !== 2) problem = `resume ended success=${resumed.success} attempts=${resumed.attempts}`;
      }
      results.push({ name: `${name}: run error, attempt 1 kept, resumed`, held: problem === "", detail: problem || "run error names the provider's words; resumed to valid" });
    }
  } finally {
    await server.close();
  }
  return results;
}
