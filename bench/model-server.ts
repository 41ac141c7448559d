/**
 * The scripted OpenAI-compatible server (testkit/openai-server.ts) with a
 * responder for the benchmarks, in its own process so that the server's CPU
 * does not count against the graphs being measured (`startModelServer` runs
 * it in the caller's process, for the smoke test).
 *
 *   node --import tsx bench/model-server.ts --port 0 --latency-ms 100 --mode invalid-then-valid [--fail-every N]
 *
 * Modes (each reply depends only on the request, so any number of runs can share the server):
 *   invalid-then-valid  first attempt: a deployment config that breaks both cross-field rules;
 *                       a retry (its prompt carries validator errors, or the conversation carries
 *                       the previous answer as an assistant message): the spec's valid example.
 *   never-valid         always the broken config.
 *
 * --fail-every N: every N-th chat-completion request, counted in order of arrival (the N-th,
 * the 2N-th, …), is answered with a transient fault, HTTP 503 (`{ fault: "status", status: 503 }`),
 * instead of its scripted reply, after the same latency. N = 10 fails 10% of the calls; a client's
 * retry is a new request and is counted like any other. Without the option (or with 0) nothing fails.
 *
 * Prints `READY <baseURL>`. A line `STATS` on stdin prints `STATS {"requests":…,"faults":…,"cpuMs":…,"rssMb":…}`
 * (`faults`: the requests answered with the injected 503).
 */
import { createInterface } from "node:readline";
import { builtinSpecs } from "../src/specs/registry.js";
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedReply } from "../testkit/openai-server.js";
import { PROMPT_HEADINGS } from "../src/protocol/feedback.js";
import { flagValue, runIfMain } from "./common.js";

const example = builtinSpecs.get("deployment-config")?.example as Record<string, unknown>;
export const VALID_REPLY = JSON.stringify(example);
export const BROKEN_REPLY = JSON.stringify({ ...example, replicas: 8, health_check: { path: "/healthz", timeout_seconds: 30, interval_seconds: 10 } });

export type ServerMode = "invalid-then-valid" | "never-valid";

/** The transient fault injected by --fail-every: the provider is briefly unavailable. */
export const TRANSIENT_FAULT: ScriptedReply = { fault: "status", status: 503 };

/** Whether the request that arrived `nth` (1-based) gets the injected fault. */
export function failsAt(nth: number, failEvery: number): boolean {
  return failEvery > 0 && nth % failEvery === 0;
}

export function replyFor(mode: ServerMode, req: RecordedRequest): string {
  if (mode === "never-valid") return BROKEN_REPLY;
  const last = req.messages.at(-1)?.content ?? "";
  // A retry: the package's retry prompt, or a conversation that carries the previous answer (the peers' loops).
  const retry = last.includes(PROMPT_HEADINGS.errors) || req.messages.some((m) => m.role === "assistant");
  return retry ? VALID_REPLY : BROKEN_REPLY;
}

export interface ModelServerOptions {
  port?: number;
  latencyMs: number;
  mode: ServerMode;
  /** Answer every failEvery-th request with the transient fault (0: none). */
  failEvery?: number;
}

export interface ModelServerStats {
  requests: number;
  faults: number;
  /** CPU and RSS of the process the server runs in. */
  cpuMs: number;
  rssMb: number;
}

export interface ModelServer {
  baseURL: string;
  stats(): ModelServerStats;
  close(): Promise<void>;
}

/** The benchmark's model server in this process (the command line below runs it in a process of its own). */
export async function startModelServer(opts: ModelServerOptions): Promise<ModelServer> {
  const failEvery = opts.failEvery ?? 0;
  let requests = 0;
  let faults = 0;
  const server = await startScriptedOpenAIServer({
    port: opts.port ?? 0,
    latencyMs: opts.latencyMs,
    responder: (req) => {
      requests++;
      if (failsAt(requests, failEvery)) {
        faults++;
        return TRANSIENT_FAULT;
      }
      return replyFor(opts.mode, req);
    },
  });
  // The recorded requests are not needed here; drop them so memory stays flat.
  const recorded = server.requests;
  const trim = setInterval(() => recorded.splice(0, recorded.length), 1000);
  trim.unref();
  return {
    baseURL: server.baseURL,
    stats: () => {
      const cpu = process.cpuUsage();
      return { requests, faults, cpuMs: (cpu.user + cpu.system) / 1000, rssMb: process.memoryUsage().rss / 2 ** 20 };
    },
    close: async () => {
      clearInterval(trim);
      await server.close();
    },
  };
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string) => flagValue(argv, name);
  const mode = (arg("--mode") ?? "invalid-then-valid") as ServerMode;
  if (mode !== "invalid-then-valid" && mode !== "never-valid") throw new Error(`unknown --mode ${mode}`);
  const failEvery = Number(arg("--fail-every") ?? 0);
  if (!Number.isInteger(failEvery) || failEvery < 0) throw new Error(`--fail-every must be a non-negative integer; got ${arg("--fail-every")}`);
  const server = await startModelServer({ port: Number(arg("--port") ?? 0), latencyMs: Number(arg("--latency-ms") ?? 0), mode, failEvery });
  process.stdout.write(`READY ${server.baseURL}\n`);

  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (line.trim() === "STATS") process.stdout.write(`STATS ${JSON.stringify(server.stats())}\n`);
  });
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  // The parent closing our stdin (or going away) ends the server too.
  lines.once("close", stop);
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

runIfMain(import.meta.url, main);
