/**
 * What a streamValidated user pays per streamed token, end to end over HTTP:
 * `ChatOpenAI` against an OpenAI-compatible server (in its own process, so its
 * CPU is not counted) that streams a valid answer of `--tokens` pieces (about
 * four characters a piece, usage last, as providers send it). Variants, each
 * once per cycle in random order, CPU per run from `process.cpuUsage()`:
 *
 *   plain          ChatOpenAI's `model.stream`, the text concatenated (what the user would pay anyway)
 *   streamValidated  the package's streamed run: partial checks, events, the check step (one attempt)
 *   via a handler  the same graph run, asking for tokens with a callback handler that prefers
 *                  streaming (LangGraph's messages mode does that; streamValidated did until it
 *                  signalled through the run's configuration)
 *   unstreamed     generateValidated: the same graph, a whole-answer request
 *
 * Each figure is the median of the per-cycle ratios to `plain`, with min–max, and the load average.
 *
 *   npx tsx bench/streaming-http.ts [--cycles 15] [--runs 6] [--tokens 400]
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { ChatOpenAI } from "@langchain/openai";
import { HumanMessage } from "@langchain/core/messages";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { defineSpec } from "../src/specs/spec.js";
import { generateValidated, prepareRun } from "../src/validation/generate.js";
import { streamValidated } from "../src/validation/stream.js";
import { cpuUs, fmtLoad, median, rng, runIfMain, shuffled } from "./common.js";

const spec = defineSpec({
  name: "stock",
  description: "Stock lines: a SKU and a quantity each.",
  schema: {
    type: "object",
    required: ["items"],
    additionalProperties: false,
    properties: {
      items: {
        type: "array",
        items: {
          type: "object",
          required: ["sku", "qty"],
          additionalProperties: false,
          properties: { sku: { type: "string", pattern: "^[A-Z]{3}-[0-9]{4}$" }, qty: { type: "integer", minimum: 0 } },
        },
      },
    },
  },
});

/** A valid answer of about `tokens` pieces of four characters. */
function answerOf(tokens: number): string {
  const items: { sku: string; qty: number }[] = [];
  let text = "";
  for (let i = 0; text.length < tokens * 4; i++) {
    items.push({ sku: `ABC-${String(1000 + i)}`, qty: i });
    text = JSON.stringify({ items }, null, 2);
  }
  return text;
}

/** The server: streams the answer in four-character pieces (usage last when asked), or sends it whole. */
function serve(tokens: number): void {
  const answer = answerOf(tokens);
  const pieces: string[] = [];
  for (let i = 0; i < answer.length; i += 4) pieces.push(answer.slice(i, i + 4));
  const usage = { prompt_tokens: 100, completion_tokens: pieces.length, total_tokens: 100 + pieces.length };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d));
    req.on("end", () => {
      const request = JSON.parse(body) as { stream?: boolean; stream_options?: { include_usage?: boolean } };
      const base = { id: "chatcmpl-bench", created: 0, model: "bench" };
      if (!request.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            ...base,
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: "stop" }],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: object, finish: string | null) =>
        `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      let out = chunk({ role: "assistant", content: "" }, null);
      for (const piece of pieces) out += chunk({ content: piece }, null);
      out += chunk({}, "stop");
      if (request.stream_options?.include_usage) out += `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [], usage })}\n\n`;
      res.end(`${out}data: [DONE]\n\n`);
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address() as { port: number };
    process.stdout.write(`READY http://127.0.0.1:${address.port}/v1\n`);
  });
  createInterface({ input: process.stdin }).once("close", () => process.exit(0));
}

/** Asks for tokens the way LangGraph's messages mode does, and delivers them nowhere. */
class PrefersStreaming extends BaseCallbackHandler {
  name = "prefers-streaming";
  lc_prefer_streaming = true;
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string, fallback: number) => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const tokens = arg("--tokens", 400);
  if (argv.includes("--serve")) return serve(tokens);
  const cycles = arg("--cycles", 15);
  const runs = arg("--runs", 6);

  const child = spawn(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, "--serve", "--tokens", String(tokens)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const baseURL = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => line.startsWith("READY ") && resolve(line.slice(6)));
    child.once("exit", (code) => reject(new Error(`server exited (${code})`)));
  });
  try {
    const model = new ChatOpenAI({ model: "bench", apiKey: "not-needed", configuration: { baseURL }, maxRetries: 0 });
    const request = "Stock lines for the north warehouse";
    const expectOne = (outcome: { success: boolean; attempts: number }) => {
      if (!outcome.success || outcome.attempts !== 1) throw new Error("every validated run should pass at its first attempt");
    };
    const variants: Record<string, () => Promise<void>> = {
      plain: async () => {
        let text = "";
        for await (const chunk of await model.stream([new HumanMessage(request)])) text += typeof chunk.content === "string" ? chunk.content : "";
        if (text.length < tokens) throw new Error("short answer");
      },
      streamValidated: async () => {
        let last: unknown;
        for await (const event of streamValidated({ model, spec, request, maxAttempts: 1 })) last = event;
        expectOne((last as { outcome: { success: boolean; attempts: number } }).outcome);
      },
      "via a handler": async () => {
        const { graph, input, config } = prepareRun({ model, spec, request, maxAttempts: 1 });
        let state: { success: boolean; attempts: number } | undefined;
        for await (const [mode, chunk] of (await graph.stream(input, {
          ...config,
          streamMode: ["custom", "values"],
          callbacks: [new PrefersStreaming()],
        })) as AsyncIterable<[string, unknown]>) {
          if (mode === "values") state = chunk as typeof state;
        }
        expectOne(state!);
      },
      unstreamed: async () => expectOne(await generateValidated({ model, spec, request, maxAttempts: 1 })),
    };
    const names = Object.keys(variants);
    for (let i = 0; i < 5; i++) for (const name of names) await variants[name]();
    const load = loadavg();
    const random = rng(7);
    const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let cycle = 0; cycle < cycles; cycle++) {
      for (const name of shuffled(names, random)) {
        const start = process.cpuUsage();
        for (let r = 0; r < runs; r++) await variants[name]();
        cpu[name].push(cpuUs(start) / runs);
      }
    }
    console.log(`${tokens} streamed pieces an answer, ${cycles} cycles × ${runs} runs; load average ${fmtLoad(load)} → ${fmtLoad()}`);
    console.log(`plain ChatOpenAI streaming: ${median(cpu.plain).toFixed(0)} µs CPU per answer (${(median(cpu.plain) / tokens).toFixed(1)} µs a piece)`);
    for (const name of names.filter((n) => n !== "plain")) {
      const ratios = cpu[name].map((v, i) => v / cpu.plain[i]);
      console.log(
        `${name} ÷ plain: ${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×), ${(median(cpu[name]) / tokens).toFixed(1)} µs a piece`,
      );
    }
    const ratios = cpu.streamValidated.map((v, i) => v / cpu["via a handler"][i]);
    console.log(`streamValidated ÷ via a handler: ${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×)`);
  } finally {
    child.stdin!.end();
  }
}

runIfMain(import.meta.url, main);
