import { IdemError } from "@idem/schema";
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
 * @throws INTEGRITY for a database that is not (or no longer) a whole idem journal: see
 * `refuseForeignTables`.
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
      await refuseForeignTables(client, applied.size > 0);
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

/** Tables every idem journal has from its first migration on. */
const IDEM_TABLES = ["outputs", "runs", "effects", "events", "jobs", "rejections"];

/**
 * PostgreSQL's analogue of an empty or foreign SQLite file (docs/runbook.md, "A damaged journal"):
 * a database with some of idem's tables but no migration history was not made by idem (or had its
 * history removed), and migrating over it would mix two schemas; a history without the tables it
 * made means they were dropped. Either is refused, nothing changed.
 * @throws INTEGRITY naming what is wrong, never the URL.
 */
export async function refuseForeignTables(
  client: pg.PoolClient,
  hasHistory: boolean,
): Promise<void> {
  const { rows } = await client.query<{ name: string; present: boolean }>(
    "SELECT t AS name, to_regclass(t) IS NOT NULL AS present FROM unnest($1::text[]) AS t",
    [IDEM_TABLES],
  );
  const present = rows.filter((r) => r.present).map((r) => r.name);
  const missing = rows.filter((r) => !r.present).map((r) => r.name);
  if (!hasHistory && present.length > 0)
    throw new IdemError(
      "INTEGRITY",
      `the database has idem's tables (${present.join(", ")}) but not their migration history (__drizzle_migrations): it is not a journal idem made, so idem will not migrate over it. See docs/runbook.md, "A damaged journal"`,
      { details: { reason: "no-history", present } },
    );
  if (hasHistory && missing.length > 0)
    throw new IdemError(
      "INTEGRITY",
      `the journal's migration history is there but its tables ${missing.join(", ")} are not: they were dropped. See docs/runbook.md, "A damaged journal"`,
      { details: { reason: "tables-dropped", missing } },
    );
}
