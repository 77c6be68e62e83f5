import type { AgentOutput } from "@idem/schema";
import type Database from "better-sqlite3";
import type { OutputRecord, OutputSource, ReplaySelection } from "../../journal-store.js";

/** One `outputs` row as an array, in the column order of `COLUMNS`. */
type OutputTuple = [number, string, string, string, string, OutputSource, number];

const COLUMNS = "o.seq, o.job_id, o.agent, o.content_hash, o.body, o.source, o.recorded_at";

/**
 * The outputs a replay selection matches, in recording order (`JournalStore.select`), or one page
 * of them (`selectPage`). Rows are read as arrays (better-sqlite3 raw mode) and each body is parsed
 * once: at 10,000 outputs this costs about two thirds of row objects mapped afterwards, and a replay
 * plan starts with this read.
 */
export function selectOutputs(
  db: Database.Database,
  selection: ReplaySelection,
  page?: { afterSeq: number; limit: number },
): OutputRecord[] {
  const where: string[] = [];
  const args: unknown[] = [];
  if (selection.jobIds !== undefined) {
    if (selection.jobIds.length === 0) return [];
    where.push(`o.job_id IN (${selection.jobIds.map(() => "?").join(",")})`);
    args.push(...selection.jobIds);
  }
  if (selection.agent !== undefined) {
    where.push("o.agent = ?");
    args.push(selection.agent);
  }
  if (selection.since !== undefined) {
    where.push("o.recorded_at >= ?");
    args.push(selection.since);
  }
  if (selection.state !== undefined) {
    where.push(
      "(SELECT state FROM runs WHERE job_id = o.job_id ORDER BY generation DESC LIMIT 1) = ?",
    );
    args.push(selection.state);
  }
  if (where.length === 0 && !selection.all) return [];
  if (page !== undefined) {
    if (page.limit <= 0) return [];
    where.push("o.seq > ?");
    args.push(page.afterSeq);
  }
  const rows = db
    .prepare(
      `SELECT ${COLUMNS} FROM outputs o ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY o.seq${page ? " LIMIT ?" : ""}`,
    )
    .raw(true)
    .all(...(page ? [...args, page.limit] : args)) as OutputTuple[];
  const out = new Array<OutputRecord>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const [seq, jobId, agent, contentHash, body, source, recordedAt] = rows[i] as OutputTuple;
    out[i] = {
      seq,
      jobId,
      agent,
      contentHash,
      output: JSON.parse(body) as AgentOutput,
      source,
      recordedAt,
    };
  }
  return out;
}
