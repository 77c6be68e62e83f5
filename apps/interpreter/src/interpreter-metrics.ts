import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Registry } from "prom-client";

/** The interpreter's Prometheus counters, on a registry of their own (several interpreters per process are fine). */
export interface InterpreterMetrics {
  readonly registry: Registry;
  /** Run transitions made by this interpreter: claimed, takeover, done, failed, dead, released, lease_lost. */
  readonly runs: Counter<"outcome">;
  /** Effect outcomes: applied, present, skipped, failed, uncertain, error. */
  readonly effects: Counter<"kind" | "outcome">;
}

/** Creates a fresh set of interpreter metrics. */
export function createInterpreterMetrics(): InterpreterMetrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    runs: new Counter({
      name: "idem_interpreter_runs_total",
      help: "Run transitions made by this interpreter, by outcome",
      labelNames: ["outcome"],
      registers,
    }),
    effects: new Counter({
      name: "idem_interpreter_effects_total",
      help: "Effects settled or failed by this interpreter, by kind and outcome",
      labelNames: ["kind", "outcome"],
      registers,
    }),
  };
}

/**
 * Serves `GET /metrics` (Prometheus text) on `host:port` (port 0 picks a free one). Resolves once
 * listening. @throws the listen error (EADDRINUSE) as is.
 */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host = "127.0.0.1",
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      (e: unknown) => res.writeHead(500).end(String(e)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
