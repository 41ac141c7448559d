/**
 * The built-in simulated chat model: `LLM_MODEL=simulated` (or a run's model
 * name `simulated`), what a first run needs with no key. It is not a language
 * model: it follows fixed, seeded rules, so what it shows is how the graphs
 * behave under those rules, not how a real LLM behaves. Its first answer to a
 * request is a built-in spec's example (or, for any other spec or a tool, a
 * value drawn from its JSON Schema: ./sample.ts) with seeded defects (./defects.ts); a retry
 * fixes exactly the defects its feedback names.
 *
 * `simulatedModelSource({ seed })` is a ModelSource factory (src/models.ts)
 * that gives each role (generate, actor, evaluator, reflector, reviewer) a
 * model that plays it. The role can also be read from the prompt.
 *
 * The evaluation's model (eval/simulated-model.ts, with its rules written out)
 * extends this one through its protected hooks: the suite's requests and
 * difficulties, the "small" and "large" tiers, syntax slips and bad corrections.
 */
import jsonPatch from "fast-json-patch";
import { PROMPT_HEADINGS } from "../protocol/feedback.js";
import { MODEL_PROVIDERS, DEFAULT_PROVIDER } from "../providers/index.js";
import { builtinSpecs } from "../specs/registry.js";
import { AIMessage, type BaseMessage, type ToolMessage } from "@langchain/core/messages";
import { hash, seededRandom as random } from "./random.js";
import { applyDefects, exhibits, fixedPatch, planDefects, pointedAt, read, schemaDefects, setAt, type Defect, type Difficulty } from "./defects.js";
import { leavesOf, sampleValue, schemaAt } from "./sample.js";
import { ScriptedChatModel, type BoundTool, type ScriptedCallOptions, type ScriptedReply } from "./scripted-model.js";

/** The variables that configure the default provider, as the fallback notice names them. */
const DEFAULT_PROVIDER_VARIABLES = [...MODEL_PROVIDERS[DEFAULT_PROVIDER].env.apiKey, MODEL_PROVIDERS[DEFAULT_PROVIDER].env.baseUrl].join(" or ");

/** Probability that the reviewer (and the evaluator judging without a validator) misses a defect, by default. */
const DEFAULT_MISS_RATE = 0.6;

// ---------------------------------------------------------------------------
// Reading prompts

/** The text after `heading\n` up to the next blank line (or the end). */
function section(text: string, heading: string): { body: string; end: number } | undefined {
  const start = text.indexOf(`${heading}\n`);
  if (start < 0) return undefined;
  const from = start + heading.length + 1;
  const stop = text.indexOf("\n\n", from);
  const end = stop < 0 ? text.length : stop;
  return { body: text.slice(from, end), end };
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text.trim());
  } catch {
    return undefined;
  }
}

const bySpecDescription = new Map([...builtinSpecs.values()].map((s) => [s.description, s.name]));

/** The built-in spec a request's own words point to, first match in this order (eval/simulated-model.ts, SIMULATION_RULES, says which words). */
const SPEC_WORDS: ReadonlyArray<[spec: string, words: RegExp]> = [
  ["deployment-config", /\bdeploy/i],
  ["signup-form", /\bsign[- ]?up\b|\bregist(?:er|ration)\b/i],
  ["api-request", /\b(?:GET|POST|PUT|PATCH|DELETE|HEAD)\b|\bhttps?:\/\/|\bapi[- ]request\b/i],
  ["db-query", /\b(?:quer(?:y|ies)|table|rows?|columns?)\b/i],
];

function specNamedBy(requestText: string): string | undefined {
  return SPEC_WORDS.find(([spec, words]) => builtinSpecs.has(spec) && words.test(requestText))?.[0];
}

const BUILTIN_NAMES = [...builtinSpecs.keys()].join(", ");

/** The reply to a request the rules give no answer for: says what the model is and why, and is not JSON. */
function cannotAnswer(why: string): string {
  return (
    `This reply comes from the built-in simulated model (model name "simulated"), not from a language model. It only writes JSON for a spec: a built-in spec's example ` +
    `(${BUILTIN_NAMES}) or a value drawn from the spec's JSON Schema, with seeded defects, and ${why}. For a real answer, configure a model provider (${DEFAULT_PROVIDER_VARIABLES}) and a model name.`
  );
}

interface RequestContext {
  /** The built-in spec the request is for, when it is one. */
  specName: string | undefined;
  /** The JSON Schema answers are drawn from, when the spec is not built in. */
  schema?: unknown;
  /** The valid value answers start from (a spec's example, or a value drawn from its schema); undefined when the rules have no answer. */
  base: unknown;
  /** Why there is no answer, for the reply that says so. */
  unknownBecause?: string;
  requestText: string;
  planned: Defect[];
}

export type SimulatedRole = "generator" | "reviewer" | "evaluator" | "reflector";

export interface SimulatedModelOptions {
  seed: number;
  /** Probability that the reviewer misses a defect (self-review strategy). */
  missRate?: number;
  /** Simulated latency per call, ms (default 0). */
  latencyMs?: number;
  /** A line put before every free-text answer (evaluations, reflections, reviews), so that records say where they came from. */
  label?: string;
  /** How many defects a first answer drawn from a schema (or a spec's example) has, instead of the count by difficulty. */
  defects?: number;
}

/** What a hook of the model knows about the request it answers. */
export interface SimulatedRequestContext {
  requestText: string;
  /** The JSON Schema answers are drawn from, when the spec is not built in. */
  schema?: unknown;
}

/** The rules above as a chat model; the scripting mechanics (usage, latency, errors) are ScriptedChatModel's. */
export class SimulatedChatModel extends ScriptedChatModel {
  protected readonly seed: number;
  private readonly missRate: number;
  private readonly label: string;
  private readonly defects?: number;

  constructor(
    options: SimulatedModelOptions,
    private readonly role?: SimulatedRole,
  ) {
    // No recording: an evaluation makes thousands of calls and reads none back.
    super({ record: false, latencyMs: options.latencyMs });
    this.seed = options.seed;
    this.missRate = options.missRate ?? DEFAULT_MISS_RATE;
    this.label = options.label ? `${options.label}\n` : "";
    this.defects = options.defects;
  }

  /** The spec and difficulty of a request known in advance (none here: every request counts as medium). */
  protected knownRequest(_requestText: string): { spec: string; difficulty: Difficulty } | undefined {
    return undefined;
  }

  /** Whether a retry fixes a defect its feedback names (always, here). */
  protected fixes(_defect: Defect): boolean {
    return true;
  }

  /** A whole answer's text as sent (as written, here). */
  protected finishAnswer(_request: SimulatedRequestContext, _previousText: string, text: string): string {
    return text;
  }

  /** A correction's text as sent: the JSON Patch from the previous answer to a whole retry's (as computed, here). */
  protected finishCorrection(
    _request: SimulatedRequestContext,
    _previousText: string,
    _previous: object,
    operations: Array<{ op: string; path: string; value?: unknown }>,
  ): string {
    return JSON.stringify(operations);
  }

  override _llmType(): string {
    return "simulated";
  }

  protected override answer(messages: BaseMessage[], _call: number, options?: ScriptedCallOptions): ScriptedReply {
    if (options?.tools !== undefined && options.tools.length > 0) return this.toolTurn(messages, options.tools, options.tool_choice);
    const system = systemText(messages);
    const prompt = messages
      .filter((m) => m.getType() !== "system")
      .map((m) => String(m.content))
      .join("\n\n");
    return this.respond(this.role ?? detectRole(system), system, prompt);
  }

  /** Which request a prompt is about: its spec (or schema), difficulty and planned defects. */
  private requestContext(system: string, prompt: string): RequestContext {
    const requestText = section(prompt, PROMPT_HEADINGS.request)?.body ?? section(prompt, "Task:")?.body ?? "";
    const known = this.knownRequest(requestText);
    if (known) return this.builtinContext(known.spec, requestText, known.difficulty);
    const described = /You write JSON objects of this kind: (.*)/.exec(system)?.[1]?.trim();
    if (described !== undefined) {
      const specName = bySpecDescription.get(described);
      if (specName !== undefined) return this.builtinContext(specName, requestText);
      const schema = parseJson(section(system, "JSON Schema:")?.body);
      if (schema !== null && typeof schema === "object")
        return this.schemaContext(schema, requestText, parseJson(section(system, "Example of a valid object:")?.body));
      return { specName, base: undefined, unknownBecause: "this run's spec has no JSON Schema in its prompt", requestText, planned: [] };
    }
    const specName = specNamedBy(requestText);
    if (specName !== undefined) return this.builtinContext(specName, requestText);
    return { specName, base: undefined, unknownBecause: "this request does not say which of them it is for", requestText, planned: [] };
  }

  private builtinContext(specName: string, requestText: string, difficulty: Difficulty = "medium"): RequestContext {
    return { specName, base: builtinSpecs.get(specName)?.example, requestText, planned: planDefects(specName, requestText, difficulty, this.seed) };
  }

  /** Answers drawn from a schema (seeded by the schema and the request), or built on the spec's example when it has one. */
  private schemaContext(schema: unknown, requestText: string, example?: unknown): RequestContext {
    const base = example ?? withAskedNumbers(sampleValue(schema, random(hash(this.seed, "sample", JSON.stringify(schema), requestText))), schema, requestText);
    return { specName: undefined, schema, base, requestText, planned: schemaDefects(base, schema, requestText, "medium", this.seed, this.defects) };
  }

  /**
   * A turn of an agent with tools: the failed call its result names is made again with the errors fixed; then each tool
   * not yet run is called; then the structured answer (LangChain's "extract-" tool) is given: the arguments of the
   * last call that ran when they fit it, else a value of its own; with nothing left to call, a text reply.
   */
  private toolTurn(messages: BaseMessage[], tools: readonly BoundTool[], toolChoice: unknown): AIMessage {
    const start = messages.findLastIndex((m) => m.getType() === "human");
    const requestText = start < 0 ? "" : (section(messages[start].text, PROMPT_HEADINGS.request)?.body ?? messages[start].text);
    const system = systemText(messages);
    const turn = messages.slice(start + 1);
    const calls = turn.flatMap((m) => (AIMessage.isInstance(m) ? (m.tool_calls ?? []) : []));
    const results = turn.filter((m): m is ToolMessage => m.getType() === "tool");
    const call = (tool: BoundTool, args: unknown) =>
      new AIMessage({
        content: "",
        tool_calls: [
          {
            type: "tool_call",
            id: `call_${hash(messages.length, tool.function.name, JSON.stringify(args)).toString(16)}`,
            name: tool.function.name,
            // Arguments are an object, whatever a schema of another kind draws.
            args: args !== null && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
          },
        ],
      });
    const byName = (name: string | undefined) => tools.find((t) => t.function.name === name);

    const last = messages.at(-1);
    if (last !== undefined && last.getType() === "tool" && (last as ToolMessage).status === "error") {
      const failed = last as ToolMessage;
      const made = calls.findLast((c) => c.id === failed.tool_call_id && c.name === failed.name) ?? calls.findLast((c) => c.name === failed.name);
      const tool = byName(failed.name);
      const failures = results.filter((r) => r.name === failed.name && r.status === "error").length;
      if (tool && made && failures < MAX_FAILED_CALLS && !/\brefused\b/.test(failed.text))
        return call(tool, this.writeAnswer(this.toolContext(tool, requestText, system, failed.text), JSON.stringify(made.args), failed.text));
      return new AIMessage(`${this.label}${failed.name ?? "The tool"} did not run: ${failed.text}`);
    }

    const forced = typeof toolChoice === "string" ? byName(toolChoice) : byName((toolChoice as { function?: { name?: string } } | undefined)?.function?.name);
    const ran = (tool: BoundTool) => results.some((r) => r.name === tool.function.name && r.status !== "error");
    const answerTool = tools.find((t) => t.function.name.startsWith("extract-"));
    const pending = forced ?? tools.find((t) => t !== answerTool && !ran(t));
    if (pending) {
      // A retry prompt (the validation graph's "tool" output mode) carries the previous answer and its errors.
      const prompt = start < 0 ? "" : messages[start].text;
      const previous = turn.length === 0 ? section(prompt, PROMPT_HEADINGS.previousAnswer) : undefined;
      return call(pending, this.writeAnswer(this.toolContext(pending, requestText, system), previous?.body, previous ? prompt.slice(previous.end) : ""));
    }
    if (answerTool) {
      const context = this.toolContext(answerTool, requestText, system);
      const done = calls.findLast((c) => c.name !== answerTool.function.name && results.some((r) => r.tool_call_id === c.id && r.status !== "error"));
      const doneTool = byName(done?.name);
      const same = doneTool !== undefined && context.specName !== undefined && this.toolContext(doneTool, requestText, system).specName === context.specName;
      return call(answerTool, same ? done!.args : this.writeAnswer(context, undefined, ""));
    }
    const result = results.at(-1);
    return new AIMessage(`${this.label}${result ? `${result.name ?? "The tool"} answered: ${result.text}` : "Nothing to do."}`);
  }

  /**
   * What a tool's arguments are drawn from: the built-in spec a failed call's result says they must match (a guard
   * holds the tool to a spec its own schema does not show), else the built-in spec the request names when its
   * example fits the tool's parameters, else the parameters' schema.
   */
  private toolContext(tool: BoundTool, requestText: string, system: string, failure = ""): RequestContext {
    const governing = /\bdo not match the (\S+) spec\b/.exec(failure)?.[1];
    if (governing !== undefined && builtinSpecs.has(governing)) return this.builtinContext(governing, requestText);
    const schema = tool.function.parameters ?? {};
    const described = /You write JSON objects of this kind: (.*)/.exec(system)?.[1]?.trim();
    const specName = (described !== undefined ? bySpecDescription.get(described) : undefined) ?? specNamedBy(requestText);
    const example = specName === undefined ? undefined : builtinSpecs.get(specName)?.example;
    if (specName !== undefined && fitsFields(example, schema)) return this.builtinContext(specName, requestText);
    return this.schemaContext(schema, requestText);
  }

  private respond(role: SimulatedRole, system: string, prompt: string): string {
    const ctx = this.requestContext(system, prompt);
    switch (role) {
      case "generator": {
        if (ctx.base === undefined) return cannotAnswer(ctx.unknownBecause ?? "");
        const previous = section(prompt, PROMPT_HEADINGS.previousAnswer) ?? section(prompt, "Your previous response:");
        const answer = this.writeAnswer(ctx, previous?.body, previous ? prompt.slice(previous.end) : "");
        if (previous !== undefined && prompt.includes(PROMPT_HEADINGS.corrections)) return this.writeCorrection(ctx, previous.body, answer);
        return this.finishAnswer(ctx, previous?.body ?? "", JSON.stringify(answer));
      }
      case "reviewer": {
        if (ctx.base === undefined) return `${this.label}${cannotAnswer(`cannot review an answer when ${ctx.unknownBecause ?? ""}`)}`;
        const answer = parseJson(section(prompt, "JSON to review:")?.body);
        const named = this.reviewAnswer(ctx, answer);
        return `${this.label}${
          named.length === 0
            ? "APPROVED. The JSON looks good: it satisfies every constraint and rule."
            : `Problems found:\n${named.map((d) => `- ${d.label}: ${d.description}`).join("\n")}`
        }`;
      }
      case "evaluator":
        return `${this.label}${this.evaluate(ctx, prompt)}`;
      case "reflector": {
        const evaluation = prompt.slice(prompt.indexOf("Evaluation:"));
        const lines = evaluation.split("\n").filter((l) => l.startsWith("- "));
        return `${this.label}${lines.length === 0 ? "Nothing to change." : `Next time, fix:\n${lines.join("\n")}`}`;
      }
    }
  }

  private evaluate(ctx: RequestContext, prompt: string): string {
    const errors = section(prompt, "Validator errors (deterministic, certainly correct):")?.body;
    if (errors !== undefined) {
      const lines = errors.split("\n").filter((l) => l.startsWith("- "));
      return `The response does not meet the spec. The validator reports:\n${lines.join("\n")}\nFinal score: ${Math.max(1, 6 - lines.length)}/10`;
    }
    if (prompt.includes("passes the deterministic validator")) return "The response meets every constraint and rule. Final score: 9.5/10";
    if (ctx.base === undefined) return `${cannotAnswer(`cannot judge a response when ${ctx.unknownBecause ?? ""}`)}\nFinal score: 0/10`;
    const named = this.reviewAnswer(ctx, parseJson(section(prompt, "Response:")?.body));
    return named.length === 0
      ? "Looks good. Final score: 9.5/10"
      : `Problems:\n${named.map((d) => `- ${d.label}: ${d.description}`).join("\n")}\nFinal score: 6/10`;
  }

  /**
   * An answer: the first (every planned defect broken), or a retry of `previous` that fixes the defects `feedback`
   * names. An answer drawn from a schema also draws again any other field the feedback names (a rule the schema
   * cannot say broke there).
   */
  private writeAnswer(ctx: RequestContext, previous: string | undefined, feedback: string): Record<string, unknown> {
    const remaining = new Set(ctx.planned.map((d) => d.id));
    const answer = parseJson(previous);
    if (previous !== undefined) {
      for (const d of ctx.planned) {
        if (answer !== undefined && !exhibits(d, answer)) remaining.delete(d.id);
        else if (this.fixes(d) && d.mentions.some((re) => re.test(feedback))) remaining.delete(d.id);
      }
    }
    if (ctx.specName !== undefined || answer === null || typeof answer !== "object" || Array.isArray(answer))
      return applyDefects(ctx.base, ctx.planned, remaining);
    const next = structuredClone(answer) as Record<string, unknown>;
    for (const d of ctx.planned) if (!remaining.has(d.id) && exhibits(d, next)) for (const [path, value] of fixedPatch(d, ctx.base)) setAt(next, path, value);
    const planned = new Set(ctx.planned.map((d) => d.label));
    for (const leaf of leavesOf(next, ctx.schema)) {
      if (planned.has(leaf.label) || !(read(leaf.label).test(feedback) || pointedAt(leaf.label).test(feedback))) continue;
      setAt(
        next,
        leaf.path,
        sampleValue(schemaAt(ctx.schema, leaf.path), random(hash(this.seed, "again", ctx.requestText, previous ?? "", leaf.label)), ctx.schema),
      );
    }
    return next;
  }

  /** A correction: the JSON Patch from the previous answer to the answer a whole retry would give (so it fixes exactly what that retry fixes). */
  private writeCorrection(ctx: RequestContext, previousText: string, answer: Record<string, unknown>): string {
    const previous = parseJson(previousText);
    if (previous === null || typeof previous !== "object") return JSON.stringify(answer);
    return this.finishCorrection(ctx, previousText, previous, jsonPatch.compare(previous, answer));
  }

  /** The defects present in `answer` that the reviewer names (each missed with the miss rate, seeded by request, answer and defect). */
  private reviewAnswer(ctx: RequestContext, answer: unknown): Defect[] {
    if (answer === undefined) return [];
    const text = JSON.stringify(answer);
    return ctx.planned.filter((d) => exhibits(d, answer) && random(hash(this.seed, "review", ctx.requestText, text, d.id))() >= this.missRate);
  }
}

/** Failed calls of one tool in a turn after which the model stops calling it and says so (a tool that always fails cannot loop it). */
const MAX_FAILED_CALLS = 3;

/**
 * A drawn value with the numbers the request gives its fields by name ("with 8 replicas": a numeric field named
 * `replicas`), where the field's schema admits the number (its type and bounds); every other field as drawn.
 */
function withAskedNumbers(value: unknown, schema: unknown, requestText: string): unknown {
  if (value === null || typeof value !== "object") return value;
  const asked = new Map<string, number>();
  for (const [, number, word] of requestText.matchAll(/(?<![\w.])(\d+(?:\.\d+)?)\s+([A-Za-z][A-Za-z_-]*)/g))
    asked.set(word.toLowerCase().replace(/-/g, "_"), Number(number));
  if (asked.size === 0) return value;
  const out = structuredClone(value) as Record<string, unknown>;
  for (const leaf of leavesOf(out, schema)) {
    const number = asked.get(String(leaf.path.at(-1)).toLowerCase());
    if (number === undefined || typeof leaf.value !== "number") continue;
    const at = schemaAt(schema, leaf.path) as { type?: unknown; minimum?: unknown; maximum?: unknown } | undefined;
    const fits =
      (at?.type !== "integer" || Number.isInteger(number)) &&
      (typeof at?.minimum !== "number" || number >= at.minimum) &&
      (typeof at?.maximum !== "number" || number <= at.maximum);
    if (fits) setAt(out, leaf.path, number);
  }
  return out;
}

/** The system messages' text. */
function systemText(messages: readonly BaseMessage[]): string {
  return messages
    .filter((m) => m.getType() === "system")
    .map((m) => String(m.content))
    .join("\n");
}

/** Whether a value has the fields a schema names: no field it does not list, every field it requires. */
function fitsFields(value: unknown, schema: Record<string, unknown>): boolean {
  if (value === null || typeof value !== "object") return false;
  const properties = schema.properties as Record<string, unknown> | undefined;
  if (!properties) return false;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return Object.keys(value).every((k) => Object.hasOwn(properties, k)) && required.every((k) => Object.hasOwn(value, k));
}

/** The role a prompt asks for, when the model was not built for one role. */
function detectRole(system: string): SimulatedRole {
  if (/strict, fair evaluator/.test(system)) return "evaluator";
  if (/You reflect on an attempt/.test(system)) return "reflector";
  if (/You review JSON objects/.test(system)) return "reviewer";
  return "generator";
}

const ROLE_OF: Record<string, SimulatedRole> = {
  generate: "generator",
  actor: "generator",
  evaluator: "evaluator",
  reflector: "reflector",
  reviewer: "reviewer",
};

/** A ModelSource factory (src/models.ts): one simulated model per role, built by `build` (this model, by default). */
export function simulatedModelSource<O extends SimulatedModelOptions, M extends SimulatedChatModel = SimulatedChatModel>(
  options: O,
  build: (options: O, role: SimulatedRole) => M = (o, role) => new SimulatedChatModel(o, role) as M,
): (request: { role: string; model?: string; temperature?: number }) => M {
  const models = new Map<SimulatedRole, M>();
  return (request) => {
    const role = ROLE_OF[request.role] ?? "generator";
    let model = models.get(role);
    if (!model) models.set(role, (model = build(options, role)));
    return model;
  };
}
