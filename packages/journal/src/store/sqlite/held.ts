import { holds, jobLeaseLost, runLeaseLost } from "../../domain/leases.js";
import type { JobLease } from "../../port/jobs.js";
import type { Lease } from "../../port/runs.js";
import type { SqliteConnection } from "./connection.js";
import type { JobRow, RunRow } from "./rows.js";

/**
 * The run a lease holds, read in the caller's transaction.
 * @throws LEASE_LOST when the run is not running under this very token (a stale holder).
 */
export function heldRun(c: SqliteConnection, lease: Lease): RunRow {
  const row = c.st("SELECT * FROM runs WHERE id = ?").get(lease.runId) as RunRow | undefined;
  if (!holds(row, lease.token)) throw runLeaseLost(lease, row?.state);
  return row as RunRow;
}

/**
 * The job a delivery's claim holds, read in the caller's transaction.
 * @throws LEASE_LOST when the job is not running under this very token (a stale holder).
 */
export function heldJob(c: SqliteConnection, lease: JobLease): JobRow {
  const row = c.st("SELECT * FROM jobs WHERE job_id = ?").get(lease.jobId) as JobRow | undefined;
  if (!holds(row, lease.token)) throw jobLeaseLost(lease, row?.state);
  return row as JobRow;
}
