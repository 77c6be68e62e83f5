import type { Config } from "./config.js";

/** Where a journal lives: a SQLite file by its path, or a PostgreSQL database by its URL. */
export type JournalLocation = { path: string } | { url: string };

/**
 * Where a loaded config's journal is: `{ url }` when `journal.url` (or `IDEM_JOURNAL_URL`, which
 * `parseConfig` already let win) names a PostgreSQL database, else `{ path }`, the SQLite file
 * (absolute: `parseConfig` resolved it against the config's folder). The one reading of those two
 * keys, for every front end that opens or names the journal. Pure.
 */
export function journalLocationOf(config: Pick<Config, "journal">): JournalLocation {
  return config.journal.url === null ? { path: config.journal.path } : { url: config.journal.url };
}
