import { readMigrationFiles } from "drizzle-orm/migrator";
import type pg from "pg";

/** The advisory lock every host takes to migrate one journal: one number, the same everywhere. */
export const MIGRATION_LOCK = 0x1de3_0018;

/**
 * Applies pending drizzle-kit migrations (migrations-pg) in one transaction that first takes a
 * transaction-scoped advisory lock (`pg_advisory_xact_lock`): hosts opening a new journal at once
 * serialize on it, and the second finds the work done. PostgreSQL's DDL is transactional, so a host
 * killed mid-way leaves nothing half applied; the lock goes with its connection. Returns how many
 * migrations this call applied.
 */
export async function migrate(pool: pg.Pool, migrationsFolder: string): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder });
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
      await client.query(
        "CREATE TABLE IF NOT EXISTS __drizzle_migrations (id serial PRIMARY KEY, hash text NOT NULL, created_at bigint)",
      );
      const done = await client.query<{ created_at: string }>(
        "SELECT created_at FROM __drizzle_migrations",
      );
      const applied = new Set(done.rows.map((r) => Number(r.created_at)));
      let count = 0;
      for (const m of migrations) {
        if (applied.has(m.folderMillis)) continue;
        for (const statement of m.sql) if (statement.trim() !== "") await client.query(statement);
        await client.query("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ($1, $2)", [
          m.hash,
          m.folderMillis,
        ]);
        count += 1;
      }
      await client.query("COMMIT");
      return count;
    } catch (e) {
      await client.query("ROLLBACK");
      throw e;
    }
  } finally {
    client.release();
  }
}
