import type { IdemError } from "@idem/schema";
import type { ActivityWindow, JournalActivity } from "./port/activity.js";
import type { JournalApprovals } from "./port/approvals.js";
import type { JournalDeadLetters } from "./port/dead-letters.js";
import type { JournalEvents } from "./port/events.js";
import type { JournalJobs } from "./port/jobs.js";
import type { JournalLedger } from "./port/ledger.js";
import type { JournalMaintenance } from "./port/maintenance.js";
import type { JournalOutputs } from "./port/outputs.js";
import type { JournalRuns } from "./port/runs.js";
import type { JournalStatus } from "./port/status.js";
import type { WorkKind } from "./port/work.js";

/**
 * The journal: immutable outputs keyed by job ID, runs (one generation per interpretation), the
 * effects ledger, the job queue/outbox, dead letters and an append-only event log, grouped by
 * concern so that a name says what it acts on.
 *
 * Every method is atomic (one transaction). Writes made under a lease check its token and throw
 * `LEASE_LOST` for a stale holder. Errors other than the documented outcomes propagate; once
 * `failure` is set, every write throws it.
 */
export interface JournalStore {
  /** Where the journal lives: a file path (SQLite), or a URL without its password. */
  readonly location: string;
  /**
   * Why this handle can no longer make a write durable (its fsync failed: the kernel may have
   * dropped the pages, so a retry could "succeed" without them), or undefined while it can. Once
   * set, every write throws it: only a new process, reopening the journal, can go on.
   */
  readonly failure: IdemError | undefined;
  /** Immutable outputs and the refused conflicting submissions. */
  readonly outputs: JournalOutputs;
  /** Runs: one generation per interpretation of an output, claimed under a lease. */
  readonly runs: JournalRuns;
  /** The effects ledger. */
  readonly ledger: JournalLedger;
  /** The job queue/outbox and the in-progress claims of deliveries. */
  readonly jobs: JournalJobs;
  /** Jobs that never produced an output. */
  readonly deadLetters: JournalDeadLetters;
  /** The append-only event log. */
  readonly events: JournalEvents;
  /** Approval gates: runs awaiting a person's decision (docs/approvals.md). */
  readonly approvals: JournalApprovals;
  /** Prune, integrity, backup. */
  readonly maintenance: JournalMaintenance;
  /** Counts of outputs, latest runs, effects, rejections, dead letters and jobs by state. */
  status(): Promise<JournalStatus>;
  /**
   * Outputs recorded and effects applied (settled as `applied`, by when) in each bucket of a
   * window, counted by the database through the time indexes of both: the cost follows the rows in
   * the window, not the journal's history. Read-only; each count is read on its own.
   * @throws INVALID_INPUT for an empty or reversed window, or one of more than
   * MAX_ACTIVITY_BUCKETS buckets.
   */
  activity(window: ActivityWindow): Promise<JournalActivity>;
  /**
   * Optional wake-up hook of a journal shared by several processes (PostgreSQL: LISTEN/NOTIFY):
   * resolves when work of `kind` may have been committed, after `ms` at the latest, or when
   * `signal` aborts; never rejects. A store without it (SQLite) leaves callers to poll every `ms`.
   */
  waitForWork?(kind: WorkKind, ms: number, signal?: AbortSignal): Promise<void>;
  /** Waits for the fsync in flight, then closes the handle; idempotent. */
  close(): Promise<void>;
}
