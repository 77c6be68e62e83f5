import type { JournalStatus, JournalStore } from "@idem/journal";

/**
 * `idem status`: counts of outputs, latest runs by state, effects by state, rejections, dead
 * letters and jobs by state. Read-only; journal errors propagate.
 */
export function readStatus(journal: JournalStore): Promise<JournalStatus> {
  return journal.status();
}
