/**
 * A scripted LangSmith endpoint on 127.0.0.1 for langsmith's own `Client`: it answers every request with
 * `{}` (so `/info` names no feature and the client sends runs as multipart batches, its default), records
 * what arrives, and reads back the runs as LangSmith would store them: each run's create, with its updates
 * laid over it, whether the client sent them in one batch, in two, or one by one (`POST /runs`,
 * `PATCH /runs/{id}`).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as it arrived: JSON bodies parsed, multipart bodies as their parts (each part's JSON parsed). */
export interface ReceivedRequest {
  method: string;
  path: string;
  body?: Record<string, unknown>;
  parts?: Record<string, unknown>;
}

/** A run as the endpoint would store it: the create's fields with the updates' laid over them. */
export interface StoredRun {
  id: string;
  name?: string;
  parent_run_id?: string;
  tags?: string[];
  extra?: { metadata?: Record<string, unknown> };
  outputs?: Record<string, unknown>;
}

export interface LangSmithEndpoint {
  url: string;
  received: ReceivedRequest[];
  /** Every run received, by id. */
  runs(): Map<string, StoredRun>;
  close(): Promise<void>;
}

export async function startLangSmithEndpoint(): Promise<LangSmithEndpoint> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void read(req.headers["content-type"] ?? "", Buffer.concat(chunks)).then((body) => {
        received.push({ method: req.method ?? "", path: req.url ?? "", ...body });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    runs: () => storedRuns(received),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function read(contentType: string, body: Buffer): Promise<Pick<ReceivedRequest, "body" | "parts">> {
  if (contentType.startsWith("multipart/form-data")) {
    const form = await new Response(body, { headers: { "content-type": contentType } }).formData();
    const parts: Record<string, unknown> = {};
    for (const [name, value] of form) parts[name] = JSON.parse(typeof value === "string" ? value : await value.text());
    return { parts };
  }
  const text = body.toString("utf8");
  return text.startsWith("{") ? { body: JSON.parse(text) as Record<string, unknown> } : {};
}

/** Creates first, then updates, each laid over what came before for its run (a multipart part `post.<id>.extra` is the run's `extra`). */
function storedRuns(received: ReceivedRequest[]): Map<string, StoredRun> {
  const creates: Record<string, unknown>[] = [];
  const updates: Record<string, unknown>[] = [];
  for (const request of received) {
    if (request.parts !== undefined) {
      const byRun = new Map<string, { method: string; fields: Record<string, unknown> }>();
      for (const [name, value] of Object.entries(request.parts)) {
        const [method, id, field] = name.split(".");
        if (method !== "post" && method !== "patch") continue;
        const entry = byRun.get(`${method}.${id}`) ?? { method, fields: { id } };
        byRun.set(`${method}.${id}`, entry);
        if (field === undefined) Object.assign(entry.fields, value);
        else entry.fields[field] = value;
      }
      for (const { method, fields } of byRun.values()) (method === "post" ? creates : updates).push(fields);
    } else if (request.body !== undefined && request.method === "POST" && request.path === "/runs") creates.push(request.body);
    else if (request.body !== undefined && request.method === "PATCH" && request.path.startsWith("/runs/")) {
      updates.push({ ...request.body, id: request.path.slice("/runs/".length) });
    }
  }
  const runs = new Map<string, StoredRun>();
  for (const fields of [...creates, ...updates]) {
    const id = fields.id as string;
    runs.set(id, { ...runs.get(id), ...fields, id } as StoredRun);
  }
  return runs;
}
