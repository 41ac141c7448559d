/**
 * fetchSayingOllamaErrors: the fetch ChatOllama is built with reads a fault reported inside the NDJSON
 * stream (`{"error": …}`) in the provider's words, wherever the chunks split the line, and passes every
 * other byte on as it came. (Through the real ChatOllama against a scripted server: tests/providers/providers.int.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { fetchSayingOllamaErrors } from "../../src/providers/ollama.js";

const encoder = new TextEncoder();

/** A fetch whose response body is these chunks, in order. */
function serving(chunks: Uint8Array[]): typeof fetch {
  return async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
        },
      }),
      { status: 200, headers: { "content-type": "application/x-ndjson" } },
    );
}

/** The body read whole through the watching fetch: its bytes, or the error it ended with. */
async function read(chunks: Uint8Array[]): Promise<{ text: string } | { error: Error }> {
  const response = await fetchSayingOllamaErrors(serving(chunks))("http://127.0.0.1/api/chat");
  try {
    return { text: await response.text() };
  } catch (error) {
    return { error: error as Error };
  }
}

/** The bytes cut at `at` (and, when given, at `at2` too). */
function cut(bytes: Uint8Array, ...at: number[]): Uint8Array[] {
  const points = [0, ...at, bytes.length];
  return points.slice(1).map((end, i) => bytes.subarray(points[i], end));
}

const line = (value: unknown) => JSON.stringify(value) + "\n";
const TOKEN = line({ model: "m", message: { role: "assistant", content: 'a "error" ünïcode token' }, done: false });

describe("fetchSayingOllamaErrors", () => {
  it("says the provider's message for an error line cut at every byte, after any token lines", async () => {
    const said = "model runner has unexpectedly stopped — out of memory";
    const bytes = encoder.encode(TOKEN + line({ error: { message: said, type: "api_error" } }));
    for (let at = 0; at <= bytes.length; at++) {
      const result = await read(cut(bytes, at));
      expect(result).toHaveProperty("error");
      const error = (result as { error: Error }).error;
      expect([error.name, error.message]).toEqual(["ResponseError", said]);
    }
  });

  it("an error as text is said as it is; one with no message as its JSON; a last line without its newline is read too", async () => {
    const cases: Array<[string, string]> = [
      [line({ error: "unexpected EOF" }), "unexpected EOF"],
      [line({ error: { code: 503 } }), '{"code":503}'],
      [JSON.stringify({ error: "no newline" }), "no newline"],
    ];
    for (const [text, said] of cases) {
      const result = await read([encoder.encode(TOKEN + text)]);
      expect((result as { error: Error }).error.message).toBe(said);
    }
  });

  it("passes a stream with no error line on byte for byte, however it is cut, a line longer than the watched length included", async () => {
    const long = line({ model: "m", message: { role: "assistant", content: "x".repeat(200_000) + '"error"' }, done: false });
    const text = TOKEN + long + line({ model: "m", done: true, done_reason: "stop" });
    const bytes = encoder.encode(text);
    for (const points of [[], [1], [TOKEN.length + 5], [TOKEN.length + 70_000, TOKEN.length + 140_000], [bytes.length - 3]]) {
      expect(await read(cut(bytes, ...points))).toEqual({ text });
    }
  });

  it("an error line after a line too long to watch is still read", async () => {
    const long = line({ model: "m", message: { role: "assistant", content: "y".repeat(100_000) }, done: false });
    const bytes = encoder.encode(long + line({ error: { message: "later fault" } }));
    for (const points of [[], [50_000], [long.length - 1], [long.length + 3]]) {
      expect(((await read(cut(bytes, ...points))) as { error: Error }).error.message).toBe("later fault");
    }
  });

  it("leaves an HTTP error response to the client (it reads the body's error itself)", async () => {
    const fetchImpl: typeof fetch = async () => new Response(JSON.stringify({ error: "not found" }), { status: 404 });
    const response = await fetchSayingOllamaErrors(fetchImpl)("http://127.0.0.1/api/chat");
    expect([response.status, await response.text()]).toEqual([404, '{"error":"not found"}']);
  });
});
