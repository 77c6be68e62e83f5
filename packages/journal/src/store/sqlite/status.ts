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
import type { SqliteConnection } from "./connection.js";

/** Counts by state, every state present (zero when no row has it). */
function byState<S extends string>(
  c: SqliteConnection,
  states: readonly S[],
  sql: string,
): Record<S, number> {
  const out = Object.fromEntries(states.map((s) => [s, 0])) as Record<S, number>;
  for (const r of c.st(sql).all() as { state: S; n: number }[]) out[r.state] = r.n;
  return out;
}

/** The status counts of a SQLite journal (`JournalStore.status`). */
export function readStatus(c: SqliteConnection): JournalStatus {
  const count = (sql: string) => (c.st(sql).get() as { n: number }).n;
  return {
    outputs: count("SELECT COUNT(*) AS n FROM outputs"),
    rejections: count("SELECT COUNT(*) AS n FROM rejections"),
    deadLetters: count("SELECT COUNT(*) AS n FROM dead_letters WHERE resolved_at IS NULL"),
    runs: byState<RunState>(
      c,
      RUN_STATES,
      `SELECT r.state, COUNT(*) AS n FROM runs r
       WHERE r.generation = (SELECT MAX(generation) FROM runs x WHERE x.job_id = r.job_id) GROUP BY r.state`,
    ),
    effects: byState<EffectState>(
      c,
      EFFECT_STATES,
      "SELECT state, COUNT(*) AS n FROM effects GROUP BY state",
    ),
    jobs: byState<JobState>(c, JOB_STATES, "SELECT state, COUNT(*) AS n FROM jobs GROUP BY state"),
  };
}

/**
 * Outputs recorded and effects applied per bucket of a window (`JournalStore.activity`), grouped by
 * SQLite over a range of `outputs_recorded_at` and of the partial `effects_applied` (migration
 * 0008): the cost follows the rows in the window, not the history.
 * @throws INVALID_INPUT for a window `activityBuckets` refuses.
 */
export function readActivity(c: SqliteConnection, w: ActivityWindow): JournalActivity {
  const n = activityBuckets(w);
  // better-sqlite3 binds a JS number as REAL: the bucket's division is made an integer one.
  const args = [w.since, w.bucketMs, w.since, w.until];
  const outputs = c
    .st(
      `SELECT (recorded_at - CAST(? AS INTEGER)) / CAST(? AS INTEGER) AS b, COUNT(*) AS n
       FROM outputs INDEXED BY outputs_recorded_at
       WHERE recorded_at >= ? AND recorded_at < ? GROUP BY b`,
    )
    .all(...args) as { b: number; n: number }[];
  const applied = c
    .st(
      `SELECT (updated_at - CAST(? AS INTEGER)) / CAST(? AS INTEGER) AS b, COUNT(*) AS n
       FROM effects INDEXED BY effects_applied
       WHERE state = 'applied' AND updated_at >= ? AND updated_at < ? GROUP BY b`,
    )
    .all(...args) as { b: number; n: number }[];
  return activityFrom(w, n, outputs, applied);
}
