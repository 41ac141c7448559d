/**
 * `npm run eval` against an OpenAI-compatible endpoint with one command: the retry-forms section runs
 * both forms through the real ChatOpenAI client over HTTP. The endpoint here is the scripted server
 * answering with the simulated model's rules (a stand-in: no language model is reachable in tests), so
 * every retry, whole or a correction, crosses the wire; each run's first answer is planted.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../eval/run.js";
import { PROMPT_HEADINGS } from "../../src/protocol/feedback.js";
import { SimulatedChatModel } from "../../src/simulated/model.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";

let server: ScriptedServer;
let dir: string;
// The stand-in plans one defect with the evaluation's seed: the very defect planted in the 1-defect runs, which it then fixes.
const simulated = new SimulatedChatModel({ seed: 1, defects: 1 }, "generator");
const asMessages = (messages: Array<{ role: string; content: string }>): BaseMessage[] =>
  messages.map((m) => (m.role === "system" ? new SystemMessage(m.content) : m.role === "assistant" ? new AIMessage(m.content) : new HumanMessage(m.content)));

beforeAll(async () => {
  server = await startScriptedOpenAIServer({ responder: async (req) => (await simulated.invoke(asMessages(req.messages))).text });
  dir = mkdtempSync(join(tmpdir(), "eval-endpoint-"));
});

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("npm run eval -- --base-url URL --model NAME --retry-with corrections", () => {
  it("runs whole answers and corrections side by side against the endpoint, and says whose answers they are", async () => {
    const { run, markdown } = await main(
      [
        ...["--base-url", server.baseURL, "--model", "stand-in", "--retry-with", "corrections", "--retry-requests", "1"],
        ...["--strategies", "validation", "--per-spec", "1", "--no-loops", "--out", join(dir, "report.html")],
      ],
      () => undefined,
    );
    const forms = run.retryForms!;
    expect(forms.simulated).toBe(false);
    expect(new Set(forms.rows.map((r) => r.form))).toEqual(new Set(["answer", "corrections"]));
    // The 1-defect runs end valid in both forms: through a JSON Patch the endpoint wrote, or its whole answer.
    for (const row of forms.rows.filter((r) => r.defects === 1)) expect(row.valid, `${row.size} ${row.form}`).toBe(row.runs);
    expect(forms.rows.filter((r) => r.defects === 1 && r.form === "corrections").every((r) => r.corrections > 0 && r.setAside === 0)).toBe(true);
    expect(markdown).toContain("Model: stand-in. The first answer of every run is the simulated model's");
    // Every retry went to the endpoint; the correction requests among them asked for a JSON Patch.
    const corrections = server.requests.filter((r) => r.messages.some((m) => m.content.includes(PROMPT_HEADINGS.corrections)));
    expect(corrections.length).toBeGreaterThanOrEqual(forms.rows.filter((r) => r.form === "corrections").length);
  });
});
