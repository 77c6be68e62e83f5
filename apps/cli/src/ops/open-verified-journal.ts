import { verifyJournal } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import type { Config } from "@idem/schema";
import { openConfiguredJournal } from "../context.js";

/**
 * Opens the config's journal for a process that serves (executor, interpreter, console) and checks
 * it first (`verifyJournal`): a damaged journal is refused before any work is taken.
 * @throws INTEGRITY for a damaged journal (it is closed); the open's errors as they are.
 */
export async function openVerifiedJournal(config: Config): Promise<JournalStore> {
  const journal = await openConfiguredJournal(config);
  try {
    await verifyJournal(journal);
  } catch (e) {
    await journal.close().catch(() => {});
    throw e;
  }
  return journal;
}
