import { sleep } from "./sleep.js";

/**
 * The source of time for everything in idem that would call Date.now(). Tests pass a manual clock.
 */
export interface Clock {
  /** The current time in epoch milliseconds. */
  now(): number;
  /**
   * Waits `ms` on this clock (a rate limit's wait inside an effect). Absent: a timer of that many
   * real milliseconds (see `sleepOn`).
   */
  sleep?(ms: number): Promise<void>;
}

/** The wall clock, `Date.now()`: what the apps pass; packages never read the time otherwise. */
export const systemClock: Clock = { now: () => Date.now() };

/** Waits `ms` on `clock`: its own `sleep`, else a real timer. Never rejects. */
export function sleepOn(clock: Clock, ms: number): Promise<void> {
  const wait = Math.max(0, Math.ceil(ms));
  return clock.sleep ? clock.sleep(wait) : sleep(wait);
}

/** A clock that moves only when told to, for tests: starts at 2023-11-14T22:13:20Z by default. */
export class ManualClock implements Clock {
  constructor(private current = 1_700_000_000_000) {}
  /** The time it was last set or advanced to, in epoch milliseconds. */
  now(): number {
    return this.current;
  }
  /** Moves the clock forward (or back, with a negative `ms`). */
  advance(ms: number): void {
    this.current += ms;
  }
  /** Sets the clock to an epoch millisecond. */
  set(ms: number): void {
    this.current = ms;
  }
  /**
   * Moves the clock forward by `ms` at once, then lets pending work run (a macrotask), so code that
   * waits on this clock goes on without real time passing.
   */
  async sleep(ms: number): Promise<void> {
    this.current += Math.max(0, ms);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Parses a duration such as `90s`, `15m`, `2h`, `7d`, `1w` or `500ms` into milliseconds.
 *
 * Decimals are allowed and the result is rounded; undefined when the text is not such a duration.
 * Never throws.
 */
export function parseDuration(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(s.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * (UNITS[m[2] as string] as number));
}

/**
 * Parses a time given as ISO-8601 or as a duration back from `now` (`--since 2h`).
 *
 * The answer is in epoch milliseconds.
 * @throws TypeError when it is neither, with a message fit for the user.
 */
export function parseSince(s: string, now: number): number {
  const d = parseDuration(s);
  if (d !== undefined) return now - d;
  if (/^\d{4}-\d{2}-\d{2}/.test(s)) {
    const t = Date.parse(s);
    if (!Number.isNaN(t)) return t;
  }
  throw new TypeError(`"${s}" is neither an ISO-8601 time nor a duration like 90s, 15m, 2h, 7d`);
}
