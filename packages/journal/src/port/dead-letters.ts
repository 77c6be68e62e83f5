import type { FailureClass } from "@idem/schema";
import type { JobLease } from "./jobs.js";

/** A job that never produced an output, and the human's decision on it once resolved. */
export interface DeadLetterRecord {
  id: number;
  jobId: string;
  agent: string | null;
  class: FailureClass;
  deliveries: number;
  lastError: string;
  at: number;
  resolvedAt: number | null;
  /** JSON of `{action, actor, reason}` once resolved. */
  resolution: string | null;
}

/** Jobs that never produced an output, and the human's decision on them. */
export interface JournalDeadLetters {
  /**
   * Dead-letters a job (lease optional: JetStream advisories arrive without one). Idempotent per
   * job: one open dead letter at most; nothing happens for a job whose output is recorded.
   * @throws LEASE_LOST when a lease is given and its token is stale.
   */
  add(
    jobId: string,
    failure: { class: FailureClass; error: string; deliveries: number; agent?: string },
    lease?: JobLease,
  ): Promise<void>;
  /** Dead letters since a time (all, or only the open ones), oldest first. */
  list(options?: { unresolved?: boolean; since?: number }): Promise<DeadLetterRecord[]>;
  /**
   * Marks a dead letter resolved (retried or dismissed) and, for a retry, returns the job to
   * queued with its deliveries reset and no stream message (`streamSeq` null: the one it had was
   * dead-lettered; the retry's publish notes the new one, and an executor's outbox republish
   * sends it when that publish failed); returns how many times the job was retried.
   * @throws NOT_FOUND when the job has no open dead letter.
   */
  resolve(
    jobId: string,
    resolution: { action: "retry" | "dismiss"; actor: string; reason?: string },
  ): Promise<{ retries: number }>;
}
