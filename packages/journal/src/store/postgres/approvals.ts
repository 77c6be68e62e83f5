import type pg from "pg";
import { assertDecidable, rejectionError, requestOf } from "../../domain/approvals.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import type {
  ApprovalDecision,
  ApprovalRequest,
  AwaitingRun,
  JournalApprovals,
} from "../../port/approvals.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import { markDeadRow, UNLEASED } from "./dead-runs.js";
import { HOLDS, leaseLost } from "./held.js";
import type { RunRow } from "./rows.js";

/** The latest `approval.requested` of a job's generation. */
async function latestRequest(
  client: pg.PoolClient | PostgresConnection,
  jobId: string,
  generation: number,
): Promise<ApprovalRequest | undefined> {
  const sql = "SELECT data FROM events WHERE job_id = $1 AND type = $2 ORDER BY id DESC LIMIT 20";
  const args = [jobId, E.APPROVAL_REQUESTED];
  const rows =
    "release" in client
      ? (await client.query<{ data: string | null }>(sql, args)).rows
      : await client.query<{ data: string | null }>(sql, args);
  for (const r of rows) {
    const data = r.data === null ? null : (JSON.parse(r.data) as Record<string, unknown>);
    if (data?.generation === generation) return requestOf(data);
  }
  return undefined;
}

/** A decision on an awaiting run, in one transaction (see JournalApprovals.decide). */
async function decide(c: PostgresConnection, d: ApprovalDecision): Promise<void> {
  await c.tx(async (client) => {
    // The run's row locked: two decisions at once serialize, and the second finds it decided.
    const { rows } = await client.query<RunRow>(
      "SELECT * FROM runs WHERE job_id = $1 ORDER BY generation DESC LIMIT 1 FOR UPDATE",
      [d.jobId],
    );
    const run = rows[0];
    const request = run && (await latestRequest(client, d.jobId, run.generation));
    assertDecidable(d, { run, request }, c.clock.now());
    const row = run as RunRow;
    const data = { generation: d.generation, digest: d.digest, effects: d.effects };
    if (d.approve) {
      await client.query(
        `UPDATE runs SET state = 'pending', due_at = ${NOW_MS}, updated_at = $1 WHERE id = $2`,
        [c.clock.now(), row.id],
      );
      await c.event(client, {
        jobId: d.jobId,
        type: E.APPROVAL_GRANTED,
        actor: d.actor,
        data: { ...data, reason: d.reason, expiresAt: d.expiresAt },
      });
    } else {
      await c.event(client, {
        jobId: d.jobId,
        type: E.APPROVAL_REJECTED,
        actor: d.actor,
        data: { ...data, reason: d.reason },
      });
      await markDeadRow(c, client, row, {
        class: "rejected",
        error: rejectionError(d),
        actor: d.actor,
      });
    }
  });
}

/** The approval gates of a PostgreSQL journal (see JournalApprovals). */
export function postgresApprovals(c: PostgresConnection): JournalApprovals {
  return {
    async request(lease, request) {
      await c.tx(async (client) => {
        const { rows } = await client.query<RunRow>(
          `UPDATE runs SET state = 'awaiting', ${UNLEASED}, due_at = $3, updated_at = $4
           WHERE ${HOLDS} RETURNING *`,
          [lease.runId, lease.token, request.expiresAt, c.clock.now()],
        );
        if (!rows[0]) throw await leaseLost(client, lease);
        await c.event(client, {
          jobId: lease.jobId,
          type: E.APPROVAL_REQUESTED,
          actor: lease.owner,
          data: { generation: lease.generation, ...request },
        });
      });
    },

    decide: (d) => decide(c, d),

    async expire() {
      return c.tx(async (client) => {
        const { rows } = await client.query<RunRow>(
          "SELECT * FROM runs WHERE state = 'awaiting' AND due_at <= $1 ORDER BY id FOR UPDATE",
          [c.clock.now()],
        );
        for (const row of rows) {
          await c.event(client, {
            jobId: row.job_id,
            type: E.APPROVAL_EXPIRED,
            actor: "idem",
            data: { generation: row.generation },
          });
          await markDeadRow(c, client, row, {
            class: "rejected",
            error: rejectionError("expired"),
            actor: "idem",
          });
        }
        return rows.map((r) => r.job_id);
      });
    },

    async awaiting(limit = 100) {
      const rows = await c.query<{
        job_id: string;
        generation: number;
        updated_at: number;
        agent: string;
      }>(
        `SELECT r.job_id, r.generation, r.updated_at, o.agent FROM runs r JOIN outputs o ON o.job_id = r.job_id
         WHERE r.state = 'awaiting' ORDER BY r.updated_at, r.id LIMIT $1`,
        [Math.max(0, Math.floor(limit))],
      );
      const out: AwaitingRun[] = [];
      for (const r of rows) {
        const request = await latestRequest(c, r.job_id, r.generation);
        if (!request) continue;
        out.push({
          jobId: r.job_id,
          generation: Number(r.generation),
          agent: r.agent,
          since: Number(r.updated_at),
          request,
        });
      }
      return out;
    },
  };
}
