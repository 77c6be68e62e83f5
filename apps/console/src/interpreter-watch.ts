import type { JournalStore } from "@idem/journal";

/** No interpreter seems to be at work: runs wait, none is taken, and for how long. */
export interface IdleInterpreters {
  /** Runs pending (due) now. */
  pending: number;
  /** How long they have waited with none running and their number not going down, in ms. */
  waitedMs: number;
}

/**
 * Whether an interpreter is at work, as the console can tell from the journal: the journal knows
 * no processes, but an interpreter that runs takes the pending runs (one of them is running under
 * its lease, or their number goes down). Runs pending with none running and their number not
 * going down for `quietMs` (ten interpreter polls, 10 s at least) mean none is: the overview and
 * a replay's progress page say so, and how to start one. Watched over the pages' live polls
 * (every 3 s), from the console's start; a failed run waiting for its retry is not pending.
 */
export class InterpreterWatch {
  private waitingSince: number | undefined;
  private lastPending = 0;

  constructor(
    private readonly journal: JournalStore,
    readonly quietMs: number,
  ) {}

  /** Reads the active runs (`runs.active()`, counts only) and answers whether they wait unserved. */
  async check(now: number): Promise<IdleInterpreters | null> {
    const { pending, running } = await this.journal.runs.active();
    if (pending === 0 || running > 0) {
      this.waitingSince = undefined;
      this.lastPending = pending;
      return null;
    }
    if (this.waitingSince === undefined || pending < this.lastPending) this.waitingSince = now;
    this.lastPending = pending;
    const waitedMs = now - this.waitingSince;
    return waitedMs >= this.quietMs ? { pending, waitedMs } : null;
  }
}
