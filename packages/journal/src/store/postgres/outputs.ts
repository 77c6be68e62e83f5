import { type AgentOutput, canonicalJson, sha256Hex } from "@idem/schema";
import type pg from "pg";
import { recordOutcome } from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import { toOutput, toRejection } from "../../domain/records.js";
import type { RunState } from "../../domain/states.js";
import type {
  JournalOutputs,
  OutputSummary,
  RecordOptions,
  RecordResult,
} from "../../port/outputs.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import { announceWork } from "./notify.js";
import type { OutputRow, RejectionRow } from "./rows.js";
import { selectOutputs } from "./select.js";
import { where } from "./where.js";

/**
 * The key spaces of the transaction-level advisory locks the adapter takes (the two-int form,
 * apart from the migration's one-bigint lock): one per ordering target, one per job.
 */
export const lockKey = { target: 0x1de3_0019, job: 0x1de3_001a } as const;

/**
 * Inserts run generation `generation` (pending, due at the server's now) and its active targets.
 * First it takes each target's advisory lock (sorted, so two inserts never wait on each other in a
 * cycle), held until COMMIT: runs sharing a target commit in the order of their ids, so a claimer
 * that sees a run sees every earlier one on its targets (a sequence hands out ids in the order
 * asked, not the order committed). The locks and the insert are one statement: the aggregate over
 * the locks finishes before its one row reaches the insert, so the id is drawn after every lock is
 * held (volatile functions in a target list run after its ORDER BY). The caller announces the run
 * after COMMIT (announceWork).
 */
export async function insertRun(
  client: pg.PoolClient,
  jobId: string,
  generation: number,
  targets: readonly string[],
  force: boolean,
  now: number,
): Promise<number> {
  const { rows } = await client.query<{ id: number }>(
    `INSERT INTO runs (job_id, generation, state, due_at, force_unprobeable, targets, created_at, updated_at)
     SELECT $1, $2, 'pending', ${NOW_MS}, $3, $4, $5, $5
     FROM (SELECT count(locked.l) FROM (
       SELECT pg_advisory_xact_lock($6, hashtext(t)) AS l FROM unnest($7::text[]) AS t ORDER BY t
     ) AS locked) AS locks
     RETURNING id`,
    [
      jobId,
      generation,
      force ? 1 : 0,
      JSON.stringify(targets),
      now,
      lockKey.target,
      [...new Set(targets)].sort(),
    ],
  );
  const id = (rows[0] as { id: number }).id;
  if (targets.length > 0) {
    await client.query(
      `INSERT INTO active_targets (target, run_id) SELECT t, $2 FROM unnest($1::text[]) AS t
       ON CONFLICT DO NOTHING`,
      [[...targets], id],
    );
  }
  return id;
}

/**
 * Records one output in one transaction, first write wins by the unique index on job_id: the
 * insert that loses (`ON CONFLICT DO NOTHING` inserts nothing) reads the winner's hash, and the
 * shared domain decides duplicate or conflict. Answered after COMMIT returned.
 */
async function recordInTx(
  c: PostgresConnection,
  client: pg.PoolClient,
  output: AgentOutput,
  options: RecordOptions,
  body: string,
  hash: string,
): Promise<RecordResult> {
  const actor = options.actor ?? options.source;
  const now = c.clock.now();
  const inserted = await client.query<{ seq: number }>(
    `INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at, traceparent)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (job_id) DO NOTHING RETURNING seq`,
    [output.jobId, output.agent, hash, body, options.source, now, options.traceparent ?? null],
  );
  const seq = inserted.rows[0]?.seq;
  if (seq === undefined) {
    const { rows } = await client.query<Pick<OutputRow, "seq" | "content_hash">>(
      "SELECT seq, content_hash FROM outputs WHERE job_id = $1",
      [output.jobId],
    );
    const existing = rows[0] as Pick<OutputRow, "seq" | "content_hash">;
    if (recordOutcome(existing.content_hash, hash) === "duplicate") {
      await c.event(client, output.jobId, E.OUTPUT_DUPLICATE, actor, { source: options.source });
      return { status: "duplicate", jobId: output.jobId, seq: existing.seq, contentHash: hash };
    }
    await client.query(
      "INSERT INTO rejections (job_id, content_hash, body, source, at) VALUES ($1, $2, $3, $4, $5)",
      [output.jobId, hash, body, options.source, now],
    );
    await c.event(client, output.jobId, E.OUTPUT_CONFLICT, actor, {
      source: options.source,
      contentHash: hash,
      existingHash: existing.content_hash,
    });
    return {
      status: "conflict",
      jobId: output.jobId,
      contentHash: hash,
      existingHash: existing.content_hash,
    };
  }
  await insertRun(client, output.jobId, 1, options.targets, false, now);
  // The queue's job done and the event in one statement (a data-modifying WITH always runs).
  await client.query(
    `WITH job AS (
       UPDATE jobs SET state = 'done', due_at = NULL, lease_owner = NULL, lease_token = NULL,
       lease_until = NULL, updated_at = $1 WHERE job_id = $2 AND state != 'done'
     )
     INSERT INTO events (at, job_id, type, data, actor) VALUES ($1, $2, $3, $4, $5)`,
    [
      now,
      output.jobId,
      E.OUTPUT_RECORDED,
      JSON.stringify({ source: options.source, seq, contentHash: hash }),
      actor,
    ],
  );
  return { status: "recorded", jobId: output.jobId, seq, contentHash: hash };
}

/** The outputs of a PostgreSQL journal. */
export function postgresOutputs(c: PostgresConnection): JournalOutputs {
  return {
    async record(output, options) {
      const body = options.canonical ?? canonicalJson(output);
      const hash = sha256Hex(body);
      const result = await c.tx((client) => recordInTx(c, client, output, options, body, hash));
      if (result.status === "recorded") await announceWork(c, "runs");
      return result;
    },

    async get(jobId) {
      const [r] = await c.query<OutputRow>("SELECT * FROM outputs WHERE job_id = $1", [jobId]);
      return r && toOutput(r);
    },

    /** A yes is durable: every output row visible here was committed (synchronous_commit on). */
    async has(jobId) {
      const rows = await c.query("SELECT 1 FROM outputs WHERE job_id = $1", [jobId]);
      return rows.length > 0;
    },

    async list(filter = {}) {
      const w = where([
        filter.agent !== undefined && ["o.agent = ?", filter.agent],
        filter.since !== undefined && ["o.recorded_at >= ?", filter.since],
        filter.state !== undefined && ["r.state = ?", filter.state],
      ]);
      const limit =
        filter.limit === undefined ? "" : `LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
      const rows = await c.query<
        Pick<OutputRow, "seq" | "job_id" | "agent" | "recorded_at"> & {
          effects: number;
          generation: number;
          state: RunState;
        }
      >(
        `SELECT o.seq, o.job_id, o.agent, o.recorded_at, r.generation, r.state,
           json_array_length(o.body::json -> 'effects') AS effects
         FROM outputs o JOIN LATERAL (
           SELECT generation, state FROM runs WHERE job_id = o.job_id ORDER BY generation DESC LIMIT 1
         ) r ON true
         ${w.sql} ORDER BY o.seq ${limit}`,
        w.args,
      );
      return rows.map(
        (r): OutputSummary => ({
          seq: r.seq,
          jobId: r.job_id,
          agent: r.agent,
          effects: r.effects,
          recordedAt: r.recorded_at,
          generation: r.generation,
          state: r.state,
        }),
      );
    },
    async select(selection) {
      return selectOutputs(c, selection);
    },
    async page(selection, page) {
      return selectOutputs(c, selection, page);
    },
    async rejections(jobId) {
      const rows =
        jobId === undefined
          ? await c.query<RejectionRow>("SELECT * FROM rejections ORDER BY id")
          : await c.query<RejectionRow>("SELECT * FROM rejections WHERE job_id = $1 ORDER BY id", [
              jobId,
            ]);
      return rows.map(toRejection);
    },
  };
}
