/**
 * Judged is kept, on PostgreSQL: what a run returns is what PostgresSaver gives back, through getState and
 * every entry of the thread's history; a marker-shaped answer never ends valid; over seeded answers (numbers
 * at every edge, -0, lone surrogates, NUL, odd keys), returned = kept = judged, leaf by leaf with Object.is.
 */
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";
import { keptCases, REFUSED, sameJson, seeingSpec } from "../support/kept-values.js";
import { describeWithPostgres } from "../support/postgres.js";

const REQUEST = { method: "POST", url: "https://api.example.com/v1/orders", headers: { "Content-Type": "application/json" }, timeout_ms: 5000, retries: 0 };
const MARKER = { ...REQUEST, body: { lc: 2, type: "constructor", id: ["Set"], args: [[1, 2]] } };
const VALID = { ...REQUEST, body: { lc: "2", type: "undefined", items: [{ lc: 2 }, 1e308, 5e-324, "\u2028"], lg_name: "send" } };

describeWithPostgres("judged is kept through PostgresSaver", (db) => {
  let saver: PostgresSaver;
  beforeAll(async () => {
    saver = PostgresSaver.fromConnString(db.url);
    await saver.setup();
  });
  afterAll(async () => {
    await saver?.end();
  });

  it("a marker-shaped body is refused; the valid answer comes back from getState and the history exactly as returned", async () => {
    const graph = buildValidationGraph({ model: scriptedModel([JSON.stringify(MARKER), JSON.stringify(VALID)]), checkpointer: saver });
    const config = { configurable: { thread_id: "kept-pg" }, context: { spec: "api-request" } };
    const out = await graph.invoke({ request: "POST an order" }, config);
    expect(out.history[0].errors[0]).toMatch(/^The JSON cannot be kept as written: body has the fields "lc" and "type"/);
    expect(out).toMatchObject({ success: true, value: VALID });
    // A fresh saver on the same database: nothing is served from memory.
    const reader = PostgresSaver.fromConnString(db.url);
    try {
      const fresh = buildValidationGraph({ model: scriptedModel([]), checkpointer: reader });
      expect((await fresh.getState(config)).values.value).toEqual(out.value);
      let seen = 0;
      for await (const snapshot of fresh.getStateHistory(config)) {
        const value = (snapshot.values as { value?: unknown }).value;
        if (value !== null && value !== undefined) {
          expect(value).toEqual(VALID);
          seen++;
        }
      }
      expect(seen).toBeGreaterThan(0);
    } finally {
      await reader.end();
    }
  });

  it("200 seeded answers: refused where the oracle says, else the result returned, the one the rule judged and the one a fresh PostgresSaver gives back are one", async () => {
    const cases = keptCases(42, 200);
    const { spec, seen } = seeingSpec();
    const graph = buildValidationGraph({ model: scriptedModel(cases.map((c) => c.text)), spec, checkpointer: saver, maxAttempts: 1 });
    const accepted: Array<{ config: { configurable: { thread_id: string } }; text: string; expected: unknown }> = [];
    for (const [i, { text, expected }] of cases.entries()) {
      seen.length = 0;
      const config = { configurable: { thread_id: `kept-property-${i}` } };
      const out = await graph.invoke({ request: "any object" }, config);
      if (expected === REFUSED) {
        expect(out.success, text).toBe(false);
        continue;
      }
      expect(out.success, `${text}: ${out.errors}`).toBe(true);
      expect(sameJson(out.value, expected), `returned: ${text}`).toBe(true);
      expect(sameJson(seen[0], expected), `judged: ${text}`).toBe(true);
      accepted.push({ config, text, expected });
    }
    expect(accepted.length).toBeGreaterThan(40);
    expect(cases.length - accepted.length).toBeGreaterThan(40);
    const reader = PostgresSaver.fromConnString(db.url);
    try {
      const fresh = buildValidationGraph({ model: scriptedModel([]), spec, checkpointer: reader });
      for (const { config, text, expected } of accepted) {
        expect(sameJson((await fresh.getState(config)).values.value, expected), `kept: ${text}`).toBe(true);
      }
    } finally {
      await reader.end();
    }
  });
});
