/**
 * What an idle process waits for: `runs` (an output was recorded or replayed: a run to interpret)
 * or `jobs` (a job was enqueued or retried: a delivery to claim).
 */
export type WorkKind = "runs" | "jobs";

/** The optional wake-up hook of a journal shared by several processes. */
export interface JournalWakeUps {
  /**
   * Resolves when another process (or this one) may have made work of `kind`, after `ms` at the
   * latest, or at once when `signal` aborts. A hint, never a promise: a caller claims after it
   * and goes back to waiting when there is nothing; a notification missed (a lost connection)
   * costs at most `ms`, the caller's poll interval. Never rejects.
   */
  waitForWork(kind: WorkKind, ms: number, signal?: AbortSignal): Promise<void>;
}
