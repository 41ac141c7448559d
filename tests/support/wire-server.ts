/**
 * An HTTP server on 127.0.0.1 that answers each request with bytes a test wrote, and ends it the way the
 * test says: the body closed cleanly after them, the connection reset, or the connection left open (a
 * stall, for the client's deadline to end). It speaks no provider's format itself: the test renders the
 * provider's wire bytes (JSON, SSE, NDJSON) and cuts them where it likes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readEnvironment, type Environment } from "../../src/environment.js";

/** One response: its status and headers, the bytes sent, and how it ends after them. */
export interface WireReply {
  status?: number;
  headers: Record<string, string>;
  body: Uint8Array;
  end: "close" | "reset" | "stall";
}

export interface WireRequest {
  path: string;
  body: any;
  headers: IncomingMessage["headers"];
}

export interface WireServer {
  baseURL: string;
  requests: WireRequest[];
  /** What the next requests get: a function of the request (called once per request). */
  answer(reply: (request: WireRequest) => WireReply): void;
  close(): Promise<void>;
}

export async function startWireServer(): Promise<WireServer> {
  const requests: WireRequest[] = [];
  let reply: ((request: WireRequest) => WireReply) | undefined;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
    const request = { path: req.url ?? "", body, headers: req.headers };
    requests.push(request);
    const planned = reply?.(request);
    if (planned === undefined) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "no reply planned" }));
      return;
    }
    res.writeHead(planned.status ?? 200, planned.headers);
    // Flushed before the ending, so a reset or a stall comes after exactly these bytes.
    if (planned.body.length > 0) await new Promise<void>((resolve) => res.write(planned.body, () => resolve()));
    if (planned.end === "close") res.end();
    else if (planned.end === "reset") res.socket?.resetAndDestroy();
    // "stall": nothing more is sent; close() ends the connection.
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    answer(next) {
      reply = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The environment that sends every provider's model to the server at `baseURL`, with no retry. */
export function wireEnvironment(baseURL: string, timeoutMs = 60_000): Environment {
  return {
    ...readEnvironment({}),
    providers: {
      openai: { apiKey: "test-key", baseUrl: `${baseURL}/v1` },
      anthropic: { apiKey: "sk-ant-test", baseUrl: baseURL },
      ollama: { baseUrl: baseURL },
      google: { apiKey: "gemini-test-key", baseUrl: baseURL },
      "google-genai": { apiKey: "gemini-test-key", baseUrl: baseURL },
    },
    maxRetries: 0,
    timeoutMs,
  };
}
