import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import type { RecordResult } from "../../port/outputs.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import { actorOf, eventDataAroundSeq, lockKey, type RecordRequest, settleLoser } from "./record.js";

/**
 * Many records in one statement, so one round trip and one COMMIT for all: `RECORD_SQL` over
 * arrays, one element per record (`unnest ... WITH ORDINALITY`, `ord` the batch order). The
 * outputs are inserted in batch order (first write wins by the unique index on job_id: `ON
 * CONFLICT DO NOTHING`), so their seqs follow it. Then, for the inserted ones only, the advisory
 * lock of every target of the batch (deduplicated, sorted: see `targetLocks` in record.ts) in a
 * one-row aggregate joined to the runs' insert, whose sort (batch order) reads that row before
 * its first row leaves: every run id is drawn after every lock is held, and in batch order, so
 * run ids follow output seq on each target. Then the active targets, the queue jobs' done and the
 * `output.recorded` events. It answers one row per record, in batch order: its seq, or the
 * existing row when its insert did nothing (if the statement's snapshot holds it).
 *
 * $1 jobs, $2 agents, $3 hashes, $4 bodies, $5 sources, $6 traceparents, $7 targets JSON, $8/$9
 * the events' data around their seq, $10 actors (text[] each, one per record); $11 now; $12/$13
 * each target as (ord, target) in two arrays; $14 lock key.
 */
const RECORD_BATCH_SQL = `WITH b AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
      $7::text[], $8::text[], $9::text[], $10::text[])
    WITH ORDINALITY AS b(job_id, agent, content_hash, body, source, traceparent, targets, head, tail, actor, ord)
  ), o AS (
    INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at, traceparent)
    SELECT job_id, agent, content_hash, body, source, $11, traceparent FROM b ORDER BY ord
    ON CONFLICT (job_id) DO NOTHING RETURNING seq, job_id
  ), w AS (
    SELECT b.ord, b.job_id, b.targets, b.head, b.tail, b.actor, o.seq FROM o JOIN b ON b.job_id = o.job_id
  ), t AS (
    SELECT w.ord, bt.target FROM w JOIN unnest($12::int[], $13::text[]) AS bt(ord, target) ON bt.ord = w.ord
  ), r AS (
    INSERT INTO runs (job_id, generation, state, due_at, force_unprobeable, targets, created_at, updated_at)
    SELECT w.job_id, 1, 'pending', ${NOW_MS}, 0, w.targets, $11, $11
    FROM (SELECT count(locked.l) FROM (
      SELECT pg_advisory_xact_lock($14, hashtext(d.target)) AS l FROM (SELECT DISTINCT target FROM t) AS d
      ORDER BY d.target
    ) AS locked) AS locks, w
    ORDER BY w.ord
    RETURNING id, job_id
  ), a AS (
    INSERT INTO active_targets (target, run_id)
    SELECT t.target, r.id FROM r JOIN w ON w.job_id = r.job_id JOIN t ON t.ord = w.ord
    ON CONFLICT DO NOTHING
  ), j AS (
    UPDATE jobs SET state = 'done', due_at = NULL, lease_owner = NULL, lease_token = NULL,
    lease_until = NULL, updated_at = $11 WHERE job_id IN (SELECT job_id FROM o) AND state != 'done'
  ), e AS (
    INSERT INTO events (at, job_id, type, data, actor)
    SELECT $11, w.job_id, '${E.OUTPUT_RECORDED}', w.head || w.seq || w.tail, w.actor FROM w ORDER BY w.ord
  )
  SELECT b.ord, w.seq, x.seq AS existing_seq, x.content_hash AS existing_hash
  FROM b LEFT JOIN w ON w.ord = b.ord LEFT JOIN outputs x ON x.job_id = b.job_id AND w.seq IS NULL
  ORDER BY b.ord`;

type BatchRow = {
  ord: number;
  seq: number | null;
  existing_seq: number | null;
  existing_hash: string | null;
};

/** The batch statement's parameters: one array element per record, the targets flattened. */
function batchValues(batch: readonly RecordRequest[], now: number): unknown[] {
  const column = (f: (r: RecordRequest) => string | null) => batch.map(f);
  const data = batch.map((r) => eventDataAroundSeq(r.options, r.hash));
  const targetOrd: number[] = [];
  const targets: string[] = [];
  batch.forEach((r, i) => {
    for (const t of r.options.targets) {
      targetOrd.push(i + 1);
      targets.push(t);
    }
  });
  return [
    column((r) => r.output.jobId),
    column((r) => r.output.agent),
    column((r) => r.hash),
    column((r) => r.body),
    column((r) => r.options.source),
    column((r) => r.options.traceparent ?? null),
    column((r) => JSON.stringify(r.options.targets)),
    data.map(([head]) => head),
    data.map(([, tail]) => tail),
    column((r) => actorOf(r.options)),
    now,
    targetOrd,
    targets,
    lockKey.target,
  ];
}

/**
 * Writes `batch` (records of distinct job IDs) in one statement and answers each record's result
 * in batch order: the same answers as `recordOutput` one by one in that order, each settled only
 * after the statement's COMMIT returned. The losers' events and rejections follow, one statement
 * each (they are rare). Each answer is a settled promise of its own: a loser's follow-up that
 * fails fails that record only.
 * @throws what the batch statement throws (UNAVAILABLE when the server is gone or the answer to
 * its COMMIT was lost: nothing of it may be taken as written); then no record has an answer
 */
export async function recordBatch(
  c: PostgresConnection,
  batch: readonly RecordRequest[],
): Promise<PromiseSettledResult<RecordResult>[]> {
  const now = c.clock.now();
  const rows = await c.statement<BatchRow>({
    name: "idem_record_batch",
    text: RECORD_BATCH_SQL,
    values: batchValues(batch, now),
  });
  const byOrd = new Map(rows.map((row) => [Number(row.ord), row]));
  return Promise.allSettled(
    batch.map(async (request, i): Promise<RecordResult> => {
      const row = byOrd.get(i + 1) as BatchRow;
      if (row.seq !== null) {
        return {
          status: "recorded",
          jobId: request.output.jobId,
          seq: row.seq,
          contentHash: request.hash,
        };
      }
      return settleLoser(c, request, now, row);
    }),
  );
}
