import { type Clock, sleepOn } from "@idem/kit";

/** The most effects whose wait deadlines are kept; the oldest are forgotten past it. */
const MAX_SCOPES = 10_000;

/**
 * Waits on rate limits, bounded by a deadline per effect: the first wait of an effect (its key)
 * starts `maxWaitMs`; a wait that would end past it is refused, and the caller fails the attempt
 * instead (transient, with the wait), so a rate limit costs time, not attempts, but never forever.
 */
export class RateWaits {
  private readonly deadlines = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly maxWaitMs: number,
  ) {}

  /** Waits `ms` on the clock for `scope` when its deadline allows; false (no wait) otherwise. */
  async wait(scope: string, ms: number): Promise<boolean> {
    const now = this.clock.now();
    let deadline = this.deadlines.get(scope);
    if (deadline === undefined) {
      deadline = now + this.maxWaitMs;
      if (this.deadlines.size >= MAX_SCOPES) {
        const oldest = this.deadlines.keys().next().value;
        if (oldest !== undefined) this.deadlines.delete(oldest);
      }
      this.deadlines.set(scope, deadline);
    }
    if (now + ms > deadline) return false;
    await sleepOn(this.clock, ms);
    return true;
  }
}
