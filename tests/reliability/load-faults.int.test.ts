/** Under load with 10% of model calls failing transiently, every run still ends, valid or with an explicit failure; none is lost. */
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { createChatModel, type ModelRequest } from "../../src/models.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { startScriptedOpenAIServer } from "../../testkit/openai-server.js";

const example = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const VALID = JSON.stringify(example);
const BROKEN = JSON.stringify({ ...example, replicas: 8 });
const RUNS = 100;

describe("concurrent runs with transient provider faults", () => {
  it(`${RUNS} concurrent validation runs, 10% of calls answered 503: all end, none lost, faults never counted as attempts`, async () => {
    const server = await startScriptedOpenAIServer({
      latencyMs: 20,
      responder: (req) => {
        if (req.index % 10 === 3) return { fault: "status", status: 503 };
        return req.messages.at(-1)!.content.includes("A validator rejected it") ? VALID : BROKEN;
      },
    });
    try {
      const env = { ...readEnvironment({}), providers: { openai: { apiKey: "test", baseUrl: server.baseURL } }, maxRetries: 3, timeoutMs: 60_000 };
      const graph = buildValidationGraph({ model: (r: ModelRequest) => createChatModel(r, env) });
      const settled = await Promise.allSettled(Array.from({ length: RUNS }, (_, i) => graph.invoke({ request: `deployment config #${i}` })));
      expect(settled).toHaveLength(RUNS);
      const ended = settled.map((s) => (s.status === "fulfilled" ? s.value.stopReason : `error: ${(s.reason as Error).message}`));
      // Every run ended with an explicit outcome.
      for (const outcome of ended)
        expect(["valid", "max_attempts", "no_progress"].includes(outcome!) || outcome!.startsWith("error: Model provider")).toBe(true);
      const fulfilled = settled.filter((s) => s.status === "fulfilled").map((s) => (s as PromiseFulfilledResult<any>).value);
      // With three client retries a 10% fault rate is absorbed: the runs succeed on their second attempt.
      expect(fulfilled.length).toBe(RUNS);
      for (const out of fulfilled) {
        expect(out.success).toBe(true);
        expect(out.attempts).toBe(2);
        expect(out.history.map((h: { attempt: number }) => h.attempt)).toEqual([1, 2]);
      }
      const faults = server.requests.filter((r) => r.index % 10 === 3).length;
      expect(faults).toBeGreaterThanOrEqual(Math.floor((RUNS * 2) / 10) - 1);
    } finally {
      await server.close();
    }
  }, 180_000); // 46 s measured with the machine's load average near 19
});
