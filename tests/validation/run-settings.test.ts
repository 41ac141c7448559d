/**
 * Each run setting is declared once: the settings a run records (RunSettingsSchema, the state's `run`)
 * are derived from the run configuration (ValidationConfigSchema), and a run records every setting it
 * was given. A setting declared in one and not the other fails here.
 */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { ConfigurationError } from "../../src/errors.js";
import { ensureValidationConfig, ValidationConfigSchema, type ValidationConfigInput } from "../../src/validation/configuration.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { RunSettingsSchema } from "../../src/validation/state.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

/** What a run records beside its settings: the request, the budgets a person's new request renews, and its span when traced. */
const RUN_ONLY = ["request", "attemptLimit", "tokenLimit", "trace"];

const settingKeys = Object.keys(ValidationConfigSchema.shape).sort();
const recordedKeys = Object.keys(RunSettingsSchema.shape).sort();

describe("the settings a run records", () => {
  it("are the run configuration's settings, and only the run's own additions besides", () => {
    expect(settingKeys.length).toBeGreaterThan(10);
    expect(recordedKeys.filter((key) => !RUN_ONLY.includes(key))).toEqual(settingKeys);
    expect(RUN_ONLY.filter((key) => settingKeys.includes(key))).toEqual([]);
  });

  it("a run given every setting records each of them", async () => {
    const every = {
      spec: "deployment-config",
      maxAttempts: 2,
      models: [{ model: "gpt-4o-mini" }],
      temperature: 0.5,
      stopOnNoProgress: true,
      outputMode: "text",
      stopEarly: "never",
      repairSyntax: false,
      retryWith: "corrections",
      ruleContext: { team: "payments" },
      maxTokens: 100_000,
      onFailure: "end",
    } satisfies Omit<Required<ValidationConfigInput>, "model">;
    // `model` is the one setting not given beside `models` (an escalation's first entry is its model).
    expect([...Object.keys(every), "model"].sort()).toEqual(settingKeys);

    const graph = buildValidationGraph({
      model: scriptedModel([JSON.stringify(builtinSpecs.get("deployment-config")!.example)]),
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "every-setting" } };
    await graph.invoke({ request: "A deployment config for payments-api" }, { ...config, context: every });
    const run = (await graph.getState(config)).values.run as Record<string, unknown>;
    // No OpenTelemetry SDK is registered here: the run has no span to keep (tests/telemetry/ has one).
    expect(Object.keys(run).sort()).toEqual(recordedKeys.filter((key) => key !== "trace"));
    expect(run).toMatchObject({
      ...every,
      spec: { name: "deployment-config" },
      model: "gpt-4o-mini",
      models: [{ model: "gpt-4o-mini", attempts: 1 }],
      attemptLimit: 2,
      tokenLimit: 100_000,
    });
  });
});

describe("a setting that throws when read", () => {
  /** A Proxy whose every trap throws: what reading it runs is the caller's code. */
  const hostile = () =>
    new Proxy(
      {},
      Object.fromEntries(
        (["get", "has", "ownKeys", "getOwnPropertyDescriptor", "getPrototypeOf"] as const).map((trap) => [
          trap,
          () => {
            throw new Error(`${trap} trap`);
          },
        ]),
      ),
    );

  it("a ruleContext (or a field of it) that is such a Proxy is a ConfigurationError naming ruleContext, and no model is called", async () => {
    for (const ruleContext of [hostile(), { services: hostile() }, { teams: [hostile()] }]) {
      expect(() => ensureValidationConfig({ context: { ruleContext } })).toThrow(ConfigurationError);
      expect(() => ensureValidationConfig({ context: { ruleContext } })).toThrow(/^ruleContext could not be read.* trap/);
    }
    const model = scriptedModel([JSON.stringify(builtinSpecs.get("deployment-config")!.example)]);
    const graph = buildValidationGraph({ model });
    await expect(graph.invoke({ request: "A deployment config" }, { context: { ruleContext: hostile() } } as never)).rejects.toThrow(
      /ruleContext could not be read/,
    );
    expect(model.calls).toHaveLength(0);
  });

  it("run settings that cannot be read at all are a ConfigurationError", () => {
    expect(() => ensureValidationConfig({ configurable: hostile() as Record<string, unknown> })).toThrow(ConfigurationError);
    expect(() => ensureValidationConfig({ configurable: hostile() as Record<string, unknown> })).toThrow(/the run's settings .* could not be read/);
  });
});
