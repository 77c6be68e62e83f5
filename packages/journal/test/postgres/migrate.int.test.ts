import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isIdemError } from "@idem/schema";
import { ignoreServerShutdown, type PostgresHandle, startPostgres } from "@idem/testing";
import { readMigrationFiles } from "drizzle-orm/migrator";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/store/postgres/migrate.js";
import { PostgresJournalStore } from "../../src/store/postgres/postgres-journal-store.js";

const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), "../../migrations-pg");

describe("PostgreSQL only (SQLite migrates its file under its own write lock): the journal's migrations", () => {
  let server: PostgresHandle;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("are applied once when two hosts migrate one fresh database at the same time", async () => {
    const url = await server.createDatabase("migrate_race");
    const a = new pg.Pool({ connectionString: url, max: 1 });
    const b = new pg.Pool({ connectionString: url, max: 1 });
    a.on("error", ignoreServerShutdown);
    b.on("error", ignoreServerShutdown);
    try {
      const applied = await Promise.all([migrate(a, MIGRATIONS), migrate(b, MIGRATIONS)]);
      const total = readMigrationFiles({ migrationsFolder: MIGRATIONS }).length;
      expect(total).toBeGreaterThanOrEqual(2);
      // One of them applied everything, the other found it done.
      expect([...applied].sort()).toEqual([0, total]);
      const rows = await a.query("SELECT count(*)::int AS n FROM __drizzle_migrations");
      expect(rows.rows[0].n).toBe(total);
      expect(await migrate(a, MIGRATIONS)).toBe(0);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it("make outputs, rejections and events immutable, and let only a prune delete them", async () => {
    const url = await server.createDatabase("migrate_triggers");
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on("error", ignoreServerShutdown);
    try {
      await migrate(pool, MIGRATIONS);
      await pool.query(
        `INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at)
         VALUES ('j1', 'a', 'h', '{}', 'cli', 1)`,
      );
      await pool.query("INSERT INTO events (at, job_id, type, actor) VALUES (1, 'j1', 't', 'x')");
      await pool.query(
        "INSERT INTO rejections (job_id, content_hash, body, source, at) VALUES ('j1', 'h2', '{}', 'cli', 1)",
      );
      const refused = async (statement: string) => {
        const e = await pool.query(statement).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(e, statement).toBeInstanceOf(pg.DatabaseError);
        expect((e as pg.DatabaseError).code, statement).toBe("23001");
      };
      await refused("UPDATE outputs SET body = '{\"x\":1}' WHERE job_id = 'j1'");
      await refused("DELETE FROM outputs WHERE job_id = 'j1'");
      await refused("UPDATE events SET type = 'u'");
      await refused("DELETE FROM events");
      await refused("UPDATE rejections SET body = 'x'");
      await refused("DELETE FROM rejections");
      await refused("TRUNCATE outputs");

      // A prune's own transaction, with its guard row, may delete; no one else sees the guard.
      const pruner = await pool.connect();
      try {
        await pruner.query("BEGIN");
        await pruner.query("INSERT INTO prune_guard (id) VALUES (1)");
        await refused("DELETE FROM events");
        await pruner.query("DELETE FROM events WHERE job_id = 'j1'");
        await pruner.query("DELETE FROM rejections WHERE job_id = 'j1'");
        await pruner.query("DELETE FROM outputs WHERE job_id = 'j1'");
        await pruner.query("DELETE FROM prune_guard");
        await pruner.query("COMMIT");
      } finally {
        pruner.release();
      }
      const left = await pool.query("SELECT count(*)::int AS n FROM outputs");
      expect(left.rows[0].n).toBe(0);
      await pool.query(
        "INSERT INTO runs (job_id, generation, state, created_at, updated_at) VALUES ('j2', 1, 'done', 1, 1)",
      );
      await refused("DELETE FROM runs");
    } finally {
      await pool.end();
    }
  });

  it("refuse a database with idem's tables but no migration history, and one whose tables were dropped, changing nothing", async () => {
    // The analogue of an empty or foreign SQLite file (docs/runbook.md, "A damaged journal").
    const url = await server.createDatabase("migrate_foreign");
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on("error", ignoreServerShutdown);
    try {
      await migrate(pool, MIGRATIONS);
      await pool.query("DROP TABLE __drizzle_migrations");
      const refusal = (e: unknown) =>
        isIdemError(e, "INTEGRITY") ? (e.details as { reason: string }).reason : e;
      expect(await migrate(pool, MIGRATIONS).catch(refusal)).toBe("no-history");
      expect(await PostgresJournalStore.open(url).catch(refusal)).toBe("no-history");
      expect(await PostgresJournalStore.open(url, { readonly: true }).catch(refusal)).toBe(
        "no-history",
      );
      // Refused in the migration's transaction: nothing was created.
      const history = await pool.query("SELECT to_regclass('__drizzle_migrations') AS t");
      expect(history.rows[0].t).toBeNull();

      const dropped = await server.createDatabase("migrate_dropped");
      await (await PostgresJournalStore.open(dropped)).close();
      const other = new pg.Pool({ connectionString: dropped, max: 1 });
      other.on("error", ignoreServerShutdown);
      try {
        await other.query("DROP TABLE rejections");
      } finally {
        await other.end();
      }
      expect(await PostgresJournalStore.open(dropped).catch(refusal)).toBe("tables-dropped");
      // An empty database is a new journal, as before.
      const fresh = await server.createDatabase("migrate_fresh");
      await (await PostgresJournalStore.open(fresh)).close();
    } finally {
      await pool.end();
    }
  });
});
