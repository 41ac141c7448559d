import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAULTS, runDeadlineFaults, runEmptyAnswers, runPersistentFaults, runSecretEchoFaults, runTransientFaults } from "../../reliability/provider-faults.js";

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => void process.on("unhandledRejection", onUnhandled));
afterAll(() => void process.off("unhandledRejection", onUnhandled));

// The groups run side by side: each spends most of its time waiting on the client's timeout and back-off.
describe.concurrent("provider faults through ChatOpenAI", () => {
  it("each transient fault is retried with backoff and never counts as a validation attempt (JSON and SSE)", async () => {
    const results = await runTransientFaults();
    expect(results.length).toBe(FAULTS.length * 2);
    expect(results.filter((r) => !r.held).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  }, 240_000);

  it("a healthy reply that misses the client's deadline (as on a loaded machine) is asked for again; the fault is still retried once and never counted (JSON and SSE)", async () => {
    const results = await runTransientFaults({ faults: ["answer dripped one byte a second", "503"], lateFirstRecovery: true });
    expect(results).toHaveLength(4);
    expect(results.filter((r) => !r.held).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
    // The late reply was given up on and asked for again: at least one call more than on a quiet machine.
    for (const r of results) expect(r.detail, r.name).toMatch(/\((?:4|5) calls: a healthy reply was asked for again (?:1|2) time\(s\)/);
  }, 240_000);

  it("a persistent fault ends the run with an error naming the provider's words; the checkpoint keeps attempt 1 and resumes", async () => {
    const results = await runPersistentFaults();
    expect(results.filter((r) => !r.held).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  }, 240_000);

  it("an answer with no content is a billed attempt: counted, its usage kept, the reader's message fed back (JSON and SSE)", async () => {
    const results = await runEmptyAnswers();
    expect(results).toHaveLength(2);
    expect(results.filter((r) => !r.held).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  }, 120_000);

  it("LLM_TIMEOUT_MS bounds the whole answer: a stalled body or a dripping stream ends the run with a ProviderError naming the timeout (JSON and SSE)", async () => {
    const results = await runDeadlineFaults();
    expect(results).toHaveLength(4);
    expect(results.filter((r) => !r.held).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  }, 240_000);

  it("a provider that echoes the Authorization header never hands the key on (JSON and SSE)", async () => {
    const results = await runSecretEchoFaults();
    expect(results).toHaveLength(2);
    expect(results.filter((r) => !r.held).map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
  }, 60_000);
});

describe("after the provider faults", () => {
  it("no unhandled promise rejection", () => {
    expect(unhandled).toEqual([]);
  });
});
