import { type JournalStore, missingJournal, openJournalStore } from "@idem/journal";
import { type Config, isIdemError, journalLocationOf, redactUrl } from "@idem/schema";

/**
 * Runs `fn` with the config's journal opened read-only: nothing it does can write, so a reading
 * command (`idem status`, `idem jobs`, `idem show`), a dry run or an audit leaves the journal as it
 * was, and never makes a journal or its tables as a side effect. SQLite: the file opened read-only.
 * PostgreSQL: every session `default_transaction_read_only`, so the server itself refuses a write.
 * A missing SQLite file, or a PostgreSQL database without the journal's tables, is INTEGRITY
 * (exit 3) naming where and docs/runbook.md "A lost journal".
 */
export async function withExistingJournal<T>(
  config: Config,
  fn: (journal: JournalStore) => Promise<T>,
): Promise<T> {
  const at = journalLocationOf(config);
  let journal: JournalStore;
  try {
    journal = await openJournalStore(at, { readonly: true });
  } catch (e) {
    if ("url" in at && isIdemError(e, "NOT_FOUND"))
      throw missingJournal(redactUrl(at.url), "no journal tables in");
    throw e;
  }
  try {
    return await fn(journal);
  } finally {
    await journal.close();
  }
}
