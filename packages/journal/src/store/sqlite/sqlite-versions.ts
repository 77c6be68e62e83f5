import { createRequire } from "node:module";
import Database from "better-sqlite3";

/** The SQLite driver this process loads and the SQLite it was built with (`idem version`). */
export interface SqliteVersions {
  /** better-sqlite3's version, or null when the package cannot be found. */
  driver: string | null;
  /** `sqlite_version()` of an in-memory database, or null when the native driver does not load. */
  sqlite: string | null;
  /** Why `sqlite` is null: the package missing, or its native part absent or built for another Node. */
  error?: string;
}

/**
 * Reports the versions by opening an in-memory database, which proves the native driver loads in
 * this Node (a journal file could then be opened). Never throws: a failure is in `error`.
 */
export function sqliteVersions(): SqliteVersions {
  let driver: string | null = null;
  try {
    driver = (createRequire(import.meta.url)("better-sqlite3/package.json") as { version: string })
      .version;
  } catch {
    return { driver, sqlite: null, error: "better-sqlite3 is not installed" };
  }
  try {
    const db = new Database(":memory:");
    try {
      return {
        driver,
        sqlite: (db.prepare("select sqlite_version() as v").get() as { v: string }).v,
      };
    } finally {
      db.close();
    }
  } catch (e) {
    return {
      driver,
      sqlite: null,
      error: (e instanceof Error ? e.message : String(e)).split("\n")[0],
    };
  }
}
