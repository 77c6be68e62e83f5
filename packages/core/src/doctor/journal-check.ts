import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { type JournalStore, openJournalStore } from "@idem/journal";
import { type Config, isIdemError, journalLocationOf, redactUrl } from "@idem/schema";
import { checkDamagedOutputs } from "./damaged-outputs-check.js";
import type { AddFinding } from "./finding.js";
import { checkQueuedAgents } from "./queued-agents-check.js";
import { checkRejectedBodies } from "./rejections-check.js";
import { checkWritableDir, nearestExisting } from "./target-checks.js";

/**
 * The journal's part of doctor: that it exists (a missing one is a warning, not created), that it
 * opens (a file that is empty, not a journal or damaged is a violation) and passes
 * `journal.maintenance.integrity()` (whose verdict on SQLite marks the journal damaged, or clears
 * an earlier mark), its queued jobs for agents no configured agent matches, its damaged output rows
 * (each a violation), the conflicting bodies it did not keep, its durability setting and archive
 * folder.
 * Changes nothing in the journal; never throws (an unopenable journal is a violation).
 */
export async function checkJournal(config: Config, add: AddFinding): Promise<void> {
  const at = journalLocationOf(config);
  const path = "url" in at ? redactUrl(at.url) : at.path;
  if ("path" in at && !existsSync(path)) {
    add(
      "warning",
      "journal.path",
      `no journal at ${path} yet`,
      "create it for this config with `idem init --journal` (the config is kept), or point --config at the config of the journal you mean",
    );
    checkWritableDir("journal.path", dirname(nearestExisting(path)), "journal folder", add);
    return;
  }
  let problems: string[];
  try {
    const journal: JournalStore =
      "url" in at
        ? await openJournalStore(at, { readonly: true })
        : // A journal marked damaged is checked again: a pass clears the mark (integrity()).
          await openJournalStore(at, {
            synchronous: config.journal.synchronous,
            allowDamaged: true,
          });
    try {
      problems = await journal.maintenance.integrity();
      await checkQueuedAgents(journal, config, add);
      await checkDamagedOutputs(journal, config, add);
      await checkRejectedBodies(journal, add);
    } finally {
      await journal.close();
    }
  } catch (e) {
    if ("url" in at && isIdemError(e, "NOT_FOUND")) {
      add(
        "warning",
        "journal.url",
        e.message,
        "create the tables with `idem init --journal` (the config is kept; the database must exist)",
      );
      return;
    }
    add(
      "violation",
      "journal",
      `cannot open ${path}: ${(e as Error).message}`,
      'restore it from the latest `idem backup` (docs/runbook.md, "A damaged journal")',
    );
    return;
  }
  for (const p of problems) {
    add("violation", "journal", p, journalFix(p));
  }
  const sync = config.journal.synchronous;
  if ("path" in at && (sync === "OFF" || sync === "NORMAL")) {
    add(
      "warning",
      "journal.synchronous",
      `synchronous is ${config.journal.synchronous}: a host crash can lose the last commits, and with them recorded outputs`,
      'set journal.synchronous to "FULL" unless you accept that',
    );
  }
  if (config.journal.retentionDays !== null && existsSync(config.journal.archiveDir)) {
    checkWritableDir("journal.archiveDir", config.journal.archiveDir, "archive folder", add);
  }
}

function journalFix(problem: string): string {
  if (/^(fsync|synchronous_commit|full_page_writes) is /.test(problem)) {
    const setting = problem.split(" ")[0];
    return `set ${setting} = on on the PostgreSQL server (ALTER SYSTEM, or ALTER ROLE ... RESET ${setting} when a role overrides it) and reload`;
  }
  if (problem.startsWith("integrity_check"))
    return 'every command but doctor now refuses it: stop idem, restore the latest `idem backup` (docs/runbook.md, "A damaged journal"), then `idem audit` for what came after';
  if (problem.startsWith("journal_mode"))
    return "open it once with any idem command (it sets WAL), and make sure nothing else opens it in another mode";
  if (problem.startsWith("trigger"))
    return "something dropped an immutability trigger: restore from a backup; never edit the journal by hand";
  if (problem.includes("unsettled effect"))
    return "replay that job (`idem replay --job JOB --dry-run`, then without --dry-run) and report it as a bug";
  if (problem.includes("has no run"))
    return "replay that job (`idem replay --job JOB`) to give it a run";
  return "see docs/runbook.md";
}
