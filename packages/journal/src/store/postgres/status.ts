import { REJECTED_BODIES_PER_JOB } from "../../domain/decisions.js";
import {
  EFFECT_STATES,
  type EffectState,
  JOB_STATES,
  type JobState,
  RUN_STATES,
  type RunState,
} from "../../domain/states.js";
import {
  type ActivityWindow,
  activityBuckets,
  activityFrom,
  type JournalActivity,
} from "../../port/activity.js";
import type { JournalStatus } from "../../port/status.js";
import type { PostgresConnection } from "./connection.js";

/** Counts by state, every state present (zero when no row has it). */
async function byState<S extends string>(
  c: PostgresConnection,
  states: readonly S[],
  sql: string,
): Promise<Record<S, number>> {
  const out = Object.fromEntries(states.map((s) => [s, 0])) as Record<S, number>;
  for (const r of await c.query<{ state: S; n: number }>(sql)) out[r.state] = r.n;
  return out;
}

/**
 * The status counts of a PostgreSQL journal (`JournalStore.status`), the same as SQLite's; each
 * count is read on its own (no snapshot across them), as a dashboard reads them.
 */
export async function readStatus(c: PostgresConnection): Promise<JournalStatus> {
  const count = async (sql: string) => (await c.query<{ n: number }>(sql))[0]?.n ?? 0;
  const [outputs, rejections, dropped, deadLetters, runs, effects, jobs, jobsWaiting] =
    await Promise.all([
      count("SELECT count(*)::int AS n FROM outputs"),
      count("SELECT count(*)::int AS n FROM rejections"),
      count("SELECT count(*)::int AS n FROM rejections WHERE body = ''"),
      count("SELECT count(*)::int AS n FROM dead_letters WHERE resolved_at IS NULL"),
      byState<RunState>(
        c,
        RUN_STATES,
        `SELECT r.state, count(*)::int AS n FROM runs r
       WHERE r.generation = (SELECT max(generation) FROM runs x WHERE x.job_id = r.job_id) GROUP BY r.state`,
      ),
      byState<EffectState>(
        c,
        EFFECT_STATES,
        "SELECT state, count(*)::int AS n FROM effects GROUP BY state",
      ),
      byState<JobState>(c, JOB_STATES, "SELECT state, count(*)::int AS n FROM jobs GROUP BY state"),
      // The host's clock, as `idem jobs` tells a waiting job from a due one.
      c
        .query<{ n: number }>(
          "SELECT count(*)::int AS n FROM jobs WHERE state = 'queued' AND next_at > $1",
          [c.clock.now()],
        )
        .then((rows) => rows[0]?.n ?? 0),
    ]);
  return {
    outputs,
    rejections,
    rejectedBodies: { perJob: REJECTED_BODIES_PER_JOB, dropped },
    deadLetters,
    runs,
    effects,
    jobs,
    jobsWaiting,
  };
}

/**
 * The activity of a window in one statement: for each bucket ($1 since, $2 width, $3 buckets, $4
 * until), the count of a range of `outputs_recorded_at` and of the partial `effects_applied`
 * (migration 0003), both index-only scans. Grouping the rows by an expression of their time instead
 * aggregates them all (2 to 3 times slower at 200,000 rows in the window).
 */
export const ACTIVITY_SQL = `SELECT i AS b,
  (SELECT count(*)::int FROM outputs
   WHERE recorded_at >= $1::bigint + i * $2::bigint
     AND recorded_at < LEAST($1::bigint + (i + 1) * $2::bigint, $4::bigint)) AS outputs,
  (SELECT count(*)::int FROM effects
   WHERE state = 'applied' AND updated_at >= $1::bigint + i * $2::bigint
     AND updated_at < LEAST($1::bigint + (i + 1) * $2::bigint, $4::bigint)) AS applied
FROM generate_series(0, $3::int - 1) AS i`;

/**
 * Outputs recorded and effects applied per bucket of a window (`JournalStore.activity`), counted
 * by PostgreSQL through the time indexes of both (ACTIVITY_SQL): the cost follows the rows in the
 * window, not the history. One statement: both counts from one snapshot.
 * @throws INVALID_INPUT for a window `activityBuckets` refuses; UNAVAILABLE as every query.
 */
export async function readActivity(
  c: PostgresConnection,
  w: ActivityWindow,
): Promise<JournalActivity> {
  const n = activityBuckets(w);
  const rows = await c.query<{ b: number; outputs: number; applied: number }>(ACTIVITY_SQL, [
    w.since,
    w.bucketMs,
    n,
    w.until,
  ]);
  return activityFrom(w, n, rows);
}
