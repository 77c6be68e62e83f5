import type { JournalStore } from "@idem/journal";

/** A job a delivery holds (or held: its lease ended with no output), as status shows it. */
export interface LeasedJob {
  jobId: string;
  agent: string;
  /** The executor holding the lease: `<host>:<pid>:<random>@<boot id>/<pid ns>/<start time>` (`createOwnerId`). */
  holder: string | null;
  /** When the lease ends (or ended), epoch ms. */
  leaseUntil: number | null;
  /** True once the lease has ended with no output: its executor died or stalled. */
  ended: boolean;
  /** Deliveries so far, this one included. */
  deliveries: number;
}

/** How many leased jobs `idem status` and the console's overview name at most. */
export const LEASED_SHOWN = 20;

/**
 * The jobs under a delivery's lease (`jobs.list` of the running ones), oldest first, `limit` at
 * most (default LEASED_SHOWN): who holds each and until when, and whether the lease has ended
 * (`ended`: the holder died or stalled; the next claim takes the job over). Read-only.
 */
export async function readLeasedJobs(
  journal: JournalStore,
  options: { now?: number; limit?: number } = {},
): Promise<LeasedJob[]> {
  const now = options.now ?? Date.now();
  const rows = await journal.jobs.list({ state: "running", limit: options.limit ?? LEASED_SHOWN });
  return rows.map((r) => ({
    jobId: r.jobId,
    agent: r.agent,
    holder: r.leaseOwner,
    leaseUntil: r.leaseUntil,
    ended: r.leaseUntil === null || r.leaseUntil <= now,
    deliveries: r.deliveries,
  }));
}
