/**
 * The dev server (`langgraphjs dev`) with the OpenTelemetry SDK registered as docs/tracing.md says: the page's
 * `otel.mjs` block, loaded with NODE_OPTIONS="--import …" and sending to OTEL_EXPORTER_OTLP_ENDPOINT, here a
 * receiver of the test's own. The server runs its graphs in a process of its own, so what the test reads is what a
 * collector would get: a validation run's span and its attempt's span under it.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIMULATED_MODEL } from "../../src/environment.js";
import { REPO_ROOT, startDevServer, type DevServer } from "../../testkit/dev-server.js";
import { readPage } from "../docs/markdown.js";
import { attributesOf, startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from "../telemetry/otlp-receiver.js";

const START_TIMEOUT = 180_000;
const TEST_TIMEOUT = 120_000;

/** The page's registration module: its one ```js block. */
function registrationModule(): string {
  const blocks = [...readPage("docs/tracing.md").matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  expect(blocks).toHaveLength(1);
  return blocks[0];
}

// In the repository, so the module's imports resolve to its node_modules (a server project has them installed).
const dir = join(REPO_ROOT, `.docs-check-otel-${process.pid}`);
let receiver: OtlpReceiver;
let server: DevServer | undefined;

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "otel.mjs");
  writeFileSync(file, registrationModule());
  receiver = await startOtlpReceiver();
  server = await startDevServer({
    env: {
      LLM_MODEL: "simulated",
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${pathToFileURL(file).href}`.trim(),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      // Batches every 100 ms rather than 5 s: the test reads them as they come.
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
    startTimeoutMs: START_TIMEOUT - 20_000,
  });
}, START_TIMEOUT);

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** The spans received once `found` holds of them (the batch processor sends them shortly after they end). */
async function spansWhen(found: (spans: OtlpSpan[]) => boolean): Promise<OtlpSpan[]> {
  // A bound only so that a failure says what did arrive; on a quiet machine the spans come within a second.
  const deadline = Date.now() + 60_000;
  while (!found(receiver.spans())) {
    if (Date.now() > deadline) throw new Error(`the collector received: ${JSON.stringify(receiver.spans().map((span) => span.name))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return receiver.spans();
}

describe("the dev server with the SDK of docs/tracing.md", () => {
  it(
    "sends a run's span and its attempts' spans to the collector",
    async () => {
      try {
        const client = new Client({ apiUrl: server!.url, apiKey: null });
        const thread = await client.threads.create();
        const out = await client.runs.wait(thread.thread_id, "validation", { input: { request: "A deployment config for payments-api with 8 replicas" } });
        expect(out).toMatchObject({ success: true, stopReason: "valid" });
        const attempts = (out as { attempts: number }).attempts;

        const isRun = (span: OtlpSpan) => span.name === "invoke_agent Deterministic validation";
        const spans = await spansWhen((all) => all.some(isRun) && all.filter((span) => span.name.startsWith("chat ")).length === attempts);
        const run = spans.find(isRun)!;
        expect(attributesOf(run)).toMatchObject({
          "gen_ai.request.model": SIMULATED_MODEL,
          "trustworthy.stop_reason": "valid",
          "trustworthy.attempts": attempts,
        });
        const chats = spans.filter((span) => span.name.startsWith("chat "));
        expect(chats.map((span) => [span.name, span.parentSpanId, span.traceId])).toEqual(
          chats.map(() => [`chat ${SIMULATED_MODEL}`, run.spanId, run.traceId]),
        );
        expect(attributesOf(chats.at(-1)!)).toMatchObject({ "trustworthy.valid": true, "gen_ai.operation.name": "chat" });
      } catch (error) {
        if (error instanceof Error) error.message += `\n--- langgraphjs dev output (tail) ---\n${server?.tail(6_000)}`;
        throw error;
      }
    },
    TEST_TIMEOUT,
  );
});
