import type pg from "pg";
import { runLeaseLost } from "../../domain/leases.js";
import type { Lease } from "../../port/runs.js";

/**
 * The fence of every write under a run's lease, put in the write's own statement: the run is
 * running under this very token, and its row is locked (FOR SHARE) until the transaction ends, so
 * a takeover (an UPDATE of that row) waits for the write to commit, or the write, waiting for the
 * takeover, re-reads the row and finds another token: it then matches nothing and changes nothing.
 * Parameters $1 (run id) and $2 (token).
 */
export const HELD_CTE =
  "held AS (SELECT id FROM runs WHERE id = $1 AND state = 'running' AND lease_token = $2 FOR SHARE)";

/** The WHERE of an UPDATE of the run itself under its lease: $1 run id, $2 token. */
export const HOLDS = "id = $1 AND state = 'running' AND lease_token = $2";

/**
 * The error of a write whose fence matched nothing (LEASE_LOST, as on SQLite), naming the run's
 * state as it is now.
 */
export async function leaseLost(client: pg.PoolClient | pg.Pool, lease: Lease): Promise<Error> {
  const { rows } = await client.query<{ state: string }>("SELECT state FROM runs WHERE id = $1", [
    lease.runId,
  ]);
  return runLeaseLost(lease, rows[0]?.state);
}

/** A job's state, for the LEASE_LOST a stale holder of a job's claim is told. */
export async function jobStateOf(
  client: pg.PoolClient,
  jobId: string,
): Promise<string | undefined> {
  const { rows } = await client.query<{ state: string }>(
    "SELECT state FROM jobs WHERE job_id = $1",
    [jobId],
  );
  return rows[0]?.state;
}
