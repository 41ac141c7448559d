/**
 * A run's error, as the runs "wait" and "join" routes answer it. The
 * installed server (@langchain/langgraph-api 1.5.1) serializes a run's error
 * twice on those routes: the error event already carries
 * `{ error: name, message }`, and `wait` serializes that object again, so a
 * client (the SDK's `runs.wait`, `RemoteGraph`) receives
 * `{ "__error__": { "error": "Error", "message": "{\"error\":\"ConfigurationError\",…}" } }`
 * and throws `Error: {"error":…}` instead of `ConfigurationError: <message>`.
 * The HTTP app passes those responses through `repairWaitBody`, which puts
 * the inner error back; a body that is not so damaged passes unchanged.
 * tests/server/wait-errors.test.ts fails the day the server stops doing it.
 */

/** The final JSON of a wait/join answer, with a doubly serialized `__error__` put right; anything else unchanged. */
export function repairWaitResult(text: string): string {
  let result: unknown;
  try {
    result = JSON.parse(text);
  } catch {
    return text;
  }
  const error = (result as { __error__?: { error?: unknown; message?: unknown } } | null)?.__error__;
  if (error === null || typeof error !== "object" || error.error !== "Error" || typeof error.message !== "string") return text;
  let inner: unknown;
  try {
    inner = JSON.parse(error.message);
  } catch {
    return text;
  }
  const { error: name, message } = (inner ?? {}) as { error?: unknown; message?: unknown };
  if (typeof name !== "string" || typeof message !== "string") return text;
  return JSON.stringify({ ...(result as object), __error__: { error: name, message } });
}

/**
 * The body of a wait/join answer, with its final JSON repaired. The server
 * writes a newline every second while the run goes on (to keep the
 * connection open); those pass through at once, and only the JSON at the end
 * is held until the body ends.
 */
export function repairWaitBody(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let held = "";
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const text = decoder.decode(chunk, { stream: true });
        if (held === "" && text.trim() === "") controller.enqueue(chunk);
        else held += text;
      },
      flush(controller) {
        held += decoder.decode();
        if (held !== "") controller.enqueue(encoder.encode(repairWaitResult(held)));
      },
    }),
  );
}
