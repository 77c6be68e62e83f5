import { assertDecidable, rejectionError, requestOf } from "../../domain/approvals.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import type { ApprovalRequest, AwaitingRun, JournalApprovals } from "../../port/approvals.js";
import type { SqliteConnection } from "./connection.js";
import { heldRun } from "./held.js";
import type { RunRow } from "./rows.js";
import { markDead } from "./runs.js";

/** The latest `approval.requested` of a job's generation, read in the caller's transaction. */
function latestRequest(
  c: SqliteConnection,
  jobId: string,
  generation: number,
): ApprovalRequest | undefined {
  const rows = c
    .st("SELECT data FROM events WHERE job_id = ? AND type = ? ORDER BY id DESC LIMIT 20")
    .all(jobId, E.APPROVAL_REQUESTED) as { data: string | null }[];
  for (const r of rows) {
    const data = r.data === null ? null : (JSON.parse(r.data) as Record<string, unknown>);
    if (data?.generation === generation) return requestOf(data);
  }
  return undefined;
}

/** The approval gates of a SQLite journal (see JournalApprovals). */
export function sqliteApprovals(c: SqliteConnection): JournalApprovals {
  return {
    async request(lease, request) {
      await c.write(() => {
        heldRun(c, lease);
        c.st(
          `UPDATE runs SET state = 'awaiting', lease_owner = NULL, lease_token = NULL, lease_until = NULL,
           due_at = ?, updated_at = ? WHERE id = ?`,
        ).run(request.expiresAt, c.clock.now(), lease.runId);
        c.event({
          jobId: lease.jobId,
          type: E.APPROVAL_REQUESTED,
          actor: lease.owner,
          data: { generation: lease.generation, ...request },
        });
      });
    },

    async decide(d) {
      await c.write(() => {
        const run = c
          .st("SELECT * FROM runs WHERE job_id = ? ORDER BY generation DESC LIMIT 1")
          .get(d.jobId) as RunRow | undefined;
        const request = run && latestRequest(c, d.jobId, run.generation);
        assertDecidable(d, { run, request }, c.clock.now());
        const row = run as RunRow;
        const data = { generation: d.generation, digest: d.digest, effects: d.effects };
        if (d.approve) {
          const now = c.clock.now();
          c.st("UPDATE runs SET state = 'pending', due_at = ?, updated_at = ? WHERE id = ?").run(
            now,
            now,
            row.id,
          );
          c.event({
            jobId: d.jobId,
            type: E.APPROVAL_GRANTED,
            actor: d.actor,
            data: { ...data, reason: d.reason, expiresAt: d.expiresAt },
          });
        } else {
          c.event({
            jobId: d.jobId,
            type: E.APPROVAL_REJECTED,
            actor: d.actor,
            data: { ...data, reason: d.reason },
          });
          markDead(c, row, { class: "rejected", error: rejectionError(d), actor: d.actor });
        }
      });
    },

    async expire() {
      return c.write(() => {
        const rows = c
          .st("SELECT * FROM runs WHERE state = 'awaiting' AND due_at <= ? ORDER BY id")
          .all(c.clock.now()) as RunRow[];
        for (const row of rows) {
          c.event({
            jobId: row.job_id,
            type: E.APPROVAL_EXPIRED,
            actor: "idem",
            data: { generation: row.generation },
          });
          markDead(c, row, { class: "rejected", error: rejectionError("expired"), actor: "idem" });
        }
        return rows.map((r) => r.job_id);
      });
    },

    async awaiting(limit = 100) {
      const rows = c
        .st(
          `SELECT r.job_id, r.generation, r.updated_at, o.agent FROM runs r JOIN outputs o ON o.job_id = r.job_id
           WHERE r.state = 'awaiting' ORDER BY r.updated_at, r.id LIMIT ?`,
        )
        .all(Math.max(0, Math.floor(limit))) as {
        job_id: string;
        generation: number;
        updated_at: number;
        agent: string;
      }[];
      const out: AwaitingRun[] = [];
      for (const r of rows) {
        const request = latestRequest(c, r.job_id, r.generation);
        if (!request) continue;
        out.push({
          jobId: r.job_id,
          generation: r.generation,
          agent: r.agent,
          since: r.updated_at,
          request,
        });
      }
      return out;
    },
  };
}
