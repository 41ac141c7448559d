/**
 * One deadline per model request that covers the whole answer (headers, body and every streamed chunk), for
 * the clients the providers' rows build. A request still unfinished after `timeoutMs` fails with a
 * ModelTimeoutError; every timer is cleared when its request settles.
 */
import { ModelTimeoutError } from "../errors.js";

/**
 * `fetch` for the model client with one deadline per HTTP request that covers the whole answer:
 * headers, body and every streamed chunk. A request still unfinished after `timeoutMs` fails with a
 * ModelTimeoutError (the body or the stream reader rejects with it), so a server that stalls after its
 * headers or drips its answer cannot hang a run.
 */
export function fetchWithDeadline(timeoutMs: number, fetchImpl: typeof fetch = (...args) => fetch(...args)): typeof fetch {
  return async (input, init) => {
    const deadline = startDeadline(timeoutMs, init?.signal ?? undefined);
    let response: Response;
    try {
      response = await fetchImpl(input, { ...init, signal: deadline.signal });
    } catch (error) {
      deadline.clear();
      throw error;
    }
    deadline.streamed = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    return settledWith(response, deadline.clear);
  };
}

/**
 * One request's deadline: a signal that aborts with a ModelTimeoutError after `timeoutMs` (or with the
 * caller's own signal), and `clear` for when the request has settled. The timer is unref'd: a finished
 * request's deadline must not keep a process (the CLI) alive.
 */
export function startDeadline(timeoutMs: number, callerSignal: AbortSignal | undefined) {
  const controller = new AbortController();
  const deadline = {
    /** The answer had started streaming when the deadline passed (a client cannot retry it, the graph node may). */
    streamed: false,
    signal: callerSignal ? AbortSignal.any([callerSignal, controller.signal]) : controller.signal,
    clear: () => clearTimeout(timer),
    /** The deadline's own error when it is what ended the request, else the error as it came. */
    explain: (error: unknown): unknown => (controller.signal.aborted ? controller.signal.reason : error),
  };
  const timer = setTimeout(() => controller.abort(new ModelTimeoutError(timeoutMs, deadline.streamed)), timeoutMs);
  timer.unref();
  return deadline;
}

/** A stream read under its request's deadline, released when the stream ends, fails or is left. */
export async function* deadlined<T>(stream: AsyncIterable<T>, deadline: ReturnType<typeof startDeadline>): AsyncGenerator<T> {
  try {
    for await (const item of stream) yield item;
  } catch (error) {
    throw deadline.explain(error);
  } finally {
    deadline.clear();
  }
}

/**
 * The response, with `done` called once its body has ended, failed or been cancelled (at once when it
 * has none): a finished request keeps no deadline timer, and so nothing the timer holds (its abort
 * signal, the caller's context).
 */
function settledWith(response: Response, done: () => void): Response {
  if (response.body === null) {
    done();
    return response;
  }
  const source = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof source.read>>;
      try {
        chunk = await source.read();
      } catch (error) {
        done();
        controller.error(error);
        return;
      }
      if (chunk.done) {
        done();
        controller.close();
      } else controller.enqueue(chunk.value);
    },
    cancel(reason) {
      done();
      return source.cancel(reason);
    },
  });
  const settled = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  // The client names the URL in its logs and errors.
  Object.defineProperty(settled, "url", { value: response.url });
  return settled;
}
