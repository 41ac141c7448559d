/**
 * What LangChain's own `withStructuredOutput` does with an answer that fails its zod schema, as docs/comparison.md
 * says (the default this package is compared with): `ChatOpenAI` parses the answer inside its call, so the client
 * retries it as any failed call, sending the same request again with no word about what was wrong, `maxRetries`
 * times (6 by default), and then throws zod's raw error. Against the scripted OpenAI-compatible server; a test
 * that fails when an upgrade of `@langchain/openai` changes that.
 */
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";

const ANSWER = '{"service_name": "payments-api", "replicas": "eight"}';
const schema = z.object({ service_name: z.string(), replicas: z.number().int() });
let server: ScriptedServer;

beforeAll(async () => {
  server = await startScriptedOpenAIServer({ replies: [{ content: ANSWER }], repeat: true });
});
afterAll(() => server.close());

describe("withStructuredOutput by default", () => {
  it("retries 6 times, as any failed call", () => {
    const model = new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "test-key", configuration: { baseURL: "http://127.0.0.1:1/v1" } });
    expect((model as unknown as { caller: { maxRetries: number } }).caller.maxRetries).toBe(6);
  });

  it("sends the same request again with no feedback, then throws zod's raw error", async () => {
    // Two retries rather than the default six: the same behaviour, a third of the back-off.
    const model = new ChatOpenAI({ model: "gpt-4o-mini", apiKey: "test-key", maxRetries: 2, configuration: { baseURL: server.baseURL } });
    const error = await model
      .withStructuredOutput(schema)
      .invoke("Deploy payments-api with 8 replicas")
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    // zod's own error, as zod's core throws it: no answer, no usage, nothing of this package's outcome.
    expect((error as Error).name).toBe("$ZodError");
    expect((error as { issues: Array<{ path: string[] }> }).issues.map((issue) => issue.path.join("."))).toEqual(["replicas"]);
    expect(server.requests).toHaveLength(3);
    expect(new Set(server.requests.map((request) => JSON.stringify(request.body))).size).toBe(1);
    expect(server.requests[0].body.response_format).toMatchObject({ type: "json_schema", json_schema: { strict: true } });
  }, 60_000);
});
