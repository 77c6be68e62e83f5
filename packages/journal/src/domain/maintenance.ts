import type { PruneResult } from "../port/maintenance.js";
import { SETTLED_EFFECT_STATES, sqlStateList, UNFINISHED_RUN_STATES } from "./states.js";

/**
 * What a prune and an integrity check do, the same for every adapter: the tables a prune deletes
 * an output's rows from, what it counts, which outputs it may take, and the checks of the journal's
 * own consistency. The SQL below is plain SQL both SQLite and PostgreSQL run as written (`?` is
 * replaced by each adapter's parameter style).
 */

/** The immutability triggers every journal must have, on SQLite and PostgreSQL alike. */
export const TRIGGERS = [
  "outputs_no_update",
  "outputs_no_delete",
  "rejections_no_update",
  "rejections_no_delete",
  "events_no_update",
  "events_no_delete",
  "runs_no_delete",
  "effects_no_delete",
  "job_inputs_no_update",
  "job_inputs_no_delete",
] as const;

/** The tables a prune deletes an output's rows from, children first (`active_targets` before). */
export const PRUNED_TABLES = [
  "effects",
  "runs",
  "events",
  "rejections",
  "jobs",
  "dead_letters",
  "outputs",
] as const;

/** The tables whose rows a prune counts per output, by the field of `PruneResult`. */
export const PRUNE_COUNTED = {
  runs: "runs",
  effects: "effects",
  events: "events",
  rejections: "rejections",
  jobs: "jobs",
} as const;

/** A prune's result before anything is counted. */
export const emptyPruneResult = (outputs: number): PruneResult => ({
  outputs,
  runs: 0,
  effects: 0,
  events: 0,
  rejections: 0,
  jobs: 0,
});

/**
 * The outputs a prune may take: recorded before `?` (the policy's horizon) and with no active run
 * (an output still being interpreted is kept, whatever its age), oldest first.
 */
export const PRUNABLE_OUTPUTS = `SELECT * FROM outputs o WHERE o.recorded_at < ?
  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = o.job_id AND r.state IN ${sqlStateList(UNFINISHED_RUN_STATES)})
  ORDER BY seq`;

/** The consistency checks of an integrity check: a query (at most 20 rows) and what each row means. */
export const CONSISTENCY_CHECKS: readonly {
  sql: string;
  problem: (row: Record<string, unknown>) => string;
}[] = [
  {
    sql: `SELECT r.job_id, r.generation FROM runs r JOIN effects e ON e.job_id = r.job_id AND e.generation = r.generation
      WHERE r.state = 'done' AND e.state NOT IN ${sqlStateList(SETTLED_EFFECT_STATES)} LIMIT 20`,
    problem: (r) => `run ${r.job_id}#${r.generation} is done but has an unsettled effect`,
  },
  {
    sql: "SELECT o.job_id FROM outputs o WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = o.job_id) LIMIT 20",
    problem: (r) => `output ${r.job_id} has no run`,
  },
  {
    sql: "SELECT j.job_id FROM jobs j WHERE NOT EXISTS (SELECT 1 FROM job_inputs i WHERE i.seq = j.seq) LIMIT 20",
    problem: (r) => `job ${r.job_id} has no input`,
  },
];

/** The problem a missing immutability trigger is. */
export const missingTrigger = (name: string): string =>
  `trigger ${name} is missing: outputs are not protected`;
