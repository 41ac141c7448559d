/** A run's error through the wait and join routes: the repair of the server's double serialization, and the guard that it is still needed. */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../testkit/dev-server.js";
import { repairWaitBody, repairWaitResult } from "../../src/server/wait-errors.js";

const damaged = JSON.stringify({
  __error__: { error: "Error", message: JSON.stringify({ error: "ConfigurationError", message: "maxAttempts must be an integer from 1 to 20; got 0" }) },
});
const repaired = JSON.stringify({ __error__: { error: "ConfigurationError", message: "maxAttempts must be an integer from 1 to 20; got 0" } });

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(decoder.decode(chunk));
  return chunks;
}

describe("a run's error through runs.wait and join", () => {
  it("puts back the error a run threw; leaves results and other errors as they are", () => {
    expect(repairWaitResult(damaged)).toBe(repaired);
    for (const untouched of [
      repaired,
      '{"success": true}',
      "null",
      "not json",
      JSON.stringify({ __error__: { error: "Error", message: "plain text" } }),
      JSON.stringify({ __error__: { error: "Error", message: '"a string"' } }),
    ]) {
      expect(repairWaitResult(untouched)).toBe(untouched);
    }
  });

  it("passes the keep-alive newlines through at once and repairs the JSON at the end, however it is cut", async () => {
    const encoder = new TextEncoder();
    const parts = ["\n", "\n", damaged.slice(0, 10), damaged.slice(10, 11), damaged.slice(11)];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(encoder.encode(part));
        controller.close();
      },
    });
    const chunks = await readAll(repairWaitBody(body));
    expect(chunks.slice(0, 2)).toEqual(["\n", "\n"]);
    expect(chunks.slice(2).join("")).toBe(repaired);
  });

  it("is still needed: the installed server serializes a run's error twice on wait (remove the repair when this fails)", async () => {
    // The server's own module (not among its exports), read from the installed package.
    const file = pathToFileURL(join(REPO_ROOT, "node_modules", "@langchain", "langgraph-api", "dist", "utils", "serde.mjs")).href;
    const { serializeError } = (await import(file)) as { serializeError: (error: unknown) => { error: string; message: string } };
    const event = serializeError(new Error("inner")); // what the run's error event carries
    expect(event).toEqual({ error: "Error", message: "inner" });
    const waited = serializeError({ error: "ConfigurationError", message: "m" }); // what wait() then makes of it
    expect(JSON.parse(waited.message)).toEqual({ error: "ConfigurationError", message: "m" });
  });
});
