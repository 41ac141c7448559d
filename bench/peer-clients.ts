/**
 * The clients compared in the peers benchmark (bench/peers.ts): the package's
 * validation graph and what a user would write instead, each making the same
 * requests against the same scripted OpenAI-compatible server, with the same
 * validator (`checkValueSync`, so only the client framework differs) and
 * at most 3 attempts. Every client returns `{ success, attempts }`. The
 * calls-and-tokens benchmark (bench/calls-tokens.ts) uses the same clients
 * with other specs, requests and attempt budgets.
 *
 * `raw-http` is not a client a user would pick but the floor under all of
 * them: one `node:http` request per attempt, `JSON.parse` and the validator.
 * It does not go through `fetch`, so the separate-process workers
 * (bench/peer-worker.ts, which hold requests at `fetch`) do not run it; the
 * interleaved measurements (bench/interleaved.ts) do.
 *
 * Compiled to plain JavaScript with the package (bench/compiled.ts), so the
 * timed code is not run through tsx's loader.
 */
import { Agent, request as httpRequest } from "node:http";
import { createOpenAI } from "@ai-sdk/openai";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { Annotation, END, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { generateObject, jsonSchema, NoObjectGeneratedError } from "ai";
import OpenAI from "openai";
import { readEnvironment } from "../src/environment.js";
import { createChatModel } from "../src/models.js";
import { builtinSpecs } from "../src/specs/registry.js";
import type { Spec } from "../src/specs/spec.js";
import { buildValidationGraph } from "../src/validation/graph.js";
import { generationSystemPrompt } from "../src/validation/prompts.js";
import { firstAttemptPrompt, retryPrompt } from "../src/protocol/feedback.js";
import { checkTextSync, checkValueSync } from "../src/specs/check.js";

export const PEERS = ["openai-ajv", "chatopenai-loop", "langgraph-floor", "package-graph", "ai-sdk", "with-structured-output"] as const;
export type PeerName = (typeof PEERS)[number];
/** Every client makePeer builds: the peers, the raw floor, and the minimal graph with the package's model client. */
export type ClientName = PeerName | "raw-http" | "floor-package-model";

export const PEER_LABELS: Record<ClientName, string> = {
  "raw-http": "raw `node:http` request + `JSON.parse` + validator (floor)",
  "floor-package-model": "minimal two-node LangGraph graph with the package's model client (`createChatModel`)",
  "openai-ajv": "`openai` SDK + validator loop (baseline)",
  "chatopenai-loop": "`ChatOpenAI` loop",
  "langgraph-floor": "minimal two-node LangGraph graph (framework floor)",
  "package-graph": "this package's validation graph",
  "ai-sdk": "AI SDK `generateObject` in a retry loop",
  "with-structured-output": "LangChain `withStructuredOutput` in a retry loop",
};

export type RunOutcome = { success: boolean; attempts: number };
export type PeerRun = (i: number) => Promise<RunOutcome>;

const DEFAULT_MAX_ATTEMPTS = 3;
const MODEL = "bench-model";
/**
 * Every client retries a failed HTTP call twice (as their defaults do): on a loaded machine a pooled
 * keep-alive socket can be closed by the server just as a request goes out. A retry is not an attempt.
 */
const CLIENT_RETRIES = 2;

export function benchSpec(): Spec {
  const spec = builtinSpecs.get("deployment-config");
  if (!spec) throw new Error("deployment-config spec missing");
  return spec;
}

export const defaultRequest = (i: number) => `A deployment config for payments-api with 8 replicas (run ${i})`;

/** The feedback the conversation-style loops send: the validator's messages, one a line. */
const feedback = (errors: readonly string[]) =>
  `The JSON did not pass validation:\n${errors.map((e) => `- ${e}`).join("\n")}\nReply with the corrected JSON object only.`;

function chatOpenAI(baseUrl: string): ChatOpenAI {
  // The same settings as the package's createChatModel (src/models.ts).
  return new ChatOpenAI({
    model: MODEL,
    temperature: 0,
    apiKey: "bench-key",
    configuration: { baseURL: baseUrl },
    timeout: 120_000,
    maxRetries: CLIENT_RETRIES,
    streamUsage: true,
  });
}

/** The package's environment for the benchmark's server: the same timeout and retries as every other client. */
function packageEnv(baseUrl: string) {
  return { ...readEnvironment({}), providers: { openai: { apiKey: "bench-key", baseUrl: baseUrl } }, maxRetries: CLIENT_RETRIES, timeoutMs: 120_000 };
}

export interface PeerOptions {
  /** Default: the deployment-config spec. A spec that is not a built-in one is passed to the package's graph as an object. */
  spec?: Spec;
  /** Default 3. */
  maxAttempts?: number;
  /** The request of run `i` (default `requestText`). */
  request?: (i: number) => string;
}

/**
 * The least a LangGraph user writes for the validation loop: two nodes, a conditional edge, the package's
 * prompts and validator. The framework floor for any LangGraph graph making these calls.
 */
export function minimalValidationGraph(model: BaseChatModel, spec: Spec, system: string, maxAttempts: number, checkpointer?: BaseCheckpointSaver) {
  const State = Annotation.Root({
    request: Annotation<string>(),
    output: Annotation<string>(),
    errors: Annotation<string[]>(),
    valid: Annotation<boolean>(),
    attempts: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  });
  return new StateGraph(State)
    .addNode("generate", async (s: typeof State.State) => {
      const prompt = s.attempts === 0 ? firstAttemptPrompt(s.request) : retryPrompt(s.request, s.output, s.errors);
      const answer = await model.invoke([new SystemMessage(system), new HumanMessage(prompt)]);
      return { output: String(answer.content), attempts: 1 };
    })
    .addNode("validate", (s: typeof State.State) => {
      const report = checkTextSync(spec, s.output, "model");
      return { valid: report.valid, errors: report.errors };
    })
    .addEdge(START, "generate")
    .addEdge("generate", "validate")
    .addConditionalEdges("validate", (s: typeof State.State) => (s.valid || s.attempts >= maxAttempts ? END : "generate"), ["generate", END])
    .compile({ checkpointer });
}

/** Build one client against `baseUrl`. */
export function makePeer(name: ClientName, baseUrl: string, options: PeerOptions = {}): PeerRun {
  const spec = options.spec ?? benchSpec();
  const MAX_ATTEMPTS = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const requestText = options.request ?? defaultRequest;
  const system = generationSystemPrompt(spec);
  switch (name) {
    case "package-graph": {
      const env = packageEnv(baseUrl);
      const graph = buildValidationGraph({ model: (request) => createChatModel(request, env) });
      const builtin = builtinSpecs.get(spec.name) === spec;
      const context = { spec: (builtin ? spec.name : spec) as never, maxAttempts: MAX_ATTEMPTS };
      return async (i) => {
        const out = await graph.invoke({ request: requestText(i) }, { context });
        return { success: out.success === true, attempts: Number(out.attempts) };
      };
    }
    case "langgraph-floor":
    case "floor-package-model": {
      // The second: the same floor with the package's ChatOpenAI (a deadline over each whole answer, provider refusals kept), to split what the package adds between its model client and its graph.
      const model = name === "langgraph-floor" ? chatOpenAI(baseUrl) : createChatModel({ model: MODEL, temperature: 0, role: "generate" }, packageEnv(baseUrl));
      const graph = minimalValidationGraph(model, spec, system, MAX_ATTEMPTS);
      return async (i) => {
        const out = await graph.invoke({ request: requestText(i) });
        return { success: out.valid, attempts: out.attempts };
      };
    }
    case "chatopenai-loop": {
      const model = chatOpenAI(baseUrl);
      return async (i) => {
        const request = requestText(i);
        let output = "";
        let errors: string[] = [];
        for (let attempt = 1; ; attempt++) {
          const prompt = attempt === 1 ? firstAttemptPrompt(request) : retryPrompt(request, output, errors);
          const answer = await model.invoke([new SystemMessage(system), new HumanMessage(prompt)]);
          output = String(answer.content);
          const report = checkTextSync(spec, output, "model");
          errors = report.errors;
          if (report.valid || attempt >= MAX_ATTEMPTS) return { success: report.valid, attempts: attempt };
        }
      };
    }
    case "raw-http": {
      // The least any client does per attempt: one POST on a kept-alive socket, the body read whole, two JSON.parse calls, the validator.
      const url = new URL(`${baseUrl.replace(/\/+$/, "")}/chat/completions`);
      const agent = new Agent({ keepAlive: true });
      const post = (body: string) =>
        new Promise<string>((resolve, reject) => {
          const req = httpRequest(
            url,
            {
              method: "POST",
              agent,
              headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: "Bearer bench-key" },
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on("data", (chunk: Buffer) => chunks.push(chunk));
              res.on("error", reject);
              res.on("end", () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString("utf8")) : reject(new Error(`HTTP ${res.statusCode}`))));
            },
          );
          req.on("error", reject);
          req.end(body);
        });
      const call = async (body: string): Promise<string> => {
        for (let retry = 0; ; retry++) {
          try {
            return await post(body);
          } catch (error) {
            if (retry >= CLIENT_RETRIES) throw error;
          }
        }
      };
      return async (i) => {
        const request = requestText(i);
        let output = "";
        let errors: string[] = [];
        for (let attempt = 1; ; attempt++) {
          const prompt = attempt === 1 ? firstAttemptPrompt(request) : retryPrompt(request, output, errors);
          const body = JSON.stringify({
            model: MODEL,
            temperature: 0,
            messages: [
              { role: "system", content: system },
              { role: "user", content: prompt },
            ],
          });
          const completion = JSON.parse(await call(body)) as { choices?: { message?: { content?: string | null } }[] };
          output = completion.choices?.[0]?.message?.content ?? "";
          let value: unknown;
          try {
            value = JSON.parse(output);
          } catch (e) {
            errors = [`not JSON: ${(e as Error).message}`];
            if (attempt >= MAX_ATTEMPTS) return { success: false, attempts: attempt };
            continue;
          }
          const report = checkValueSync(spec, value);
          errors = report.errors;
          if (report.valid || attempt >= MAX_ATTEMPTS) return { success: report.valid, attempts: attempt };
        }
      };
    }
    case "openai-ajv": {
      const client = new OpenAI({ apiKey: "bench-key", baseURL: baseUrl, maxRetries: CLIENT_RETRIES, timeout: 120_000 });
      return async (i) => {
        const request = requestText(i);
        let output = "";
        let errors: string[] = [];
        for (let attempt = 1; ; attempt++) {
          const prompt = attempt === 1 ? firstAttemptPrompt(request) : retryPrompt(request, output, errors);
          const completion = await client.chat.completions.create({
            model: MODEL,
            temperature: 0,
            messages: [
              { role: "system", content: system },
              { role: "user", content: prompt },
            ],
          });
          output = completion.choices[0]?.message?.content ?? "";
          let value: unknown;
          try {
            value = JSON.parse(output);
          } catch (e) {
            errors = [`not JSON: ${(e as Error).message}`];
            if (attempt >= MAX_ATTEMPTS) return { success: false, attempts: attempt };
            continue;
          }
          const report = checkValueSync(spec, value);
          errors = report.errors;
          if (report.valid || attempt >= MAX_ATTEMPTS) return { success: report.valid, attempts: attempt };
        }
      };
    }
    case "ai-sdk": {
      const provider = createOpenAI({ apiKey: "bench-key", baseURL: baseUrl });
      const model = provider.chat(MODEL);
      // The spec's JSON Schema, with the same validator deciding what is valid.
      const schema = jsonSchema<Record<string, unknown>>(spec.schema as never, {
        validate: (value) => {
          const report = checkValueSync(spec, value);
          return report.valid ? { success: true, value: value as Record<string, unknown> } : { success: false, error: new Error(report.errors.join("\n")) };
        },
      });
      return async (i) => {
        const messages: { role: "user" | "assistant"; content: string }[] = [{ role: "user", content: firstAttemptPrompt(requestText(i)) }];
        for (let attempt = 1; ; attempt++) {
          try {
            await generateObject({ model, schema, system, messages, temperature: 0, maxRetries: CLIENT_RETRIES });
            return { success: true, attempts: attempt };
          } catch (error) {
            if (!NoObjectGeneratedError.isInstance(error) || attempt >= MAX_ATTEMPTS) {
              if (NoObjectGeneratedError.isInstance(error)) return { success: false, attempts: attempt };
              throw error;
            }
            // The AI SDK's own error text (the cause carries the validator's message) goes back to the model.
            const cause = error.cause instanceof Error ? error.cause.message : "";
            messages.push(
              { role: "assistant", content: error.text ?? "" },
              { role: "user", content: `${error.message}\n${cause}\nReply with the corrected JSON object only.` },
            );
          }
        }
      };
    }
    case "with-structured-output": {
      const structured = chatOpenAI(baseUrl).withStructuredOutput(spec.schema as Record<string, unknown>, { name: "deployment_config", includeRaw: true });
      return async (i) => {
        const messages: BaseMessage[] = [new SystemMessage(system), new HumanMessage(firstAttemptPrompt(requestText(i)))];
        for (let attempt = 1; ; attempt++) {
          const { raw, parsed } = await structured.invoke(messages);
          const report = checkValueSync(spec, parsed);
          if (report.valid || attempt >= MAX_ATTEMPTS) return { success: report.valid, attempts: attempt };
          messages.push(new AIMessage(String(raw.content)), new HumanMessage(feedback(report.errors)));
        }
      };
    }
  }
}
