import { isDamaged, readOutput } from "../../domain/output-damage.js";
import type { OutputRecord, OutputsPage, ReplaySelection } from "../../port/outputs.js";
import type { PostgresConnection } from "./connection.js";
import type { OutputRow } from "./rows.js";
import { type Condition, where } from "./where.js";

/**
 * The outputs a replay selection matches, in recording order (`outputs.select`), or one page of
 * them (`outputs.page`). Job IDs travel as one array parameter, so a selection of any size is one
 * statement. Each row is read distrusted (`readOutput`): a damaged one is left out, and a page reads
 * on past it.
 */
export async function selectOutputs(
  c: PostgresConnection,
  selection: ReplaySelection,
  page?: OutputsPage,
): Promise<OutputRecord[]> {
  if (selection.jobIds !== undefined && selection.jobIds.length === 0) return [];
  const conditions: Condition[] = [
    selection.jobIds !== undefined && ["o.job_id = ANY(?::text[])", [...new Set(selection.jobIds)]],
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
  const out: OutputRecord[] = [];
  let cursor = page === undefined ? 0 : "beforeSeq" in page ? page.beforeSeq : page.afterSeq;
  for (;;) {
    const asked = page ? Math.floor(page.limit) - out.length : 0;
    const w = where(
      page ? [...conditions, [newest ? "o.seq < ?" : "o.seq > ?", cursor]] : conditions,
    );
    const rows = await c.query<OutputRow>(
      `SELECT o.* FROM outputs o ${w.sql} ORDER BY o.seq${newest ? " DESC" : ""} ${page ? `LIMIT ${asked}` : ""}`,
      w.args,
    );
    for (const row of rows) {
      const o = readOutput(row);
      if (!isDamaged(o)) out.push(o);
    }
    // A page left short by damaged rows reads on past them.
    const last = rows.at(-1);
    if (!page || !last || out.length >= page.limit || rows.length < asked) return out;
    cursor = last.seq;
  }
}
