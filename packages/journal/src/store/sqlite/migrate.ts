import type Database from "better-sqlite3";
import { readMigrationFiles } from "drizzle-orm/migrator";

/**
 * Applies pending drizzle-kit migrations under SQLite's write lock (BEGIN IMMEDIATE), so two
 * processes opening a new journal at once serialize: the second finds the work done. drizzle's own
 * migrator reads the applied set before it takes the lock, which races.
 */
export function migrate(db: Database.Database, migrationsFolder: string): number {
  const migrations = readMigrationFiles({ migrationsFolder });
  const run = db.transaction(() => {
    db.exec(
      "CREATE TABLE IF NOT EXISTS __drizzle_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL, created_at NUMERIC)",
    );
    const applied = new Set(
      (
        db.prepare("SELECT created_at FROM __drizzle_migrations").all() as { created_at: number }[]
      ).map((r) => Number(r.created_at)),
    );
    let count = 0;
    for (const m of migrations) {
      if (applied.has(m.folderMillis)) continue;
      for (const statement of m.sql) if (statement.trim() !== "") db.exec(statement);
      db.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)").run(
        m.hash,
        m.folderMillis,
      );
      count += 1;
    }
    return count;
  });
  return run.immediate();
}
