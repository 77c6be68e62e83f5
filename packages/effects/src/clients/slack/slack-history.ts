import { IdemError } from "@idem/kit";

/**
 * Where a probe of one effect stopped in a channel's history, so the next attempt goes on from
 * there instead of page 1: on Slack's slowest tier (a non-Marketplace app: `conversations.history`
 * once a minute, 15 messages a page) a probe that starts over each attempt never reaches the end
 * of a busy window.
 */
export interface HistoryProgress {
  channel: string;
  /** The window's lower end (the probe's `oldest`). */
  oldest: string;
  /** The newest message the probe saw first: every later one is newer than it. */
  top?: string;
  /** Every message from this one up to `top` has been looked at. */
  below?: string;
  /** Every message from `oldest` up to `top` has been looked at. */
  olderDone?: boolean;
  /** Of the messages newer than `top`, every one from this one up has been looked at. */
  newerBelow?: string;
}

/** A Map that forgets its oldest entries past `max`. */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.max) {
      const oldest = this.keys().next().value;
      if (oldest !== undefined) this.delete(oldest);
    }
    return super.set(key, value);
  }
}

/** What the probe needs of the Slack client. */
export interface HistoryReader {
  readonly options: { maxPages: number };
  readonly progress: Map<string, HistoryProgress>;
  settled(scope: string): Promise<void>;
  historyPage(
    channel: string,
    q: { oldest: string; latest?: string },
    what: string,
    scope: string,
  ): Promise<{ messages: unknown[]; nextCursor: string | undefined }>;
}

const TS = /^(\d{1,12})\.(\d{1,6})$/;

/** A Slack timestamp moved by `delta` microseconds (`1712345678.000100` - 1). */
function shift(ts: string, delta: number): string {
  const m = TS.exec(ts);
  if (!m) return ts;
  const micros = Number(m[1]) * 1_000_000 + Number((m[2] as string).padEnd(6, "0")) + delta;
  return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, "0")}`;
}

/** A message's `ts`, when it looks like one. */
export function tsOf(m: unknown): string | undefined {
  const ts = (m as { ts?: unknown } | null)?.ts;
  return typeof ts === "string" && TS.test(ts) ? ts : undefined;
}

/**
 * The first message of `channel`'s history since `oldest` that `match` accepts, or undefined,
 * reading newest first and resuming where an earlier attempt of the same effect (`key`) stopped:
 * each page read is remembered (`client.progress`), so a rate limit past the effect's deadline
 * costs the attempt but not the pages it read. A resumed probe also reads what was posted after
 * it first looked (newer than `top`). The progress is dropped when the probe ends, and by a post.
 * @throws IdemError INVALID_CONFIG past `maxPages` pages in one attempt; any failure of the calls.
 */
export async function findInHistory(
  client: HistoryReader,
  o: { channel: string; oldest: string; key: string; what: string },
  match: (message: unknown) => boolean,
): Promise<unknown | undefined> {
  await client.settled(o.key);
  const { maxPages } = client.options;
  const kept = client.progress.get(o.key);
  const resumed = kept?.channel === o.channel && kept.oldest === o.oldest ? kept : undefined;
  const p: HistoryProgress = resumed ?? { channel: o.channel, oldest: o.oldest };
  let pages = 0;
  const page = async (q: { oldest: string; latest?: string }) => {
    if (++pages > maxPages)
      throw new IdemError(
        "INVALID_CONFIG",
        `${o.what}: more than maxPages (${maxPages}) pages of history; raise maxPages`,
      );
    return client.historyPage(o.channel, q, o.what, o.key);
  };
  const below = (ts: string | undefined) => (ts === undefined ? {} : { latest: shift(ts, -1) });
  // The window from `oldest` up, newest first, going on below the last message looked at.
  while (!p.olderDone) {
    const got = await page({ oldest: p.oldest, ...below(p.below) });
    const found = got.messages.find(match);
    if (found !== undefined) {
      client.progress.delete(o.key);
      return found;
    }
    const last = tsOf(got.messages.at(-1));
    p.top ??= tsOf(got.messages[0]);
    if (got.nextCursor === undefined || last === undefined) p.olderDone = true;
    else p.below = last;
    client.progress.set(o.key, p);
  }
  // What was posted since a resumed probe first looked (another holder's post, after a takeover).
  if (resumed !== undefined && p.top !== undefined) {
    for (;;) {
      const got = await page({ oldest: shift(p.top, 1), ...below(p.newerBelow) });
      const found = got.messages.find(match);
      if (found !== undefined) {
        client.progress.delete(o.key);
        return found;
      }
      const last = tsOf(got.messages.at(-1));
      if (got.nextCursor === undefined || last === undefined) break;
      p.newerBelow = last;
      client.progress.set(o.key, p);
    }
  }
  client.progress.delete(o.key);
  return undefined;
}
