import type pg from "pg";
import type { WorkKind } from "../../port/work.js";

/** The channel a PostgreSQL journal announces new work on; the payload is a `WorkKind`. */
export const WORK_CHANNEL = "idem_work";

/**
 * Announces work inside the caller's transaction: PostgreSQL delivers it to every listener when
 * (and only if) the transaction commits, so a woken process always finds the row.
 */
export async function notifyWork(client: pg.PoolClient, kind: WorkKind): Promise<void> {
  await client.query("SELECT pg_notify($1, $2)", [WORK_CHANNEL, kind]);
}
