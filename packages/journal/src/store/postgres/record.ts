import type pg from "pg";
import { DROPPED_BODY, recordOutcome, rejectionDecision } from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import type { NewRun, RecordRequest } from "../../domain/writes.js";
import type { RecordOptions, RecordResult } from "../../port/outputs.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";

/**
 * The key spaces of the transaction-level advisory locks the adapter takes (the two-int form,
 * apart from the migration's one-bigint lock): one per ordering target, one per job.
 */
export const lockKey = { target: 0x1de3_0019, job: 0x1de3_001a, rejection: 0x1de3_001b } as const;

/**
 * A one-row subquery that takes the advisory lock of each target in `targets` (a text[] parameter,
 * deduplicated), sorted so that two statements never wait on each other in a cycle; `from` joins
 * what the locks depend on (none are taken when it has no row). Held until COMMIT. The aggregate
 * completes before its one row leaves (volatile functions in a target list run after its ORDER
 * BY), so a run id drawn from a row joined with it is drawn after every lock is held.
 */
const targetLocks = (key: string, targets: string, from = "") =>
  `(SELECT count(locked.l) FROM (
     SELECT pg_advisory_xact_lock(${key}, hashtext(t)) AS l FROM ${from} unnest(${targets}::text[]) AS t ORDER BY t
   ) AS locked)`;

/** A target list deduplicated and sorted, as `targetLocks` takes it. */
const lockOrder = (targets: readonly string[]) => [...new Set(targets)].sort();

/** Takes the advisory lock of each of `targets` (sorted), held until the transaction ends. */
export async function lockTargets(
  client: pg.PoolClient,
  targets: readonly string[],
): Promise<void> {
  await client.query(`SELECT ${targetLocks("$1", "$2")}`, [lockKey.target, lockOrder(targets)]);
}

/**
 * Inserts run generation `generation` (pending, due at the server's now) and its active targets.
 * First it takes each target's advisory lock (`targetLocks`), held until COMMIT: runs sharing a
 * target commit in the order of their ids, so a claimer that sees a run sees every earlier one on
 * its targets (a sequence hands out ids in the order asked, not the order committed). The locks
 * and the insert are one statement. The caller announces the run after COMMIT (announceWork).
 */
export async function insertRun(client: pg.PoolClient, run: NewRun): Promise<number> {
  const { jobId, generation, targets, forceUnprobeable, now } = run;
  const { rows } = await client.query<{ id: number }>(
    `INSERT INTO runs (job_id, generation, state, due_at, force_unprobeable, targets, created_at, updated_at)
     SELECT $1, $2, 'pending', ${NOW_MS}, $3, $4, $5, $5
     FROM ${targetLocks("$6", "$7")} AS locks
     RETURNING id`,
    [
      jobId,
      generation,
      forceUnprobeable ? 1 : 0,
      JSON.stringify(targets),
      now,
      lockKey.target,
      lockOrder(targets),
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
 * A whole record in one statement, so one round trip and one implicit transaction: the output
 * (first write wins by the unique index on job_id: `ON CONFLICT DO NOTHING`), and only when it was
 * inserted the target locks, run generation 1, its active targets, the queue job's done and the
 * `output.recorded` event (data-modifying WITHs run once and to completion, whether read or not).
 * When the insert did nothing it answers the existing row, if the statement's snapshot holds it.
 *
 * $1 job, $2 agent, $3 hash, $4 body, $5 source, $6 now, $7 traceparent, $8 targets JSON, $9 lock
 * key, $10 lock order, $11 targets, $12/$13 the event's data around its seq, $14 actor.
 */
const RECORD_SQL = `WITH o AS (
    INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at, traceparent)
    VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (job_id) DO NOTHING RETURNING seq
  ), r AS (
    INSERT INTO runs (job_id, generation, state, due_at, force_unprobeable, targets, created_at, updated_at)
    SELECT $1, 1, 'pending', ${NOW_MS}, 0, $8, $6, $6 FROM o, ${targetLocks("$9", "$10", "o,")} AS locks
    RETURNING id
  ), a AS (
    INSERT INTO active_targets (target, run_id) SELECT t, r.id FROM r, unnest($11::text[]) AS t
    ON CONFLICT DO NOTHING
  ), j AS (
    UPDATE jobs SET state = 'done', due_at = NULL, lease_owner = NULL, lease_token = NULL,
    lease_until = NULL, updated_at = $6 WHERE job_id = $1 AND state != 'done' AND EXISTS (SELECT 1 FROM o)
  ), e AS (
    INSERT INTO events (at, job_id, type, data, actor)
    SELECT $6, $1, '${E.OUTPUT_RECORDED}', $12::text || o.seq || $13::text, $14 FROM o
  )
  SELECT (SELECT seq FROM o) AS seq, x.seq AS existing_seq, x.content_hash AS existing_hash
  FROM (SELECT 1) AS one LEFT JOIN outputs x ON x.job_id = $1 AND NOT EXISTS (SELECT 1 FROM o)`;

/** A duplicate's event. */
const DUPLICATE = `INSERT INTO events (at, job_id, type, data, actor)
  VALUES ($1, $2, '${E.OUTPUT_DUPLICATE}', $3, $4)`;

/** What a job holds in `rejections`: bodies kept, and whether content `$2` has a row (`$1` job). */
const REJECTIONS_HELD = `SELECT count(*) FILTER (WHERE body <> '')::int AS kept,
  COALESCE(bool_or(content_hash = $2), false) AS known FROM rejections WHERE job_id = $1`;
/**
 * A conflict's refused content kept as evidence (`$1` at, `$2` job, `$3` hash, `$4` body or
 * DROPPED_BODY, `$5` source). Run under the job's rejection lock after REJECTIONS_HELD, so that
 * identical conflicts arriving together store one and the cap per job holds.
 */
const REJECTION = `INSERT INTO rejections (job_id, content_hash, body, source, at)
  VALUES ($2, $3, $4, $5, $1)`;
/** A conflict's event: every refused attempt has one, kept or not. */
const CONFLICT_EVENT = `INSERT INTO events (at, job_id, type, data, actor)
  VALUES ($1, $2, '${E.OUTPUT_CONFLICT}', $3, $4)`;

type RecordRow = {
  seq: number | null;
  existing_seq: number | null;
  existing_hash: string | null;
};

export type { RecordRequest } from "../../domain/writes.js";

/** Who a record's events name: the actor, else the source. */
export const actorOf = (options: RecordOptions): string => options.actor ?? options.source;

/**
 * The `output.recorded` event's data split around its seq (which only the insert knows), so that
 * SQL joins the three: `{"source":...,"seq":` and `,"contentHash":...}`.
 */
export function eventDataAroundSeq(options: RecordOptions, hash: string): [string, string] {
  const data = JSON.stringify({ source: options.source, seq: 0, contentHash: hash });
  const at = data.indexOf(',"seq":0,') + ',"seq":'.length;
  return [data.slice(0, at), data.slice(at + 1)];
}

/**
 * Records one output, first write wins by the unique index on job_id, answered after COMMIT
 * returned. A record is one statement (`RECORD`); the insert that loses reads the winner's hash
 * (from that statement, or, when the winner committed while the statement waited for it, by one
 * more read), and the shared domain decides duplicate or conflict, whose rows are one more
 * statement. The caller announces a recorded run after COMMIT.
 */
export async function recordOutput(
  c: PostgresConnection,
  { output, options, body, hash }: RecordRequest,
): Promise<RecordResult> {
  const now = c.clock.now();
  const [head, tail] = eventDataAroundSeq(options, hash);
  const [row] = await c.statement<RecordRow>({
    name: "idem_record",
    text: RECORD_SQL,
    values: [
      output.jobId,
      output.agent,
      hash,
      body,
      options.source,
      now,
      options.traceparent ?? null,
      JSON.stringify(options.targets),
      lockKey.target,
      lockOrder(options.targets),
      [...options.targets],
      head,
      tail,
      actorOf(options),
    ],
  });
  const { seq } = row as RecordRow;
  if (seq !== null) return { status: "recorded", jobId: output.jobId, seq, contentHash: hash };
  return settleLoser(c, { output, options, body, hash }, now, row as RecordRow);
}

/**
 * The answer to a record whose insert did nothing (another output holds its job ID): reads the
 * winner when the insert's snapshot did not hold it (`existing_hash` null: the winner committed
 * while the insert waited for it), then writes the duplicate's event or the conflict's rejection
 * and event (the rejection under the job's rejection lock, kept once per distinct content).
 */
export async function settleLoser(
  c: PostgresConnection,
  { output, options, body, hash }: RecordRequest,
  now: number,
  row: Pick<RecordRow, "existing_seq" | "existing_hash">,
): Promise<RecordResult> {
  const actor = actorOf(options);
  let existing = row as { existing_seq: number; existing_hash: string };
  if (existing.existing_hash === null) {
    // The winner committed while the insert waited for it, after the statement's snapshot.
    const [r] = await c.query<{ existing_seq: number; existing_hash: string }>(
      "SELECT seq AS existing_seq, content_hash AS existing_hash FROM outputs WHERE job_id = $1",
      [output.jobId],
    );
    existing = r as { existing_seq: number; existing_hash: string };
  }
  if (recordOutcome(existing.existing_hash, hash) === "duplicate") {
    await c.statement({
      name: "idem_record_duplicate",
      text: DUPLICATE,
      values: [now, output.jobId, JSON.stringify({ source: options.source }), actor],
    });
    return {
      status: "duplicate",
      jobId: output.jobId,
      seq: existing.existing_seq,
      contentHash: hash,
    };
  }
  await c.tx(async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
      lockKey.rejection,
      output.jobId,
    ]);
    const { rows } = await client.query<{ kept: number; known: boolean }>({
      name: "idem_record_rejections_held",
      text: REJECTIONS_HELD,
      values: [output.jobId, hash],
    });
    const held = rows[0] ?? { kept: 0, known: false };
    const decision = rejectionDecision(held.kept, held.known);
    if (decision !== "known")
      await client.query({
        name: "idem_record_rejection",
        text: REJECTION,
        values: [
          now,
          output.jobId,
          hash,
          decision === "keep" ? body : DROPPED_BODY,
          options.source,
        ],
      });
    const conflict = {
      source: options.source,
      contentHash: hash,
      existingHash: existing.existing_hash,
      ...(decision === "drop-body" && { bodyDropped: true }),
    };
    await client.query({
      name: "idem_record_conflict",
      text: CONFLICT_EVENT,
      values: [now, output.jobId, JSON.stringify(conflict), actor],
    });
  });
  return {
    status: "conflict",
    jobId: output.jobId,
    contentHash: hash,
    existingHash: existing.existing_hash,
  };
}
