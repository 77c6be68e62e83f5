import type { JournalStore } from "@idem/journal";
import type { Clock } from "@idem/schema";

/** How often an interpreter ends the approval requests that expired (at most). */
export const APPROVAL_SWEEP_MS = 1_000;

/** The interpreter's periodic chore for approval gates: requests that expired end (fail closed). */
export interface ApprovalSweep {
  /** At most every `everyMs`: ends the expired requests; answers their job IDs (empty between). */
  sweep(): Promise<string[]>;
}

/** The sweep of one interpreter process over `journal`. */
export function createApprovalSweep(options: {
  journal: JournalStore;
  clock: Clock;
  everyMs?: number;
}): ApprovalSweep {
  const { journal, clock } = options;
  const everyMs = options.everyMs ?? APPROVAL_SWEEP_MS;
  let last = Number.NEGATIVE_INFINITY;
  return {
    async sweep() {
      const now = clock.now();
      if (now - last < everyMs) return [];
      last = now;
      return journal.approvals.expire();
    },
  };
}
