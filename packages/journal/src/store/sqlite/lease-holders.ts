import { ACTIVE_RUN_STATES, sqlStateList, UNFINISHED_JOB_STATES } from "../../domain/states.js";
import type { HeldLeases, JournalLeaseHolders } from "../../port/lease-holders.js";
import type { SqliteConnection } from "./connection.js";

/** Each leased table, with its partial index of unfinished rows and the states that index holds. */
const TABLES = {
  runs: { index: "runs_due", unfinished: sqlStateList(ACTIVE_RUN_STATES) },
  jobs: { index: "jobs_due", unfinished: sqlStateList(UNFINISHED_JOB_STATES) },
} as const;

/** The lease holders of a SQLite journal's runs or jobs (see JournalLeaseHolders). */
export function sqliteLeaseHolders(
  c: SqliteConnection,
  table: keyof typeof TABLES,
): JournalLeaseHolders {
  const { index, unfinished } = TABLES[table];
  // The index's own condition, so SQLite may use the partial index; `running` narrows it.
  const held = `state IN ${unfinished} AND state = 'running'`;
  return {
    async leaseOwners() {
      const rows = c
        .st(
          `SELECT DISTINCT lease_owner AS owner FROM ${table} INDEXED BY ${index}
           WHERE ${held} AND lease_owner IS NOT NULL`,
        )
        .all() as { owner: string }[];
      return rows.map((r) => r.owner);
    },

    async heldLeases() {
      const on = (t: string) => `${t}.state IN ${unfinished} AND ${t}.state = 'running'`;
      const rows = c
        .st(
          `SELECT t.lease_owner AS owner, COUNT(*) AS count, MIN(t.lease_until) AS firstUntil,
                  (SELECT f.job_id FROM ${table} AS f INDEXED BY ${index}
                    WHERE ${on("f")} AND f.lease_owner = t.lease_owner
                    ORDER BY f.lease_until LIMIT 1) AS jobId
             FROM ${table} AS t INDEXED BY ${index}
            WHERE ${on("t")} AND t.lease_owner IS NOT NULL
            GROUP BY t.lease_owner ORDER BY firstUntil`,
        )
        .all() as HeldLeases[];
      return rows.map((r) => ({ ...r, count: Number(r.count), firstUntil: Number(r.firstUntil) }));
    },

    async expireLeasesOf(owners) {
      if (owners.length === 0) return 0;
      return c.write(() => {
        const now = c.clock.now();
        return c
          .st(
            `UPDATE ${table} SET lease_until = ?, due_at = ?, updated_at = ?
             WHERE ${held} AND lease_until > ? AND lease_owner IN (SELECT value FROM json_each(?))`,
          )
          .run(now, now, now, now, JSON.stringify(owners)).changes;
      }, false);
    },
  };
}
