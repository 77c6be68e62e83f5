import { JOURNAL_EVENTS as E } from "../../domain/events.js";
import {
  CONSISTENCY_CHECKS,
  emptyPruneResult,
  missingTrigger,
  PRUNABLE_OUTPUTS,
  PRUNE_COUNTED,
  PRUNED_TABLES,
  TRIGGERS,
} from "../../domain/maintenance.js";
import type { JournalMaintenance } from "../../port/maintenance.js";
import type { SqliteConnection } from "./connection.js";
import { listEvents } from "./events.js";
import { jobOf } from "./jobs.js";
import { clearDamage, isDamageError, markDamaged } from "./journal-file.js";
import { effectsOf } from "./ledger.js";
import { rejectionsOf } from "./outputs.js";
import { type OutputRow, type RunRow, toOutput, toRun } from "./rows.js";

/** The immutability triggers every journal must have (migrations 0001 and 0004). */
export { TRIGGERS } from "../../domain/maintenance.js";

/** Prune, integrity and backup of a SQLite journal. */
export function sqliteMaintenance(c: SqliteConnection): JournalMaintenance {
  return {
    async prune(options) {
      const before = options.before;
      const oldOutputs = c.st(PRUNABLE_OUTPUTS).all(before) as OutputRow[];
      const result = emptyPruneResult(oldOutputs.length);
      for (const o of oldOutputs) {
        for (const [field, table] of Object.entries(PRUNE_COUNTED) as [
          keyof typeof PRUNE_COUNTED,
          string,
        ][]) {
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
        c.event({
          jobId: null,
          type: E.JOURNAL_PRUNED,
          actor: options.actor ?? "prune",
          data: { ...result, before },
        });
      return result;
    },

    async integrity() {
      const problems = pageCheck(c, "integrity_check");
      if (c.path !== ":memory:") {
        if (problems.length > 0) markDamaged(c.path, problems, c.clock.now());
        else clearDamage(c.path);
      }
      const mode = c.db.pragma("journal_mode", { simple: true }) as string;
      if (mode !== "wal") problems.push(`journal_mode is ${mode}, expected wal`);
      problems.push(...missingTriggers(c));
      for (const check of CONSISTENCY_CHECKS) {
        for (const row of c.st(check.sql).all() as Record<string, unknown>[])
          problems.push(check.problem(row));
      }
      return problems;
    },

    async verify() {
      const problems = pageCheck(c, "quick_check");
      if (problems.length > 0 && c.path !== ":memory:")
        markDamaged(c.path, problems, c.clock.now());
      return [...problems, ...missingTriggers(c)];
    },

    async backup(file) {
      await c.db.backup(file);
    },
  };
}

/**
 * What SQLite's `integrity_check` or `quick_check` finds wrong, each line prefixed by the check. A
 * file too damaged to be checked (SQLITE_CORRUPT, SQLITE_NOTADB thrown) is one such line.
 */
function pageCheck(c: SqliteConnection, pragma: "integrity_check" | "quick_check"): string[] {
  let rows: Record<string, string>[];
  try {
    rows = c.db.pragma(pragma) as Record<string, string>[];
  } catch (e) {
    if (!isDamageError(e)) throw e;
    return [`${pragma}: ${(e as Error).message}`];
  }
  return rows
    .map((r) => r[pragma] as string)
    .filter((r) => r !== "ok")
    .map((r) => `${pragma}: ${r}`);
}

/** Each immutability trigger the journal lacks, as a problem. */
function missingTriggers(c: SqliteConnection): string[] {
  const present = new Set(
    (c.st("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as { name: string }[]).map(
      (r) => r.name,
    ),
  );
  return TRIGGERS.filter((t) => !present.has(t)).map(missingTrigger);
}
