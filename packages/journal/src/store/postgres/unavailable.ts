import { IdemError } from "@idem/schema";
import { isDatabaseError } from "./pg-driver.js";

/**
 * Socket errors of a server that is gone or out of reach: refused, reset by a dying server,
 * written after it; and a network that cannot reach it now (this host cut off, no route, a
 * connect that timed out).
 */
const SOCKET_GONE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "ENETDOWN",
  "EHOSTDOWN",
  "ETIMEDOUT",
]);

/**
 * SQLSTATEs of a server that is gone or restarting: admin shutdown, crash shutdown, cannot connect
 * now (starting up, in recovery), and class 08 (connection exception, connection does not exist,
 * connection failure, unable to establish, rejected).
 */
const SERVER_GONE = new Set([
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08003",
  "08006",
  "08001",
  "08004",
]);

/**
 * Messages node-postgres gives a query whose connection ended under it (no code of their own): the
 * server went away mid-query, or a client that saw its connection fail is queried again.
 */
const DRIVER_GONE = [
  /^Connection terminated/,
  /^Client has encountered a connection error and is not queryable$/,
];

/**
 * Whether an error means the PostgreSQL server is gone or restarting, and nothing else: the
 * socket errors and SQLSTATEs above and node-postgres's "Connection terminated". A syntax error,
 * a constraint violation or any other failure is not. Pure; never throws.
 */
export function isConnectionLoss(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (isDatabaseError(e)) return e.code !== undefined && SERVER_GONE.has(e.code);
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") return SOCKET_GONE.has(code);
  return DRIVER_GONE.some((re) => re.test(e.message));
}

/**
 * The error a journal call answers when the server is gone: UNAVAILABLE (class `transient`, so the
 * executor's record and the interpreter's claim retry it), naming the journal without its
 * password, the driver's error as the cause. Anything else is returned as it is.
 *
 * A COMMIT whose answer was lost is UNAVAILABLE too: whether it committed is unknown, and a retry
 * tells (a record retried finds its own output: duplicate).
 */
export function asUnavailable(e: unknown, location: string): unknown {
  if (!isConnectionLoss(e)) return e;
  const reason = e instanceof Error ? e.message : String(e);
  return new IdemError(
    "UNAVAILABLE",
    `the journal's PostgreSQL server is unavailable (${location}): ${reason}`,
    { cause: e, details: { journal: location } },
  );
}
