/**
 * The verdict as LangSmith feedback: what the handler asks a LangSmith client to send when a validation run
 * ends (the graph's run id, `valid` 0/1 with the stop reason, `attempts`), nothing for other runs, and a client
 * that fails changes nothing.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { VerdictFeedbackHandler, type FeedbackClient } from "../../src/telemetry/langsmith-feedback.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

const VALID = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const REQUEST = "A deployment config for payments-api with 8 replicas";

function recordingClient(fail = false) {
  const sent: { runId: string; key: string; options: Parameters<FeedbackClient["createFeedback"]>[2] }[] = [];
  const client: FeedbackClient = {
    async createFeedback(runId, key, options) {
      sent.push({ runId, key, options });
      if (fail) throw new Error("LangSmith is down");
      return {};
    },
  };
  return { client, sent };
}

describe("VerdictFeedbackHandler", () => {
  it("scores the graph's run: valid 1 with its stop reason, and its attempts", async () => {
    const { client, sent } = recordingClient();
    const feedback = new VerdictFeedbackHandler(client);
    const runId = randomUUID();
    await buildValidationGraph({ model: scriptedModel(["not json", JSON.stringify(VALID)]) }).invoke({ request: REQUEST }, { runId, callbacks: [feedback] });
    await feedback.flush();
    expect(sent).toEqual([
      { runId, key: "valid", options: { score: 1, comment: "valid", sourceInfo: { spec: "deployment-config" } } },
      { runId, key: "attempts", options: { score: 2 } },
    ]);
  });

  it("a run that fails scores 0 with why; a client that fails changes nothing", async () => {
    const { client, sent } = recordingClient(true);
    const feedback = new VerdictFeedbackHandler(client);
    const out = await buildValidationGraph({ model: scriptedModel(["not json"]) }).invoke(
      { request: REQUEST },
      { context: { maxAttempts: 1 }, callbacks: [feedback] },
    );
    await feedback.flush();
    expect(out).toMatchObject({ success: false, stopReason: "max_attempts" });
    expect(sent.map((s) => [s.key, s.options.score, s.options.comment])).toEqual([
      ["valid", 0, "max_attempts"],
      ["attempts", 1, undefined],
    ]);
  });

  it("nothing is sent for a run of another graph", async () => {
    const { client, sent } = recordingClient();
    const feedback = new VerdictFeedbackHandler(client);
    feedback.handleChainStart({ lc: 1, type: "not_implemented", id: [] }, {}, "r1", undefined, undefined, undefined, undefined, "Some chain");
    feedback.handleChainEnd({ success: true, stopReason: "valid" }, "r1");
    await feedback.flush();
    expect(sent).toEqual([]);
  });
});
