import type { IdemError } from "@idem/schema";
import type Database from "better-sqlite3";
import type { JournalStore } from "../../journal-store.js";
import type { ActivityWindow, JournalActivity } from "../../port/activity.js";
import type { JournalApprovals } from "../../port/approvals.js";
import type { JournalDeadLetters } from "../../port/dead-letters.js";
import type { JournalEvents } from "../../port/events.js";
import type { JournalJobs } from "../../port/jobs.js";
import type { JournalLedger } from "../../port/ledger.js";
import type { JournalMaintenance } from "../../port/maintenance.js";
import type { JournalOutputs } from "../../port/outputs.js";
import type { JournalRuns } from "../../port/runs.js";
import type { JournalStatus } from "../../port/status.js";
import { sqliteApprovals } from "./approvals.js";
import { SqliteConnection, type SqliteJournalOptions } from "./connection.js";
import { sqliteDeadLetters } from "./dead-letters.js";
import { sqliteEvents } from "./events.js";
import { sqliteJobs } from "./jobs.js";
import { sqliteLedger } from "./ledger.js";
import { sqliteMaintenance } from "./maintenance.js";
import { sqliteOutputs } from "./outputs.js";
import { sqliteRuns } from "./runs.js";
import { asJournalError, withJournalErrors } from "./sqlite-errors.js";
import { readActivity, readStatus } from "./status.js";

export type { SqliteJournalOptions } from "./connection.js";
export { TRIGGERS } from "./maintenance.js";

/**
 * Opens (creating when missing) a SQLite journal file and applies pending migrations under
 * SQLite's write lock, so several processes may open a new file at once. Journals written by
 * earlier versions open and are migrated forward.
 * @throws IO when the file cannot be opened or written, LOCKED when another process holds it past
 * the busy timeout, INTEGRITY when it is not a SQLite database or is damaged, DISK_FULL.
 */
export async function openSqliteJournal(
  path: string,
  options: SqliteJournalOptions = {},
): Promise<SqliteJournalStore> {
  return SqliteJournalStore.open(path, options);
}

/**
 * The SQLite adapter of the JournalStore port (better-sqlite3, WAL, drizzle-kit migrations): one
 * connection (transactions, group commit, group fsync) shared by one module per concern.
 *
 * Its boundary wraps SQLite's errors (`asJournalError`): every method throws an IdemError for a
 * SQLite failure idem names (LOCKED, DISK_FULL, IO, INTEGRITY) with the
 * driver's error as `cause`, so no caller reads a SQLite code or message.
 */
export class SqliteJournalStore implements JournalStore {
  private readonly c: SqliteConnection;
  readonly outputs: JournalOutputs;
  readonly runs: JournalRuns;
  readonly ledger: JournalLedger;
  readonly jobs: JournalJobs;
  readonly deadLetters: JournalDeadLetters;
  readonly events: JournalEvents;
  readonly approvals: JournalApprovals;
  readonly maintenance: JournalMaintenance;

  private constructor(c: SqliteConnection) {
    this.c = c;
    this.outputs = withJournalErrors(sqliteOutputs(c));
    this.runs = withJournalErrors(sqliteRuns(c));
    this.ledger = withJournalErrors(sqliteLedger(c));
    this.jobs = withJournalErrors(sqliteJobs(c));
    this.deadLetters = withJournalErrors(sqliteDeadLetters(c));
    this.events = withJournalErrors(sqliteEvents(c));
    this.approvals = withJournalErrors(sqliteApprovals(c));
    this.maintenance = withJournalErrors(sqliteMaintenance(c));
  }

  /** Opens a journal file synchronously (see `openSqliteJournal`). */
  static open(path: string, options: SqliteJournalOptions = {}): SqliteJournalStore {
    try {
      return new SqliteJournalStore(SqliteConnection.open(path, options));
    } catch (e) {
      throw asJournalError(e);
    }
  }

  /** The journal file's path. */
  get location(): string {
    return this.c.path;
  }

  /** Why this handle can no longer make a write durable (a failed fsync), or undefined. */
  get failure(): IdemError | undefined {
    return this.c.failure;
  }

  /** fsyncs of the WAL made by this store (group fsync only), for metrics and tests. */
  get fsyncs(): number {
    return this.c.fsyncs;
  }

  /** Of those, the ones made inline, on the event loop (a lone write outside a pipeline). */
  get inlineFsyncs(): number {
    return this.c.inlineFsyncs;
  }

  /** The raw better-sqlite3 handle, for this package's tests and benchmarks only. */
  get database(): Database.Database {
    return this.c.db;
  }

  /** Counts of outputs, latest runs, effects, rejections, open dead letters and jobs by state. */
  async status(): Promise<JournalStatus> {
    try {
      return readStatus(this.c);
    } catch (e) {
      throw asJournalError(e);
    }
  }

  /** Outputs recorded and effects applied per bucket of a window (see `JournalStore.activity`). */
  async activity(window: ActivityWindow): Promise<JournalActivity> {
    try {
      return readActivity(this.c, window);
    } catch (e) {
      throw asJournalError(e);
    }
  }

  /** Waits for the fsync in flight, then closes the handle; idempotent. */
  async close(): Promise<void> {
    await this.c.close().catch((e: unknown) => {
      throw asJournalError(e);
    });
  }
}
