import { IdemError } from "@idem/schema";
import {
  assertResolutionReason,
  assertResolvableEffect,
  assertResolvableRun,
  assertTargetsFree,
  resolvedDetail,
} from "../../domain/decisions.js";
import { JOURNAL_EVENTS as E, effectEvent } from "../../domain/events.js";
import {
  BLOCKING_EFFECT_STATES,
  type EffectState,
  REINTENDABLE_EFFECT_STATES,
  RESOLVABLE_EFFECT_STATES,
  sqlStateList,
} from "../../domain/states.js";
import type { JournalLedger, LedgerEntry } from "../../port/ledger.js";
import type { SqliteConnection } from "./connection.js";
import { heldRun } from "./held.js";
import { type EffectRow, type RunRow, toEffect } from "./rows.js";
import { activate } from "./runs.js";
import { durableAs, json, pagesOf } from "./statements.js";

const BLOCKING = sqlStateList(BLOCKING_EFFECT_STATES);

/** Below this many outputs, `ofJobs` asks output by output; from it on, it reads the table in pages. */
const BULK_FROM = 256;

/** The ledger of one output, every generation unless one is named. */
export function effectsOf(c: SqliteConnection, jobId: string, generation?: number) {
  const rows = (
    generation === undefined
      ? c.st("SELECT * FROM effects WHERE job_id = ? ORDER BY generation, idx").all(jobId)
      : c
          .st("SELECT * FROM effects WHERE job_id = ? AND generation = ? ORDER BY idx")
          .all(jobId, generation)
  ) as EffectRow[];
  return rows.map(toEffect);
}

/** The effects ledger of a SQLite journal. */
export function sqliteLedger(c: SqliteConnection): JournalLedger {
  return {
    async intend(lease, effect) {
      return c.write(() => {
        heldRun(c, lease);
        const now = c.clock.now();
        const inserted = c
          .st(
            `INSERT INTO effects (key, generation, job_id, idx, kind, spec_hash, state, detail, attempts, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, 'intended', ?, 1, ?) ON CONFLICT(key, generation) DO NOTHING RETURNING *`,
          )
          .get(
            effect.key,
            lease.generation,
            lease.jobId,
            effect.idx,
            effect.kind,
            effect.specHash,
            json(effect.detail),
            now,
          ) as EffectRow | undefined;
        if (inserted) {
          c.event({
            jobId: lease.jobId,
            type: E.EFFECT_INTENDED,
            actor: lease.owner,
            data: {
              key: effect.key,
              generation: lease.generation,
            },
          });
          return toEffect(inserted);
        }
        const existing = c
          .st("SELECT * FROM effects WHERE key = ? AND generation = ?")
          .get(effect.key, lease.generation) as EffectRow;
        if (REINTENDABLE_EFFECT_STATES.includes(existing.state)) {
          const again = c
            .st(
              `UPDATE effects SET state = 'intended', attempts = attempts + 1, detail = COALESCE(?, detail), updated_at = ?
               WHERE key = ? AND generation = ? RETURNING *`,
            )
            .get(json(effect.detail), now, effect.key, lease.generation) as EffectRow;
          c.event({
            jobId: lease.jobId,
            type: E.EFFECT_INTENDED,
            actor: lease.owner,
            data: {
              key: effect.key,
              generation: lease.generation,
              attempt: again.attempts,
              previous: existing.state,
            },
          });
          return toEffect(again);
        }
        return toEffect(existing);
      });
    },

    async settle(lease, key, state, detail, durability) {
      await c.write(() => {
        heldRun(c, lease);
        const r = c
          .st(
            "UPDATE effects SET state = ?, detail = COALESCE(?, detail), updated_at = ? WHERE key = ? AND generation = ?",
          )
          .run(state, json(detail), c.clock.now(), key, lease.generation);
        if (r.changes === 0) {
          throw new IdemError(
            "INVALID_STATE",
            `effect ${key} has no intent in generation ${lease.generation}`,
          );
        }
        c.event({
          jobId: lease.jobId,
          type: effectEvent(state),
          actor: lease.owner,
          data: {
            key,
            generation: lease.generation,
            detail,
          },
        });
      }, durableAs(durability));
    },

    async forJob(jobId, generation) {
      return effectsOf(c, jobId, generation);
    },

    async history(key) {
      return (
        c.st("SELECT * FROM effects WHERE key = ? ORDER BY generation").all(key) as EffectRow[]
      ).map(toEffect);
    },

    async ofJobs(jobIds) {
      const ledgers = new Map<string, LedgerEntry[]>();
      const add = (key: string, entry: LedgerEntry) => {
        const list = ledgers.get(key);
        if (list) list.push(entry);
        else ledgers.set(key, [entry]);
      };
      if (jobIds.length < BULK_FROM) {
        for (const jobId of jobIds) {
          for (const r of c
            .st("SELECT key, generation, state FROM effects WHERE job_id = ?")
            .all(jobId) as Pick<EffectRow, "key" | "generation" | "state">[]) {
            add(r.key, { generation: r.generation, state: r.state });
          }
        }
        return ledgers;
      }
      // One pass over the effects table, in pages, beats one query per output.
      const wanted = new Set(jobIds);
      const page = c.db
        .prepare(
          "SELECT id, job_id, key, generation, state FROM effects WHERE id > ? ORDER BY id LIMIT ?",
        )
        .raw(true);
      for await (const rows of pagesOf<[number, string, string, number, EffectState]>(page)) {
        for (const [, jobId, key, generation, state] of rows) {
          if (wanted.has(jobId)) add(key, { generation, state });
        }
      }
      return ledgers;
    },

    async resolve(jobId, { decision, reason, actor, expectKey }) {
      assertResolutionReason(reason);
      return c.write(() => {
        const run = c
          .st("SELECT * FROM runs WHERE job_id = ? ORDER BY generation DESC LIMIT 1")
          .get(jobId) as RunRow | undefined;
        assertResolvableRun(jobId, run);
        const pick = c.st(
          "SELECT * FROM effects WHERE job_id = ? AND generation = ? AND state = ? ORDER BY idx LIMIT 1",
        );
        let effect: EffectRow | undefined;
        for (const state of RESOLVABLE_EFFECT_STATES) {
          effect = pick.get(jobId, run.generation, state) as EffectRow | undefined;
          if (effect) break;
        }
        assertResolvableEffect(jobId, run.generation, effect, expectKey);
        const now = c.clock.now();
        const previous = effect.detail
          ? (JSON.parse(effect.detail) as Record<string, unknown>)
          : null;
        const updated = c
          .st(
            "UPDATE effects SET state = ?, detail = ?, updated_at = ? WHERE key = ? AND generation = ? RETURNING *",
          )
          .get(
            decision,
            JSON.stringify(resolvedDetail(previous, actor, reason)),
            now,
            effect.key,
            run.generation,
          ) as EffectRow;
        c.event({
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
        const unsettled = c
          .st(
            `SELECT COUNT(*) AS n FROM effects WHERE job_id = ? AND generation = ? AND state IN ${BLOCKING}`,
          )
          .get(jobId, run.generation) as { n: number };
        if (unsettled.n === 0) {
          // One writer at a time: no claim can come between this read and the write below.
          const holders = c
            .st(
              `SELECT r.job_id FROM runs r WHERE r.state = 'running' AND r.id IN (
                 SELECT other.run_id FROM json_each(?) mine
                 JOIN active_targets other ON other.target = mine.value AND other.run_id > ?)`,
            )
            .all(run.targets, run.id) as { job_id: string }[];
          assertTargetsFree(jobId, holders);
          c.st(
            `UPDATE runs SET state = 'pending', due_at = ?, attempts = 0, lease_expiries = 0, next_at = NULL,
             last_error = NULL, class = NULL, updated_at = ? WHERE id = ?`,
          ).run(now, now, run.id);
          activate(c, run.id, JSON.parse(run.targets) as string[]);
          c.event({ jobId, type: E.RUN_RESUMED, actor, data: { generation: run.generation } });
        }
        return toEffect(updated);
      });
    },
  };
}
