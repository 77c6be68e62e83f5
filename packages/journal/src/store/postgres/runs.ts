import type pg from "pg";
import { runClaimDecision } from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E, replayedEvent } from "../../domain/events.js";
import { damageMessage, isDamaged, readOutput } from "../../domain/output-damage.js";
import { replayColumns, replayLineage, replayTargets, toRun } from "../../domain/records.js";
import { ACTIVE_RUN_STATES, isActiveRun, sqlStateList } from "../../domain/states.js";
import type {
  Claim,
  ClaimOptions,
  JournalRuns,
  LatestRun,
  Lease,
  RunRecord,
} from "../../port/runs.js";
import { claimInOneTrip } from "./claim-run.js";
import { durableAtCommit, NOW_MS, type PostgresConnection, SOON } from "./connection.js";
import { markDeadRow, UNLEASED } from "./dead-runs.js";
import { HOLDS, leaseLost } from "./held.js";
import { postgresLeaseHolders } from "./lease-holders.js";
import { leaseWrites } from "./lease-writes-batch.js";
import { announceWork } from "./notify.js";
import { insertRun, lockKey } from "./outputs.js";
import type { OutputRow, RunRow } from "./rows.js";
import { selectOutputs } from "./select.js";

const ACTIVE = sqlStateList(ACTIVE_RUN_STATES);
/** Milliseconds as a whole number, as the bigint columns hold them. */
const ms = (n: number): number => Math.max(0, Math.round(n));

/**
 * The next due run whose targets have no earlier active run (with `follow`, also or only one whose
 * earlier active runs all run under the claimer's unexpired leases), locked for this transaction;
 * runs other claimers hold locked are skipped (each claimer gets another run or none).
 */
function nextDue(follow?: "also" | "only", columns = "r.*"): string {
  const earlier = `SELECT 1 FROM active_targets other
    WHERE other.target = ANY(ARRAY(SELECT jsonb_array_elements_text(r.targets::jsonb)))
      AND other.run_id < r.id`;
  // With `follow`: an earlier run blocks unless it runs under the claimer's ($1) unexpired lease.
  const blocking = follow
    ? `${earlier} AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.id = other.run_id
         AND o.state = 'running' AND o.lease_owner = $1 AND o.lease_until > ${NOW_MS})`
    : earlier;
  return `SELECT ${columns} FROM runs r
    WHERE r.state IN ${ACTIVE} AND r.due_at <= ${NOW_MS} AND NOT EXISTS (${blocking})
      ${follow === "only" ? `AND EXISTS (${earlier})` : ""}
    ORDER BY r.due_at, r.id LIMIT 1 FOR UPDATE OF r SKIP LOCKED`;
}
const NEXT_DUE = { none: nextDue(), also: nextDue("also"), only: nextDue("only") };
/** The same, with the locked row version's xmin as `seen` (see claim-run.ts). */
const NEXT_DUE_SEEN = {
  none: nextDue(undefined, "r.*, r.xmin AS seen"),
  also: nextDue("also", "r.*, r.xmin AS seen"),
  only: nextDue("only", "r.*, r.xmin AS seen"),
};

/** Runs one write of a run under its lease; the fence is in the statement. */
async function heldUpdate(
  client: pg.PoolClient,
  lease: Lease,
  set: string,
  values: unknown[] = [],
): Promise<RunRow> {
  const { rows } = await client.query<RunRow>(`UPDATE runs SET ${set} WHERE ${HOLDS} RETURNING *`, [
    lease.runId,
    lease.token,
    ...values,
  ]);
  const row = rows[0];
  if (!row) throw await leaseLost(client, lease);
  return row;
}

const latestRow = async (c: PostgresConnection, jobId: string) =>
  (
    await c.query<RunRow>("SELECT * FROM runs WHERE job_id = $1 ORDER BY generation DESC LIMIT 1", [
      jobId,
    ])
  )[0];

/**
 * The ordering targets of all of an output's effects (JSON): its run's, or, for a filtered run
 * (which orders on its own effects only), those of its latest unfiltered run (generation 1 is one).
 */
async function fullTargets(client: pg.PoolClient, run: RunRow): Promise<string | undefined> {
  if (run.effect_filter === null) return run.targets;
  const { rows } = await client.query<{ targets: string }>(
    "SELECT targets FROM runs WHERE job_id = $1 AND effect_filter IS NULL ORDER BY generation DESC LIMIT 1",
    [run.job_id],
  );
  return rows[0]?.targets;
}

/** The runs of a PostgreSQL journal: leases and due times by the server's clock. */
export function postgresRuns(c: PostgresConnection): JournalRuns {
  /** The next due run leased to `options.owner` (or marked dead on the way), in one transaction. */
  const claimDue = (options: ClaimOptions): Promise<Claim | undefined> =>
    // Durable soon, not now (docs/reliability.md, "What is durable when"): a claim only
    // coordinates live processes. A crash of the server that loses it loses a lease: the run is
    // due again as before and is claimed again (its holder's next write under the lost token is
    // LEASE_LOST). The holder's first durable write, the intent, comes after it in the WAL, so
    // no effect is applied under a claim a crash can take back.
    c.tx(async (client) => {
      for (;;) {
        const row = (
          options.follow
            ? await client.query<RunRow>(NEXT_DUE[options.follow], [options.owner])
            : await client.query<RunRow>(NEXT_DUE.none)
        ).rows[0];
        if (!row) return undefined;
        const decision = runClaimDecision(row, options.maxLeaseExpiries);
        if (decision.action === "dead") {
          // A run marked dead waits for a person: durable before it is answered.
          await durableAtCommit(client);
          await markDeadRow(c, client, row, {
            class: "infrastructure",
            error: decision.error,
            actor: options.owner,
          });
          continue;
        }
        // A damaged output ends its own run (durable, as any dead run), and the claim goes on.
        const out = await client.query<OutputRow>("SELECT * FROM outputs WHERE job_id = $1", [
          row.job_id,
        ]);
        const output = readOutput(out.rows[0] as OutputRow);
        if (isDamaged(output)) {
          await durableAtCommit(client);
          await markDeadRow(c, client, row, {
            class: "integrity",
            error: damageMessage(output),
            actor: options.owner,
          });
          continue;
        }
        const { takeover } = decision;
        const token = c.ids();
        // The lease and its event in one statement.
        const now = c.clock.now();
        const event = {
          generation: row.generation,
          previousOwner: row.lease_owner,
          attempts: row.attempts,
        };
        const { rows } = await client.query<RunRow>(
          `WITH upd AS (
               UPDATE runs SET state = 'running', lease_owner = $1, lease_token = $2,
                 lease_until = ${NOW_MS} + $3, due_at = ${NOW_MS} + $3,
                 lease_expiries = lease_expiries + $4, updated_at = $5
               WHERE id = $6 RETURNING *),
             ev AS (
               INSERT INTO events (at, job_id, type, data, actor)
               SELECT $5, job_id, $7, $8, $1 FROM upd)
             SELECT * FROM upd`,
          [
            options.owner,
            token,
            ms(options.leaseMs),
            takeover ? 1 : 0,
            now,
            row.id,
            takeover ? E.RUN_TAKEOVER : E.RUN_CLAIMED,
            JSON.stringify(event),
          ],
        );
        const updated = rows[0] as RunRow;
        const lease: Lease = {
          runId: row.id,
          jobId: row.job_id,
          generation: row.generation,
          token,
          owner: options.owner,
          until: updated.lease_until as number,
        };
        return {
          run: toRun(updated),
          output,
          lease,
          takeover,
        };
      }
    }, SOON);

  /**
   * The claim as one statement (claim-run.ts); the rare due run it leaves (a takeover that goes
   * dead) is claimed by the transaction above, which marks it. A damaged output, found once its
   * run is leased, ends that run dead under the new lease (durable), and the claim goes on.
   */
  const claimNextDue = async (options: ClaimOptions): Promise<Claim | undefined> => {
    for (;;) {
      const trip = await claimInOneTrip(c, options, NEXT_DUE_SEEN[options.follow ?? "none"]);
      if (trip.found === "none") return undefined;
      if (trip.found === "unleased") return claimDue(options);
      const { output, lease } = trip;
      if (!isDamaged(output)) {
        const { run, takeover, history } = trip;
        return { run, output, lease, takeover, history };
      }
      await c.tx(async (client) => {
        const row = await heldUpdate(client, lease, "updated_at = $3", [c.clock.now()]);
        await markDeadRow(c, client, row, {
          class: "integrity",
          error: damageMessage(output),
          actor: options.owner,
        });
      });
    }
  };

  return {
    ...postgresLeaseHolders(c, "runs"),

    async claim(options) {
      // One statement, no transaction block: it is also the look of an idle poller (nothing due,
      // nothing written).
      return claimNextDue(options);
    },

    async extendLease(lease, leaseMs) {
      // Durable soon: a crash of the server that loses it leaves the shorter lease, which at
      // worst lapses and is taken over, as when a heartbeat comes late; every later write of the
      // holder checks the token.
      return c.tx(async (client) => {
        const row = await heldUpdate(
          client,
          lease,
          `lease_until = ${NOW_MS} + $3, due_at = ${NOW_MS} + $3, updated_at = $4`,
          [ms(leaseMs), c.clock.now()],
        );
        return { ...lease, until: row.lease_until as number };
      }, SOON);
    },

    async release(lease) {
      await c.tx(async (client) => {
        await heldUpdate(
          client,
          lease,
          `state = 'pending', ${UNLEASED}, due_at = ${NOW_MS}, updated_at = $3`,
          [c.clock.now()],
        );
        await c.event(client, {
          jobId: lease.jobId,
          type: E.RUN_RELEASED,
          actor: lease.owner,
          data: { generation: lease.generation },
        });
      });
    },

    async complete(lease, durability) {
      // One statement, shared with the completions of other runs that meet it (group commit).
      await leaseWrites(c).complete(lease, durability);
    },

    async fail(lease, failure) {
      // The retry waits as long from the server's now as the caller asked from its own.
      const delay = ms(failure.nextAt - c.clock.now());
      await c.tx(async (client) => {
        const row = await heldUpdate(
          client,
          lease,
          `state = 'failed', ${UNLEASED}, due_at = ${NOW_MS} + $3, next_at = ${NOW_MS} + $3,
           attempts = attempts + 1, last_error = $4, class = $5, updated_at = $6`,
          [delay, failure.error, failure.class, c.clock.now()],
        );
        await c.event(client, {
          jobId: lease.jobId,
          type: E.RUN_FAILED,
          actor: lease.owner,
          data: {
            generation: lease.generation,
            class: failure.class,
            error: failure.error,
            nextAt: row.next_at,
          },
        });
      });
    },

    async markDead(lease, failure) {
      await c.tx(async (client) => {
        const row = await heldUpdate(client, lease, "attempts = attempts + 1");
        await markDeadRow(c, client, row, { ...failure, actor: lease.owner });
      });
    },

    async forJob(jobId) {
      const rows = await c.query<RunRow>(
        "SELECT * FROM runs WHERE job_id = $1 ORDER BY generation",
        [jobId],
      );
      return rows.map(toRun);
    },

    async latest(jobId) {
      const r = await latestRow(c, jobId);
      return r && toRun(r);
    },

    async latestOf(jobIds) {
      const latest = new Map<string, LatestRun>();
      if (jobIds.length === 0) return latest;
      const rows = await c.query<Pick<RunRow, "job_id" | "generation" | "state">>(
        `SELECT DISTINCT ON (job_id) job_id, generation, state FROM runs
         WHERE job_id = ANY($1::text[]) ORDER BY job_id, generation DESC`,
        [[...jobIds]],
      );
      for (const r of rows) latest.set(r.job_id, { generation: r.generation, state: r.state });
      return latest;
    },

    async nextDueAt() {
      const [r] = await c.query<{ t: number | null }>(
        `SELECT MIN(due_at) AS t FROM runs WHERE state IN ${ACTIVE}`,
      );
      return r?.t ?? undefined;
    },

    async active() {
      const out = { pending: 0, running: 0, failed: 0 };
      const rows = await c.query<{ state: "pending" | "running" | "failed"; n: number }>(
        `SELECT state, count(*)::int AS n FROM runs WHERE state IN ${ACTIVE} GROUP BY state`,
      );
      for (const r of rows) out[r.state] = r.n;
      return out;
    },

    async replay(selection, options) {
      const outputs = await selectOutputs(c, selection);
      const force = options.forceUnprobeable ?? false;
      const replayed = await c.tx(async (client) => {
        const now = c.clock.now();
        const created: RunRecord[] = [];
        for (const o of outputs) {
          // Replays of one output serialize here: the second reads the generation the first made.
          await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
            lockKey.job,
            o.jobId,
          ]);
          const { rows } = await client.query<RunRow>(
            "SELECT * FROM runs WHERE job_id = $1 ORDER BY generation DESC LIMIT 1",
            [o.jobId],
          );
          const latest = rows[0];
          // Still being interpreted: a second generation beside it would race it.
          if (latest && isActiveRun(latest.state)) continue;
          const lineage = replayLineage(selection, options, latest?.generation ?? 0);
          // A filtered generation follows a done one only (see JournalRuns.replay).
          if (lineage.only && latest && latest.state !== "done") continue;
          const targets = replayTargets(
            options,
            o.jobId,
            latest && (await fullTargets(client, latest)),
          );
          const cols = replayColumns(lineage);
          const generation = lineage.replaysGeneration + 1;
          const id = await insertRun(client, {
            jobId: o.jobId,
            generation,
            targets,
            forceUnprobeable: force,
            now,
          });
          const row = (
            await client.query<RunRow>(
              "UPDATE runs SET effect_filter = $1, replay = $2 WHERE id = $3 RETURNING *",
              [cols.effect_filter, cols.replay, id],
            )
          ).rows[0] as RunRow;
          await c.event(client, {
            jobId: o.jobId,
            type: E.RUN_REPLAYED,
            actor: options.actor,
            data: replayedEvent(generation, force, lineage),
          });
          created.push(toRun(row));
        }
        return created;
      });
      if (replayed.length > 0) await announceWork(c, "runs");
      return replayed;
    },
  };
}
