/** Bad requests and configuration: each must be refused before any model call, with a message that says what to change. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_REQUEST_CHARS } from "../src/settings.js";
import { buildReflexionGraph } from "../src/reflexion/graph.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { runCli } from "../testkit/cli.js";
import { scriptedModel } from "../testkit/scripted-model.js";
import type { CaseResult } from "./hostile.js";

export interface BadInputCase {
  name: string;
  graph: "validation" | "reflexion";
  input: Record<string, unknown>;
  context: Record<string, unknown>;
  says: RegExp;
}

const OK_REQUEST = { request: "A deployment config for payments-api" };
const OK_TASKS = { tasks: ["Explain recursion"] };
const v = (name: string, input: Record<string, unknown>, context: Record<string, unknown>, says: RegExp): BadInputCase => ({
  name,
  graph: "validation",
  input,
  context,
  says,
});
const r = (name: string, input: Record<string, unknown>, context: Record<string, unknown>, says: RegExp): BadInputCase => ({
  name,
  graph: "reflexion",
  input,
  context,
  says,
});
const attempts = /maxAttempts must be an integer from 1 to 20/;
const loops = /maxLoops must be an integer from 1 to 10/;

export const BAD_INPUTS: BadInputCase[] = [
  v("empty request", { request: "" }, {}, /request is empty/),
  v("whitespace request", { request: " \n\t " }, {}, /request is empty/),
  v("request over the size limit", { request: "x".repeat(MAX_REQUEST_CHARS + 1) }, {}, new RegExp(`the limit is ${MAX_REQUEST_CHARS}`)),
  v("non-string request (number)", { request: 42 }, {}, /request must be a string; got number/),
  v("non-string request (object)", { request: { text: "hi" } }, {}, /request must be a string; got object/),
  v("missing request", {}, {}, /request must be a string; got undefined/),
  v("maxAttempts 0", OK_REQUEST, { maxAttempts: 0 }, attempts),
  v("maxAttempts -1", OK_REQUEST, { maxAttempts: -1 }, attempts),
  v("maxAttempts 21", OK_REQUEST, { maxAttempts: 21 }, attempts),
  v("maxAttempts 2.5", OK_REQUEST, { maxAttempts: 2.5 }, attempts),
  v("maxAttempts NaN", OK_REQUEST, { maxAttempts: Number.NaN }, attempts),
  v('maxAttempts "3"', OK_REQUEST, { maxAttempts: "3" }, /maxAttempts must be an integer from 1 to 20; got "3" \(a string\)/),
  v("temperature 5", OK_REQUEST, { temperature: 5 }, /temperature must be a number from 0 to 2/),
  v("empty model name", OK_REQUEST, { model: " " }, /model must not be empty/),
  v("unknown spec name", OK_REQUEST, { spec: "deployment" }, /Unknown spec "deployment": use one of deployment-config/),
  v("inline spec that is not JSON", OK_REQUEST, { spec: "{not json" }, /inline spec is not valid JSON/),
  v("inline spec that is not a valid JSON Schema", OK_REQUEST, { spec: { schema: { type: "strin" } } }, /not a valid JSON Schema/),
  v(
    "inline spec with an unknown keyword",
    OK_REQUEST,
    { spec: { schema: { type: "string", minimim: 3 } } },
    /unknown keyword "minimim" at #: did you mean "minimum"\?/,
  ),
  v("inline spec with a lookahead pattern", OK_REQUEST, { spec: { schema: { type: "string", pattern: "^(?=a)a+$" } } }, /RE2, a linear-time engine/),
  v("inline spec with a backreference", OK_REQUEST, { spec: { schema: { type: "string", pattern: "^(a)\\1$" } } }, /RE2, a linear-time engine/),
  v("inline spec that is an array", OK_REQUEST, { spec: [1, 2] }, /spec must be a built-in spec name, an inline JSON spec/),
  v("a misspelt setting (maxAttempt)", OK_REQUEST, { maxAttempt: 5 }, /no setting "maxAttempt"; did you mean "maxAttempts"\?/),
  v("an unknown setting", OK_REQUEST, { colour: "blue" }, /no setting "colour"/),
  v("an unknown outputMode", OK_REQUEST, { outputMode: "xml" }, /outputMode must be one of "auto", "text", "json_object", "json_schema", "tool"/),
  v("an unknown onFailure", OK_REQUEST, { onFailure: "retry" }, /onFailure must be "end" or "interrupt"/),
  v("an inline spec with $async", OK_REQUEST, { spec: { schema: { $async: true, type: "object" } } }, /"\$async" at # is not allowed/),
  r("tasks as a string", { tasks: "Explain recursion" }, {}, /tasks must be a list of strings, not a single string/),
  r("empty tasks", { tasks: [] }, {}, /tasks is empty/),
  r("tasks with a number", { tasks: ["ok", 3] }, {}, /tasks\[1\] must be a string; got number/),
  r("tasks with null", { tasks: [null] }, {}, /tasks\[0\] must be a string; got null/),
  r("tasks with an empty string", { tasks: ["ok", ""] }, {}, /tasks\[1\] is empty/),
  r("missing tasks", {}, {}, /tasks must be a list of strings; got undefined/),
  r("a misspelt setting (maxLoop)", OK_TASKS, { maxLoop: 2 }, /no setting "maxLoop"; did you mean "maxLoops"\?/),
  r("maxLoops 0", OK_TASKS, { maxLoops: 0 }, loops),
  r("maxLoops -1", OK_TASKS, { maxLoops: -1 }, loops),
  r("maxLoops 11", OK_TASKS, { maxLoops: 11 }, loops),
  r("maxLoops 2.5", OK_TASKS, { maxLoops: 2.5 }, loops),
  r("maxLoops NaN", OK_TASKS, { maxLoops: Number.NaN }, loops),
  r('maxLoops "3"', OK_TASKS, { maxLoops: "3" }, /maxLoops must be an integer from 1 to 10; got "3"/),
  r("memoryCapacity 0", OK_TASKS, { memoryCapacity: 0 }, /memoryCapacity must be an integer from 1 to/),
  r("useMemory as a string", OK_TASKS, { useMemory: "yes" }, /useMemory must be true or false/),
  r("unknown gate spec", OK_TASKS, { spec: "nope" }, /Unknown spec "nope"/),
];

/** Through code: the compiled graphs, with a scripted model that must never be called. */
export async function runBadInputsThroughCode(): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const c of BAD_INPUTS) {
    const model = scriptedModel(["{}", "{}", "{}"]);
    const graph = c.graph === "validation" ? buildValidationGraph({ model }) : buildReflexionGraph({ model });
    let problem = "";
    try {
      await (graph as { invoke: (i: unknown, o: unknown) => Promise<unknown> }).invoke(c.input, { context: c.context });
      problem = "was not refused";
    } catch (error) {
      const message = (error as Error).message;
      if (!c.says.test(message)) problem = `message does not say what to change: ${message.slice(0, 200)}`;
    }
    if (model.callCount > 0) problem = `the model was called ${model.callCount} time(s)`;
    results.push({ name: `${c.name} (code)`, held: problem === "", detail: problem || "refused before any model call" });
  }
  return results;
}

/**
 * The validation cases the command line can express, with the exit status 2 and the message on stderr,
 * through the command line's entry function in this process (the exit status is its return value).
 */
export async function runBadInputsThroughCli(): Promise<CaseResult[]> {
  const dir = mkdtempSync(join(tmpdir(), "bad-spec-"));
  const badSchemaFile = join(dir, "bad-spec.json");
  writeFileSync(badSchemaFile, JSON.stringify({ name: "bad", schema: { type: "strin" } }));
  const redosFile = join(dir, "lookahead.json");
  writeFileSync(redosFile, JSON.stringify({ name: "la", schema: { type: "string", pattern: "^(?=a)a+$" } }));
  const cases: Array<{ name: string; args: string[]; says: RegExp }> = [
    { name: "empty request", args: [""], says: /request is empty/ },
    { name: "whitespace request", args: ["   "], says: /request is empty/ },
    { name: "request over the size limit", args: ["x".repeat(MAX_REQUEST_CHARS + 1)], says: /the limit is/ },
    { name: "--max-attempts 0", args: ["--max-attempts", "0", "x"], says: attempts },
    { name: "--max-attempts 21", args: ["--max-attempts", "21", "x"], says: attempts },
    { name: "--max-attempts 2.5", args: ["--max-attempts", "2.5", "x"], says: attempts },
    { name: "--max-attempts NaN", args: ["--max-attempts", "NaN", "x"], says: attempts },
    { name: "--max-attempts=-1", args: ["--max-attempts=-1", "x"], says: attempts },
    { name: "unknown spec", args: ["--spec", "nope", "x"], says: /neither a built-in spec/ },
    { name: "spec file that is not a valid JSON Schema", args: ["--spec", badSchemaFile, "x"], says: /not a valid JSON Schema/ },
    { name: "spec file with a lookahead pattern", args: ["--spec", redosFile, "x"], says: /linear-time engine/ },
    { name: "two requests", args: ["a", "b"], says: /exactly one request/ },
    { name: "unknown option", args: ["--max-attempt", "3", "x"], says: /Unknown option/ },
  ];
  const results: CaseResult[] = [];
  for (const c of cases) {
    // No server listens on this port: a model call would end in exit 3, not 2.
    const run = await runCli(c.args, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "test", LLM_MAX_RETRIES: "0" });
    let problem = "";
    if (run.code !== 2) problem = `exit status ${run.code}, expected 2 (${run.stderr.slice(0, 200)})`;
    else if (!c.says.test(run.stderr)) problem = `stderr does not say what to change: ${run.stderr.slice(0, 200)}`;
    results.push({ name: `${c.name} (command line)`, held: problem === "", detail: problem || "exit 2 with a clear message" });
  }
  return results;
}
