import type { Clock } from "@idem/schema";

/** A clock that runs with real time, and skips ahead instead of waiting when asked to sleep. */
export interface SkippingClock extends Clock {
  sleep(ms: number): Promise<void>;
  /** Moves the clock forward by `ms` at once (what a long wait in a test stands for). */
  advance(ms: number): void;
  /** How far ahead of real time it is (ms). */
  readonly skipped: number;
}

/**
 * A clock for tests of code that waits on rate limits or lags: it reads real time plus whatever
 * it skipped, and a `sleep` skips ahead at once (then lets pending work run), so a one-minute
 * wait costs no real time. Give the same clock to the stand-in (`now: () => clock.now()`) and to
 * the code under test, and both agree on what time it is.
 */
export function skippingClock(): SkippingClock {
  let skipped = 0;
  return {
    now: () => Date.now() + skipped,
    async sleep(ms) {
      skipped += Math.max(0, ms);
      await new Promise((resolve) => setImmediate(resolve));
    },
    advance(ms) {
      skipped += ms;
    },
    get skipped() {
      return skipped;
    },
  };
}
