import type { AgentOutput } from "@idem/schema";
import type Database from "better-sqlite3";
import type {
  OutputRecord,
  OutputSource,
  OutputsPage,
  ReplaySelection,
} from "../../port/outputs.js";
import { type Condition, placeholders, where } from "./where.js";

/** One `outputs` row as an array, in the column order of `COLUMNS`. */
type OutputTuple = [number, string, string, string, string, OutputSource, number, string | null];

const COLUMNS =
  "o.seq, o.job_id, o.agent, o.content_hash, o.body, o.source, o.recorded_at, o.traceparent";
/** Job IDs bound in one statement: well under SQLite's bound-parameter limit, with room to spare. */
const IDS_PER_STATEMENT = 5000;

/**
 * The outputs a replay selection matches, in recording order (`outputs.select`), or one page
 * of them (`outputs.page`). Rows are read as arrays (better-sqlite3 raw mode) and each body is parsed
 * once: at 10,000 outputs this costs about two thirds of row objects mapped afterwards, and a replay
 * plan starts with this read.
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
  if (page !== undefined) {
    if (page.limit <= 0) return [];
    conditions.push(
      "beforeSeq" in page ? ["o.seq < ?", page.beforeSeq] : ["o.seq > ?", page.afterSeq],
    );
  }
  const filter = where(conditions);
  const order = page !== undefined && "beforeSeq" in page ? "o.seq DESC" : "o.seq";
  const rows = db
    .prepare(
      `SELECT ${COLUMNS} FROM outputs o ${filter.sql} ORDER BY ${order}${page ? " LIMIT ?" : ""}`,
    )
    .raw(true)
    .all(...(page ? [...filter.args, page.limit] : filter.args)) as OutputTuple[];
  const out = new Array<OutputRecord>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const [seq, jobId, agent, contentHash, body, source, recordedAt, traceparent] = rows[
      i
    ] as OutputTuple;
    out[i] = {
      seq,
      jobId,
      agent,
      contentHash,
      output: JSON.parse(body) as AgentOutput,
      source,
      recordedAt,
      ...(traceparent === null ? {} : { traceparent }),
    };
  }
  return out;
}
