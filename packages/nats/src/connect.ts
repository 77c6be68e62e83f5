import type { NatsConnection } from "@nats-io/transport-node";
import { loadTransport } from "./nats-client.js";

/**
 * Connects to NATS the way every idem process does: reconnect forever (`maxReconnectAttempts: -1`),
 * short reconnect waits, and a connection name that shows up in server monitoring.
 * @throws the client's connection error when no server in `url` (comma-separated) answers at first.
 */
export async function connectNats(url: string, name = "idem"): Promise<NatsConnection> {
  const { connect } = await loadTransport();
  return await connect({
    servers: url.split(",").map((s) => s.trim()),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: false,
    pingInterval: 5_000,
  });
}

/**
 * Drains the connection (what was published is flushed, subscriptions end) and closes it; when the
 * server is gone, `drain()` would wait for a reconnect that may never come (reconnect is forever),
 * so after `timeoutMs` the connection is closed as it is. A process that stops during an outage
 * exits instead of hanging.
 * @returns whether the drain finished in time.
 */
export async function closeNats(nc: NatsConnection, timeoutMs = 2_000): Promise<boolean> {
  if (nc.isClosed()) return true;
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    nc.drain().then(
      () => true,
      () => false,
    ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (!nc.isClosed()) await nc.close();
  return drained;
}
