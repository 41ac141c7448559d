/**
 * A builder's `env`: the environment its runs read instead of the process's. It reaches the default model's
 * name (LLM_MODEL), the client of a model the runs name (its keys and URLs) and the operator's limits on
 * the specs runs supply (RUNTIME_SPEC_LIMITS, tests/specs/limits.test.ts), in both graphs.
 */
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../../src/environment.js";
import { ConfigurationError } from "../../src/errors.js";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { buildValidationGraph } from "../../src/validation/graph.js";

/** Runs the body with OPENAI_API_KEY set in the process environment, as a host's would be. */
async function withProcessKey<T>(body: () => Promise<T>): Promise<T> {
  const before = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = "process-key";
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = before;
  }
}

describe("a builder's env", () => {
  it("builds the validation graph's models with its own keys, not the process's", async () => {
    // No key and no URL in the builder's environment: the model cannot be built, whatever the process has.
    const graph = buildValidationGraph({ env: readEnvironment({ LLM_MODEL: "gpt-4o-mini" }) });
    const refusal = await withProcessKey(() => graph.invoke({ request: "anything" }, { context: { maxAttempts: 1 } }).catch((error: unknown) => error));
    expect(refusal).toBeInstanceOf(ConfigurationError);
    expect((refusal as Error).message).toMatch(/No model provider is configured: set OPENAI_API_KEY/);
  });

  it("gives the validation graph's runs its model by name, and that model's client", async () => {
    const out = await buildValidationGraph({ env: readEnvironment({ LLM_MODEL: "simulated" }) }).invoke(
      { request: "A deployment config for payments-api with 8 replicas" },
      { context: { maxAttempts: 4 } },
    );
    expect(out.history[0].model).toBe("simulated");
    expect(out.usage.calls).toBeGreaterThan(0);
  });

  it("builds Reflexion's models with its own keys, not the process's", async () => {
    const graph = buildReflexionGraph({ env: readEnvironment({ LLM_MODEL: "gpt-4o-mini" }) });
    const refusal = await withProcessKey(() => graph.invoke({ tasks: ["Explain recursion."] }, { context: { maxLoops: 1 } }).catch((error: unknown) => error));
    // A provider failure ends the task (stopReason "error") rather than the run: either way it names the missing key.
    const text = refusal instanceof Error ? refusal.message : JSON.stringify(refusal);
    expect(text).toMatch(/No model provider is configured: set OPENAI_API_KEY/);
  });
});
