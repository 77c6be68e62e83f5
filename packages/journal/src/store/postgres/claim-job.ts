import { jobRecord } from "../../domain/records.js";
import { sqlStateList, UNFINISHED_JOB_STATES } from "../../domain/states.js";
import type { JobLease, JobRecord } from "../../port/jobs.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import type { JobRow } from "./dead-letters.js";

const UNFINISHED = sqlStateList(UNFINISHED_JOB_STATES);

/**
 * The next due job of the embedded queue leased in one statement, its own implicit transaction
 * (durable soon, as the claim in a transaction is: see jobs.ts): the locking SELECT of `claimNext`
 * and the lease's UPDATE, one round trip instead of four (BEGIN, SELECT, UPDATE, COMMIT). A due
 * job it must not lease (its output is recorded, or its deliveries are used up) is left as it is,
 * for the transaction that ends it (`unleased`). $1 the agents (NULL: any), $6 `maxDeliver`.
 */
const CLAIM_JOB = {
  name: "idem_claim_job",
  text: `WITH due AS (
       SELECT jobs.seq, jobs.deliveries, job_inputs.input, job_inputs.traceparent,
         EXISTS (SELECT 1 FROM outputs WHERE outputs.job_id = jobs.job_id) AS recorded
       FROM jobs JOIN job_inputs ON job_inputs.seq = jobs.seq
       WHERE state IN ${UNFINISHED} AND due_at <= ${NOW_MS} AND ($1::text[] IS NULL OR agent = ANY($1))
       ORDER BY due_at, jobs.seq LIMIT 1 FOR UPDATE OF jobs SKIP LOCKED),
     upd AS (
       UPDATE jobs SET state = 'running', lease_owner = $2, lease_token = $3,
         lease_until = ${NOW_MS} + $4, due_at = ${NOW_MS} + $4, deliveries = jobs.deliveries + 1,
         updated_at = $5
       FROM due
       WHERE jobs.seq = due.seq AND NOT due.recorded AND ($6::int IS NULL OR due.deliveries < $6)
       RETURNING jobs.*)
     SELECT to_json(upd.*) AS job, due.input, due.traceparent,
       set_config('synchronous_commit', 'off', true) AS soon
     FROM due LEFT JOIN upd ON true`,
};

/** What the one-statement claim found: nothing due, a due job it left, or a leased job. */
export type JobClaimTrip =
  | { found: "none" }
  | { found: "unleased" }
  | { found: "leased"; lease: JobLease; job: JobRecord };

/** Leases the next due job in one statement (see `CLAIM_JOB`). */
export async function claimJobInOneTrip(
  c: PostgresConnection,
  options: { owner: string; leaseMs: number; agents?: readonly string[]; maxDeliver?: number },
): Promise<JobClaimTrip> {
  const token = c.ids();
  const rows = await c.statement<{ job: JobRow | null; input: string; traceparent: string | null }>(
    {
      ...CLAIM_JOB,
      values: [
        options.agents === undefined ? null : [...options.agents],
        options.owner,
        token,
        options.leaseMs,
        c.clock.now(),
        options.maxDeliver ?? null,
      ],
    },
  );
  const found = rows[0];
  if (!found) return { found: "none" };
  const row = found.job;
  if (!row) return { found: "unleased" };
  return {
    found: "leased",
    lease: {
      jobId: row.job_id,
      token,
      owner: options.owner,
      until: row.lease_until as number,
      deliveries: row.deliveries,
    },
    job: jobRecord(row, JSON.parse(found.input) as unknown, found.traceparent),
  };
}
