import { isIdemError } from "@idem/schema";
import type { WorkKind } from "../../port/work.js";
import type { PostgresConnection } from "./connection.js";

/** The channel a PostgreSQL journal announces new work on; the payload is a `WorkKind`. */
export const WORK_CHANNEL = "idem_work";

/**
 * Announces work after the commit that made it, so a woken process always finds the row.
 *
 * Never inside the transaction: a NOTIFY there holds PostgreSQL's one notify lock from pre-commit
 * to the end of the commit, so the WAL flushes of all notifying transactions queue one behind the
 * other (16 concurrent records then commit one at a time). Lost when the process dies or the
 * server goes away between the commit and this statement: listeners fall back to `pollMs`.
 * @throws what the query throws, except UNAVAILABLE (the work is committed; the poll finds it)
 */
export async function announceWork(c: PostgresConnection, kind: WorkKind): Promise<void> {
  try {
    await c.query("SELECT pg_notify($1, $2)", [WORK_CHANNEL, kind]);
  } catch (e) {
    if (!isIdemError(e, "UNAVAILABLE")) throw e;
  }
}
