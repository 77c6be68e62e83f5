import {
  assertResolutionReason,
  assertResolvableEffect,
  assertResolvableRun,
  assertTargetsFree,
  resolvedDetail,
} from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import { toEffect } from "../../domain/records.js";
import {
  BLOCKING_EFFECT_STATES,
  type EffectState,
  REINTENDABLE_EFFECT_STATES,
  RESOLVABLE_EFFECT_STATES,
  sqlStateList,
} from "../../domain/states.js";
import type { JournalLedger, LedgerEntry } from "../../port/ledger.js";
import { NOW_MS, type PostgresConnection } from "./connection.js";
import { HELD_CTE, leaseLost } from "./held.js";
import { leaseWrites } from "./lease-writes-batch.js";
import { lockTargets } from "./record.js";
import { json, type RowOf, type RunRow } from "./rows.js";
import type * as tables from "./tables.js";

type EffectRow = RowOf<typeof tables.effects>;

const BLOCKING = sqlStateList(BLOCKING_EFFECT_STATES);
const REINTENDABLE = sqlStateList(REINTENDABLE_EFFECT_STATES);

/** The effects ledger of a PostgreSQL journal; every write under a lease is fenced in its statement. */
export function postgresLedger(c: PostgresConnection): JournalLedger {
  return {
    async intend(lease, effect) {
      // The first intent of an effect in a generation, the case of every run: one statement.
      // Shared with the first intents of other runs that meet it (group commit).
      const first = await leaseWrites(c).intend(lease, effect);
      if (first) return first;
      // It has a row in this generation already: re-intended, or answered as it stands.
      return c.tx(async (client) => {
        const now = c.clock.now();
        const lock = await client.query<{ held: number }>(
          `WITH ${HELD_CTE} SELECT count(*)::int AS held FROM held`,
          [lease.runId, lease.token],
        );
        if (lock.rows[0]?.held === 0) throw await leaseLost(client, lease);
        // The run's row stays locked by the statement above: the lease holds until COMMIT.
        const again = await client.query<EffectRow & { previous: EffectState }>(
          `WITH ${HELD_CTE},
           prev AS (SELECT state FROM effects WHERE key = $3 AND generation = $4)
           UPDATE effects SET state = 'intended', attempts = effects.attempts + 1,
             detail = COALESCE($5, effects.detail), updated_at = $6
           FROM held, prev
           WHERE effects.key = $3 AND effects.generation = $4 AND effects.state IN ${REINTENDABLE}
           RETURNING effects.*, prev.state AS previous`,
          [lease.runId, lease.token, effect.key, lease.generation, json(effect.detail), now],
        );
        const reopened = again.rows[0];
        if (reopened) {
          const { previous, ...row } = reopened;
          await c.event(client, {
            jobId: lease.jobId,
            type: E.EFFECT_INTENDED,
            actor: lease.owner,
            data: {
              key: effect.key,
              generation: lease.generation,
              attempt: row.attempts,
              previous,
            },
          });
          return toEffect(row);
        }
        const existing = await client.query<EffectRow>(
          "SELECT * FROM effects WHERE key = $1 AND generation = $2",
          [effect.key, lease.generation],
        );
        return toEffect(existing.rows[0] as EffectRow);
      });
    },

    async settle(lease, key, state, detail, durability) {
      // One statement, shared with the settles of other runs that meet it (group commit).
      await leaseWrites(c).settle({ lease, key, state, detail }, durability);
    },

    async forJob(jobId, generation) {
      const rows =
        generation === undefined
          ? await c.query<EffectRow>(
              "SELECT * FROM effects WHERE job_id = $1 ORDER BY generation, idx",
              [jobId],
            )
          : await c.query<EffectRow>(
              "SELECT * FROM effects WHERE job_id = $1 AND generation = $2 ORDER BY idx",
              [jobId, generation],
            );
      return rows.map(toEffect);
    },

    async history(key) {
      const rows = await c.query<EffectRow>(
        "SELECT * FROM effects WHERE key = $1 ORDER BY generation",
        [key],
      );
      return rows.map(toEffect);
    },

    async ofJobs(jobIds) {
      const ledgers = new Map<string, LedgerEntry[]>();
      if (jobIds.length === 0) return ledgers;
      const rows = await c.query<Pick<EffectRow, "key" | "generation" | "state">>(
        "SELECT key, generation, state FROM effects WHERE job_id = ANY($1::text[]) ORDER BY id",
        [[...new Set(jobIds)]],
      );
      for (const r of rows) {
        const entry = { generation: r.generation, state: r.state };
        const list = ledgers.get(r.key);
        if (list) list.push(entry);
        else ledgers.set(r.key, [entry]);
      }
      return ledgers;
    },

    async resolve(jobId, { decision, reason, actor, expectKey }) {
      assertResolutionReason(reason);
      return c.tx(async (client) => {
        const run = (
          await client.query<RunRow>(
            "SELECT * FROM runs WHERE job_id = $1 ORDER BY generation DESC LIMIT 1 FOR UPDATE",
            [jobId],
          )
        ).rows[0];
        assertResolvableRun(jobId, run);
        let effect: EffectRow | undefined;
        for (const state of RESOLVABLE_EFFECT_STATES) {
          effect = (
            await client.query<EffectRow>(
              `SELECT * FROM effects WHERE job_id = $1 AND generation = $2 AND state = $3
               ORDER BY idx LIMIT 1 FOR UPDATE`,
              [jobId, run.generation, state],
            )
          ).rows[0];
          if (effect) break;
        }
        assertResolvableEffect(jobId, run.generation, effect, expectKey);
        const now = c.clock.now();
        const previous = effect.detail
          ? (JSON.parse(effect.detail) as Record<string, unknown>)
          : null;
        const updated = (
          await client.query<EffectRow>(
            `UPDATE effects SET state = $1, detail = $2, updated_at = $3
             WHERE key = $4 AND generation = $5 RETURNING *`,
            [
              decision,
              JSON.stringify(resolvedDetail(previous, actor, reason)),
              now,
              effect.key,
              run.generation,
            ],
          )
        ).rows[0] as EffectRow;
        await c.event(client, {
          jobId,
          type: E.EFFECT_RESOLVED,
          actor,
          data: {
            key: effect.key,
            generation: run.generation,
            decision,
            reason,
            previous: effect.state,
          },
        });
        const unsettled = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM effects WHERE job_id = $1 AND generation = $2 AND state IN ${BLOCKING}`,
          [jobId, run.generation],
        );
        if (unsettled.rows[0]?.n === 0) {
          const targets = JSON.parse(run.targets) as string[];
          // No record puts a run on these targets meanwhile (its id would be drawn before this
          // commits), and the later runs on them are locked: a claim skips them until this
          // commits, and one under way is waited for, its state read after it.
          await lockTargets(client, targets);
          const later = await client.query<{ job_id: string; state: string }>(
            `SELECT r.job_id, r.state FROM runs r WHERE r.id IN (
               SELECT other.run_id FROM active_targets other
               WHERE other.target = ANY($1::text[]) AND other.run_id > $2)
             ORDER BY r.id FOR UPDATE OF r`,
            [targets, run.id],
          );
          assertTargetsFree(
            jobId,
            later.rows.filter((r) => r.state === "running"),
          );
          await client.query(
            `UPDATE runs SET state = 'pending', due_at = ${NOW_MS}, attempts = 0, lease_expiries = 0,
             next_at = NULL, last_error = NULL, class = NULL, updated_at = $1 WHERE id = $2`,
            [now, run.id],
          );
          // Back in its place on its targets: ahead of the runs recorded after it.
          await client.query(
            `INSERT INTO active_targets (target, run_id) SELECT t, $2 FROM unnest($1::text[]) AS t
             ON CONFLICT DO NOTHING`,
            [targets, run.id],
          );
          await c.event(client, {
            jobId,
            type: E.RUN_RESUMED,
            actor,
            data: { generation: run.generation },
          });
        }
        return toEffect(updated);
      });
    },
  };
}
