/** The retry-forms section (eval/retry-forms.ts) and the simulated model's corrections and syntax slips it runs on. */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { correctionPrompt, firstAttemptPrompt } from "../../src/protocol/feedback.js";
import { applyCorrection, shownValue } from "../../src/validation/corrections.js";
import { extractJson } from "../../src/json/parse.js";
import { EvaluationModel } from "../../eval/simulated-model.js";
import { checkValue } from "../../src/specs/check.js";
import { generateValidated } from "../../src/validation/generate.js";
import { generationSystemPrompt } from "../../src/validation/prompts.js";
import { renderRetryForms, runRetryForms, sizedSpec } from "../../eval/retry-forms.js";
import { main } from "../../eval/run.js";

const spec = sizedSpec(5_000);
const request = `${spec.description} Request 1.`;

async function firstAnswer(model: EvaluationModel): Promise<string> {
  return (await model.invoke([new SystemMessage(generationSystemPrompt(spec)), new HumanMessage(firstAttemptPrompt(request))])).text;
}

describe("the simulated model's corrections and slips", () => {
  it("answers a correction request with the JSON Patch that fixes exactly the named defects, the same for the same seed", async () => {
    const model = new EvaluationModel({ seed: 3, defects: 3 }, "generator");
    const first = JSON.parse(await firstAnswer(model));
    const verdict = await checkValue(spec, first);
    expect(verdict.valid).toBe(false);
    const prompt = correctionPrompt(request, shownValue(first), verdict.errors);
    const ask = () => model.invoke([new SystemMessage(generationSystemPrompt(spec)), new HumanMessage(prompt)]);
    const correction = (await ask()).text;
    expect((await ask()).text).toBe(correction);
    expect(JSON.parse(correction)).toHaveLength(3);
    const applied = applyCorrection(correction, first);
    expect(applied.ok && (await checkValue(spec, applied.value)).valid).toBe(true);
  });

  it("at a bad-correction rate of 1, every correction is set aside and a whole-answer retry still reaches a valid answer", async () => {
    const problems = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const outcome = await generateValidated({
        model: new EvaluationModel({ seed, defects: 1, badCorrectionRate: 1 }, "generator"),
        spec,
        request,
        retryWith: "corrections",
        maxAttempts: 3,
      });
      expect(outcome).toMatchObject({ success: true, attempts: 3 });
      const set = outcome.history[1].correction!;
      expect(set.applied).toBe(false);
      problems.add(
        /tests a value/.test(set.problem!)
          ? "not-applicable"
          : /does not have/.test(set.problem!)
            ? "wrong-path"
            : /more than/.test(set.problem!)
              ? "worse"
              : set.problem!,
      );
    }
    expect([...problems].sort()).toEqual(["not-applicable", "worse", "wrong-path"]);
  });

  it("at a slip rate of 1, every whole answer has a syntax slip: repaired without a call, or refused with repairSyntax off", async () => {
    const kinds = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
      const text = await firstAnswer(new EvaluationModel({ seed, defects: 0, slipRate: 1 }, "generator"));
      expect(extractJson(text, {}, { repair: false }).ok).toBe(false);
      const read = extractJson(text);
      expect(read.ok && read.repairs!.length).toBe(1);
      const kind = ["trailing comma", "comment", "single-quoted", "quoted", "read as"].find((words) => read.ok && read.repairs![0].includes(words));
      kinds.add(kind ?? "");
    }
    expect(kinds.size).toBeGreaterThanOrEqual(3);
  });
});

describe("the retry-forms section", () => {
  it("reports each form per valid output, says the figures are simulated, and corrections' retries write fewer tokens", async () => {
    const result = await runRetryForms({ sizes: [5_000], defects: [1], requests: 2, badCorrectionRate: 0 });
    const [whole, corrections] = result.rows;
    expect([whole.form, corrections.form]).toEqual(["answer", "corrections"]);
    expect(corrections.valid).toBe(whole.valid);
    expect(corrections.retryOutputTokens).toBeLessThan(whole.retryOutputTokens);
    expect(result.slips.map((s) => s.repair)).toEqual([true, false]);
    const markdown = renderRetryForms(result);
    expect(markdown).toContain("These figures come from the simulated model, not a language model");
  });

  it("npm run eval refuses an unknown --retry-with form before anything runs", async () => {
    const log: string[] = [];
    await expect(main(["--retry-with", "patch"], (line) => log.push(line))).rejects.toThrow(/--retry-with: no form "patch"; use answer, corrections, auto/);
    expect(log).toEqual([]);
  });
});
