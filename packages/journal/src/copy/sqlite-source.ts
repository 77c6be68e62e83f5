import { existsSync } from "node:fs";
import { IdemError } from "@idem/schema";
import type Database from "better-sqlite3";
import { SqliteJournalStore } from "../store/sqlite/sqlite-journal-store.js";
import { TableDigest } from "./digest.js";
import { COPY_TABLES, type CopyTable, columnList } from "./tables.js";

/** A lease some process may still hold: a running run or job whose lease ends after now. */
export interface HeldLeases {
  runs: number;
  jobs: number;
  owners: string[];
  /** When the last of them ends (epoch ms), or null when none is held. */
  until: number | null;
}

/**
 * The SQLite journal a copy reads, opened read-only: the copy never writes it (not even a
 * migration), so a journal from an older idem is refused with what to run.
 */
export class SqliteSource {
  private readonly stmts = new Map<string, Database.Statement>();

  private constructor(
    private readonly store: SqliteJournalStore,
    readonly path: string,
  ) {}

  /** @throws NOT_FOUND when no file is there; INVALID_STATE when its schema is older than this idem's. */
  static open(path: string): SqliteSource {
    if (!existsSync(path)) throw new IdemError("NOT_FOUND", `no SQLite journal at ${path}`);
    const source = new SqliteSource(SqliteJournalStore.open(path, { readonly: true }), path);
    try {
      source.checkSchema();
    } catch (e) {
      void source.close();
      throw e;
    }
    return source;
  }

  private get db(): Database.Database {
    return this.store.database;
  }

  private st(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  private checkSchema(): void {
    for (const t of COPY_TABLES) {
      const have = new Set(
        (this.db.prepare(`PRAGMA table_info("${t.name}")`).all() as { name: string }[]).map(
          (c) => c.name,
        ),
      );
      const missing = t.columns.find(([c]) => !have.has(c));
      if (missing !== undefined) {
        throw new IdemError(
          "INVALID_STATE",
          `the journal at ${this.path} has no column ${t.name}.${missing[0]}: it was written by an older idem; run \`idem status\` with this version once (it migrates the file), then copy`,
          { details: { table: t.name, column: missing[0] } },
        );
      }
    }
  }

  /** Runs and jobs under a lease that has not ended by `now` (a live process may hold it). */
  heldLeases(now: number): HeldLeases {
    const held = (table: string) =>
      this.st(
        `SELECT COUNT(*) AS n, MAX(lease_until) AS until, group_concat(DISTINCT lease_owner) AS owners
         FROM ${table} WHERE state = 'running' AND lease_until > ?`,
      ).get(now) as { n: number; until: number | null; owners: string | null };
    const runs = held("runs");
    const jobs = held("jobs");
    const owners = new Set(
      [runs.owners, jobs.owners].flatMap((o) => (o === null ? [] : o.split(","))),
    );
    const until = Math.max(runs.until ?? 0, jobs.until ?? 0);
    return { runs: runs.n, jobs: jobs.n, owners: [...owners].sort(), until: until || null };
  }

  /** Rows of a table. */
  count(t: CopyTable): number {
    return (this.st(`SELECT COUNT(*) AS n FROM "${t.name}"`).get() as { n: number }).n;
  }

  /** Rows whose single-column key is at most `key` (to tell whether a target is a prefix). */
  countUpTo(t: CopyTable, key: unknown): number {
    const [k] = t.key;
    return (
      this.st(`SELECT COUNT(*) AS n FROM "${t.name}" WHERE "${k}" <= ?`).get(key) as { n: number }
    ).n;
  }

  /** The next `limit` rows after `after` (a key, or undefined for the first), in key order, as arrays. */
  batch(t: CopyTable, after: readonly unknown[] | undefined, limit: number): unknown[][] {
    const keys = t.key.map((k) => `"${k}"`).join(", ");
    const where =
      after === undefined ? "" : `WHERE (${keys}) > (${t.key.map(() => "?").join(", ")})`;
    return this.st(`SELECT ${columnList(t)} FROM "${t.name}" ${where} ORDER BY ${keys} LIMIT ?`)
      .raw(true)
      .all(...(after ?? []), limit) as unknown[][];
  }

  /** The row with this key, as an array, or undefined. */
  row(t: CopyTable, key: readonly unknown[]): unknown[] | undefined {
    const where = t.key.map((k) => `"${k}" = ?`).join(" AND ");
    return this.st(`SELECT ${columnList(t)} FROM "${t.name}" WHERE ${where}`)
      .raw(true)
      .get(...key) as unknown[] | undefined;
  }

  /**
   * Counts and content hashes of every table, read in one read transaction (one snapshot of the
   * file, whatever another process commits meanwhile).
   */
  digests(): Map<string, { rows: number; sha256: string }> {
    const out = new Map<string, { rows: number; sha256: string }>();
    this.db.transaction(() => {
      for (const t of COPY_TABLES) {
        const d = new TableDigest();
        const keys = t.key.map((k) => `"${k}"`).join(", ");
        const rows = this.db
          .prepare(`SELECT ${columnList(t)} FROM "${t.name}" ORDER BY ${keys}`)
          .raw(true)
          .iterate() as IterableIterator<unknown[]>;
        for (const r of rows) d.add(r);
        out.set(t.name, d.finish());
      }
    })();
    return out;
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
