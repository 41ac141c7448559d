/**
 * One scripted OpenAI-compatible server for a test file (started before its tests, closed after), and the
 * environment that points the command line at it: no client retries, so each scripted reply is one call.
 */
import { afterAll, beforeAll } from "vitest";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";

export function scriptedServerPerFile(): { server: () => ScriptedServer; cliEnv: () => Record<string, string> } {
  let server: ScriptedServer | undefined;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  const started = (): ScriptedServer => {
    if (server === undefined) throw new Error("the scripted server starts in beforeAll; use it inside a test");
    return server;
  };
  return { server: started, cliEnv: () => ({ OPENAI_BASE_URL: started().baseURL, OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0" }) };
}
