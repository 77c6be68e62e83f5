import { isIdemError } from "@idem/schema";
import type { WorkKind } from "../../port/work.js";
import type { PostgresConnection } from "./connection.js";

/** The channel a PostgreSQL journal announces new work on; the payload is a `WorkKind`. */
export const WORK_CHANNEL = "idem_work";

/** One NOTIFY, in a transaction of its own; an UNAVAILABLE server is no error here. */
async function notify(c: PostgresConnection, kind: WorkKind): Promise<void> {
  try {
    await c.statement({
      name: "idem_notify",
      text: "SELECT pg_notify($1, $2)",
      values: [WORK_CHANNEL, kind],
    });
  } catch (e) {
    if (!isIdemError(e, "UNAVAILABLE")) throw e;
  }
}

/** Per connection and kind: the NOTIFY being sent, and the one queued to follow it. */
type Flights = Map<WorkKind, { sending?: Promise<void>; queued?: Promise<void> }>;
const flights = new WeakMap<PostgresConnection, Flights>();

/**
 * Announces work after the commit that made it, so a woken process always finds the row.
 *
 * Never inside the transaction: a NOTIFY there holds PostgreSQL's one notify lock from pre-commit
 * to the end of the commit, so the WAL flushes of all notifying transactions queue one behind the
 * other (16 concurrent records then commit one at a time). Lost when the process dies or the
 * server goes away between the commit and this statement: listeners fall back to `pollMs`.
 *
 * Concurrent announcements of one kind share NOTIFYs: while one is being sent (it may have left
 * before the caller's commit), the callers wait for one more, queued to start when it is done and
 * so after each of their commits; a listener needs one notification, not one per row. Each caller
 * is answered once a NOTIFY sent after its commit returned.
 * @throws what the query throws, except UNAVAILABLE (the work is committed; the poll finds it)
 */
export function announceWork(c: PostgresConnection, kind: WorkKind): Promise<void> {
  const byKind: Flights = flights.get(c) ?? new Map();
  flights.set(c, byKind);
  const flight = byKind.get(kind) ?? {};
  byKind.set(kind, flight);
  if (flight.queued !== undefined) return flight.queued;
  const start = (): Promise<void> => {
    const sending = notify(c, kind).finally(() => {
      if (flight.sending === sending) flight.sending = undefined;
    });
    flight.sending = sending;
    return sending;
  };
  if (flight.sending === undefined) return start();
  const queued = flight.sending
    .catch(() => {})
    .then(() => {
      flight.queued = undefined;
      return start();
    });
  flight.queued = queued;
  return queued;
}
