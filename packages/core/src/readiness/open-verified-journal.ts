import { type JournalStore, openJournalStore } from "@idem/journal";
import { type Config, journalLocationOf } from "@idem/schema";
import { verifyJournal } from "../doctor/verify-journal.js";

/**
 * Opens the config's journal for a process that serves (executor, interpreter, console) and checks
 * it first (`verifyJournal`): a damaged journal is refused before any work is taken.
 * @throws INTEGRITY for a damaged journal (it is closed); the open's errors as they are.
 */
export async function openVerifiedJournal(config: Config): Promise<JournalStore> {
  const journal = await openJournalStore(journalLocationOf(config), {
    synchronous: config.journal.synchronous,
    create: false,
  });
  try {
    await verifyJournal(journal);
  } catch (e) {
    await journal.close().catch(() => {});
    throw e;
  }
  return journal;
}
