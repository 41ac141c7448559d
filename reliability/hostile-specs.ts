/**
 * Hostile specs: schemas a caller can send with a run, each of which must be
 * refused with a clear reason, or accepted and then never pass an invalid
 * answer and validate the largest answer the parser accepts within budget.
 * Also: heap after thousands of distinct specs (evicted specs are freed).
 */
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { z } from "zod";
import { SpecError } from "../src/errors.js";
import { RUNTIME_SPEC_LIMITS } from "../src/specs/limits.js";
import { INLINE_SPEC_CACHE_SIZE, resolveSpec } from "../src/specs/registry.js";
import type { Spec } from "../src/specs/spec.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { checkText, checkValueSync } from "../src/specs/check.js";
import { scriptedModel } from "../testkit/scripted-model.js";
import type { CaseResult } from "./hostile.js";

/**
 * What validating any accepted answer (up to the 1 MB parser limit) against any accepted run-time spec may
 * cost. The default limits bound cost, not features, so that large real schemas are accepted: the most work
 * per item they allow, over a 1 MB answer, measured 418 ms on a loaded 2-core machine.
 */
export const VALIDATION_BUDGET_MS = 1_000;
/**
 * What compiling an accepted run-time spec may cost: a spec near the default compiled-size bound takes 1-2.5 s
 * of CPU (an operator who needs less tightens RUNTIME_SPEC_LIMITS; docs/specs.md).
 */
export const COMPILE_BUDGET_MS = 3_000;

interface Probe {
  /** An answer as JSON text, and whether it deserves to pass. */
  text: string;
  valid: boolean;
}

export interface HostileSpecCase {
  name: string;
  schema: Record<string, unknown>;
  /** A pattern the refusal must match; absent when the spec must be accepted. */
  refused?: RegExp;
  probes?: () => Probe[];
}

const ONE_MB = 1_000_000;
const strings = (n: number, make: (i: number) => string) => JSON.stringify(Array.from({ length: n }, (_, i) => make(i)));
/** The longest array of short strings the parser accepts. */
const manyStrings = (make: (i: number) => string) => strings(Math.floor(ONE_MB / (make(0).length + 3)) - 10, make);

const recursive = { type: "object", required: ["name"], properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } } };
const tree = (depth: number, bad: boolean): unknown =>
  depth === 0 ? (bad ? { name: 7 } : { name: "leaf" }) : { name: `n${depth}`, children: [tree(depth - 1, bad)] };

/** A large flat spec, as real ones are: 250 fields, 50 of them with a pattern (what the old count limits refused outright). */
function largeFlat(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 250; i++) {
    properties[`f${i}`] = i < 50 ? { type: "string", pattern: `^[a-z]{1,${i + 1}}x${i}(foo|bar)*[0-9]+$` } : { type: "integer", minimum: i, maximum: i + 1000 };
  }
  return { type: "object", required: Object.keys(properties).slice(0, 20), properties };
}

/** The most subschemas per item the limits allow, two of them patterns, on every string of the largest answer they let it check. */
const heaviestPerItem = {
  type: "array",
  items: {
    anyOf: [
      ...Array.from({ length: RUNTIME_SPEC_LIMITS.maxApplicationsPerValue - 4 }, (_, i) => ({ type: "string", minLength: 100 + i })),
      { type: "string", allOf: [{ pattern: "^(a|b)*$" }, { pattern: "a.*b" }] },
    ],
  },
};
/** How many items of it one answer may hold: the answer's applications bound over the items' (the array itself is one value more). */
const heaviestItems = () => Math.floor(RUNTIME_SPEC_LIMITS.maxApplicationsPerAnswer / resolveSpec(heaviestPerItem).applicationsPerValue!) - 1;

export const HOSTILE_SPECS: HostileSpecCase[] = [
  { name: "$async: true at the root", schema: { $async: true, type: "object" }, refused: /"\$async".*not allowed/ },
  {
    name: "$async: true in a nested schema",
    schema: { type: "object", properties: { a: { $async: true, type: "string" } } },
    refused: /"\$async" at #\/properties\/a/,
  },
  {
    name: "required inherited names (constructor, toString, __proto__, hasOwnProperty)",
    schema: { type: "object", required: ["constructor", "toString", "__proto__", "hasOwnProperty"] },
    probes: () => [
      { text: "{}", valid: false },
      { text: '{"constructor": 1, "toString": 2, "hasOwnProperty": 3}', valid: false },
    ],
  },
  {
    name: "properties named after Object.prototype members, typed",
    schema: { type: "object", required: ["constructor"], properties: { constructor: { type: "string" } } },
    probes: () => [
      { text: "{}", valid: false },
      { text: '{"constructor": 5}', valid: false },
      { text: '{"constructor": "x"}', valid: true },
    ],
  },
  {
    name: "recursive schema ($ref: #)",
    schema: recursive,
    probes: () => [
      { text: JSON.stringify(tree(20, false)), valid: true },
      { text: JSON.stringify(tree(20, true)), valid: false },
    ],
  },
  {
    name: "recursive through $defs (draft 2020-12)",
    schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $ref: "#/$defs/node",
      $defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" }, v: { type: "integer" } } } },
    },
    probes: () => [
      { text: '{"v": 1, "next": {"v": 2, "next": {"v": 3}}}', valid: true },
      { text: '{"v": 1, "next": {"v": "two"}}', valid: false },
    ],
  },
  {
    name: "recursive through definitions (draft-07)",
    schema: {
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { n: { type: "array", items: { anyOf: [{ type: "integer" }, { $ref: "#/definitions/n" }] } } },
      $ref: "#/definitions/n",
    },
    probes: () => [
      { text: "[1, [2, [3]], 4]", valid: true },
      { text: '[1, [2, ["x"]]]', valid: false },
    ],
  },
  {
    name: "zod 4's z.toJSONSchema() output (2020-12)",
    schema: z.toJSONSchema(z.object({ id: z.string().min(3), tags: z.array(z.string()).max(3), kind: z.enum(["a", "b"]) })) as Record<string, unknown>,
    probes: () => [
      { text: '{"id": "abc", "tags": [], "kind": "a"}', valid: true },
      { text: '{"id": "ab", "tags": ["1", "2", "3", "4"], "kind": "c"}', valid: false },
      { text: '{"id": "abc", "tags": [], "kind": "a", "extra": 1}', valid: false },
    ],
  },
  {
    name: "an unknown $schema (draft-03)",
    schema: { $schema: "http://json-schema.org/draft-03/schema#", type: "object" },
    refused: /Unsupported "\$schema".*draft-07.*2020-12/,
  },
  { name: "a $schema that is not a string", schema: { $schema: 4, type: "object" }, refused: /"\$schema" must be a string/ },
  {
    name: "a $ref cycle that never reaches into the value",
    schema: { anyOf: [{ $ref: "#" }, { type: "string" }] },
    refused: /cycle that never reaches into the value/,
  },
  { name: "a remote $ref", schema: { $ref: "https://example.com/schema.json" }, refused: /only JSON pointers into the spec itself/ },
  { name: "a $ref to nothing", schema: { type: "object", properties: { a: { $ref: "#/$defs/missing" } } }, refused: /points to nothing/ },
  {
    name: "6,400 patterns",
    schema: { type: "object", properties: Object.fromEntries(Array.from({ length: 6_400 }, (_, i) => [`p${i}`, { type: "string", pattern: `^a${i}$` }])) },
    refused: /over the limit maxCompiledChars/,
  },
  {
    name: "30,000 fields (refused before compiling)",
    schema: { type: "object", properties: Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`${i}`, { type: "integer" }])) },
    refused: /30001 subschemas would compile to more than \d+ characters of code, over the limit maxCompiledChars/,
  },
  {
    name: "a pattern over the length limit",
    schema: { type: "string", pattern: `^${"a?".repeat(RUNTIME_SPEC_LIMITS.maxPatternChars)}$` },
    refused: /characters long, over the limit maxPatternChars/,
  },
  {
    name: "three patterns on one string",
    schema: { type: "string", allOf: [{ pattern: "a" }, { pattern: "b" }, { pattern: "c" }] },
    probes: () => [
      { text: '"abc"', valid: true },
      { text: '"ab"', valid: false },
    ],
  },
  {
    name: "a spec over the size limit",
    schema: {
      type: "object",
      properties: Object.fromEntries(Array.from({ length: RUNTIME_SPEC_LIMITS.maxChars / 20 }, (_, i) => [`field${i}`, { type: "integer" }])),
    },
    refused: /characters of JSON, over the limit maxChars/,
  },
  {
    name: "nesting past the depth limit",
    schema: Array.from({ length: RUNTIME_SPEC_LIMITS.maxDepth + 8 }).reduce<Record<string, unknown>>(
      (inner) => ({ type: "object", properties: { a: inner } }),
      { type: "string" },
    ),
    refused: /nests deeper than \d+ levels .*the limit maxDepth/,
  },
  {
    name: "anyOf with 17 branches (accepted)",
    schema: { anyOf: Array.from({ length: 17 }, (_, i) => ({ const: i })) },
    probes: () => [
      { text: "16", valid: true },
      { text: "17", valid: false },
    ],
  },
  {
    name: "combinators multiplied through items (8 × 8 × 8 per item)",
    schema: {
      type: "array",
      items: {
        anyOf: Array.from({ length: 8 }, () => ({ anyOf: Array.from({ length: 8 }, () => ({ anyOf: Array.from({ length: 8 }, (_, j) => ({ const: j })) })) })),
      },
    },
    refused: /subschemas can apply to one value of an answer .*the limit maxApplicationsPerValue/,
  },
  {
    name: "combinators doubling at every level through $ref",
    schema: {
      anyOf: [
        { type: "array", items: { $ref: "#" } },
        { type: "array", items: { $ref: "#" } },
      ],
    },
    refused: /subschemas can apply to one value of an answer .*the limit maxApplicationsPerValue/,
  },
  {
    name: "$ref bomb: each definition refers to the one before twice, 40 levels",
    schema: {
      definitions: Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [
          `d${i}`,
          i === 0 ? { type: "integer" } : { allOf: [{ $ref: `#/definitions/d${i - 1}` }, { $ref: `#/definitions/d${i - 1}` }] },
        ]),
      ),
      $ref: "#/definitions/d39",
    },
    refused: /subschemas can apply to one value of an answer .*the limit maxApplicationsPerValue/,
  },
  {
    name: "uniqueItems on untyped items, over a 1 MB answer (checked in linear time)",
    schema: { type: "array", uniqueItems: true },
    probes: () => [
      { text: strings(90_000, (i) => `u${i}`), valid: true },
      { text: JSON.stringify([...Array.from({ length: 60_000 }, (_, i) => ({ k: i, v: [i] })), { v: [7], k: 7 }]), valid: false },
      { text: '[{"a": 1, "b": {"c": [1, 2]}}, {"b": {"c": [1, 2]}, "a": 1}]', valid: false },
      { text: '[1, "1", [1], {"1": 1}]', valid: true },
    ],
  },
  {
    name: 'uniqueItems and "__proto__" (a duplicate ajv\'s own check misses)',
    schema: { type: "array", uniqueItems: true, items: { type: "string" } },
    probes: () => [
      { text: '["__proto__", "__proto__"]', valid: false },
      { text: '["__proto__", "constructor", "toString"]', valid: true },
    ],
  },
  {
    name: "uniqueItems on string items, over a 1 MB answer",
    schema: { type: "array", uniqueItems: true, items: { type: "string" } },
    probes: () => [
      { text: manyStrings((i) => `s${i.toString(36).padStart(4, "0")}`), valid: true },
      { text: manyStrings((i) => (i === 0 ? "dup" : i === 1 ? "dup" : `s${i.toString(36).padStart(4, "0")}`)), valid: false },
    ],
  },
  {
    name: "a large flat spec (250 fields, 50 patterns)",
    schema: largeFlat(),
    probes: () => {
      // The 20 required fields have patterns; f60 is an integer from 60 to 1060.
      const fields = (last: number) => JSON.stringify({ ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, `ax${i}9`])), f60: last });
      return [
        { text: fields(60), valid: true },
        { text: fields(-5), valid: false },
      ];
    },
  },
  {
    name: "the most work per item allowed, over a 1 MB answer",
    schema: heaviestPerItem,
    probes: () => [
      // As many items as the limits let one answer hold pass; one more is refused, never passed.
      { text: strings(heaviestItems(), () => "abab"), valid: true },
      { text: strings(heaviestItems(), (i) => (i === heaviestItems() - 2 ? "abc" : "abab")), valid: false },
      { text: strings(heaviestItems() + 1, () => "abab"), valid: false },
    ],
  },
  {
    name: "a pattern over one 1 MB string",
    schema: { type: "string", pattern: "^(a|aa)*$" },
    probes: () => [
      // Patterns read at most 250,000 characters of one answer: a longer string is refused, never passed.
      { text: JSON.stringify("a".repeat(200_000)), valid: true },
      { text: JSON.stringify(`${"a".repeat(200_000)}b`), valid: false },
      { text: JSON.stringify("a".repeat(ONE_MB - 10)), valid: false },
    ],
  },
  {
    name: "every value of a 1 MB answer wrong",
    schema: { type: "array", items: { type: "integer", minimum: 0 } },
    probes: () => [
      { text: manyStrings(() => "a"), valid: false },
      { text: JSON.stringify(Array.from({ length: 200_000 }, () => 1)), valid: true },
    ],
  },
];

export interface HostileSpecResult extends CaseResult {
  compileMs: number;
  /** Slowest validation of a probe (median of three), in ms; 0 when the spec was refused. */
  validationMs: number;
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Resolve, validate every probe (timed) and run the graph once per spec; each case says whether the package held. */
export async function runHostileSpecSuite(options: { enforceBudgets?: boolean } = {}): Promise<HostileSpecResult[]> {
  const results: HostileSpecResult[] = [];
  // Each dialect's meta-schema is compiled once per process, on first use; that is not a spec's compile time.
  for (const $schema of [
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
  ])
    resolveSpec({ $schema, type: "object" });
  for (const c of HOSTILE_SPECS) {
    // A fresh copy each time, so the inline-spec cache never answers for the compile time.
    const t0 = performance.now();
    let spec: Spec | undefined;
    let refusal: unknown;
    try {
      spec = resolveSpec({ ...structuredClone(c.schema), $comment: `run ${Math.random()}` });
    } catch (error) {
      refusal = error;
    }
    const compileMs = performance.now() - t0;
    const result = (held: boolean, detail: string, validationMs = 0) => results.push({ name: c.name, held, detail, compileMs, validationMs });
    if (c.refused) {
      if (spec) result(false, "accepted; it must be refused");
      else if (!(refusal instanceof SpecError) || !c.refused.test((refusal as Error).message))
        result(false, `refused with an unexpected error: ${String((refusal as Error)?.message ?? refusal).slice(0, 200)}`);
      else result(true, `refused: ${(refusal as Error).message.replace(/^Spec "inline" is refused: /, "").slice(0, 160)}`);
      continue;
    }
    if (!spec) {
      result(false, `refused, but it must be accepted: ${String((refusal as Error)?.message ?? refusal).slice(0, 200)}`);
      continue;
    }
    let problem = "";
    let slowest = 0;
    for (const probe of c.probes?.() ?? []) {
      const times: number[] = [];
      let valid = false;
      // Timed as the median of three runs when the budgets are enforced; judged once otherwise.
      for (let run = 0; run < (options.enforceBudgets ? 3 : 1); run++) {
        const t = performance.now();
        valid = (await checkText(spec, probe.text, "model")).valid;
        times.push(performance.now() - t);
      }
      slowest = Math.max(slowest, median(times));
      if (valid !== probe.valid) problem ||= `a probe that deserves ${probe.valid ? "to pass" : "refusal"} was ${valid ? "passed" : "refused"}`;
    }
    // Through the graph too: an invalid answer never ends in success: true.
    const invalid = c.probes?.().find((p) => !p.valid);
    if (invalid && !problem) {
      const out = await buildValidationGraph({ model: scriptedModel([invalid.text]) }).invoke(
        { request: "anything" },
        { context: { spec: c.schema, maxAttempts: 1 } },
      );
      if (out.success) problem = "the graph reported success: true for an invalid answer";
    }
    if (options.enforceBudgets && !problem && slowest > VALIDATION_BUDGET_MS)
      problem = `validation took ${slowest.toFixed(0)} ms, over the ${VALIDATION_BUDGET_MS} ms budget`;
    if (options.enforceBudgets && !problem && compileMs > COMPILE_BUDGET_MS)
      problem = `compiling took ${compileMs.toFixed(0)} ms, over the ${COMPILE_BUDGET_MS} ms budget`;
    result(problem === "", problem || "accepted; every probe judged as it deserves", slowest);
  }
  return results;
}

/**
 * Heap after compiling `count` distinct run-time specs (each used once), against the heap before, after GC;
 * and how many of the specs the cache has dropped (all but the last INLINE_SPEC_CACHE_SIZE) were collected.
 */
export async function measureSpecHeap(
  count: number,
): Promise<{ count: number; beforeMb: number; afterMb: number; growthMb: number; evicted: number; freed: number }> {
  // A full collection is needed to see what is really retained; node exposes one on request.
  v8.setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  // Warm up (the meta-schema checkers are compiled once per process), then measure.
  for (let i = 0; i < 20; i++) checkValueSync(resolveSpec({ type: "object", properties: { [`w${i}`]: { type: "string", pattern: `^w${i}$` } } }), {});
  await settle();
  const before = process.memoryUsage().heapUsed;
  const evicted = Math.max(0, count - INLINE_SPEC_CACHE_SIZE);
  const dropped: WeakRef<Spec>[] = [];
  for (let i = 0; i < count; i++) {
    const spec = resolveSpec({ type: "object", required: ["a"], properties: { a: { type: "string", pattern: `^x${i}$` }, [`k${i}`]: { type: "integer" } } });
    checkValueSync(spec, { a: "nope" }); // also compiles the explanation validator
    if (i < evicted) dropped.push(new WeakRef(spec));
  }
  await settle();
  const after = process.memoryUsage().heapUsed;
  const freed = dropped.filter((ref) => ref.deref() === undefined).length;
  return { count, beforeMb: before / 2 ** 20, afterMb: after / 2 ** 20, growthMb: (after - before) / 2 ** 20, evicted, freed };
}
