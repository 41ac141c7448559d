/**
 * Soundness of the partial checks (src/streaming): answers streamed in seeded
 * random chunkings, down to one character, compared with the check step's
 * verdict on the complete answer.
 *
 *   - A valid answer never gets an error, never looks hopeless, and no stop
 *     policy would stop it, at any point of any chunking: also when the check
 *     step's reader chooses a later value (a corrected fenced block after a
 *     draft, after a broken one, after an array).
 *   - Every error reported for an invalid answer is one the full check reports
 *     (word for word) for the complete answer.
 *   - The same answer gives the same errors whatever the chunking.
 *   - Broken JSON, a field named twice, nesting past the bound, a root of the
 *     wrong type and an answer past the size limit are seen as hopeless, and
 *     the full check refuses every such answer.
 *
 * Answers: every built-in spec's example and seeded mutations of it (those
 * that stay valid and those that do not), zod specs, inline specs with
 * combinators, and the official JSON-Schema-Test-Suite's object and array
 * cases; each wrapped as a model writes it (bare, pretty, fenced, after prose,
 * after prose with a brace that is not JSON). A tool call's arguments are
 * judged as the same kind of text, as sent.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkTextSync } from "../../src/specs/check.js";
import { builtinSpecs, resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type Spec } from "../../src/specs/spec.js";
import { PartialCheck, stopDecision } from "../../src/streaming/partial-check.js";
import { deploymentConfigMessages } from "../../src/specs/builtin/deployment-config.js";
import { seededRandom } from "../../testkit/random.js";
import { buildSpec, loadSuite, needsRemote, suiteSchema } from "./official-suite.support.js";

const ALL = { maxErrors: 100_000 };

type Random = () => number;
const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)];

/** The text in pieces: every character alone, or random sizes up to `max`. */
function chunk(text: string, random: Random, max: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length;) {
    const size = max === 1 ? 1 : 1 + Math.floor(random() * max);
    pieces.push(text.slice(i, i + size));
    i += size;
  }
  return pieces;
}

/** How a model may write one JSON value. */
const WRAPPERS: Array<{ name: string; wrap: (value: unknown) => string }> = [
  { name: "compact", wrap: (v) => JSON.stringify(v) },
  { name: "pretty", wrap: (v) => `\n  ${JSON.stringify(v, null, 2)}\n` },
  {
    name: "fenced after prose",
    wrap: (v) => `Here is the JSON you asked for:\n\n\`\`\`json\n${JSON.stringify(v, null, 2)}\n\`\`\`\n\nLet me know if anything should change.`,
  },
  { name: "one-line fence", wrap: (v) => `\`\`\`json ${JSON.stringify(v)}\`\`\`` },
  { name: "after prose", wrap: (v) => `Sure. ${JSON.stringify(v)} Hope this helps.` },
  { name: "after a brace that is not JSON", wrap: (v) => `The {placeholder} form is not JSON; here it is:\n${JSON.stringify(v, null, 1)}` },
];

interface Streamed {
  /** Errors after the last piece. */
  errors: string[];
  /** A problem found at some point: an error the full check does not report, an error on a valid answer, a stop of a valid answer. */
  problem?: string;
}

/** Stream `text` in `pieces`, checking the invariants after each piece (and at the end) against the full check of the whole text. */
function stream(spec: Spec, text: string, pieces: string[], full: ReturnType<typeof checkTextSync>): Streamed {
  const check = new PartialCheck(spec);
  const allowed = new Set(full.valid ? [] : full.errors);
  for (const piece of [...pieces, null]) {
    if (piece === null) check.end();
    else check.write(piece);
    const stray = check.errors.find((e) => !allowed.has(e));
    if (stray !== undefined)
      return {
        errors: [...check.errors],
        problem: `reported ${JSON.stringify(stray)}, which the full check does not (${full.valid ? "valid" : JSON.stringify(full.errors.slice(0, 5))})`,
      };
    if (full.valid) {
      const hopeless = check.hopeless();
      if (hopeless !== null) return { errors: [...check.errors], problem: `a valid answer looked hopeless: ${hopeless.reason} (${hopeless.detail})` };
      const stop = stopDecision(check, "first-error");
      if (stop !== null) return { errors: [...check.errors], problem: `a valid answer would be stopped: ${stop.reason}` };
    }
  }
  return { errors: [...check.errors] };
}

/** Seeded mutations of a JSON value: changed values, types, fields, items; some stay valid, most do not. */
function mutate(value: unknown, random: Random, depth = 0): unknown {
  const roll = random();
  // The root stays a container (the partial checks read objects and arrays); below it anything goes.
  if (value !== null && typeof value === "object" && depth < 4 && (roll < 0.55 || depth === 0)) {
    if (Array.isArray(value)) {
      const copy = [...value];
      const r = random();
      if (copy.length > 0 && r < 0.5) {
        const i = Math.floor(random() * copy.length);
        copy[i] = mutate(copy[i], random, depth + 1);
      } else if (r < 0.65) copy.pop();
      else if (r < 0.8 && copy.length > 0) copy.push(structuredClone(copy[0]));
      else copy.push(pick(random, SCALARS));
      return copy;
    }
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const r = random();
    if (keys.length > 0 && r < 0.6) {
      const key = pick(random, keys);
      copy[key] = mutate(copy[key], random, depth + 1);
    } else if (keys.length > 0 && r < 0.75) delete copy[pick(random, keys)];
    else copy[pick(random, ["extra", "note", "X-Trace", "bad key", "parental_consent", "order_by", "body"])] = pick(random, SCALARS);
    return copy;
  }
  if (typeof value === "number") return pick(random, [0, -1, 1, 3, 5.5, 8, 13, 99, 100, 120, 128, 1_000, 5_000, 60_001, 1e9, value + 1, value - 1, value * 2]);
  if (typeof value === "string")
    return pick(random, [
      "",
      "x",
      "GET",
      "POST",
      "DELETE",
      "desc",
      "in",
      "=",
      "UPPER",
      "a b",
      "/healthz",
      "https://api.example.com/v1",
      "ada@example.com",
      "not an email",
      "x".repeat(300),
      value.toUpperCase(),
      `${value}!`,
    ]);
  return pick(random, SCALARS);
}

const SCALARS: unknown[] = [null, true, false, 0, 7, -3, 2.5, "", "text", "application/json", [], {}, ["a", "a"], { a: 1 }];

/** Answers for a spec: its example, `count` seeded mutations of it (most invalid), and up to `count / 2` mutations that stay valid. */
function answersFor(spec: Spec, example: unknown, count: number, seed: number): unknown[] {
  const random = seededRandom(seed);
  const mutated = () => {
    let value = example;
    const steps = 1 + Math.floor(random() * 3);
    for (let k = 0; k < steps; k++) value = mutate(value, random);
    return value;
  };
  const out: unknown[] = [example];
  for (let i = 0; i < count; i++) out.push(mutated());
  let valid = 0;
  for (let tries = 0; tries < count * 20 && valid < count / 2; tries++) {
    const value = mutated();
    if (checkTextSync(spec, JSON.stringify(value), "model").valid) {
      out.push(value);
      valid++;
    }
  }
  return out;
}

interface Tally {
  answers: number;
  valid: number;
  streams: number;
  errorsSeen: number;
  errorsFull: number;
}

/** Every answer in every wrapper, in three chunkings (one character; up to 8; up to 40), checked against the full check. */
function soundness(
  spec: Spec,
  values: unknown[],
  seed: number,
  options: { wrappers?: typeof WRAPPERS; complete?: boolean } = {},
): { problems: string[]; tally: Tally } {
  const random = seededRandom(seed);
  const problems: string[] = [];
  const tally: Tally = { answers: 0, valid: 0, streams: 0, errorsSeen: 0, errorsFull: 0 };
  for (const value of values) {
    for (const { name, wrap } of options.wrappers ?? WRAPPERS) {
      const text = wrap(value);
      const full = checkTextSync(spec, text, "model", { limits: ALL });
      tally.answers++;
      if (full.valid) tally.valid++;
      const finals: string[][] = [];
      for (const max of [1, 8, 40]) {
        tally.streams++;
        const result = stream(spec, text, chunk(text, random, max), full);
        if (result.problem) problems.push(`${spec.name} ${name} (pieces up to ${max}): ${result.problem}\n    ${text.slice(0, 300)}`);
        finals.push([...result.errors].sort());
      }
      if (!finals.every((f) => JSON.stringify(f) === JSON.stringify(finals[0])))
        problems.push(`${spec.name} ${name}: the errors depend on the chunking: ${JSON.stringify(finals)}`);
      if (!full.valid) {
        tally.errorsSeen += finals[0].length;
        tally.errorsFull += full.errors.length;
        // Specs without combinators or async rules: once the value closes, every error of the full check is known.
        if (options.complete && full.parsed !== undefined && JSON.stringify(finals[0]) !== JSON.stringify([...full.errors].sort())) {
          problems.push(
            `${spec.name} ${name}: at the end the partial checks found ${JSON.stringify(finals[0])}, the full check ${JSON.stringify(full.errors)}`,
          );
        }
      }
    }
  }
  return { problems, tally };
}

describe("partial checks are sound", () => {
  it("built-in specs: examples and seeded mutations, six ways of writing them, three chunkings; at the end every error is found", () => {
    let seed = 1;
    const totals: Tally = { answers: 0, valid: 0, streams: 0, errorsSeen: 0, errorsFull: 0 };
    for (const spec of builtinSpecs.values()) {
      const values = answersFor(spec, spec.example, 40, seed++);
      const { problems, tally } = soundness(spec, values, seed++, { complete: true });
      expect(problems).toEqual([]);
      for (const key of Object.keys(totals) as Array<keyof Tally>) totals[key] += tally[key];
    }
    // The mutations must give both kinds of answer, or the test proves little.
    expect(totals.valid).toBeGreaterThan(100);
    expect(totals.answers - totals.valid).toBeGreaterThan(400);
    expect(totals.errorsSeen).toBe(totals.errorsFull);
  });

  it("zod specs: the structure is checked from their JSON Schema, refinements are left to the end", () => {
    const Deployment = z
      .object({
        service_name: z.string().regex(/^[a-z][a-z0-9-]*$/),
        replicas: z.number().int().min(1).max(20),
        tier: z.enum(["web", "worker", "batch"]),
        resources: z.object({ cpu_limit: z.number().min(0.1).max(8), memory_limit_mb: z.number().int().min(128) }),
        ports: z.array(z.number().int().min(1).max(65535)).min(1).max(4),
        labels: z.record(z.string(), z.string().max(20)).optional(),
        owner: z.union([z.string().email(), z.null()]),
      })
      .superRefine((value, ctx) => {
        if (value.replicas > 5 && value.resources.cpu_limit < 1)
          ctx.addIssue({ code: "custom", path: ["resources", "cpu_limit"], message: "needs at least one CPU" });
      });
    const spec = defineSpec({ name: "zod-deployment", description: "A deployment.", schema: Deployment });
    const example = {
      service_name: "api",
      replicas: 3,
      tier: "web",
      resources: { cpu_limit: 0.5, memory_limit_mb: 512 },
      ports: [8080],
      labels: { team: "core" },
      owner: "ops@example.com",
    };
    expect(checkTextSync(spec, JSON.stringify(example), "model").valid).toBe(true);
    const { problems, tally } = soundness(spec, answersFor(spec, example, 60, 11), 12);
    expect(problems).toEqual([]);
    expect(tally.valid).toBeGreaterThan(20);
    expect(tally.errorsSeen).toBeGreaterThan(0);
  });

  it("inline specs with combinators, references, $data, name rules and 2020-12 tuples: nothing uncertain is judged", () => {
    const specs: Array<{ schema: Record<string, unknown>; example: unknown }> = [
      {
        schema: {
          type: "object",
          required: ["kind", "size"],
          additionalProperties: false,
          properties: {
            kind: { enum: ["disk", "memory"] },
            size: { type: "integer", minimum: 1 },
            unit: { type: "string" },
            limits: { type: "object", properties: { min: { type: "integer" }, max: { type: "integer", minimum: { $data: "1/min" } } } },
            tags: { type: "array", items: { type: "string", minLength: 1 }, uniqueItems: true, maxItems: 3 },
            owner: { anyOf: [{ type: "string", format: "email" }, { type: "null" }] },
            node: { $ref: "#/definitions/node" },
          },
          if: { properties: { kind: { const: "disk" } } },
          then: { required: ["unit"], properties: { unit: { enum: ["GB", "TB"] } } },
          else: { not: { required: ["unit"] } },
          definitions: {
            node: {
              type: "object",
              required: ["id"],
              properties: { id: { type: "string", pattern: "^n-[0-9]+$" }, next: { oneOf: [{ $ref: "#/definitions/node" }, { type: "null" }] } },
            },
          },
        },
        example: {
          kind: "disk",
          size: 10,
          unit: "GB",
          limits: { min: 1, max: 4 },
          tags: ["a", "b"],
          owner: null,
          node: { id: "n-1", next: { id: "n-2", next: null } },
        },
      },
      {
        schema: {
          type: "object",
          propertyNames: { pattern: "^[a-z_]+$" },
          patternProperties: { "^x_": { type: "string" } },
          additionalProperties: { type: "number", maximum: 10 },
          dependencies: { a: ["b"] },
          minProperties: 2,
        },
        example: { a: 1, b: 2, x_name: "n" },
      },
      {
        schema: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "array",
          prefixItems: [{ type: "string" }, { type: "integer", multipleOf: 5 }],
          items: { type: "object", required: ["v"], properties: { v: { type: "boolean" } }, unevaluatedProperties: false },
          minItems: 2,
          contains: { type: "object" },
        },
        example: ["id", 10, { v: true }],
      },
    ];
    let seed = 21;
    for (const { schema, example } of specs) {
      const spec = resolveSpec({ name: "inline", schema });
      expect(checkTextSync(spec, JSON.stringify(example), "model").errors).toEqual([]);
      const { problems, tally } = soundness(spec, answersFor(spec, example, 50, seed++), seed++);
      expect(problems).toEqual([]);
      expect(tally.valid).toBeGreaterThan(10);
    }
  });

  it("the official JSON-Schema-Test-Suite (draft-07 and 2020-12): every object and array case, streamed a character at a time and in random pieces", () => {
    const random = seededRandom(5);
    const problems: string[] = [];
    let cases = 0;
    for (const group of loadSuite()) {
      if (needsRemote(group.schema)) continue;
      let spec: Spec;
      try {
        spec = buildSpec("code", suiteSchema(group));
      } catch {
        continue; // refused by design (see the suite's own test)
      }
      for (const test of group.tests) {
        if (test.data === null || typeof test.data !== "object") continue;
        const text = JSON.stringify(test.data);
        const full = checkTextSync(spec, text, "model", { limits: ALL });
        // Refused by the reader before any schema sees it (a field named "__proto__" is not kept by a checkpoint):
        // invalid whatever the partial checks say, and the full report names only that.
        if (full.parsed === undefined) continue;
        cases++;
        for (const max of [1, 6]) {
          const result = stream(spec, text, chunk(text, random, max), full);
          if (result.problem) problems.push(`${group.dialect}/${group.file} › ${group.description} › ${test.description}: ${result.problem}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(cases).toBeGreaterThan(500);
  });
});

/** The valid answers of every built-in spec: its example and seeded mutations that stay valid. */
function validAnswers(count: number): Array<{ spec: Spec; value: unknown }> {
  const out: Array<{ spec: Spec; value: unknown }> = [];
  let seed = 101;
  for (const spec of builtinSpecs.values()) {
    for (const value of answersFor(spec, spec.example, count, seed++)) {
      if (checkTextSync(spec, JSON.stringify(value), "model").valid) out.push({ spec, value });
    }
  }
  return out;
}

/**
 * Ways of writing a valid value that the check step's reader accepts, some of
 * them after a draft it reads past: a draft with a trailing comma, an array,
 * a draft with wrong values, a broken fenced block, a block of code.
 */
const CHOICES: Array<{ name: string; write: (value: unknown, draft: unknown) => string }> = [
  { name: "prose around it", write: (v) => `Sure, here it is: ${JSON.stringify(v)} (tell me if anything should change).` },
  { name: "a fence after prose", write: (v) => `Here it is:\n\`\`\`json\n${JSON.stringify(v, null, 2)}\n\`\`\`\nDone.` },
  {
    name: "a draft with a trailing comma, then the corrected answer in a fence",
    write: (v) => `${JSON.stringify(v).replace(/}$/, ",}")}\nOops, a trailing comma. Corrected:\n\`\`\`json\n${JSON.stringify(v, null, 2)}\n\`\`\``,
  },
  { name: "[] then a fence", write: (v) => `[]\n\`\`\`json\n${JSON.stringify(v)}\n\`\`\`` },
  {
    name: "a draft with wrong values, then a fence",
    write: (v, d) => `${JSON.stringify(d, null, 2)}\nOn second thought:\n\`\`\`\n${JSON.stringify(v)}\n\`\`\`\n`,
  },
  {
    name: "a fenced draft with wrong values, broken, then a fence",
    write: (v, d) => `\`\`\`json\n${JSON.stringify(d).replace(/}$/, "")}\n\`\`\`\nThat was cut. Again:\n\`\`\`json\n${JSON.stringify(v)}\n\`\`\``,
  },
  { name: "a block of code, then a fence", write: (v) => `\`\`\`python\nprint({"a": 1})\n\`\`\`\nand the value:\n~~~json\n${JSON.stringify(v, null, 1)}\n~~~` },
  {
    name: "a broken object in prose, then the object",
    write: (v, d) => `First try: ${JSON.stringify(d).replace(/:/, ":,")} and now properly: ${JSON.stringify(v)}`,
  },
  {
    name: "a draft in prose with a duplicate field, then a fence",
    write: (v, d) => `Draft: ${JSON.stringify(d).replace(/^{/, '{"x": 1, "x": 2, ')}\n\`\`\`json\n${JSON.stringify(v)}\n\`\`\``,
  },
];

describe("the value the check step's reader chooses", () => {
  it("valid answers written after a draft the reader reads past: no error, never hopeless, no stop, in pieces of 1 to 40 characters", () => {
    const random = seededRandom(77);
    const problems: string[] = [];
    let accepted = 0;
    const perShape = new Map<string, number>();
    for (const { spec, value } of validAnswers(12)) {
      const draft = mutate(value, random);
      for (const { name, write } of CHOICES) {
        const text = write(value, draft);
        const full = checkTextSync(spec, text, "model", { limits: ALL });
        if (!full.valid) continue; // a shape the draft made unreadable (e.g. the draft parsed after all)
        accepted++;
        perShape.set(name, (perShape.get(name) ?? 0) + 1);
        for (const max of [1, 2, 7, 40]) {
          const result = stream(spec, text, chunk(text, random, max), full);
          if (result.problem) problems.push(`${spec.name} ${name} (pieces up to ${max}): ${result.problem}\n    ${text.slice(0, 300)}`);
        }
      }
    }
    expect(problems.slice(0, 5)).toEqual([]);
    expect(accepted).toBeGreaterThan(300);
    // Every shape gave answers the check step accepts, or the test proves little.
    for (const { name } of CHOICES) expect(perShape.get(name) ?? 0, name).toBeGreaterThan(30);
  });

  it("the issue's cases under the default policy: a trailing comma then a fence, [] then a fence", () => {
    const spec = builtinSpecs.get("deployment-config")!;
    const value = JSON.stringify(spec.example);
    for (const text of [`${value.replace(/}$/, ",}")}\n\`\`\`json\n${value}\n\`\`\``, `[]\n\`\`\`json\n${value}\n\`\`\``]) {
      expect(checkTextSync(spec, text, "model").valid).toBe(true);
      const check = new PartialCheck(spec);
      for (const piece of chunk(text, seededRandom(1), 1)) {
        check.write(piece);
        expect(stopDecision(check, "useless")).toBeNull();
        expect(check.errors).toEqual([]);
      }
      check.end();
      // At the end the value shown is the one the check step reads.
      expect(check.state()).toEqual({ value: spec.example, complete: [""], errors: [] });
    }
  });

  it("a rule is judged on the whole value: one that reads the document beyond its inputs (with one declared parameter) is never run early", () => {
    const readsDocument = [
      // A rule's declared parameters say nothing sure about what it reads.
      function (this: unknown, v: Record<string, any>) {
        const doc = arguments[1] as { mode?: string };
        return v.size > 10 && doc.mode !== "big" ? "size over 10 needs mode big" : null;
      },
      (v: Record<string, any>, ...rest: unknown[]) => (v.size > 10 && (rest[0] as { mode?: string }).mode !== "big" ? "size over 10 needs mode big" : null),
    ];
    for (const check of readsDocument) {
      const spec = defineSpec({
        name: "sized",
        description: "A size and its mode.",
        schema: { type: "object", required: ["size", "mode"], properties: { size: { type: "integer" }, mode: { type: "string" } } },
        rules: [{ id: "big-needs-mode", description: "size > 10 needs mode big", inputs: { size: "integer" }, check: check as never }],
      });
      for (const text of ['{"size": 20, "mode": "big"}', '```json\n{"size": 20, "mode": "big"}\n```\n']) {
        const full = checkTextSync(spec, text, "model");
        expect(full.valid).toBe(true);
        expect(stream(spec, text, chunk(text, seededRandom(2), 1), full).problem).toBeUndefined();
      }
      const bad = '```json\n{"size": 20, "mode": "small"}\n```\n';
      const partial = new PartialCheck(spec);
      partial.write(bad);
      expect(partial.errors).toEqual(checkTextSync(spec, bad, "model").errors);
    }
  });
});

describe("what cannot be valid is seen, and the full check agrees", () => {
  const spec = builtinSpecs.get("deployment-config")!;
  const text = JSON.stringify(spec.example, null, 2);
  const corrected = `\n\`\`\`json\n${JSON.stringify(spec.example)}\n\`\`\``;

  function streamed(answer: string, limits = {}) {
    const check = new PartialCheck(spec, { limits });
    let first: { at: number; hopeless: ReturnType<PartialCheck["hopeless"]> } | undefined;
    for (const piece of chunk(answer, seededRandom(answer.length), 1)) {
      check.write(piece);
      const hopeless = check.hopeless();
      if (hopeless !== null && first === undefined) first = { at: check.received, hopeless };
    }
    return { check, first };
  }

  it("JSON that breaks is never hopeless while the answer streams: a fenced block after it would be read instead", () => {
    const random = seededRandom(3);
    let notJson = 0;
    for (let n = 0; n < 300; n++) {
      const at = 1 + Math.floor(random() * (text.length - 2));
      const answer = text.slice(0, at) + pick(random, [",", "}", "]", "x", ":", "'", "01"]) + text.slice(at + (random() < 0.5 ? 1 : 0));
      const full = checkTextSync(spec, answer, "model", { limits: ALL });
      if (full.valid) continue;
      notJson++;
      // The same broken text followed by the corrected answer in a fence is valid, so no prefix of it may be hopeless.
      const rescued = `${answer}${corrected}`;
      const fullRescued = checkTextSync(spec, rescued, "model", { limits: ALL });
      if (!fullRescued.valid) continue; // the break left a bracket open around the fence
      expect(streamed(answer).first).toBeUndefined();
      expect(stream(spec, rescued, chunk(rescued, random, 5), fullRescued).problem).toBeUndefined();
    }
    expect(notJson).toBeGreaterThan(100);
  });

  it("a field named twice is left to the check step (a later fenced block could still be read)", () => {
    const answer = text.replace('"replicas": 3,', '"replicas": 3,\n  "replicas": 4,');
    expect(checkTextSync(spec, answer, "model").valid).toBe(false);
    expect(checkTextSync(spec, answer + corrected, "model").valid).toBe(true);
    expect(streamed(answer).first).toBeUndefined();
  });

  it("nesting past the bound in bare JSON: hopeless with the full check's message (nothing after it can change that)", () => {
    const answer = `{"a": ${"[".repeat(70)}${"]".repeat(70)}}`;
    const full = checkTextSync(spec, answer, "model");
    expect(streamed(answer).first?.hopeless).toEqual({ reason: "broken-json", detail: full.errors[0] });
    expect(checkTextSync(spec, answer + corrected, "model").valid).toBe(false);
  });

  it("a root of the wrong type: hopeless once its fenced block closed (its closing line ended), never in bare JSON; an answer past the size limit", () => {
    const array = `[${text}]`;
    expect(streamed(array).first).toBeUndefined();
    expect(checkTextSync(spec, `${array}${corrected}`, "model").valid).toBe(true);
    const fenced = `\`\`\`json\n[${JSON.stringify(spec.example)}]\n\`\`\`\nThat is all.`;
    const closing = fenced.indexOf("\n", fenced.lastIndexOf("```")) + 1;
    expect(streamed(fenced).first).toEqual({ at: closing, hopeless: { reason: "wrong-root", detail: "its JSON value is an array; it must be an object" } });
    expect(checkTextSync(spec, fenced, "model").valid).toBe(false);
    const long = JSON.stringify({ ...(spec.example as object), service_name: "a".repeat(500) });
    const limits = { maxChars: 300 };
    expect(streamed(long, limits).first?.hopeless?.reason).toBe("too-large");
    expect(checkTextSync(spec, long, "model", { limits }).valid).toBe(false);
  });

  it("a truncated answer is never hopeless and reports only what the complete value would", () => {
    const random = seededRandom(9);
    const bad = JSON.stringify({ ...(spec.example as object), replicas: 99, service_name: "Bad Name" }, null, 2);
    const full = checkTextSync(spec, bad, "model", { limits: ALL });
    for (let n = 0; n < 50; n++) {
      const prefix = bad.slice(0, Math.floor(random() * bad.length));
      const { check, first } = streamed(prefix);
      expect(first).toBeUndefined();
      for (const error of check.errors) expect(full.errors).toContain(error);
    }
  });
});

describe("what the partial checks expose", () => {
  const spec = builtinSpecs.get("deployment-config")!;
  const NAME = 'service_name is "Payments"; it must match the pattern ^[a-z][a-z0-9-]*$';
  const REPLICAS = "replicas is 30; it must be <= 20";

  it("the value so far (with the string being written) and the complete parts; a bare answer's errors once it ends", () => {
    const check = new PartialCheck(spec);
    check.write('{"service_name": "Pay');
    expect(check.state()).toEqual({ value: { service_name: "Pay" }, complete: [], errors: [] });
    check.write('ments", "replicas": 30, "resources": {"cpu_limit": 0.5');
    // Errors are held: a fenced block after this value would be read instead of it.
    expect(check.state()).toEqual({ value: { service_name: "Payments", replicas: 30, resources: {} }, complete: ["service_name", "replicas"], errors: [] });
    check.write(", ");
    expect(check.state().complete).toEqual(["service_name", "replicas", "resources.cpu_limit"]);
    check.write('"memory_limit_mb": 512}}');
    expect(check.state().complete).toEqual([""]);
    expect(check.errors).toEqual([]);
    check.end();
    const full = checkTextSync(spec, check.text, "model", { limits: ALL });
    expect([...check.errors].sort()).toEqual([...full.errors].sort());
    expect(check.errors).toEqual(
      expect.arrayContaining([NAME, REPLICAS, deploymentConfigMessages.replicasNeedCpu(0.5, 30), "health_check is missing; it is required"]),
    );
  });

  it("text split anywhere, inside multi-byte characters and surrogate pairs too, reads as JSON.parse reads it", () => {
    const random = seededRandom(17);
    const letters = ["a", "é", "ß", "€", "中", "😀", "𝄞", "\n", '"', "\\", "z"];
    const anything = resolveSpec({ name: "anything", schema: { type: "object" } });
    for (let round = 0; round < 300; round++) {
      const value: Record<string, unknown> = {};
      for (let k = 0; k < 4; k++) {
        let text = "";
        for (let n = 1 + Math.floor(random() * 8); n > 0; n--) text += pick(random, letters);
        value[`${k}${text}`] = [text, k * 1.5, { text }];
      }
      const answer = JSON.stringify(value, null, random() < 0.5 ? 2 : 0);
      const check = new PartialCheck(anything);
      for (const piece of chunk(answer, random, 1 + Math.floor(random() * 5))) check.write(piece);
      expect(check.state()).toEqual({ value, complete: [""], errors: [] });
    }
  });

  it("multipleOf with a decimal divisor: the partial checks agree with the check step, exactly", () => {
    const prices = resolveSpec({
      name: "prices",
      schema: { type: "object", properties: { items: { type: "array", items: { type: "number", multipleOf: 0.01 } } } },
    });
    const answer = '{"items": [0.07, 0.14, 0.29, 0.57, 939.1800000000001]}';
    const check = new PartialCheck(prices);
    check.write(answer);
    check.end();
    const full = checkTextSync(prices, answer, "model", { limits: ALL });
    expect(check.errors).toEqual(["items[4] is 939.1800000000001; it must be a multiple of 0.01"]);
    expect(full.errors).toEqual(check.errors);
  });

  it("a fenced answer's errors are certain once its block's closing line ends", () => {
    const check = new PartialCheck(spec);
    check.write('Here:\n```json\n{"service_name": "Payments", "replicas": 30}\n');
    expect(check.errors).toEqual([]);
    check.write("```");
    // "```x" would not close the block: only the end of the line settles it.
    expect(check.errors).toEqual([]);
    check.write("\nAnything else?");
    expect(check.errors).toEqual(expect.arrayContaining([NAME, REPLICAS]));
    expect(checkTextSync(spec, check.text, "model").errors).toEqual(expect.arrayContaining([...check.errors]));
  });

  it("stop policies: never stops nothing; useless stops when the errors fill a retry's list; first-error at the first", () => {
    const check = new PartialCheck(spec);
    check.write('```json\n{"replicas": 0}\n```\n');
    expect(stopDecision(check, "never")).toBeNull();
    expect(stopDecision(check, "useless")).toBeNull();
    expect(stopDecision(check, "first-error")?.reason).toBe("first-error");
    expect(stopDecision(check, "useless", 1)?.reason).toBe("too-many-errors");
  });
});
