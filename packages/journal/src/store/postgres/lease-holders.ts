import { ACTIVE_RUN_STATES, sqlStateList, UNFINISHED_JOB_STATES } from "../../domain/states.js";
import type { JournalLeaseHolders } from "../../port/lease-holders.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import { announceWork } from "./notify.js";

/** Each leased table, with the states of its partial index of unfinished rows. */
const UNFINISHED = {
  runs: sqlStateList(ACTIVE_RUN_STATES),
  jobs: sqlStateList(UNFINISHED_JOB_STATES),
} as const;

/** The lease holders of a PostgreSQL journal's runs or jobs, by the server's clock (see JournalLeaseHolders). */
export function postgresLeaseHolders(
  c: PostgresConnection,
  table: keyof typeof UNFINISHED,
): JournalLeaseHolders {
  // The index's own condition, so the planner may use the partial index; `running` narrows it.
  const held = `state IN ${UNFINISHED[table]} AND state = 'running'`;
  return {
    async leaseOwners() {
      const rows = await c.query<{ owner: string }>(
        `SELECT DISTINCT lease_owner AS owner FROM ${table} WHERE ${held} AND lease_owner IS NOT NULL`,
      );
      return rows.map((r) => r.owner);
    },

    async heldLeases() {
      const rows = await c.query<{ owner: string; count: unknown; first: unknown; job: string }>(
        `SELECT DISTINCT ON (lease_owner) lease_owner AS owner,
                COUNT(*) OVER (PARTITION BY lease_owner) AS count,
                lease_until AS first, job_id AS job
           FROM ${table} WHERE ${held} AND lease_owner IS NOT NULL
          ORDER BY lease_owner, lease_until`,
      );
      return rows
        .map((r) => ({
          owner: r.owner,
          count: Number(r.count),
          firstUntil: Number(r.first),
          jobId: r.job,
        }))
        .sort((a, b) => a.firstUntil - b.firstUntil);
    },

    async expireLeasesOf(owners) {
      if (owners.length === 0) return 0;
      const rows = await c.query<{ id: unknown }>(
        `UPDATE ${table} SET lease_until = ${NOW_MS}, due_at = ${NOW_MS}, updated_at = $2
         WHERE ${held} AND lease_until > ${NOW_MS} AND lease_owner = ANY($1::text[])
         RETURNING 1 AS id`,
        [[...owners], c.clock.now()],
      );
      // Wake the processes waiting for work of this kind: the leases ended are due now.
      if (rows.length > 0) await announceWork(c, table);
      return rows.length;
    },
  };
}
