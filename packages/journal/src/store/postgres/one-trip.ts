import { IdemError, type Job } from "@idem/schema";
import { JOURNAL_EVENTS as E, effectEvent } from "../../domain/events.js";
import { toEffect } from "../../domain/records.js";
import { type EffectState, SETTLED_EFFECT_STATES, sqlStateList } from "../../domain/states.js";
import type { WriteDurability } from "../../port/durability.js";
import type { EffectRecord, IntendInput } from "../../port/ledger.js";
import type { Lease } from "../../port/runs.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import type { JobRow } from "./dead-letters.js";
import { UNLEASED } from "./dead-runs.js";
import { HELD_CTE, HOLDS, leaseLost } from "./held.js";
import { json, type RowOf } from "./rows.js";
import type * as tables from "./tables.js";

type EffectRow = RowOf<typeof tables.effects>;

// The writes made for every job, effect and run (an enqueue, an intent, a settle, a completion),
// each one statement: its own implicit transaction, one round trip instead of BEGIN, the writes,
// the event and COMMIT (four to six). Fenced as every write under a lease is (HELD_CTE, or the
// token in the UPDATE's own WHERE), the event written by the same statement or not at all. Each
// is named: prepared once per pooled connection, so the server parses and plans it once.

const SETTLED = sqlStateList(SETTLED_EFFECT_STATES);

/**
 * The select-list item that makes a statement's own transaction `soon` (see `PostgresConnection
 * .tx`): `set_config(..., true)` holds until the end of the statement's implicit transaction, and
 * its COMMIT then returns before the server flushed its WAL. Nothing for a durable statement.
 */
function soonItem(durability: WriteDurability | undefined): string {
  return durability?.soon ? ", set_config('synchronous_commit', 'off', true) AS soon" : "";
}

/**
 * An effect's first intent in this generation, with its event, in one statement; undefined when
 * the effect already has a row in the generation (the caller's transaction re-intends it).
 * @throws LEASE_LOST
 */
export async function intendInOneTrip(
  c: PostgresConnection,
  lease: Lease,
  effect: IntendInput,
): Promise<EffectRecord | undefined> {
  const now = c.clock.now();
  const data = { key: effect.key, generation: lease.generation };
  const rows = await c.statement<{ held: number } & Partial<EffectRow>>({
    name: "idem_intend",
    text: `WITH ${HELD_CTE},
     ins AS (
       INSERT INTO effects (key, generation, job_id, idx, kind, spec_hash, state, detail, attempts, updated_at)
       SELECT $3, $4, $5, $6, $7, $8, 'intended', $9, 1, $10 FROM held
       ON CONFLICT (key, generation) DO NOTHING RETURNING *),
     ev AS (
       INSERT INTO events (at, job_id, type, data, actor)
       SELECT $10, $5, $11, $12, $13 FROM ins)
     SELECT (SELECT count(*) FROM held)::int AS held, ins.* FROM (SELECT 1) one LEFT JOIN ins ON true`,
    values: [
      lease.runId,
      lease.token,
      effect.key,
      lease.generation,
      lease.jobId,
      effect.idx,
      effect.kind,
      effect.specHash,
      json(effect.detail),
      now,
      E.EFFECT_INTENDED,
      JSON.stringify(data),
      lease.owner,
    ],
  });
  const { held, ...inserted } = rows[0] as { held: number } & Partial<EffectRow>;
  if (held === 0) throw await leaseLost(c.pool, lease);
  return inserted.key == null ? undefined : toEffect(inserted as EffectRow);
}

/**
 * An intended effect settled, with its event, in one statement.
 * @throws LEASE_LOST; INVALID_STATE when the effect has no intent in the lease's generation.
 */
export async function settleInOneTrip(
  c: PostgresConnection,
  lease: Lease,
  key: string,
  state: EffectState,
  detail: Record<string, unknown> | undefined,
  durability: WriteDurability | undefined,
): Promise<void> {
  const data = { key, generation: lease.generation, detail };
  const rows = await c.statement<{ held: number; updated: number }>({
    name: `idem_settle${durability?.soon ? "_soon" : ""}`,
    text: `WITH ${HELD_CTE},
     upd AS (
       UPDATE effects SET state = $3, detail = COALESCE($4, detail), updated_at = $5
       WHERE key = $6 AND generation = $7 AND EXISTS (SELECT 1 FROM held) RETURNING 1),
     ev AS (
       INSERT INTO events (at, job_id, type, data, actor)
       SELECT $5, $8, $9, $10, $11 WHERE EXISTS (SELECT 1 FROM upd))
     SELECT (SELECT count(*) FROM held)::int AS held,
       (SELECT count(*) FROM upd)::int AS updated${soonItem(durability)}`,
    values: [
      lease.runId,
      lease.token,
      state,
      json(detail),
      c.clock.now(),
      key,
      lease.generation,
      lease.jobId,
      effectEvent(state),
      JSON.stringify(data),
      lease.owner,
    ],
  });
  const r = rows[0] as { held: number; updated: number };
  if (r.held === 0) throw await leaseLost(c.pool, lease);
  if (r.updated === 0) {
    throw new IdemError(
      "INVALID_STATE",
      `effect ${key} has no intent in generation ${lease.generation}`,
    );
  }
}

/**
 * The run done, its ordering targets released and its event written, in one statement; refused
 * while an effect of its generation is not settled (nothing written then).
 * @throws LEASE_LOST; INVALID_STATE for an open effect.
 */
export async function completeInOneTrip(
  c: PostgresConnection,
  lease: Lease,
  durability: WriteDurability | undefined,
): Promise<void> {
  type Done = { held: number; done: number; key: string | null; state: string | null };
  const rows = await c.statement<Done>({
    name: `idem_complete${durability?.soon ? "_soon" : ""}`,
    text: `WITH open AS (
       SELECT key, state FROM effects WHERE job_id = $3 AND generation = $4
       AND state NOT IN ${SETTLED} ORDER BY idx LIMIT 1),
     upd AS (
       UPDATE runs SET state = 'done', ${UNLEASED}, due_at = NULL, last_error = NULL, class = NULL,
         updated_at = $5
       WHERE ${HOLDS} AND NOT EXISTS (SELECT 1 FROM open)
       RETURNING id),
     del AS (DELETE FROM active_targets WHERE run_id IN (SELECT id FROM upd)),
     ev AS (
       INSERT INTO events (at, job_id, type, data, actor)
       SELECT $5, $3, $6, $7, $8 FROM upd)
     SELECT (SELECT count(*) FROM runs WHERE ${HOLDS})::int AS held,
       (SELECT count(*) FROM upd)::int AS done,
       (SELECT key FROM open) AS key, (SELECT state FROM open) AS state${soonItem(durability)}`,
    values: [
      lease.runId,
      lease.token,
      lease.jobId,
      lease.generation,
      c.clock.now(),
      E.RUN_DONE,
      JSON.stringify({ generation: lease.generation }),
      lease.owner,
    ],
  });
  const r = rows[0] as Done;
  if (r.done === 1) return;
  // Held when the statement began but not updated, with nothing open: taken over meanwhile.
  if (r.held === 0 || r.key === null) throw await leaseLost(c.pool, lease);
  throw new IdemError(
    "INVALID_STATE",
    `run ${lease.jobId}#${lease.generation} cannot be done: effect ${r.key} is ${r.state}`,
  );
}

/** A queued job to insert: the job, its input's canonical JSON and hash, its times and trace. */
export interface NewJobRow {
  job: Job;
  hash: string;
  input: string;
  created: number;
  now: number;
  traceparent: string | undefined;
  /** The enqueue's own event (`job.enqueued`, stream embedded, its seq), written with the row. */
  queueEvent?: { type: string; actor: string } | undefined;
}

/**
 * A queued job due at the database's now, with its input (and its queue event, when given): one
 * statement, durable at its COMMIT.
 * @throws the unique violation of the job key when the job ID is taken (nothing written).
 */
export async function insertJob(c: PostgresConnection, fresh: NewJobRow): Promise<JobRow> {
  const { job, hash, input, created, now, traceparent, queueEvent } = fresh;
  const rows = await c.statement<JobRow>({
    name: "idem_insert_job",
    // The event's data is the text JSON.stringify({ stream, seq }) makes.
    text: `WITH j AS (
       INSERT INTO jobs (job_id, agent, input_hash, state, due_at, created_at, updated_at)
       VALUES ($1, $2, $3, 'queued', ${NOW_MS}, $4, $5) RETURNING *),
     i AS (INSERT INTO job_inputs (seq, input, traceparent) SELECT seq, $6, $7 FROM j),
     e AS (
       INSERT INTO events (at, job_id, type, data, actor)
       SELECT $5, $1, $8::text, '{"stream":"embedded","seq":' || seq || '}', $9 FROM j
       WHERE $8::text IS NOT NULL)
     SELECT * FROM j`,
    values: [
      job.jobId,
      job.agent,
      hash,
      created,
      now,
      input,
      traceparent ?? null,
      queueEvent?.type ?? null,
      queueEvent?.actor ?? null,
    ],
  });
  return rows[0] as JobRow;
}
