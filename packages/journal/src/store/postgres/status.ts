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
  const [outputs, rejections, deadLetters, runs, effects, jobs] = await Promise.all([
    count("SELECT count(*)::int AS n FROM outputs"),
    count("SELECT count(*)::int AS n FROM rejections"),
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
  ]);
  return { outputs, rejections, deadLetters, runs, effects, jobs };
}

/**
 * Outputs recorded and effects applied per bucket of a window (`JournalStore.activity`), grouped by
 * PostgreSQL over a range of `outputs_recorded_at` and of the partial `effects_applied` (migration
 * 0003): the cost follows the rows in the window, not the history. The two counts run at once.
 * @throws INVALID_INPUT for a window `activityBuckets` refuses; UNAVAILABLE as every query.
 */
export async function readActivity(
  c: PostgresConnection,
  w: ActivityWindow,
): Promise<JournalActivity> {
  const n = activityBuckets(w);
  const args = [w.since, w.bucketMs, w.until];
  const [outputs, applied] = await Promise.all([
    c.query<{ b: number; n: number }>(
      `SELECT ((recorded_at - $1::bigint) / $2::bigint)::int AS b, count(*)::int AS n FROM outputs
       WHERE recorded_at >= $1::bigint AND recorded_at < $3::bigint GROUP BY 1`,
      args,
    ),
    c.query<{ b: number; n: number }>(
      `SELECT ((updated_at - $1::bigint) / $2::bigint)::int AS b, count(*)::int AS n FROM effects
       WHERE state = 'applied' AND updated_at >= $1::bigint AND updated_at < $3::bigint GROUP BY 1`,
      args,
    ),
  ]);
  return activityFrom(w, n, outputs, applied);
}
