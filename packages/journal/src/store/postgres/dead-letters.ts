import { IdemError } from "@idem/schema";
import type pg from "pg";
import { deadLetterEvent, JOURNAL_EVENTS as E } from "../../domain/events.js";
import { holds, jobLeaseLost } from "../../domain/leases.js";
import { toDeadLetter } from "../../domain/records.js";
import type { DeadLetterWrite } from "../../domain/writes.js";
import type { JournalDeadLetters } from "../../port/dead-letters.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import { announceWork } from "./notify.js";
import type { RowOf } from "./rows.js";
import type * as tables from "./tables.js";
import { where } from "./where.js";

/** A `jobs` row. */
export type JobRow = RowOf<typeof tables.jobs>;
/** A `dead_letters` row. */
type DeadLetterRow = RowOf<typeof tables.deadLetters>;

/**
 * Dead-letters a job inside the caller's transaction: the job row (when there is one, locked by
 * the caller) goes dead, and one open dead letter is written (idempotent per job by the partial
 * unique index `dead_letters_open`), with its event. Under a `lease`, the job's UPDATE holds only
 * while the job is running under that very token (checked in the same statement).
 * @throws LEASE_LOST when a lease is given and the job is no longer held under its token.
 */
export async function deadLetterRow(
  c: PostgresConnection,
  client: pg.PoolClient,
  row: JobRow | undefined,
  dead: DeadLetterWrite,
): Promise<void> {
  const { jobId, failure, actor, lease } = dead;
  const now = c.clock.now();
  if (row) {
    const updated = await client.query(
      `UPDATE jobs SET state = 'dead', lease_owner = NULL, lease_token = NULL, lease_until = NULL,
       due_at = NULL, last_error = $1, updated_at = $2
       WHERE seq = $3 AND ($4::text IS NULL OR (state = 'running' AND lease_token = $4))`,
      [failure.error, now, row.seq, lease?.token ?? null],
    );
    if (updated.rowCount === 0 && lease) throw jobLeaseLost(lease, row.state);
  }
  const inserted = await client.query(
    `INSERT INTO dead_letters (job_id, agent, class, deliveries, last_error, at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) WHERE resolved_at IS NULL DO NOTHING`,
    [
      jobId,
      failure.agent ?? row?.agent ?? null,
      failure.class,
      failure.deliveries,
      failure.error,
      now,
    ],
  );
  if ((inserted.rowCount ?? 0) > 0) {
    await c.event(client, {
      jobId,
      type: E.JOB_DEAD,
      actor,
      data: {
        class: failure.class,
        error: failure.error,
        deliveries: failure.deliveries,
      },
    });
  }
}

/** The dead letters of a PostgreSQL journal. */
export function postgresDeadLetters(c: PostgresConnection): JournalDeadLetters {
  return {
    async add(jobId, failure, lease) {
      await c.tx(async (client) => {
        const { rows } = await client.query<JobRow>(
          "SELECT * FROM jobs WHERE job_id = $1 FOR UPDATE",
          [jobId],
        );
        const row = rows[0];
        if (lease && !holds(row, lease.token)) throw jobLeaseLost(lease, row?.state);
        const recorded = await client.query("SELECT 1 FROM outputs WHERE job_id = $1", [jobId]);
        if ((recorded.rowCount ?? 0) > 0) return; // it did produce an output
        await deadLetterRow(c, client, row, {
          jobId,
          failure,
          actor: lease?.owner ?? "executor",
          ...(lease && { lease }),
        });
      });
    },

    async list(options = {}) {
      const w = where([
        ["at >= ?", options.since ?? 0],
        options.unresolved === true && ["resolved_at IS NULL"],
      ]);
      const rows = await c.query<DeadLetterRow>(
        `SELECT * FROM dead_letters ${w.sql} ORDER BY id`,
        w.args,
      );
      return rows.map(toDeadLetter);
    },

    async resolve(jobId, resolution) {
      const resolved = await c.tx(async (client) => {
        const now = c.clock.now();
        const { rows } = await client.query<DeadLetterRow>(
          "SELECT * FROM dead_letters WHERE job_id = $1 AND resolved_at IS NULL FOR UPDATE",
          [jobId],
        );
        const dl = rows[0];
        if (!dl) throw new IdemError("NOT_FOUND", `job ${jobId} has no open dead letter`);
        await client.query(
          "UPDATE dead_letters SET resolved_at = $1, resolution = $2 WHERE id = $3",
          [
            now,
            JSON.stringify({
              action: resolution.action,
              actor: resolution.actor,
              reason: resolution.reason ?? null,
            }),
            dl.id,
          ],
        );
        let retries = 0;
        if (resolution.action === "retry") {
          const retried = await client.query<{ retries: number }>(
            `UPDATE jobs SET state = 'queued', deliveries = 0, due_at = ${NOW_MS}, next_at = NULL,
             lease_owner = NULL, lease_token = NULL, lease_until = NULL, stream_seq = NULL, retries = retries + 1,
             updated_at = $1 WHERE job_id = $2 RETURNING retries`,
            [now, jobId],
          );
          retries = retried.rows[0]?.retries ?? 1;
        }
        await c.event(client, {
          jobId,
          type: deadLetterEvent(resolution.action),
          actor: resolution.actor,
          data: {
            reason: resolution.reason ?? null,
            retries,
          },
        });
        return { retries };
      });
      // The retried job is queued again: announced after COMMIT.
      if (resolution.action === "retry") await announceWork(c, "jobs");
      return resolved;
    },
  };
}
