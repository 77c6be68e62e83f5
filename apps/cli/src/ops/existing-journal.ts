import { existsSync } from "node:fs";
import { type JournalStore, openJournalStore } from "@idem/journal";
import { type Config, isIdemError, journalLocationOf, redactUrl } from "@idem/schema";
import { CliError, EXIT } from "../exit.js";

/** The hint every command gives for a config whose journal does not exist yet. */
export const CREATE_JOURNAL_HINT =
  "create it with idem init --journal (the config is kept), or check --config";

/**
 * Runs `fn` with the config's journal opened read-only, refusing to create it: a reading command
 * (`idem status`, `idem jobs`, `idem show`) never makes a journal or its tables as a side effect.
 * A missing SQLite file, or a PostgreSQL database without the journal's tables, is exit 1 naming
 * `idem init --journal`.
 */
export async function withExistingJournal<T>(
  config: Config,
  fn: (journal: JournalStore) => Promise<T>,
): Promise<T> {
  const at = journalLocationOf(config);
  if ("path" in at && !existsSync(at.path)) {
    throw new CliError(`no journal at ${at.path}: ${CREATE_JOURNAL_HINT}`, EXIT.FAILED);
  }
  let journal: JournalStore;
  try {
    journal = await openJournalStore(at, { readonly: true });
  } catch (e) {
    if ("url" in at && isIdemError(e, "NOT_FOUND")) {
      throw new CliError(
        `no journal tables in ${redactUrl(at.url)}: ${CREATE_JOURNAL_HINT}`,
        EXIT.FAILED,
      );
    }
    throw e;
  }
  try {
    return await fn(journal);
  } finally {
    await journal.close();
  }
}
