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
  /**
   * Whether a missing journal (SQLite: the file; PostgreSQL: the tables) is created, the default.
   * False: it is refused, INTEGRITY with `details.reason` `missing`, naming where and
   * docs/runbook.md "A lost journal", and nothing is created: every command but `idem init`
   * opens with false, so a journal that disappeared is never made anew, empty. A read-only open
   * never creates.
   */
  create?: boolean;
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
 * with its migrations when missing, unless read-only or `create: false`), `{ url }` PostgreSQL
 * (its tables created or migrated under the advisory lock, unless read-only; with `create: false`
 * only migrated when they are there). Messages name a URL without its password. A file or database
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
      ...(options.create !== undefined && { create: options.create }),
    });
  }
  return openSqliteJournal(location.path, {
    ...(options.readonly !== undefined && { readonly: options.readonly }),
    ...(options.create !== undefined && { create: options.create }),
    ...(options.allowDamaged !== undefined && { allowDamaged: options.allowDamaged }),
    ...(options.synchronous !== undefined && { synchronous: options.synchronous }),
  });
}
