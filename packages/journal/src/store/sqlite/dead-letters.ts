import { IdemError } from "@idem/schema";
import { deadLetterEvent, JOURNAL_EVENTS as E } from "../../domain/events.js";
import type { DeadLetterWrite } from "../../domain/writes.js";
import type { JournalDeadLetters } from "../../port/dead-letters.js";
import type { SqliteConnection } from "./connection.js";
import { heldJob } from "./held.js";
import { type DeadLetterRow, type JobRow, toDeadLetter } from "./rows.js";

/**
 * Dead-letters a job inside the caller's transaction: the job row (when there is one) goes dead,
 * and one open dead letter is written (idempotent per job), with its event.
 */
export function deadLetterRow(
  c: SqliteConnection,
  row: JobRow | undefined,
  dead: DeadLetterWrite,
): void {
  const { jobId, failure, actor } = dead;
  const now = c.clock.now();
  if (row) {
    c.st(
      `UPDATE jobs SET state = 'dead', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = NULL,
       last_error = ?, updated_at = ? WHERE seq = ?`,
    ).run(failure.error, now, row.seq);
  }
  const inserted = c
    .st(
      `INSERT INTO dead_letters (job_id, agent, class, deliveries, last_error, at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(job_id) WHERE resolved_at IS NULL DO NOTHING`,
    )
    .run(
      jobId,
      failure.agent ?? row?.agent ?? null,
      failure.class,
      failure.deliveries,
      failure.error,
      now,
    );
  if (inserted.changes > 0) {
    c.event({
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

/** The dead letters of a SQLite journal. */
export function sqliteDeadLetters(c: SqliteConnection): JournalDeadLetters {
  return {
    async add(jobId, failure, lease) {
      await c.write(() => {
        if (lease) heldJob(c, lease);
        if (c.st("SELECT 1 FROM outputs WHERE job_id = ?").get(jobId)) return; // it did produce an output
        const row = c.st("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as JobRow | undefined;
        deadLetterRow(c, row, { jobId, failure, actor: lease?.owner ?? "executor" });
      });
    },

    async list(options = {}) {
      const rows = c
        .st(
          `SELECT * FROM dead_letters WHERE at >= ? ${options.unresolved ? "AND resolved_at IS NULL" : ""} ORDER BY id`,
        )
        .all(options.since ?? 0) as DeadLetterRow[];
      return rows.map(toDeadLetter);
    },

    async resolve(jobId, resolution) {
      return c.write(() => {
        const now = c.clock.now();
        const dl = c
          .st("SELECT * FROM dead_letters WHERE job_id = ? AND resolved_at IS NULL")
          .get(jobId) as DeadLetterRow | undefined;
        if (!dl) throw new IdemError("NOT_FOUND", `job ${jobId} has no open dead letter`);
        c.st("UPDATE dead_letters SET resolved_at = ?, resolution = ? WHERE id = ?").run(
          now,
          JSON.stringify({
            action: resolution.action,
            actor: resolution.actor,
            reason: resolution.reason ?? null,
          }),
          dl.id,
        );
        let retries = 0;
        if (resolution.action === "retry") {
          const row = c
            .st(
              `UPDATE jobs SET state = 'queued', deliveries = 0, due_at = ?, next_at = NULL, lease_owner = NULL,
               lease_token = NULL, lease_until = NULL, stream_seq = NULL, retries = retries + 1, updated_at = ? WHERE job_id = ? RETURNING retries`,
            )
            .get(now, now, jobId) as { retries: number } | undefined;
          retries = row?.retries ?? 1;
        }
        c.event({
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
    },
  };
}
