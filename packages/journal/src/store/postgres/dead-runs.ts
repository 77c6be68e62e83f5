import type pg from "pg";
import { LATER_RUNS_NAMED, laterRunsNote } from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import type { RunDeath } from "../../domain/writes.js";
import type { PostgresConnection } from "./connection.js";
import type { RunRow } from "./rows.js";

/** The lease fields a run leaves behind when it is no longer held. */
export const UNLEASED = "lease_owner = NULL, lease_token = NULL, lease_until = NULL";

/** A run that is done or dead leaves the per-target order. */
export const deactivate = (client: pg.PoolClient, runId: number) =>
  client.query("DELETE FROM active_targets WHERE run_id = $1", [runId]);

/** Dead releases the run's targets; its error and event name the later runs that go ahead of it. */
export async function markDeadRow(
  c: PostgresConnection,
  client: pg.PoolClient,
  row: RunRow,
  death: RunDeath,
): Promise<void> {
  const { class: cls, error, actor } = death;
  const { rows } = await client.query<{ job_id: string }>(
    `SELECT r.job_id FROM runs r WHERE r.id IN (
       SELECT other.run_id FROM active_targets other
       WHERE other.target = ANY($1::text[]) AND other.run_id > $2)
     ORDER BY r.id LIMIT ${LATER_RUNS_NAMED + 1}`,
    [JSON.parse(row.targets) as string[], row.id],
  );
  const later = rows.map((r) => r.job_id);
  await client.query(
    `UPDATE runs SET state = 'dead', ${UNLEASED}, due_at = NULL, last_error = $1, class = $2,
     updated_at = $3 WHERE id = $4`,
    [`${error}${laterRunsNote(later)}`, cls, c.clock.now(), row.id],
  );
  await deactivate(client, row.id);
  await c.event(client, {
    jobId: row.job_id,
    type: E.RUN_DEAD,
    actor,
    data: {
      generation: row.generation,
      class: cls,
      error,
      wentAhead: later.slice(0, LATER_RUNS_NAMED),
    },
  });
}
