import { IdemError } from "@idem/schema";
import type { ConnectionOptions, NatsConnection } from "@nats-io/transport-node";
import { loadTransport } from "./nats-client.js";

/**
 * The servers and credentials of a NATS URL list (`nats.url`, `nats.servers`, `NATS_URL`,
 * `publish.<alias>.url`, comma-separated): `nats://user:password@host` and `nats://token@host` as
 * the Go client and the `nats` CLI read them. nats.js v3 ignores user info in a server URL, so it
 * is taken out here and given as `user`/`pass` or `token`. Servers that name different credentials
 * are refused (one connection has one identity).
 * @throws INVALID_CONFIG naming neither the URL nor the secret.
 */
export function natsConnectOptions(
  url: string,
): Pick<ConnectionOptions, "servers" | "user" | "pass" | "token"> {
  const servers: string[] = [];
  let auth: { user?: string; pass?: string; token?: string } | undefined;
  let authKey: string | undefined;
  for (const raw of url.split(",").map((s) => s.trim())) {
    const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)@(.*)$/.exec(raw);
    if (!m) {
      servers.push(raw);
      continue;
    }
    const [, scheme, info, rest] = m as unknown as [string, string, string, string];
    servers.push(`${scheme}${rest}`);
    const colon = info.indexOf(":");
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    };
    const next =
      colon < 0
        ? { token: decode(info) }
        : { user: decode(info.slice(0, colon)), pass: decode(info.slice(colon + 1)) };
    const key = JSON.stringify(next);
    if (authKey !== undefined && authKey !== key)
      throw new IdemError(
        "INVALID_CONFIG",
        "the NATS servers name different credentials: one connection has one identity",
      );
    auth = next;
    authKey = key;
  }
  return { servers, ...auth };
}

/**
 * Connects to NATS the way every idem process does: reconnect forever (`maxReconnectAttempts: -1`),
 * short reconnect waits, and a connection name that shows up in server monitoring. Credentials in
 * the URL are used (`natsConnectOptions`).
 * @throws the client's connection error when no server in `url` (comma-separated) answers at first.
 */
export async function connectNats(url: string, name = "idem"): Promise<NatsConnection> {
  const { connect } = await loadTransport();
  return await connect({
    ...natsConnectOptions(url),
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
