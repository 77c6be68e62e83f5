import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import { SETTLED_EFFECT_STATES, sqlStateList } from "../../domain/states.js";
import type { JournalMaintenance, PruneResult } from "../../port/maintenance.js";
import type { SqliteConnection } from "./connection.js";
import { listEvents } from "./events.js";
import { jobOf } from "./jobs.js";
import { effectsOf } from "./ledger.js";
import { rejectionsOf } from "./outputs.js";
import { type OutputRow, type RunRow, toOutput, toRun } from "./rows.js";
import { ACTIVE } from "./runs.js";

/** The immutability triggers every journal must have (migrations 0001 and 0004). */
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

const SETTLED = sqlStateList(SETTLED_EFFECT_STATES);
/** The tables a prune deletes an output's rows from, children first. */
const PRUNED_TABLES = [
  "effects",
  "runs",
  "events",
  "rejections",
  "jobs",
  "dead_letters",
  "outputs",
];
/** The tables whose rows a prune counts per output. */
const COUNTED = {
  runs: "runs",
  effects: "effects",
  events: "events",
  rejections: "rejections",
  jobs: "jobs",
} as const;

/** Prune, integrity and backup of a SQLite journal. */
export function sqliteMaintenance(c: SqliteConnection): JournalMaintenance {
  return {
    async prune(options) {
      const before = options.before;
      const oldOutputs = c
        .st(
          `SELECT * FROM outputs o WHERE o.recorded_at < ?
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = o.job_id AND r.state IN ${ACTIVE}) ORDER BY seq`,
        )
        .all(before) as OutputRow[];
      const result: PruneResult = {
        outputs: oldOutputs.length,
        runs: 0,
        effects: 0,
        events: 0,
        rejections: 0,
        jobs: 0,
      };
      for (const o of oldOutputs) {
        for (const [field, table] of Object.entries(COUNTED) as [keyof typeof COUNTED, string][]) {
          result[field] += (
            c.st(`SELECT COUNT(*) AS n FROM ${table} WHERE job_id = ?`).get(o.job_id) as {
              n: number;
            }
          ).n;
        }
      }
      if (options.dryRun) return result;
      for (const o of oldOutputs) {
        // Archive first (the caller fsyncs it), then delete in one transaction per output.
        await options.archive?.({
          output: toOutput(o),
          runs: (
            c
              .st("SELECT * FROM runs WHERE job_id = ? ORDER BY generation")
              .all(o.job_id) as RunRow[]
          ).map(toRun),
          effects: effectsOf(c, o.job_id),
          events: listEvents(c, { jobId: o.job_id }),
          rejections: rejectionsOf(c, o.job_id),
          job: jobOf(c, o.job_id),
        });
        await c.write(() => {
          c.st("INSERT INTO prune_guard (id) VALUES (1)").run();
          c.st(
            "DELETE FROM active_targets WHERE run_id IN (SELECT id FROM runs WHERE job_id = ?)",
          ).run(o.job_id);
          for (const table of PRUNED_TABLES) {
            c.st(`DELETE FROM ${table} WHERE job_id = ?`).run(o.job_id);
          }
          c.st("DELETE FROM prune_guard").run();
        });
      }
      if (result.outputs > 0)
        c.event(null, E.JOURNAL_PRUNED, options.actor ?? "prune", { ...result, before });
      return result;
    },

    async integrity() {
      const problems: string[] = [];
      const check = c.db.pragma("integrity_check") as { integrity_check: string }[];
      for (const r of check)
        if (r.integrity_check !== "ok") problems.push(`integrity_check: ${r.integrity_check}`);
      const mode = c.db.pragma("journal_mode", { simple: true }) as string;
      if (mode !== "wal") problems.push(`journal_mode is ${mode}, expected wal`);
      const present = new Set(
        (
          c.st("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as { name: string }[]
        ).map((r) => r.name),
      );
      for (const t of TRIGGERS)
        if (!present.has(t)) problems.push(`trigger ${t} is missing: outputs are not protected`);
      const unsettled = c
        .st(
          `SELECT r.job_id, r.generation FROM runs r JOIN effects e ON e.job_id = r.job_id AND e.generation = r.generation
           WHERE r.state = 'done' AND e.state NOT IN ${SETTLED} LIMIT 20`,
        )
        .all() as { job_id: string; generation: number }[];
      for (const u of unsettled)
        problems.push(`run ${u.job_id}#${u.generation} is done but has an unsettled effect`);
      const missingRuns = c
        .st(
          "SELECT o.job_id FROM outputs o WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = o.job_id) LIMIT 20",
        )
        .all() as { job_id: string }[];
      for (const m of missingRuns) problems.push(`output ${m.job_id} has no run`);
      const missingInputs = c
        .st(
          "SELECT j.job_id FROM jobs j WHERE NOT EXISTS (SELECT 1 FROM job_inputs i WHERE i.seq = j.seq) LIMIT 20",
        )
        .all() as { job_id: string }[];
      for (const m of missingInputs) problems.push(`job ${m.job_id} has no input`);
      return problems;
    },

    async backup(file) {
      await c.db.backup(file);
    },
  };
}
