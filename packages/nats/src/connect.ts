import { connect, type NatsConnection } from "@nats-io/transport-node";

/**
 * Connects to NATS the way every idem process does: reconnect forever (`maxReconnectAttempts: -1`),
 * short reconnect waits, and a connection name that shows up in server monitoring.
 */
export async function connectNats(url: string, name = "idem"): Promise<NatsConnection> {
  return await connect({
    servers: url.split(",").map((s) => s.trim()),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: false,
    pingInterval: 5_000,
  });
}
