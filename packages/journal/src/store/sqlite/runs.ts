import { IdemError } from "@idem/schema";
import { LATER_RUNS_NAMED, laterRunsNote, runClaimDecision } from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E, replayedEvent } from "../../domain/events.js";
import { leaseEnd } from "../../domain/leases.js";
import { damageMessage, isDamaged, readOutput } from "../../domain/output-damage.js";
import { replayColumns, replayLineage, replayTargets } from "../../domain/records.js";
import {
  ACTIVE_RUN_STATES,
  isActiveRun,
  type RunState,
  SETTLED_EFFECT_STATES,
  sqlStateList,
} from "../../domain/states.js";
import type { NewRun, RunDeath } from "../../domain/writes.js";
import type { JournalRuns, LatestRun, Lease, RunRecord } from "../../port/runs.js";
import type { SqliteConnection } from "./connection.js";
import { heldRun } from "./held.js";
import { sqliteLeaseHolders } from "./lease-holders.js";
import { type OutputRow, type RunRow, toRun } from "./rows.js";
import { selectOutputs } from "./select.js";
import { durableAs, pagesOf } from "./statements.js";

/** Active run states as a SQL list. */
export const ACTIVE = sqlStateList(ACTIVE_RUN_STATES);
const SETTLED = sqlStateList(SETTLED_EFFECT_STATES);
/** Below this many outputs, `latestOf` asks run by run; from it on, it reads the table in pages. */
const BULK_FROM = 256;

/** A new pending run and its active targets; returns the run's id. */
export function insertRun(c: SqliteConnection, run: NewRun): number {
  const { jobId, generation, targets, forceUnprobeable, now } = run;
  const id = Number(
    c
      .st(
        `INSERT INTO runs (job_id, generation, state, due_at, force_unprobeable, targets, created_at, updated_at)
       VALUES (?, ?, 'pending', ?, ?, ?, ?, ?)`,
      )
      .run(jobId, generation, now, forceUnprobeable ? 1 : 0, JSON.stringify(targets), now, now)
      .lastInsertRowid,
  );
  activate(c, id, targets);
  return id;
}

/** A run that is pending again takes its place in the per-target order. */
export function activate(c: SqliteConnection, runId: number, targets: readonly string[]): void {
  const ins = c.st("INSERT OR IGNORE INTO active_targets (target, run_id) VALUES (?, ?)");
  for (const t of targets) ins.run(t, runId);
}

/** A run that is done or dead leaves the per-target order. */
function deactivate(c: SqliteConnection, run: RunRow): void {
  c.st(
    "DELETE FROM active_targets WHERE run_id = ? AND target IN (SELECT value FROM json_each(?))",
  ).run(run.id, run.targets);
}

/** Dead releases the run's targets; its error and event name the later runs that go ahead of it. */
export function markDead(c: SqliteConnection, row: RunRow, death: RunDeath): void {
  const { class: cls, error, actor } = death;
  const now = c.clock.now();
  const later = (
    c
      .st(
        `SELECT DISTINCT r.job_id FROM json_each(?) mine
         JOIN active_targets other ON other.target = mine.value AND other.run_id > ?
         JOIN runs r ON r.id = other.run_id
         ORDER BY other.run_id LIMIT ${LATER_RUNS_NAMED + 1}`,
      )
      .all(row.targets, row.id) as { job_id: string }[]
  ).map((r) => r.job_id);
  c.st(
    `UPDATE runs SET state = 'dead', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = NULL,
     last_error = ?, class = ?, updated_at = ? WHERE id = ?`,
  ).run(`${error}${laterRunsNote(later)}`, cls, now, row.id);
  deactivate(c, row);
  c.event({
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

const latestRow = (c: SqliteConnection, jobId: string) =>
  c.st("SELECT * FROM runs WHERE job_id = ? ORDER BY generation DESC LIMIT 1").get(jobId) as
    | RunRow
    | undefined;

/**
 * The ordering targets of all of an output's effects (JSON): its run's, or, for a filtered run
 * (which orders on its own effects only), those of its latest unfiltered run (generation 1 is one).
 */
function fullTargets(c: SqliteConnection, run: RunRow): string | undefined {
  if (run.effect_filter === null) return run.targets;
  const r = c
    .st(
      "SELECT targets FROM runs WHERE job_id = ? AND effect_filter IS NULL ORDER BY generation DESC LIMIT 1",
    )
    .get(run.job_id) as { targets: string } | undefined;
  return r?.targets;
}

/** Earlier unfinished runs on one of `r`'s targets. */
const EARLIER = `SELECT 1 FROM json_each(r.targets) mine
  JOIN active_targets other ON other.target = mine.value AND other.run_id < r.id`;

/**
 * The next due run whose targets have no earlier unfinished run; with `follow`, also (or only) one
 * whose earlier unfinished runs are all running under the claimer's unexpired leases (parameters:
 * now, then with `follow` the owner and now again).
 */
function nextDue(follow?: "also" | "only"): string {
  const blocking = follow
    ? `${EARLIER} JOIN runs o ON o.id = other.run_id
       WHERE NOT (o.state = 'running' AND o.lease_owner = ? AND o.lease_until > ?)`
    : EARLIER;
  return `SELECT r.* FROM runs r INDEXED BY runs_due
    WHERE r.state IN ${ACTIVE} AND r.due_at <= ? AND NOT EXISTS (${blocking})
      ${follow === "only" ? `AND EXISTS (${EARLIER})` : ""}
    ORDER BY r.due_at, r.id LIMIT 1`;
}

/** The runs of a SQLite journal. */
export function sqliteRuns(c: SqliteConnection): JournalRuns {
  const runs: JournalRuns = {
    ...sqliteLeaseHolders(c, "runs"),

    async claim(options) {
      // Look before locking: an idle poller must not take the write lock (SQLite's busy handler
      // backs off up to 100 ms, so lock traffic from idle pollers slows every writer on the file).
      if (
        !c
          .st(
            `SELECT 1 FROM runs INDEXED BY runs_due WHERE state IN ${ACTIVE} AND due_at <= ? LIMIT 1`,
          )
          .get(c.clock.now())
      ) {
        return undefined;
      }
      return c.write(() => {
        const now = c.clock.now();
        for (;;) {
          const row = (
            options.follow
              ? c.st(nextDue(options.follow)).get(now, options.owner, now)
              : c.st(nextDue()).get(now)
          ) as RunRow | undefined;
          if (!row) return undefined;
          const decision = runClaimDecision(row, options.maxLeaseExpiries);
          if (decision.action === "dead") {
            markDead(c, row, {
              class: "infrastructure",
              error: decision.error,
              actor: options.owner,
            });
            continue;
          }
          // A damaged output ends its own run, and the claim goes on to the next.
          const output = readOutput(
            c.st("SELECT * FROM outputs WHERE job_id = ?").get(row.job_id) as OutputRow,
          );
          if (isDamaged(output)) {
            markDead(c, row, {
              class: "integrity",
              error: damageMessage(output),
              actor: options.owner,
            });
            continue;
          }
          const { takeover } = decision;
          const token = c.ids();
          const until = leaseEnd(now, options.leaseMs);
          const updated = c
            .st(
              `UPDATE runs SET state = 'running', lease_owner = ?, lease_token = ?, lease_until = ?, due_at = ?,
                 lease_expiries = lease_expiries + ?, updated_at = ? WHERE id = ? RETURNING *`,
            )
            .get(options.owner, token, until, until, takeover ? 1 : 0, now, row.id) as RunRow;
          c.event({
            jobId: row.job_id,
            type: takeover ? E.RUN_TAKEOVER : E.RUN_CLAIMED,
            actor: options.owner,
            data: {
              generation: row.generation,
              previousOwner: row.lease_owner,
              attempts: row.attempts,
            },
          });
          const lease: Lease = {
            runId: row.id,
            jobId: row.job_id,
            generation: row.generation,
            token,
            owner: options.owner,
            until,
          };
          return { run: toRun(updated), output, lease, takeover };
        }
      }, false);
    },

    async extendLease(lease, leaseMs) {
      return c.write(() => {
        heldRun(c, lease);
        const now = c.clock.now();
        const until = leaseEnd(now, leaseMs);
        c.st("UPDATE runs SET lease_until = ?, due_at = ?, updated_at = ? WHERE id = ?").run(
          until,
          until,
          now,
          lease.runId,
        );
        return { ...lease, until };
      }, false);
    },

    async release(lease) {
      await c.write(() => {
        heldRun(c, lease);
        const now = c.clock.now();
        c.st(
          `UPDATE runs SET state = 'pending', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = ?,
           updated_at = ? WHERE id = ?`,
        ).run(now, now, lease.runId);
        c.event({
          jobId: lease.jobId,
          type: E.RUN_RELEASED,
          actor: lease.owner,
          data: { generation: lease.generation },
        });
      });
    },

    async complete(lease, durability) {
      await c.write(() => {
        const run = heldRun(c, lease);
        const open = c
          .st(
            `SELECT key, state FROM effects WHERE job_id = ? AND generation = ?
             AND state NOT IN ${SETTLED} LIMIT 1`,
          )
          .get(lease.jobId, lease.generation) as { key: string; state: string } | undefined;
        if (open) {
          throw new IdemError(
            "INVALID_STATE",
            `run ${lease.jobId}#${lease.generation} cannot be done: effect ${open.key} is ${open.state}`,
          );
        }
        const now = c.clock.now();
        c.st(
          `UPDATE runs SET state = 'done', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = NULL,
           last_error = NULL, class = NULL, updated_at = ? WHERE id = ?`,
        ).run(now, lease.runId);
        deactivate(c, run);
        c.event({
          jobId: lease.jobId,
          type: E.RUN_DONE,
          actor: lease.owner,
          data: { generation: lease.generation },
        });
      }, durableAs(durability));
    },

    async fail(lease, failure) {
      await c.write(() => {
        heldRun(c, lease);
        const now = c.clock.now();
        c.st(
          `UPDATE runs SET state = 'failed', lease_owner = NULL, lease_token = NULL, lease_until = NULL, due_at = ?,
           next_at = ?, attempts = attempts + 1, last_error = ?, class = ?, updated_at = ? WHERE id = ?`,
        ).run(failure.nextAt, failure.nextAt, failure.error, failure.class, now, lease.runId);
        c.event({
          jobId: lease.jobId,
          type: E.RUN_FAILED,
          actor: lease.owner,
          data: {
            generation: lease.generation,
            class: failure.class,
            error: failure.error,
            nextAt: failure.nextAt,
          },
        });
      });
    },

    async markDead(lease, failure) {
      await c.write(() => {
        const row = heldRun(c, lease);
        c.st("UPDATE runs SET attempts = attempts + 1 WHERE id = ?").run(row.id);
        markDead(c, row, { ...failure, actor: lease.owner });
      });
    },

    async forJob(jobId) {
      return (
        c.st("SELECT * FROM runs WHERE job_id = ? ORDER BY generation").all(jobId) as RunRow[]
      ).map(toRun);
    },

    async latest(jobId) {
      const r = latestRow(c, jobId);
      return r && toRun(r);
    },

    async latestOf(jobIds) {
      const latest = new Map<string, LatestRun>();
      if (jobIds.length < BULK_FROM) {
        for (const jobId of jobIds) {
          const r = latestRow(c, jobId);
          if (r) latest.set(jobId, { generation: r.generation, state: r.state });
        }
        return latest;
      }
      // One pass over the runs table, in pages, beats one query per output.
      const wanted = new Set(jobIds);
      const page = c.db
        .prepare("SELECT id, job_id, generation, state FROM runs WHERE id > ? ORDER BY id LIMIT ?")
        .raw(true);
      for await (const rows of pagesOf<[number, string, number, RunState]>(page)) {
        for (const [, jobId, generation, state] of rows) {
          if (!wanted.has(jobId)) continue;
          const cur = latest.get(jobId);
          if (!cur || generation > cur.generation) latest.set(jobId, { generation, state });
        }
      }
      return latest;
    },

    async nextDueAt() {
      const r = c.st(`SELECT MIN(due_at) AS t FROM runs WHERE state IN ${ACTIVE}`).get() as {
        t: number | null;
      };
      return r.t ?? undefined;
    },

    async active() {
      const out = { pending: 0, running: 0, failed: 0 };
      for (const r of c
        .st(`SELECT state, COUNT(*) AS n FROM runs WHERE state IN ${ACTIVE} GROUP BY state`)
        .all() as { state: "pending" | "running" | "failed"; n: number }[]) {
        out[r.state] = r.n;
      }
      return out;
    },

    async replay(selection, options) {
      const outputs = selectOutputs(c.db, selection);
      const force = options.forceUnprobeable ?? false;
      return c.write(() => {
        const now = c.clock.now();
        const created: RunRecord[] = [];
        for (const o of outputs) {
          const latest = latestRow(c, o.jobId);
          // Still being interpreted: a second generation beside it would race it.
          if (latest && isActiveRun(latest.state)) continue;
          const lineage = replayLineage(selection, options, latest?.generation ?? 0);
          // A filtered generation follows a done one only (see JournalRuns.replay).
          if (lineage.only && latest && latest.state !== "done") continue;
          const targets = replayTargets(options, o.jobId, latest && fullTargets(c, latest));
          const cols = replayColumns(lineage);
          const id = insertRun(c, {
            jobId: o.jobId,
            generation: lineage.replaysGeneration + 1,
            targets,
            forceUnprobeable: force,
            now,
          });
          const row = c
            .st("UPDATE runs SET effect_filter = ?, replay = ? WHERE id = ? RETURNING *")
            .get(cols.effect_filter, cols.replay, id) as RunRow;
          c.event({
            jobId: o.jobId,
            type: E.RUN_REPLAYED,
            actor: options.actor,
            data: replayedEvent(row.generation, force, lineage),
          });
          created.push(toRun(row));
        }
        return created;
      });
    },
  };
  return runs;
}
