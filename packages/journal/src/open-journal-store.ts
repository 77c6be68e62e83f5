import type { JournalLocation } from "@idem/schema";
import type { JournalStore } from "./journal-store.js";
import type { SqliteJournalOptions } from "./store/sqlite/connection.js";
import { openSqliteJournal } from "./store/sqlite/sqlite-journal-store.js";

export type { JournalLocation } from "@idem/schema";

/** What both stores take when opened through `openJournalStore`. */
export interface OpenJournalStoreOptions {
  /**
   * Nothing it does can write. SQLite: the file opened read-only (it must exist). PostgreSQL:
   * every session in `default_transaction_read_only` (the server refuses any write) and no
   * migration; a database without the journal's tables is NOT_FOUND.
   */
  readonly?: boolean;
  /** SQLite's durability (ignored on PostgreSQL, whose durability is the server's settings). */
  synchronous?: SqliteJournalOptions["synchronous"];
  /**
   * SQLite: opens a journal marked damaged, for `idem doctor` and `idem backup` only (see
   * `SqliteJournalOptions.allowDamaged`). Ignored on PostgreSQL.
   */
  allowDamaged?: boolean;
}

/**
 * Opens the journal at `location` with the adapter its form names: `{ path }` SQLite (created
 * with its migrations when missing, unless read-only), `{ url }` PostgreSQL (migrated under the
 * advisory lock, unless read-only). Messages name a URL without its password. A file or database
 * that is not (or no longer) a whole idem journal is refused (docs/runbook.md, "A damaged journal").
 * @throws INTEGRITY for such a journal; the store's error when it cannot be opened or migrated.
 */
export async function openJournalStore(
  location: JournalLocation,
  options: OpenJournalStoreOptions = {},
): Promise<JournalStore> {
  if ("url" in location) {
    // Imported when a PostgreSQL journal is opened: what reaches the stores only through this
    // function (the packed CLI's bundle) loads the pg client for PostgreSQL only.
    const { PostgresJournalStore } = await import("./store/postgres/postgres-journal-store.js");
    return PostgresJournalStore.open(location.url, {
      ...(options.readonly !== undefined && { readonly: options.readonly }),
    });
  }
  return openSqliteJournal(location.path, {
    ...(options.readonly !== undefined && { readonly: options.readonly }),
    ...(options.allowDamaged !== undefined && { allowDamaged: options.allowDamaged }),
    ...(options.synchronous !== undefined && { synchronous: options.synchronous }),
  });
}
