/** Runs every hostile fixture through the validation graph and says, per case, whether the package held. */
import { performance } from "node:perf_hooks";
import { builtinSpecs } from "../src/specs/registry.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { MAX_FEEDBACK_CHARS } from "../src/protocol/feedback.js";
import { checkText } from "../src/specs/check.js";
import { scriptedModel } from "../testkit/scripted-model.js";
import { hostileFixtures } from "./hostile-fixtures.js";

export interface CaseResult {
  name: string;
  held: boolean;
  detail: string;
}

export interface HostileResult extends CaseResult {
  expectedValid: boolean;
  success: boolean | null;
  feedbackChars: number;
  validationMs: number;
}

const REQUEST = "A deployment config for payments-api";

export async function runHostileSuite(): Promise<HostileResult[]> {
  const spec = builtinSpecs.get("deployment-config")!;
  const results: HostileResult[] = [];
  for (const fixture of hostileFixtures) {
    const answer = fixture.answer();
    // One validation (parse + validate), timed alone: the median of three runs.
    const times: number[] = [];
    for (let run = 0; run < 3; run++) {
      const t0 = performance.now();
      await checkText(spec, answer, "model");
      times.push(performance.now() - t0);
    }
    const validationMs = times.sort((a, b) => a - b)[1];

    // The whole graph: the same answer twice, so an invalid one is fed back once.
    const model = scriptedModel([answer, answer]);
    let success: boolean | null = null;
    let problem = "";
    let feedbackChars = 0;
    try {
      const out = await buildValidationGraph({ model }).invoke({ request: REQUEST }, { context: { maxAttempts: 2 } });
      success = out.success;
      if (model.callCount > 1) {
        const retry = String(model.calls[1].messages.at(-1)!.content);
        feedbackChars = retry.length - REQUEST.length;
      }
      if (out.success !== fixture.valid) problem = `success is ${out.success}; expected ${fixture.valid} (${out.errors[0] ?? ""})`;
      else if (feedbackChars > MAX_FEEDBACK_CHARS) problem = `feedback of ${feedbackChars} characters exceeds ${MAX_FEEDBACK_CHARS}`;
    } catch (error) {
      problem = `threw ${(error as Error).name}: ${(error as Error).message}`;
    }
    const polluted = Object.keys(Object.prototype).length > 0 || ({} as Record<string, unknown>).polluted !== undefined;
    if (polluted) problem = "Object.prototype was modified";
    results.push({
      name: fixture.name,
      expectedValid: fixture.valid,
      success,
      feedbackChars,
      validationMs,
      held: problem === "",
      detail: problem || (success ? "valid" : "refused with exact feedback"),
    });
  }
  return results;
}
