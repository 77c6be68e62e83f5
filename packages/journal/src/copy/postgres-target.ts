import { IdemError } from "@idem/schema";
import type pg from "pg";
import { PostgresConnection } from "../store/postgres/connection.js";
import { TableDigest } from "./digest.js";
import { COPY_TABLES, type CopyTable, columnList } from "./tables.js";

/** The advisory lock a copy holds on its target for its whole run: one copy into a database at a time. */
export const COPY_LOCK = 0x1de3_c0b1;

/** Text keys compare by bytes, as SQLite's BINARY collation does: the same order on both sides. */
const keyExpr = (t: CopyTable) =>
  t.key.map((k) => {
    const type = t.columns.find(([c]) => c === k)?.[1];
    return type === "text" ? `"${k}" COLLATE "C"` : `"${k}"`;
  });

/** `WHERE key > after` for the keys of a table, as a disjunction (row values and collations mix badly). */
function after(t: CopyTable, first: number): string {
  const keys = keyExpr(t);
  const terms = keys.map((k, i) => {
    const eq = keys.slice(0, i).map((e, j) => `${e} = $${first + j}`);
    return [...eq, `${k} > $${first + i}`].join(" AND ");
  });
  return `(${terms.map((x) => `(${x})`).join(" OR ")})`;
}

/**
 * The PostgreSQL journal a copy writes: migrated on open (an empty database becomes an empty
 * journal), written only by INSERT ... ON CONFLICT (key) DO NOTHING, one transaction per batch, so
 * the immutability triggers (UPDATE and DELETE) never fire and a batch is in or out as a whole.
 */
export class PostgresTarget {
  private constructor(
    private readonly c: PostgresConnection,
    private readonly lock: pg.PoolClient,
  ) {}

  /** The URL without its password. */
  get location(): string {
    return this.c.location;
  }

  /**
   * Connects, migrates and takes the copy's advisory lock on a connection of its own.
   * @throws LOCKED when another copy into this database is running.
   */
  static async open(url: string): Promise<PostgresTarget> {
    const c = await PostgresConnection.open(url, { max: 3 });
    let lock: pg.PoolClient | undefined;
    try {
      lock = await c.pool.connect();
      const { rows } = await lock.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [
        COPY_LOCK,
      ]);
      if (rows[0]?.ok !== true) {
        throw new IdemError(
          "LOCKED",
          `another idem journal copy is writing ${c.location}; wait for it to end (or stop it), then run again`,
        );
      }
      return new PostgresTarget(c, lock);
    } catch (e) {
      lock?.release();
      await c.close();
      throw e;
    }
  }

  async count(t: CopyTable): Promise<number> {
    const rows = await this.c.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM "${t.name}"`);
    return rows[0]?.n ?? 0;
  }

  /** The next `limit` rows after `from` (or the first), in the same key order as SQLite's. */
  async batch(t: CopyTable, from: readonly unknown[] | undefined, limit: number) {
    const where = from === undefined ? "" : `WHERE ${after(t, 1)}`;
    const values = [...(from ?? []), limit];
    const result = await this.c.pool.query<unknown[]>({
      text: `SELECT ${columnList(t)} FROM "${t.name}" ${where} ORDER BY ${keyExpr(t).join(", ")} LIMIT $${values.length}`,
      values,
      rowMode: "array",
    });
    return result.rows;
  }

  /**
   * Inserts a batch in one transaction; rows whose key is there already are left as they are.
   * `beforeCommit` runs inside the transaction, after the insert (a fault point).
   * @returns how many rows this batch inserted.
   */
  async insert(
    t: CopyTable,
    rows: readonly unknown[][],
    beforeCommit: () => void,
  ): Promise<number> {
    if (rows.length === 0) return 0;
    const arrays = t.columns.map((_, i) => rows.map((r) => r[i] ?? null));
    const unnest = t.columns.map(([, type], i) => `$${i + 1}::${type}[]`).join(", ");
    const keys = t.key.map((k) => `"${k}"`).join(", ");
    return this.c.tx(async (client) => {
      const r = await client.query(
        `INSERT INTO "${t.name}" (${columnList(t)}) SELECT * FROM unnest(${unnest}) ON CONFLICT (${keys}) DO NOTHING`,
        arrays,
      );
      beforeCommit();
      return r.rowCount ?? 0;
    });
  }

  /** Sets each identity sequence past the largest id copied, so new writes take fresh ids. */
  async continueSequences(): Promise<void> {
    for (const t of COPY_TABLES) {
      if (t.serial === undefined) continue;
      await this.c.query(
        `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST(COALESCE(MAX("${t.serial}"), 0), 1), MAX("${t.serial}") IS NOT NULL) FROM "${t.name}"`,
        [t.name, t.serial],
      );
    }
  }

  /** Count and content hash of one table, read in key order in pages of `page`. */
  async digest(t: CopyTable, page: number): Promise<{ rows: number; sha256: string }> {
    const d = new TableDigest();
    let from: unknown[] | undefined;
    for (;;) {
      const rows = await this.batch(t, from, page);
      for (const r of rows) d.add(r);
      if (rows.length < page) return d.finish();
      from = keyValues(t, rows[rows.length - 1] as unknown[]);
    }
  }

  /** Releases the copy lock and ends the pool. */
  async close(): Promise<void> {
    try {
      await this.lock.query("SELECT pg_advisory_unlock($1)", [COPY_LOCK]);
    } finally {
      this.lock.release();
      await this.c.close();
    }
  }
}

/** The key values of a row read as an array in copy order. */
export function keyValues(t: CopyTable, row: readonly unknown[]): unknown[] {
  return t.key.map((k) => row[t.columns.findIndex(([c]) => c === k)]);
}
