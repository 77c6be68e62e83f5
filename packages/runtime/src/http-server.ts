import type { AddressInfo } from "node:net";
import type { ServerType } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { Registry } from "prom-client";

// hono and its Node server are imported when a server starts, not with @idem/core: a command that
// serves nothing never loads them.

/** A listening HTTP server of an idem process. */
export interface HttpServer extends AsyncDisposable {
  /** `http://host:port`, the host bracketed when it is IPv6. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and ends open connections; idempotent. */
  close(): Promise<void>;
}

/**
 * Serves a hono app on `host:port` (port 0 picks a free one). Resolves once listening.
 * @throws the listen error (EADDRINUSE, EACCES) as is.
 */
export async function serveHttp(
  app: Pick<Hono, "fetch">,
  address: { host: string; port: number },
): Promise<HttpServer> {
  const { host, port } = address;
  const { serve } = await import("@hono/node-server");
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host }, () => {
      s.off("error", reject);
      resolve(s);
    });
    s.once("error", reject);
  });
  const addr = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    });
    return closed;
  };
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${addr.port}`,
    port: addr.port,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * The `GET /metrics` handler: the registry in Prometheus text, after `refresh` (e.g. gauges read
 * from the journal) when given. A failing `refresh` or registry propagates to the app's error
 * handler.
 */
export function metricsHandler(
  registry: Registry,
  refresh?: () => Promise<void>,
): (c: Context) => Promise<Response> {
  return async (c) => {
    if (refresh) await refresh();
    return c.text(await registry.metrics(), 200, { "content-type": registry.contentType });
  };
}

/**
 * Serves only `GET /metrics` of `registry` on `host:port` (default host 127.0.0.1; port 0 picks a
 * free one): any other request answers 404 with no body, an error 500 with its text.
 * @throws the listen error (EADDRINUSE) as is.
 */
export async function startMetricsServer(options: {
  registry: Registry;
  port: number;
  host?: string;
}): Promise<HttpServer> {
  const { Hono } = await import("hono");
  const app = new Hono();
  app.get("/metrics", metricsHandler(options.registry));
  app.notFound((c) => c.body(null, 404));
  app.onError((e, c) => c.text(String(e), 500));
  return await serveHttp(app, { host: options.host ?? "127.0.0.1", port: options.port });
}
