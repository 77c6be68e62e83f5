import type Database from "better-sqlite3";
import { isDamaged, readOutput } from "../../domain/output-damage.js";
import type { OutputRowShape } from "../../domain/records.js";
import type {
  OutputRecord,
  OutputSource,
  OutputsPage,
  ReplaySelection,
} from "../../port/outputs.js";
import { type Condition, placeholders, where } from "./where.js";

/** One `outputs` row as an array, in the column order of `OUTPUT_COLUMNS`. */
export type OutputTuple = [
  number,
  string,
  string,
  string,
  string,
  OutputSource,
  number,
  string | null,
];

export const OUTPUT_COLUMNS =
  "o.seq, o.job_id, o.agent, o.content_hash, o.body, o.source, o.recorded_at, o.traceparent";
/** Job IDs bound in one statement: well under SQLite's bound-parameter limit, with room to spare. */
const IDS_PER_STATEMENT = 5000;

/**
 * The outputs a replay selection matches, in recording order (`outputs.select`), or one page
 * of them (`outputs.page`). Rows are read as arrays (better-sqlite3 raw mode) and each body is read
 * once (`readOutput`: a damaged row is left out, and a page reads on past it). A replay plan starts
 * with this read.
 */
export function selectOutputs(
  db: Database.Database,
  selection: ReplaySelection,
  page?: OutputsPage,
): OutputRecord[] {
  if (selection.jobIds !== undefined && selection.jobIds.length === 0) return [];
  if (selection.jobIds !== undefined && selection.jobIds.length > IDS_PER_STATEMENT) {
    // A selection of any size: one statement per chunk of IDs, merged in recording order (each
    // chunk's first page holds every row of the merged first page that the chunk matches).
    const ids = [...new Set(selection.jobIds)];
    const parts: OutputRecord[][] = [];
    for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) {
      const chunk = ids.slice(i, i + IDS_PER_STATEMENT);
      parts.push(selectOutputs(db, { ...selection, jobIds: chunk }, page));
    }
    const newest = page !== undefined && "beforeSeq" in page;
    const merged = parts.flat().sort((a, b) => (newest ? b.seq - a.seq : a.seq - b.seq));
    return page ? merged.slice(0, Math.max(0, page.limit)) : merged;
  }
  const conditions: Condition[] = [
    selection.jobIds !== undefined && [
      `o.job_id IN (${placeholders(selection.jobIds.length)})`,
      ...selection.jobIds,
    ],
    selection.agent !== undefined && ["o.agent = ?", selection.agent],
    selection.since !== undefined && ["o.recorded_at >= ?", selection.since],
    selection.state !== undefined && [
      "(SELECT state FROM runs WHERE job_id = o.job_id ORDER BY generation DESC LIMIT 1) = ?",
      selection.state,
    ],
  ];
  if (!selection.all && !conditions.some(Boolean)) return [];
  if (page !== undefined && page.limit <= 0) return [];
  // A page reads on from a seq, in recording order, or back from one, newest first.
  const newest = page !== undefined && "beforeSeq" in page;
  const filter = where(conditions);
  const statement = db
    .prepare(
      `SELECT ${OUTPUT_COLUMNS} FROM outputs o ${filter.sql}${page ? `${filter.sql ? " AND" : " WHERE"} o.seq ${newest ? "<" : ">"} ?` : ""} ORDER BY o.seq${newest ? " DESC" : ""}${page ? " LIMIT ?" : ""}`,
    )
    .raw(true);
  const out: OutputRecord[] = [];
  let cursor = page === undefined ? 0 : "beforeSeq" in page ? page.beforeSeq : page.afterSeq;
  for (;;) {
    const asked = page ? page.limit - out.length : 0;
    const rows = statement.all(
      ...(page ? [...filter.args, cursor, asked] : filter.args),
    ) as OutputTuple[];
    for (const row of rows) {
      const o = readOutput(outputRowOf(row));
      if (!isDamaged(o)) out.push(o);
    }
    // A page left short by damaged rows reads on past them.
    const last = rows.at(-1);
    if (!page || !last || out.length >= page.limit || rows.length < asked) return out;
    cursor = last[0];
  }
}

/** A row read as an array, keyed by column name again. */
export function outputRowOf(row: OutputTuple): OutputRowShape {
  const [seq, job_id, agent, content_hash, body, source, recorded_at, traceparent] = row;
  return { seq, job_id, agent, content_hash, body, source, recorded_at, traceparent };
}
