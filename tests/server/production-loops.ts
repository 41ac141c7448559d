/**
 * Escalation, token budgets and provider refusals through the LangGraph server and the official SDK:
 * the run settings as Studio's form shows them, each model asked of the server's model factory by name,
 * a budget stop, and a refusal the provider marks.
 *
 * Registered by server.int.test.ts against its dev server and scripted model server, so the suite starts
 * one server for both; `respond` is that suite's scripted model, which a refusal case wraps for its turn.
 */
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedRequest, Responder, ScriptedServer } from "../../testkit/openai-server.js";

const TEST_TIMEOUT = 120_000;
const REQUEST = "A deployment config for payments-api with 8 replicas";
/** A request the wrapped model refuses. */
const REFUSED_REQUEST = "A deployment config the provider declines to write";
const REFUSAL = "I'm sorry, but I can't help with that.";

type Out = Record<string, any> & { history: Array<Record<string, any>> };

export function describeProductionLoops(client: () => Client, model: () => ScriptedServer, respond: Responder): void {
  beforeAll(() => {
    model().setResponder((req: RecordedRequest, index: number) =>
      req.messages.some((m) => m.role === "user" && m.content.includes(REFUSED_REQUEST)) ? { content: null, refusal: REFUSAL } : respond(req, index),
    );
  });
  afterAll(() => model().setResponder(respond));

  it(
    "Studio's form offers the escalation list and the token budget, with titles and descriptions",
    async () => {
      const [assistant] = await client().assistants.search({ graphId: "validation", limit: 1 });
      const context = (await client().assistants.getSchemas(assistant.assistant_id)).context_schema as { properties: Record<string, any>; required?: string[] };
      const { models, maxTokens } = context.properties;
      expect(models).toMatchObject({ type: "array", title: "Models (escalation)" });
      expect(models.description).toMatch(/a local one first and a hosted one after it failed/);
      expect(models.items.properties.model).toMatchObject({ type: "string", title: "Model" });
      expect(models.items.properties.attempts).toMatchObject({ type: "integer", title: "Attempts" });
      expect(models.items.required).toEqual(["model"]);
      expect(maxTokens).toMatchObject({ type: "integer", title: "Token budget" });
      expect(context.required ?? []).not.toContain("models");
    },
    TEST_TIMEOUT,
  );

  it(
    "escalation: each model is asked of the server's model factory by name; records and usage say which",
    async () => {
      const before = model().requests.length;
      const out = (await client().runs.wait(null, "validation", {
        input: { request: REQUEST },
        context: { maxAttempts: 2, models: [{ model: "cheap-model" }, { model: "strong-model" }] },
      })) as Out;
      expect(out).toMatchObject({ success: true, stopReason: "valid", attempts: 2 });
      expect(
        model()
          .requests.slice(before)
          .map((r) => r.model),
      ).toEqual(["cheap-model", "strong-model"]);
      expect(out.history.map((h) => h.model)).toEqual(["cheap-model", "strong-model"]);
      expect(Object.keys(out.usageByModel)).toEqual(["cheap-model", "strong-model"]);
      expect(out.usageByModel["cheap-model"].calls + out.usageByModel["strong-model"].calls).toBe(out.usage.calls);
    },
    TEST_TIMEOUT,
  );

  it(
    "a token budget stops the run before the call that would pass it; bad budgets are refused",
    async () => {
      const before = model().requests.length;
      const out = (await client().runs.wait(null, "validation", { input: { request: REQUEST }, context: { maxTokens: 1_000 } })) as Out;
      expect(out).toMatchObject({ success: false, stopReason: "budget", attempts: 1 });
      expect(out.errors.length).toBeGreaterThan(0);
      expect(model().requests.length - before).toBe(1);
      await expect(client().runs.wait(null, "validation", { input: { request: REQUEST }, context: { maxTokens: 0 } })).rejects.toThrow(
        /maxTokens must be an integer/,
      );
    },
    TEST_TIMEOUT,
  );

  it(
    "a refusal the provider marks ends the run 'refused' after one retry, with its text",
    async () => {
      const before = model().requests.length;
      const out = (await client().runs.wait(null, "validation", { input: { request: REFUSED_REQUEST } })) as Out;
      expect(out).toMatchObject({ success: false, stopReason: "refused", attempts: 2, refusal: REFUSAL });
      expect(out.history.map((h) => h.refusal)).toEqual([REFUSAL, REFUSAL]);
      expect(model().requests.length - before).toBe(2);
    },
    TEST_TIMEOUT,
  );
}
