import { type Clock, FAULT_POINTS, type FaultPoint, IdemError, systemClock } from "@idem/schema";
import { asJournalError } from "../store/sqlite/sqlite-errors.js";
import { canonicalRow } from "./digest.js";
import { keyValues, PostgresTarget } from "./postgres-target.js";
import { SqliteSource } from "./sqlite-source.js";
import { COPY_TABLES, type CopyTable } from "./tables.js";

/** Where a copy can be stopped on purpose (tests SIGKILL the process there): `FAULT_POINTS` of @idem/schema. */
export type JournalCopyFaultPoint = Extract<FaultPoint, `journal-copy.${string}`>;

export interface JournalCopyOptions {
  /** The SQLite journal file to read (never written). */
  from: string;
  /** The PostgreSQL URL to write: an empty journal, or one this copy was interrupted writing. */
  to: string;
  /** Rows per batch, each batch one PostgreSQL transaction (default 1000). */
  batchSize?: number;
  onProgress?: (p: JournalCopyProgress) => void;
  /** Called at each fault point; no-op by default. */
  fault?: (point: JournalCopyFaultPoint) => void;
  /** The clock leases are judged by (default the system's). */
  clock?: Clock;
}

/** Where a copy is: checking what the target holds, copying a table, or verifying. */
export interface JournalCopyProgress {
  phase: "check" | "copy" | "verify";
  table: string;
  /** Rows of this table done in this phase, and its rows in the source. */
  done: number;
  total: number;
}

/** Count and content hash of one table on both sides, and the rows this run inserted. */
export interface JournalCopyTableReport {
  table: string;
  source: { rows: number; sha256: string };
  target: { rows: number; sha256: string };
  /** Rows this run inserted (the rest were there from an earlier, interrupted run). */
  inserted: number;
  equal: boolean;
}

export interface JournalCopyReport {
  from: string;
  /** The target URL without its password. */
  to: string;
  tables: JournalCopyTableReport[];
  /** Every table's count and content hash equal on both sides. */
  verified: boolean;
}

const DEFAULT_BATCH = 1000;

/**
 * Copies a SQLite journal into a PostgreSQL journal: every table that holds state, every column,
 * ids and sequence numbers kept, table by table in key order, in batches that are each one
 * PostgreSQL transaction inserting with ON CONFLICT (key) DO NOTHING; then sets the identity
 * sequences past the copied ids and compares each table's count and content hash on both sides.
 *
 * Resumable: run it again after an interruption (a kill, a lost connection) and it inserts only
 * what is missing. Before writing anything it checks that every row the target holds is a row of
 * the source, equal in every column; a table that is a prefix of the source resumes after it.
 *
 * @throws LOCKED when runs or jobs of the source are under leases that have not ended (stop the
 *   interpreters and executors first), or another copy writes the target; INVALID_STATE when the
 *   target holds rows the source does not have (nothing is written then); NOT_FOUND when the
 *   source file is missing. A verification that finds a difference is not thrown: `verified` is
 *   false and the tables say which. A failure of the SQLite source is its IdemError (IO,
 *   INTEGRITY, ...), as the SQLite store's own.
 */
export async function copyJournal(options: JournalCopyOptions): Promise<JournalCopyReport> {
  try {
    return await copyOnce(options);
  } catch (e) {
    throw asJournalError(e);
  }
}

async function copyOnce(options: JournalCopyOptions): Promise<JournalCopyReport> {
  const batch = options.batchSize ?? DEFAULT_BATCH;
  if (!Number.isInteger(batch) || batch < 1) {
    throw new IdemError("INVALID_INPUT", `batchSize must be a positive integer, not ${batch}`);
  }
  const progress = options.onProgress ?? (() => {});
  const fault = options.fault ?? (() => {});
  const source = SqliteSource.open(options.from);
  try {
    refuseHeldLeases(source, (options.clock ?? systemClock).now());
    const target = await PostgresTarget.open(options.to);
    try {
      const copy: Copy = { source, target, batch, progress, fault };
      const starts = new Map<string, unknown[] | undefined>();
      for (const t of COPY_TABLES) starts.set(t.name, await checkSubset(copy, t));
      const inserted = new Map<string, number>();
      for (const t of COPY_TABLES)
        inserted.set(t.name, await copyTable(copy, t, starts.get(t.name)));
      await target.continueSequences();
      const sources = source.digests();
      const tables: JournalCopyTableReport[] = [];
      for (const t of COPY_TABLES) {
        const s = sources.get(t.name) ?? { rows: 0, sha256: "" };
        progress({ phase: "verify", table: t.name, done: 0, total: s.rows });
        const d = await target.digest(t, batch);
        progress({ phase: "verify", table: t.name, done: d.rows, total: s.rows });
        tables.push({
          table: t.name,
          source: s,
          target: d,
          inserted: inserted.get(t.name) ?? 0,
          equal: s.rows === d.rows && s.sha256 === d.sha256,
        });
      }
      return {
        from: options.from,
        to: target.location,
        tables,
        verified: tables.every((t) => t.equal),
      };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** One copy in progress: both ends, the batch size, and where it reports and may be stopped. */
interface Copy {
  source: SqliteSource;
  target: PostgresTarget;
  batch: number;
  progress: (p: JournalCopyProgress) => void;
  fault: (point: JournalCopyFaultPoint) => void;
}

/** Refuses to copy a journal that live processes may still be writing under their leases. */
function refuseHeldLeases(source: SqliteSource, now: number): void {
  const held = source.heldLeases(now);
  if (held.runs === 0 && held.jobs === 0) return;
  const until = new Date(held.until ?? now).toISOString();
  throw new IdemError(
    "LOCKED",
    `${source.path} has ${held.runs} run(s) and ${held.jobs} job(s) under leases that have not ended (held by ${held.owners.join(", ") || "unknown"}): stop the interpreters and executors using it (idem up, idem interpreter, idem executor), then copy. A lease whose holder is gone ends by itself at ${until}`,
    { details: { ...held } },
  );
}

/**
 * Checks that every row the target holds is the source's row with the same key, equal in every
 * column, and answers where the copy of this table resumes: after the target's last key when the
 * target holds exactly the source's rows up to it, else from the start.
 * @throws INVALID_STATE naming the table and the first key that differs or is not in the source.
 */
async function checkSubset(copy: Copy, t: CopyTable): Promise<unknown[] | undefined> {
  const { source, target, batch, progress } = copy;
  const total = await target.count(t);
  if (total === 0) return undefined;
  let done = 0;
  let last: unknown[] | undefined;
  for (;;) {
    const rows = await target.batch(t, last, batch);
    for (const row of rows) {
      const key = keyValues(t, row);
      const mine = source.row(t, key);
      if (mine === undefined || canonicalRow(mine) !== canonicalRow(row)) {
        throw new IdemError(
          "INVALID_STATE",
          `the target ${target.location} holds data that is not in ${source.path}: ${t.name} row ${JSON.stringify(key)} ${mine === undefined ? "is not in the source" : "differs from the source's"}. Copy into an empty database (or the one an interrupted copy of this very journal wrote); nothing was written`,
          { details: { table: t.name, key } },
        );
      }
    }
    done += rows.length;
    progress({ phase: "check", table: t.name, done, total });
    if (rows.length > 0) last = keyValues(t, rows[rows.length - 1] as unknown[]);
    if (rows.length < batch) break;
  }
  // A prefix (every source row up to the last key is there) resumes after it.
  if (t.key.length === 1 && last !== undefined && source.countUpTo(t, last[0]) === total)
    return last;
  return undefined;
}

/** Copies one table from `start` (or its first row) in batches; answers the rows inserted. */
async function copyTable(copy: Copy, t: CopyTable, start: unknown[] | undefined): Promise<number> {
  const { source, target, batch, progress, fault } = copy;
  const total = source.count(t);
  let done = start === undefined ? 0 : source.countUpTo(t, start[0]);
  let inserted = 0;
  let from = start;
  progress({ phase: "copy", table: t.name, done, total });
  for (;;) {
    const rows = source.batch(t, from, batch);
    if (rows.length === 0) return inserted;
    inserted += await target.insert(t, rows, () => fault(FAULT_POINTS.JOURNAL_COPY_BEFORE_COMMIT));
    done += rows.length;
    progress({ phase: "copy", table: t.name, done, total });
    fault(FAULT_POINTS.JOURNAL_COPY_AFTER_BATCH);
    from = keyValues(t, rows[rows.length - 1] as unknown[]);
    if (rows.length < batch) return inserted;
  }
}
