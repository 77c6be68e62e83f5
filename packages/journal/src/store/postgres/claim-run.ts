import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import { readOutput } from "../../domain/output-damage.js";
import { toEffect, toRun } from "../../domain/records.js";
import type { EffectRecord } from "../../port/ledger.js";
import type { DamagedOutput, OutputRecord } from "../../port/outputs.js";
import type { ClaimOptions, Lease, RunRecord } from "../../port/runs.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import type { OutputRow, RowOf, RunRow } from "./rows.js";
import type * as tables from "./tables.js";

type EffectRow = RowOf<typeof tables.effects>;

/** What the one-statement claim found: nothing due, a due run it left alone, or a claimed run. */
export type ClaimTrip =
  | { found: "none" }
  /** A due run the statement did not lease: a takeover that `maxLeaseExpiries` makes dead. */
  | { found: "unleased" }
  | {
      found: "claimed";
      run: RunRecord;
      /** The run's output, distrusted: a damaged one is ended by the caller under `lease`. */
      output: OutputRecord | DamagedOutput;
      lease: Lease;
      takeover: boolean;
      /** Every ledger row of the run's job, all generations (`Claim.history`), when read. */
      history: EffectRecord[] | undefined;
      /** The run's row as it was leased (for a damaged output's end). */
      row: RunRow;
    };

/**
 * The claim of the next due run (`due`: the locking SELECT of runs.ts, `$1` its owner) as one
 * statement, its own implicit transaction: the lease and its event written, the run's output and
 * its job's ledger read, one round trip instead of BEGIN, the locking SELECT, the output's SELECT,
 * the lease's UPDATE and COMMIT (five), and the ledger's history read per effect. A takeover that
 * `maxLeaseExpiries` ends dead is found and left as it is (`unleased`), for the transaction that
 * marks it (runs.ts); the event's data is spelled as `JSON.stringify` spells the other path's.
 *
 * The ledger is read with the statement's snapshot, taken before the run's row is locked: it is
 * handed out only when no write of the job's effects can have committed in between, that is when
 * the run was not running (no holder's token to write under) and the row locked is the version
 * the snapshot sees (`seen`, its xmin: no claim, release or failure re-read it after the
 * snapshot). A takeover, whose late holder may still write until this lease replaces its own,
 * reads the ledger afterwards as before (`history` undefined).
 * Durable soon, as the claim in a transaction is (see runs.ts).
 */
function claimStatement(due: string): string {
  return `WITH due AS (${due}),
     upd AS (
       UPDATE runs SET state = 'running', lease_owner = $1, lease_token = $2,
         lease_until = ${NOW_MS} + $3, due_at = ${NOW_MS} + $3,
         lease_expiries = runs.lease_expiries + CASE WHEN due.state = 'running' THEN 1 ELSE 0 END,
         updated_at = $4
       FROM due
       WHERE runs.id = due.id AND NOT (due.state = 'running' AND due.lease_expiries + 1 >= $5)
       RETURNING runs.*),
     ev AS (
       INSERT INTO events (at, job_id, type, data, actor)
       SELECT $4, due.job_id, CASE WHEN due.state = 'running' THEN $6 ELSE $7 END,
         '{"generation":' || due.generation || ',"previousOwner":'
           || COALESCE(to_json(due.lease_owner)::text, 'null') || ',"attempts":' || due.attempts || '}',
         $1
       FROM due JOIN upd ON upd.id = due.id)
     SELECT due.state AS was, to_json(upd.*) AS run, to_json(o.*) AS output,
       CASE WHEN due.state <> 'running' AND due.seen = (SELECT xmin FROM runs WHERE id = due.id)
         THEN COALESCE((SELECT json_agg(e.* ORDER BY e.generation, e.idx) FROM effects e
           WHERE e.job_id = due.job_id), '[]'::json) END AS ledger,
       set_config('synchronous_commit', 'off', true) AS soon
     FROM due LEFT JOIN upd ON true LEFT JOIN outputs o ON o.job_id = due.job_id`;
}

/** The statements by `follow`, each prepared once per pooled connection under its name. */
const STATEMENTS = new Map<string, { name: string; text: string }>();

/** Claims the next due run in one statement (see `claimStatement`). */
export async function claimInOneTrip(
  c: PostgresConnection,
  options: ClaimOptions,
  due: string,
): Promise<ClaimTrip> {
  const follow = options.follow ?? "none";
  let statement = STATEMENTS.get(follow);
  if (!statement) {
    statement = { name: `idem_claim_run_${follow}`, text: claimStatement(due) };
    STATEMENTS.set(follow, statement);
  }
  const token = c.ids();
  type Found = {
    was: string;
    run: RunRow | null;
    output: OutputRow | null;
    ledger: EffectRow[] | null;
  };
  const rows = await c.statement<Found>({
    ...statement,
    values: [
      options.owner,
      token,
      Math.max(0, Math.round(options.leaseMs)),
      c.clock.now(),
      options.maxLeaseExpiries,
      E.RUN_TAKEOVER,
      E.RUN_CLAIMED,
    ],
  });
  const found = rows[0];
  if (!found) return { found: "none" };
  if (!found.run) return { found: "unleased" };
  const row = found.run;
  return {
    found: "claimed",
    run: toRun(row),
    output: readOutput(found.output as OutputRow),
    lease: {
      runId: row.id,
      jobId: row.job_id,
      generation: row.generation,
      token,
      owner: options.owner,
      until: row.lease_until as number,
    },
    takeover: found.was === "running",
    history: found.ledger === null ? undefined : found.ledger.map(toEffect),
    row,
  };
}
