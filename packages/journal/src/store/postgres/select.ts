import { toOutput } from "../../domain/records.js";
import type { OutputRecord, OutputsPage, ReplaySelection } from "../../port/outputs.js";
import type { PostgresConnection } from "./connection.js";
import type { OutputRow } from "./rows.js";
import { type Condition, where } from "./where.js";

/**
 * The outputs a replay selection matches, in recording order (`outputs.select`), or one page of
 * them (`outputs.page`). Job IDs travel as one array parameter, so a selection of any size is one
 * statement.
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
  let limit = "";
  const newest = page !== undefined && "beforeSeq" in page;
  if (page !== undefined) {
    if (page.limit <= 0) return [];
    conditions.push(
      "beforeSeq" in page ? ["o.seq < ?", page.beforeSeq] : ["o.seq > ?", page.afterSeq],
    );
    limit = `LIMIT ${Math.floor(page.limit)}`;
  }
  const w = where(conditions);
  const rows = await c.query<OutputRow>(
    `SELECT o.* FROM outputs o ${w.sql} ORDER BY o.seq${newest ? " DESC" : ""} ${limit}`,
    w.args,
  );
  return rows.map(toOutput);
}
