// node-postgres is imported when a PostgreSQL journal is first opened, never at start-up: every
// caller of @idem/journal's index (an `idem status` on SQLite among them) loads this adapter's
// modules, and none of them loads pg unless it opens a PostgreSQL journal.
import type pg from "pg";

let driver: typeof pg | undefined;

/** node-postgres, imported on the first call (then the same module). */
export async function loadPg(): Promise<typeof pg> {
  driver ??= (await import("pg")).default;
  return driver;
}

/**
 * Whether `e` is an error the PostgreSQL server sent (it has a SQLSTATE). False while pg is not
 * loaded: no connection exists then to have answered one. Pure; never throws.
 */
export function isDatabaseError(e: unknown): e is pg.DatabaseError {
  return driver !== undefined && e instanceof driver.DatabaseError;
}
