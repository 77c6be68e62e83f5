import { IdemError } from "@idem/schema";

/** A window of the journal's history cut into equal buckets: `[since, until)`, `bucketMs` each. */
export interface ActivityWindow {
  /** Start of the first bucket (epoch ms, inclusive). */
  since: number;
  /** End of the window (epoch ms, exclusive); the last bucket may be cut short by it. */
  until: number;
  /** The width of a bucket, in ms (60,000: per minute). */
  bucketMs: number;
}

/**
 * Outputs recorded and effects applied in each bucket of a window, as the journal holds them: an
 * output by its `recordedAt`, an applied effect by when the ledger settled it as `applied` (its
 * row's last update). `outputs[i]` and `applied[i]` count the bucket starting at
 * `since + i * bucketMs`; every bucket is present, zero when nothing happened in it.
 */
export interface JournalActivity extends ActivityWindow {
  outputs: number[];
  applied: number[];
}

/** The most buckets one read answers (a week per minute): a chart, not an export. */
export const MAX_ACTIVITY_BUCKETS = 10_080;

/**
 * The number of buckets of a window, checked before any query.
 * @throws INVALID_INPUT when a bound is not an integer, the window is empty or reversed, or it has
 * more than MAX_ACTIVITY_BUCKETS buckets.
 */
export function activityBuckets(w: ActivityWindow): number {
  const { since, until, bucketMs } = w;
  if (![since, until, bucketMs].every(Number.isSafeInteger) || bucketMs <= 0 || until <= since)
    throw new IdemError(
      "INVALID_INPUT",
      `activity: since < until and bucketMs > 0, all integers (epoch ms), got ${JSON.stringify(w)}`,
    );
  const n = Math.ceil((until - since) / bucketMs);
  if (n > MAX_ACTIVITY_BUCKETS)
    throw new IdemError(
      "INVALID_INPUT",
      `activity: ${n} buckets asked, at most ${MAX_ACTIVITY_BUCKETS} (widen bucketMs or shorten the window)`,
    );
  return n;
}

/** The answer of a window from its rows (bucket index, counts); absent buckets are zero. */
export function activityFrom(
  w: ActivityWindow,
  n: number,
  rows: readonly { b: number; outputs: number; applied: number }[],
): JournalActivity {
  const outputs = new Array<number>(n).fill(0);
  const applied = new Array<number>(n).fill(0);
  for (const r of rows) {
    const b = Number(r.b);
    if (b < 0 || b >= n) continue;
    outputs[b] = Number(r.outputs);
    applied[b] = Number(r.applied);
  }
  return { since: w.since, until: w.until, bucketMs: w.bucketMs, outputs, applied };
}
