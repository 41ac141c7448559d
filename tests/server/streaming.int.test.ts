/**
 * Validated streaming through the LangGraph dev server and the official SDK:
 * `client.runs.stream(…, { streamMode: ["custom", "updates"] })` delivers each
 * attempt's value as it arrives (the server streams model tokens), the end of
 * each attempt, and the nodes' updates; with stopEarly "first-error" the
 * model's request is cut at the first certain error (the model server sees the
 * client go away), and the retry carries the error.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { startDevServer, type DevServer } from "../../testkit/dev-server.js";
import { startTokenServer, type TokenServer } from "../streaming/token-server.js";

const START_TIMEOUT = 180_000;
const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const VALID = JSON.stringify(example, null, 2);
// A fenced answer whose first field is wrong, then a long explanation: its errors are certain once the block's
// closing line ends, so it is stopped there and the rest (about 500 tokens) is never generated, with a wide
// margin for a busy machine, where the client may read the stream late.
const BAD_NAME = `\`\`\`json\n${JSON.stringify({ ...example, service_name: "Payments API" }, null, 2)}\n\`\`\`\n${"The service runs with a health check and sensible limits. ".repeat(35)}`;
const NAME_ERROR = 'service_name is "Payments API"; it must match the pattern ^[a-z][a-z0-9-]*$';

describe("validated streaming on the LangGraph server", () => {
  let model: TokenServer;
  let server: DevServer | undefined;
  let client: Client;

  beforeAll(async () => {
    // The first attempt breaks a pattern in its first field; the retry (which quotes the errors) is valid.
    model = await startTokenServer((body) => ({ content: JSON.stringify(body.messages).includes("A validator rejected it") ? VALID : BAD_NAME }), {
      tokenMs: 5,
    });
    server = await startDevServer({
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: "test", LLM_MAX_RETRIES: "0", LANGGRAPH_API_KEYS: "" },
      startTimeoutMs: START_TIMEOUT - 20_000,
    });
    client = new Client({ apiUrl: server.url, apiKey: null });
  }, START_TIMEOUT);

  afterAll(async () => {
    await server?.stop();
    await model?.close();
  }, 60_000);

  it("custom and updates: partial values while the answer streams, a stopped first attempt, the outcome", async () => {
    const events: Array<{ event: string; data: any }> = [];
    try {
      for await (const chunk of client.runs.stream(null, "validation", {
        input: { request: "A deployment config for payments-api" },
        context: { stopEarly: "first-error", maxAttempts: 3 },
        streamMode: ["custom", "updates"],
      })) {
        events.push(chunk as { event: string; data: any });
      }
    } catch (error) {
      if (error instanceof Error) error.message += `\n--- langgraphjs dev output (tail) ---\n${server?.tail(6_000)}`;
      throw error;
    }
    const custom = events.filter((e) => e.event === "custom").map((e) => e.data);
    const updates = events.filter((e) => e.event === "updates").flatMap((e) => Object.entries(e.data as Record<string, any>));
    expect(updates.map(([node]) => node)).toEqual(["generate", "validate", "generate", "validate"]);

    // Attempt 1: partials as the answer arrived, then its end: stopped at the first error.
    const first = custom.filter((e) => e.attempt === 1);
    const partials = first.filter((e) => e.kind === "partial");
    expect(partials.length).toBeGreaterThan(0);
    expect(partials.at(-1)).toMatchObject({ errors: [NAME_ERROR] });
    const end = first.find((e) => e.kind === "final");
    expect(end).toMatchObject({ stopped: { reason: "first-error" }, errors: [NAME_ERROR] });
    expect(end.value).toMatchObject({ service_name: "Payments API" });

    // The model server saw the request go away long before the end of the answer.
    const [cut, retry] = model.served;
    await expect.poll(() => cut.cut, { timeout: 15_000 }).toBe(true);
    expect(cut.body.stream).toBe(true);
    expect(cut.sent).toBeLessThan(cut.tokens / 2);
    expect(JSON.stringify(retry.body.messages)).toContain("it must match the pattern");

    // The validate node's verdict on what arrived, with the errors found and why the answer was stopped.
    const [, firstValidate] = updates[1];
    expect(firstValidate).toMatchObject({
      success: false,
      errors: [NAME_ERROR, expect.stringMatching(/^The answer was stopped after \d+ characters at its first error/)],
    });
    expect(firstValidate.history[0]).toMatchObject({ valid: false, stopped: { reason: "first-error", at: end.chars } });
    expect(updates[3][1]).toMatchObject({ success: true, stopReason: "valid" });
    // Attempt 2 streamed to the end.
    expect(custom.find((e) => e.attempt === 2 && e.kind === "final")).toMatchObject({ stopped: null, complete: [""], errors: [], value: example });
  }, 120_000);
});
