import type Database from "better-sqlite3";
import type { WriteDurability } from "../../port/durability.js";

/**
 * The rowid an `INSERT ... ON CONFLICT DO NOTHING` inserted, or undefined when it inserted nothing.
 * Cheaper than RETURNING, which materializes a result row.
 */
export const insertedRowid = (r: Database.RunResult): number | undefined =>
  r.changes === 1 ? Number(r.lastInsertRowid) : undefined;
/** A value as stored in a JSON text column: null for none. */
export const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

/** Rows per page of a bulk read: between two pages the event loop runs (other work waits on it). */
const PAGE_ROWS = 2000;

/** A table read in pages by its integer primary key (the first column), yielding between pages. */
export async function* pagesOf<R extends [number, ...unknown[]]>(statement: {
  all(...params: unknown[]): unknown[];
}): AsyncGenerator<R[]> {
  for (let after = 0; ; ) {
    const rows = statement.all(after, PAGE_ROWS) as R[];
    yield rows;
    if (rows.length < PAGE_ROWS) return;
    after = (rows[rows.length - 1] as R)[0];
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The connection's durability for a write asked for with `durability` (see WriteDurability). */
export const durableAs = (durability: WriteDurability | undefined): true | "soon" =>
  durability?.soon ? "soon" : true;
