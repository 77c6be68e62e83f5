import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { type JournalStore, openJournalStore } from "@idem/journal";
import {
  type Config,
  isIdemError,
  type JournalLocation,
  journalLocationOf,
  redactUrl,
} from "@idem/schema";
import { journalLockHolders, leaseHoldersPastTime } from "../status/stuck-holders.js";
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
 * folder. Damage (INTEGRITY) is a violation; a server out of reach, a write lock held
 * by another process (named: pid, state, on this host) or any other failure to open is
 * `unavailable`, never taken for damage. A SQLite journal locked by a frozen process is checked
 * read-only.
 * Changes nothing in the journal; never throws.
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
  // A SQLite journal whose write lock a frozen process holds: named at once, and checked read-only
  // (readers are not blocked by a writer), instead of waiting the busy timeout out to fail.
  const frozen = "path" in at ? journalLockHolders(config) : [];
  for (const h of frozen) add("unavailable", "journal", h.finding, h.fix);
  let problems: string[];
  try {
    problems = await checkOpened(config, at, frozen.length > 0, add);
  } catch (e) {
    if (!isIdemError(e, "LOCKED") || !("path" in at)) {
      openFailure(e, path, at, add);
      return;
    }
    // Held past the busy timeout by a process that is not frozen (or not on this host).
    const holders = journalLockHolders(config, { any: true });
    for (const h of holders) add("unavailable", "journal", h.finding, h.fix);
    if (holders.length === 0) {
      add(
        "unavailable",
        "journal",
        `the journal's write lock stayed held past the busy timeout (${e.message}), by a process this host cannot see (another host of a shared file system?)`,
        "nothing says the journal is damaged: find the process that has it open (`fuser -v` on the journal and its -wal and -shm files) and let it finish or end it: the journal is whole",
      );
    }
    try {
      problems = await checkOpened(config, at, true, add);
    } catch (again) {
      openFailure(again, path, at, add);
      return;
    }
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

/**
 * Opens the journal (read-only when `readonly`, or on PostgreSQL) and answers what
 * `maintenance.integrity()` finds, after the queued-agents check.
 */
async function checkOpened(
  config: Config,
  at: JournalLocation,
  readonly: boolean,
  add: AddFinding,
): Promise<string[]> {
  const journal: JournalStore =
    "url" in at
      ? await openJournalStore(at, { readonly: true })
      : // A journal marked damaged is checked again: a pass clears the mark (integrity()).
        await openJournalStore(at, {
          synchronous: config.journal.synchronous,
          allowDamaged: true,
          ...(readonly && { readonly: true }),
        });
  try {
    const problems = await journal.maintenance.integrity();
    await checkQueuedAgents(journal, config, add);
    await checkDamagedOutputs(journal, config, add);
    await checkRejectedBodies(journal, add);
    for (const h of await leaseHoldersPastTime(journal)) {
      const stuck = h.state === "stopped" || h.state === "zombie";
      add(stuck ? "unavailable" : "warning", h.key, h.finding, h.fix);
    }
    return problems;
  } finally {
    await journal.close();
  }
}

/**
 * Why the journal did not open, told apart: only proven damage (INTEGRITY) leads to a backup; a
 * server out of reach or any other failure to open (permissions, a disk error) is `unavailable`.
 */
function openFailure(e: unknown, path: string, at: JournalLocation, add: AddFinding): void {
  const message = (e as Error).message;
  if ("url" in at && isIdemError(e, "NOT_FOUND")) {
    add(
      "warning",
      "journal.url",
      message,
      "create the tables with `idem init --journal` (the config is kept; the database must exist)",
    );
  } else if (isIdemError(e, "INTEGRITY")) {
    add(
      "violation",
      "journal",
      `cannot open ${path}: ${message}`,
      'it is damaged: restore it from the latest `idem backup` (docs/runbook.md, "A damaged journal")',
    );
  } else if (isIdemError(e, "UNAVAILABLE")) {
    add(
      "unavailable",
      "journal",
      `cannot reach the journal: ${message}`,
      'nothing says it is damaged: wait for the PostgreSQL server to come back, or bring it back (docs/runbook.md, "PostgreSQL is down"), then run `idem doctor` again: the journal is whole on the server',
    );
  } else {
    add(
      "unavailable",
      "journal",
      `cannot open ${path}: ${message}`,
      "nothing says it is damaged: check the file's permissions, the disk and its free space (`ls -l`, `df`), then run `idem doctor` again",
    );
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
