/** A collector's OTLP/HTTP receiver on 127.0.0.1 for the tests: every JSON body it is sent, kept, and the spans and metrics read from them. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
export interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: OtlpAttribute[];
  status?: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Every request's path and JSON body, in the order they arrived. */
  received: { path: string; body: any }[];
  /** The spans received so far. */
  spans(): OtlpSpan[];
  /** The metrics received so far (OTLP JSON, each with its data points). */
  metrics(): any[];
  close(): Promise<void>;
}

const read = (value: OtlpValue): unknown =>
  value.arrayValue
    ? value.arrayValue.values.map(read)
    : (value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined));

/** A span's (or a data point's) attributes as plain values. */
export const attributesOf = (item: { attributes: OtlpAttribute[] }) => Object.fromEntries(item.attributes.map((a) => [a.key, read(a.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: { path: string; body: any }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ path: req.url ?? "", body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    spans: () =>
      received.filter((r) => r.path === "/v1/traces").flatMap((r) => r.body.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans))),
    metrics: () =>
      received
        .filter((r) => r.path === "/v1/metrics")
        .flatMap((r) => r.body.resourceMetrics.flatMap((rm: any) => rm.scopeMetrics.flatMap((sm: any) => sm.metrics))),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
