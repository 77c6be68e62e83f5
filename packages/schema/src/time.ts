/** The source of time for everything in idem that would call Date.now(). Tests pass a manual clock. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to. */
export class ManualClock implements Clock {
  constructor(private current = 1_700_000_000_000) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
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

/** Parses `90s`, `15m`, `2h`, `7d`, `500ms` into milliseconds, or undefined. */
export function parseDuration(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(s.trim());
  if (!m) return undefined;
  return Math.round(Number(m[1]) * (UNITS[m[2] as string] as number));
}

/**
 * Parses a time given as ISO-8601 or as a duration back from `now`, into epoch milliseconds.
 * @throws TypeError when it is neither.
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
