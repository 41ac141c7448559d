/** Zod specs: the JSON Schema is derived once, refinements are business rules, messages keep the package's form, the result is zod's output. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineSpec } from "../../src/specs/spec.js";
import { generateValidated } from "../../src/validation/generate.js";
import { checkValueSync } from "../../src/specs/check.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

const Deployment = z
  .object({
    service_name: z.string().regex(/^[a-z][a-z0-9-]*$/),
    replicas: z.number().int().min(1).max(20),
    resources: z.object({ cpu_limit: z.number().min(0.1).max(8), memory_limit_mb: z.number().int().min(128) }),
    region: z.string().default("eu-west-1"),
  })
  .superRefine((value, ctx) => {
    if (value.replicas > 5 && value.resources.cpu_limit < 1) {
      ctx.addIssue({ code: "custom", path: ["resources", "cpu_limit"], message: `replicas=${value.replicas} needs a cpu_limit of at least 1.0` });
    }
  });

const spec = defineSpec({ name: "zod-deployment", description: "A deployment.", schema: Deployment });

describe("zod specs", () => {
  it("derives the JSON Schema once (for prompts and Studio) and validates structure with every error", () => {
    expect(spec.schema).toMatchObject({ type: "object", properties: { replicas: { type: "integer", minimum: 1, maximum: 20 } } });
    const report = checkValueSync(spec, { service_name: "Bad Name", replicas: 0, resources: { cpu_limit: "1", memory_limit_mb: 64 } });
    expect(report.valid).toBe(false);
    expect(report.errors).toEqual(
      expect.arrayContaining([
        'service_name is "Bad Name"; it must match the pattern ^[a-z][a-z0-9-]*$',
        "replicas is 0; it must be >= 1",
        'resources.cpu_limit is "1" (string); it must be a number',
        "resources.memory_limit_mb is 64; it must be >= 128",
      ]),
    );
  });

  it("runs refinements as business rules, with the field path and the value found", () => {
    const report = checkValueSync(spec, { service_name: "api", replicas: 8, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } });
    expect(report.valid).toBe(false);
    expect(report.errors).toEqual(["resources.cpu_limit is 0.5; replicas=8 needs a cpu_limit of at least 1.0"]);
  });

  it("a valid value comes back as zod's output (defaults applied)", () => {
    const report = checkValueSync(spec, { service_name: "api", replicas: 2, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } });
    expect(report.valid).toBe(true);
    expect(report.value).toEqual({ service_name: "api", replicas: 2, resources: { cpu_limit: 0.5, memory_limit_mb: 512 }, region: "eu-west-1" });
  });

  it("a refinement that throws is reported, never passed", () => {
    const fragile = defineSpec({
      name: "fragile",
      description: "d",
      schema: z.object({ a: z.number() }).refine(() => {
        throw new Error("boom");
      }),
    });
    const report = checkValueSync(fragile, { a: 1 });
    expect(report.valid).toBe(false);
    expect(report.errors[0]).toMatch(/could not check the value with its zod schema: boom/);
  });

  it("a zod type with no JSON Schema form is refused when the spec is defined", () => {
    expect(() => defineSpec({ name: "dates", description: "d", schema: z.object({ when: z.date() }) })).toThrow(/no JSON Schema form/);
  });

  it("generateValidated: the exact refinement error goes back to the model, and the typed result is zod's output", async () => {
    const model = scriptedModel([
      JSON.stringify({ service_name: "api", replicas: 8, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } }),
      JSON.stringify({ service_name: "api", replicas: 8, resources: { cpu_limit: 2, memory_limit_mb: 512 } }),
    ]);
    const outcome = await generateValidated({ model, spec, request: "payments with 8 replicas", maxAttempts: 3 });
    expect(outcome.success).toBe(true);
    if (!outcome.success) throw new Error("unreachable");
    const region: string = outcome.value.region; // typed from the zod schema
    expect(region).toBe("eu-west-1");
    expect(outcome.attempts).toBe(2);
    expect(String(model.calls[1].messages.at(-1)!.content)).toContain("resources.cpu_limit is 0.5; replicas=8 needs a cpu_limit of at least 1.0");
  });

  it("generateValidated: out of attempts is an explicit failure with the errors", async () => {
    const bad = JSON.stringify({ service_name: "api", replicas: 8, resources: { cpu_limit: 0.5, memory_limit_mb: 512 } });
    const outcome = await generateValidated({ model: scriptedModel([bad, bad]), spec, request: "x", maxAttempts: 2 });
    expect(outcome).toMatchObject({ success: false, stopReason: "max_attempts", attempts: 2 });
    expect(outcome.errors).toHaveLength(1);
  });

  it("generateValidated refuses a misspelt setting at run time, naming the closest one", async () => {
    const settings = { maxAttempt: 5 } as unknown as { maxAttempts: number };
    await expect(generateValidated({ model: scriptedModel([]), spec, request: "x", ...settings })).rejects.toThrow(
      /no setting "maxAttempt"; did you mean "maxAttempts"/,
    );
  });
});
