/**
 * The validation graph while answers stream (an in-process model that streams
 * token by token and stops when its request is aborted): progress on the
 * custom stream, the stop policies, what a stopped attempt records and feeds
 * back, and that a run that does not stream tokens is unchanged.
 */
import { describe, expect, it } from "vitest";
import { ensureValidationConfig } from "../../src/validation/configuration.js";
import { builtinSpecs } from "../../src/specs/registry.js";
import type { AttemptEndEvent, PartialEvent } from "../../src/streaming/attempt.js";
import { buildValidationGraph } from "../../src/validation/graph.js";
import { streamValidated, type ValidationStreamEvent } from "../../src/validation/stream.js";
import type { ValidationOutcome } from "../../src/validation/generate.js";
import { TokenStreamingModel } from "./token-model.js";

const spec = builtinSpecs.get("deployment-config")!;
const example = spec.example as Record<string, unknown>;
const VALID = JSON.stringify(example, null, 2);
const BAD_NAME = JSON.stringify({ ...example, service_name: "Payments API" }, null, 2);
const NAME_ERROR = 'service_name is "Payments API"; it must match the pattern ^[a-z][a-z0-9-]*$';
/** What a model often writes after its answer: the value's errors are certain once the block closes, so a stop saves this. */
const EXPLANATION = `\nThis sets up the service with ${"sensible defaults and a health check ".repeat(12)}.`;
/** An answer in a fenced block, then the explanation. */
const fenced = (answer: string) => `Here is the configuration:\n\`\`\`json\n${answer}\n\`\`\`\n${EXPLANATION}`;
const REQUEST = "A deployment config for payments-api";

async function collect<T>(events: AsyncIterable<ValidationStreamEvent<T>>) {
  const all: ValidationStreamEvent<T>[] = [];
  for await (const event of events) all.push(event);
  const last = all.at(-1)!;
  if (last.kind !== "outcome") throw new Error("no outcome");
  return {
    events: all,
    outcome: last.outcome as ValidationOutcome<T>,
    partials: all.filter((e): e is PartialEvent<T> => e.kind === "partial"),
    finals: all.filter((e): e is AttemptEndEvent<T> => e.kind === "final"),
  };
}

describe("streamValidated", () => {
  it("yields the value as it arrives, each attempt's end, then the outcome (the check step's verdict)", async () => {
    const model = new TokenStreamingModel({ answers: [BAD_NAME, VALID] });
    const { outcome, partials, finals } = await collect(streamValidated({ model, spec, request: REQUEST }));
    expect(outcome).toMatchObject({ success: true, attempts: 2 });
    // Default policy: one error does not make the rest useless, so nothing was stopped.
    expect(model.calls.map((c) => c.aborted)).toEqual([false, false]);
    expect(finals.map((f) => [f.attempt, f.stopped])).toEqual([
      [1, null],
      [2, null],
    ]);
    // A bare answer's errors are certain once it ends (until then a fenced block after it would be read instead).
    expect(finals[0].errors).toEqual([NAME_ERROR]);
    expect(finals[1]).toMatchObject({ value: example, complete: [""], errors: [] });
    // The value grows: each partial of attempt 1 holds what the one before held.
    const first = partials.filter((p) => p.attempt === 1);
    expect(first.length).toBeGreaterThan(5);
    expect(first[0].value).toEqual({});
    expect(first.some((p) => p.complete.includes("service_name"))).toBe(true);
    expect(first.every((p) => p.errors.length === 0)).toBe(true);
    expect(first.at(-1)!.complete).toEqual([""]);
  });

  it('stopEarly "first-error": the request stops at the first certain error; the attempt records where and why, and its retry carries the error', async () => {
    const model = new TokenStreamingModel({ answers: [fenced(BAD_NAME), VALID] });
    const { outcome, finals } = await collect(streamValidated({ model, spec, request: REQUEST, stopEarly: "first-error" }));
    expect(outcome).toMatchObject({ success: true, attempts: 2 });
    const [first] = outcome.history;
    const call = model.calls[0];
    expect(call.aborted).toBe(true);
    expect(call.generated).toBeLessThan(call.tokens / 2);
    expect(first.stopped).toEqual({ at: first.output.length, reason: "first-error", detail: "it has an error already" });
    // Stopped where the block's closing line ended, before the explanation.
    expect(first.output).toBe(fenced(BAD_NAME).slice(0, first.output.length));
    expect(first.output.length).toBeGreaterThanOrEqual(fenced(BAD_NAME).indexOf(EXPLANATION) - 1);
    expect(first.valid).toBe(false);
    expect(first.errors).toEqual([
      NAME_ERROR,
      `The answer was stopped after ${first.output.length} characters at its first error (above). Fix it and give the whole answer again.`,
    ]);
    // The usage counts what was generated: the provider's count never came, so the pieces received.
    expect(first.usage).toMatchObject({ outputTokens: call.generated, calls: 1 });
    expect(JSON.stringify(model.calls[1].messages.map((m) => m.content))).toContain(JSON.stringify(NAME_ERROR).slice(1, -1));
    expect(finals[0].stopped).toEqual(first.stopped);
  });

  it('stopEarly "useless" (the default) stops JSON nested past the bound, a root of the wrong type, and errors that fill a retry\'s list, once certain', async () => {
    const tooDeep = `{"service_name": ${"[".repeat(70)}${EXPLANATION}`;
    const wrongRoot = fenced(`[\n${VALID}\n]`);
    for (const [answer, reason] of [
      [tooDeep, "broken-json"],
      [wrongRoot, "wrong-root"],
    ] as const) {
      const model = new TokenStreamingModel({ answers: [answer, VALID] });
      const { outcome } = await collect(streamValidated({ model, spec, request: REQUEST }));
      expect(outcome).toMatchObject({ success: true, attempts: 2 });
      expect(outcome.history[0].stopped?.reason).toBe(reason);
      expect(model.calls[0].aborted).toBe(true);
      expect(outcome.history[0].errors.at(-1)).toMatch(/^The answer was stopped after \d+ characters: /);
    }
    // The record says why, in the check step's words for the text received.
    const model = new TokenStreamingModel({ answers: [tooDeep, VALID] });
    const { outcome } = await collect(streamValidated({ model, spec, request: REQUEST }));
    expect(outcome.history[0].errors).toEqual([expect.stringMatching(/^The answer was stopped after \d+ characters: The JSON nests deeper than 64 levels/)]);

    const dbQuery = builtinSpecs.get("db-query")!;
    const manyBad = JSON.stringify(
      { ...(dbQuery.example as object), filters: Array.from({ length: 30 }, (_, i) => ({ column: `c${i}`, op: "~", value: i })) },
      null,
      2,
    );
    const db = new TokenStreamingModel({ answers: [fenced(manyBad), JSON.stringify(dbQuery.example)] });
    const run = await collect(streamValidated({ model: db, spec: dbQuery, request: "orders" }));
    expect(run.outcome.history[0].stopped?.reason).toBe("too-many-errors");
    expect(db.calls[0].generated).toBeLessThan(db.calls[0].tokens);
    // The retry carries as many errors as a validator's report does, then why the answer was stopped.
    expect(run.outcome.history[0].errors).toHaveLength(22);
    expect(run.outcome.history[0].errors[20]).toMatch(/^…and \d+ more problems$/);
    expect(run.outcome.history[0].errors[0]).toMatch(/^filters\[0\]\.op is "~"; it must be one of/);
  });

  it("the issue's drafts are not stopped: a broken draft, then the corrected answer in a fence; [] then a fence; both valid at once", async () => {
    for (const answer of [`${VALID.replace(/}$/, ",}")}\n\`\`\`json\n${VALID}\n\`\`\``, `[]\n\`\`\`json\n${VALID}\n\`\`\``]) {
      for (const stopEarly of ["useless", "first-error"] as const) {
        const model = new TokenStreamingModel({ answers: [answer], tokenChars: 1 });
        const { outcome, finals } = await collect(streamValidated({ model, spec, request: REQUEST, stopEarly }));
        expect(outcome).toMatchObject({ success: true, attempts: 1 });
        expect(outcome.history[0].stopped).toBeUndefined();
        expect(model.calls[0].aborted).toBe(false);
        // The final event shows the value the check step read, not the draft.
        expect(finals[0]).toMatchObject({ stopped: null, value: example, complete: [""], errors: [] });
      }
    }
  });

  it('stopEarly "never": the whole answer arrives, and its progress is still published', async () => {
    const broken = VALID.replace('"replicas": 3,', '"replicas": 3,,');
    const model = new TokenStreamingModel({ answers: [broken, VALID] });
    const { outcome, partials } = await collect(streamValidated({ model, spec, request: REQUEST, stopEarly: "never" }));
    expect(model.calls[0]).toMatchObject({ aborted: false, streamed: true });
    expect(outcome.history[0].stopped).toBeUndefined();
    expect(outcome.history[0].errors[0]).toMatch(/^The answer is not valid JSON/);
    expect(partials.length).toBeGreaterThan(3);
  });
});

describe("the graph while tokens stream", () => {
  it("a run that does not stream tokens makes whole-answer calls, as before: no progress, no stop", async () => {
    const model = new TokenStreamingModel({ answers: [BAD_NAME, VALID] });
    const graph = buildValidationGraph({ model, spec });
    const custom: unknown[] = [];
    let final: Record<string, any> = {};
    for await (const [mode, chunk] of await graph.stream({ request: REQUEST }, { context: { stopEarly: "first-error" }, streamMode: ["custom", "values"] })) {
      if (mode === "custom") custom.push(chunk);
      else final = chunk as Record<string, any>;
    }
    expect(model.calls.map((c) => c.streamed)).toEqual([false, false]);
    expect(custom).toEqual([]);
    expect(final.history[0].stopped).toBeUndefined();
    expect(final.history[0].errors).toEqual([NAME_ERROR]);
    expect(final.usage.outputTokens).toBe(model.calls[0].tokens + model.calls[1].tokens);
  });

  it("LangGraph's messages mode streams tokens: the partial checks run and the stop policy applies", async () => {
    const model = new TokenStreamingModel({ answers: [fenced(BAD_NAME), VALID] });
    const graph = buildValidationGraph({ model, spec });
    const kinds = new Set<string>();
    let final: Record<string, any> = {};
    let tokens = 0;
    for await (const [mode, chunk] of await graph.stream(
      { request: REQUEST },
      { context: { stopEarly: "first-error" }, streamMode: ["custom", "messages", "values"] },
    )) {
      if (mode === "custom") kinds.add((chunk as { kind: string }).kind);
      else if (mode === "messages") tokens++;
      else final = chunk as Record<string, any>;
    }
    expect(kinds).toEqual(new Set(["partial", "final"]));
    expect(tokens).toBeGreaterThan(10);
    expect(final).toMatchObject({ success: true, attempts: 2 });
    expect(final.history[0].stopped.reason).toBe("first-error");
  });

  it("the stopEarly setting is checked with the others", () => {
    expect(ensureValidationConfig({ context: {} }).stopEarly).toBe("useless");
    expect(() => ensureValidationConfig({ context: { stopEarly: "sometimes" } })).toThrow('stopEarly must be one of "never", "useless", "first-error"');
  });
});

describe("streamValidated in the AI SDK's shape (partialObjectStream, outcome)", () => {
  it("partialObjectStream gives the value as it grows, attempt by attempt, and outcome the same outcome as the events", async () => {
    const stream = streamValidated({ model: new TokenStreamingModel({ answers: [BAD_NAME, VALID] }), spec, request: REQUEST });
    const partials: unknown[] = [];
    for await (const partial of stream.partialObjectStream) partials.push(structuredClone(partial));
    const outcome = await stream.outcome; // read after the stream ended: still there
    expect(outcome).toMatchObject({ success: true, attempts: 2, value: example });
    expect(partials[0]).toEqual({});
    // Each attempt's value as it ended is among them: the bad name, then the valid value last.
    expect(partials).toContainEqual({ ...example, service_name: "Payments API" });
    expect(partials.at(-1)).toEqual(example);
    // The same run read as events gives the same values.
    const events = await collect(streamValidated({ model: new TokenStreamingModel({ answers: [BAD_NAME, VALID] }), spec, request: REQUEST }));
    expect(events.outcome).toEqual(outcome);
    // The same values as the events carry, in order (an attempt's end is not repeated when its last partial was already whole).
    const distinct = (list: unknown[]) => list.filter((v, i) => i === 0 || JSON.stringify(v) !== JSON.stringify(list[i - 1]));
    expect(distinct(partials)).toEqual(distinct(events.events.filter((e) => e.kind !== "outcome").map((e) => e.value)));
    expect(partials.length).toBeLessThan(events.events.length - 1);
  });

  it("outcome alone runs the stream to its end; the events and the generator's return value agree with it", async () => {
    const model = new TokenStreamingModel({ answers: [BAD_NAME, VALID] });
    const stream = streamValidated({ model, spec, request: REQUEST });
    const outcome = await stream.outcome;
    expect(outcome).toMatchObject({ success: true, attempts: 2 });
    expect(model.calls).toHaveLength(2);
    // Read afterwards, the events have passed; the generator still returns the outcome.
    expect(await stream.next()).toEqual({ done: true, value: outcome });
  });

  it("events and partials read side by side share one run (one model call per attempt)", async () => {
    const model = new TokenStreamingModel({ answers: [BAD_NAME, VALID] });
    const stream = streamValidated({ model, spec, request: REQUEST });
    const partials = stream.partialObjectStream;
    const [events, values] = await Promise.all([
      collect(stream),
      (async () => {
        const out: unknown[] = [];
        for await (const p of partials) out.push(p);
        return out;
      })(),
    ]);
    expect(model.calls).toHaveLength(2);
    expect(events.outcome).toMatchObject({ success: true, attempts: 2 });
    expect(values.length).toBeLessThan(events.events.length - 1);
    expect(values.at(-1)).toEqual(example);
  });

  it("leaving every reader early stops the run; outcome then rejects with a clear error instead of hanging", async () => {
    const model = new TokenStreamingModel({ answers: [BAD_NAME, VALID] });
    const stream = streamValidated({ model, spec, request: REQUEST });
    for await (const event of stream) if (event.kind === "partial") break;
    expect(model.calls).toHaveLength(1);
    await expect(stream.outcome).rejects.toThrow("closed before the run ended");
  });

  it("a reader that leaves mid-answer stops the model's request: nothing more of the answer is generated", async () => {
    const model = new TokenStreamingModel({ answers: [VALID], tokenMs: 2 });
    for await (const event of streamValidated({ model, spec, request: REQUEST })) if (event.kind === "partial") break;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0].aborted).toBe(true);
    expect(model.calls[0].generated).toBeLessThan(model.calls[0].tokens);
  });

  it("bad settings reject outcome and fail the iteration with the same ConfigurationError", async () => {
    const stream = streamValidated({ model: new TokenStreamingModel({ answers: [VALID] }), spec, request: REQUEST, stopEarly: "sometimes" as never });
    await expect(stream.outcome).rejects.toThrow("stopEarly must be one of");
    await expect(
      collect(streamValidated({ model: new TokenStreamingModel({ answers: [VALID] }), spec, request: REQUEST, stopEarly: "sometimes" as never })),
    ).rejects.toThrow("stopEarly must be one of");
  });
});
