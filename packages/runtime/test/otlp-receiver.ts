// A local OTLP/HTTP receiver for tests: a real node:http server that takes POST /v1/traces (or any
// path) with an OTLP JSON body, decodes every span and keeps it with the request's path and headers.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One span as the receiver decoded it from OTLP JSON. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** The resource's `service.name`. */
  service: string;
  attributes: Record<string, string | number | boolean>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
}

/** A running receiver: its base URL, what it received, and how to stop it. */
export interface OtlpReceiver extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`: a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  readonly url: string;
  readonly port: number;
  readonly spans: ReceivedSpan[];
  readonly requests: { path: string; contentType: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };
interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: KeyValue[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

const anyValue = (v: AnyValue): string | number | boolean =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ""));

const attributesOf = (list: KeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));

/** Decodes an OTLP JSON export request into its spans. */
export function decodeOtlpJson(body: string): ReceivedSpan[] {
  const parsed = JSON.parse(body) as OtlpJson;
  const spans: ReceivedSpan[] = [];
  for (const rs of parsed.resourceSpans ?? []) {
    const service = String(attributesOf(rs.resource?.attributes)["service.name"] ?? "");
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          service,
          attributes: attributesOf(s.attributes),
          status: s.status?.code ?? 0,
        });
      }
    }
  }
  return spans;
}

/** Starts a receiver on 127.0.0.1 (a free port, or `port`). It answers every export 200 `{}`. */
export async function startOtlpReceiver(port = 0): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const contentType = String(req.headers["content-type"] ?? "");
      requests.push({ path: req.url ?? "", contentType, headers: req.headers });
      if (contentType.includes("json"))
        spans.push(...decodeOtlpJson(Buffer.concat(chunks).toString("utf8")));
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    spans,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}
