/**
 * The `model` option of every entry point that takes a model: a model's name written there is taken as the name
 * (given twice, it is refused, saying where it goes), and anything that is not a model, a factory or a name is
 * refused before any model call, as a ConfigurationError rather than a crash inside the graph.
 */
import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/errors.js";
import { ReflexionAgent } from "../../src/reflexion/agent.js";
import { buildReflexionGraph } from "../../src/reflexion/graph.js";
import { generateValidated } from "../../src/validation/generate.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated } from "../../src/validation/stream.js";

const REQUEST = "A deployment config for payments-api with 8 replicas";

describe("a model's name given as `model`", () => {
  it("is the model name in generateValidated and streamValidated", async () => {
    const outcome = await generateValidated({ model: "simulated", spec: "deployment-config", request: REQUEST });
    expect(outcome.success).toBe(true);
    expect(outcome.history.map((record) => record.model)).toEqual(outcome.history.map(() => "simulated"));
    expect(Object.keys(outcome.usageByModel)).toEqual(["simulated"]);

    const streamed = await streamValidated({ model: "simulated", spec: "deployment-config", request: REQUEST }).outcome;
    expect(streamed.success).toBe(true);
    expect(Object.keys(streamed.usageByModel)).toEqual(["simulated"]);
  });

  it("is the default model of the graph builders and of a ReflexionAgent", async () => {
    const validation = await buildValidationGraph({ model: "simulated", spec: "deployment-config" }).invoke({ request: REQUEST });
    expect(validation.success).toBe(true);
    expect(Object.keys(validation.usageByModel)).toEqual(["simulated"]);

    const reflexion = await buildReflexionGraph({ model: "simulated" }).invoke({ tasks: ["Say hello."] }, { context: { maxLoops: 1 } });
    expect(reflexion.results[0]).toMatch(/simulated model/);

    const agent = new ReflexionAgent({ model: "simulated", maxLoops: 1 });
    expect(await agent.act("Say hello.")).toMatch(/simulated/);
  });

  it("is refused beside a name given where names go, saying where it goes", async () => {
    const both = generateValidated({ model: "anthropic/claude-sonnet-4-5", modelName: "simulated", spec: "deployment-config", request: REQUEST });
    await expect(both).rejects.toThrow(ConfigurationError);
    await expect(both).rejects.toThrow(
      'model is a name ("anthropic/claude-sonnet-4-5") and modelName is "simulated": give the model\'s name once, in modelName',
    );
    expect(() => new ReflexionAgent({ model: "simulated", modelName: "simulated" })).toThrow(/give the model's name once, in modelName/);
    expect(() => buildValidationGraph({ model: "simulated", defaults: { model: "openai/gpt-4o-mini" } })).toThrow(
      /give the model's name once, in defaults\.model/,
    );
  });
});

describe("a `model` that is neither a model, a factory nor a name", () => {
  it.each([
    ["an object", {}, "an object that is not a chat model"],
    ["a number", 4, "a number"],
    ["null", null, "null"],
  ])("(%s) is refused before any model call", async (_what, model, said) => {
    const run = generateValidated({ model: model as never, spec: "deployment-config", request: REQUEST });
    await expect(run).rejects.toThrow(ConfigurationError);
    await expect(run).rejects.toThrow(`model must be a chat model (a LangChain chat model instance), a function that returns one, or a model's name`);
    await expect(run).rejects.toThrow(said);
    expect(() => buildValidationGraph({ model: model as never })).toThrow(ConfigurationError);
    expect(() => buildReflexionGraph({ model: model as never })).toThrow(ConfigurationError);
  });
});
