/**
 * GitHub's limits on content creation per token, as its REST documentation states them ("Rate
 * limits for the REST API", secondary rate limits): no more than 80 content-generating requests a
 * minute and 500 an hour, and ("Best practices for using the REST API") at least a second between
 * the POSTs of one token.
 */
export const GITHUB_CREATE_LIMITS = { gapMs: 1000, perMinute: 80, perHour: 500 } as const;

/**
 * The times the creates of one token go out, so that they keep GitHub's limits: each create
 * reserves the earliest time that is a second after the last one and leaves fewer than 80 in the
 * minute and 500 in the hour before it. In-process: interpreters that share a token each pace
 * their own, and GitHub's answer (a secondary rate limit) is waited out as any other.
 */
export class CreatePacer {
  /** Reserved times, ascending, the last hour's. */
  private readonly times: number[] = [];

  constructor(private readonly limits: typeof GITHUB_CREATE_LIMITS = GITHUB_CREATE_LIMITS) {}

  /** Reserves the next create's time (at `now` or later) and answers it. */
  reserve(now: number): number {
    while (this.times.length > 0 && (this.times[0] as number) <= now - 3_600_000)
      this.times.shift();
    const n = this.times.length;
    let at = now;
    if (n > 0) at = Math.max(at, (this.times[n - 1] as number) + this.limits.gapMs);
    if (n >= this.limits.perMinute)
      at = Math.max(at, (this.times[n - this.limits.perMinute] as number) + 60_000);
    if (n >= this.limits.perHour)
      at = Math.max(at, (this.times[n - this.limits.perHour] as number) + 3_600_000);
    this.times.push(at);
    return at;
  }

  /** Gives back a reservation that will not be used (the create is not sent). */
  release(at: number): void {
    const i = this.times.lastIndexOf(at);
    if (i >= 0) this.times.splice(i, 1);
  }
}
