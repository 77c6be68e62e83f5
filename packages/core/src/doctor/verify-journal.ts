import type { JournalStore } from "@idem/journal";
import { IdemError } from "@idem/schema";

/**
 * What a process that serves (the executor, the interpreter, the console) checks of its journal
 * before it takes any work: `journal.maintenance.verify()` (SQLite's `quick_check` and the
 * immutability triggers; PostgreSQL's triggers). A SQLite journal that fails is marked damaged, so
 * every later command refuses it too until `idem doctor` finds it sound (docs/runbook.md, "A
 * damaged journal").
 * @throws INTEGRITY naming the journal, the first problems and the runbook entry.
 */
export async function verifyJournal(journal: JournalStore): Promise<void> {
  const problems = await journal.maintenance.verify();
  if (problems.length === 0) return;
  const shown = problems.slice(0, 3).join("; ");
  const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : "";
  throw new IdemError(
    "INTEGRITY",
    `the journal ${journal.location} failed its check: ${shown}${more}; idem will not use it. See docs/runbook.md, "A damaged journal"`,
    { details: { journal: journal.location, problems } },
  );
}
