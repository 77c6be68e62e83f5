/**
 * The Slack stand-in's rate limits, per method and per app, on its clock, as Slack documents them:
 * - "Rate limits" (docs.slack.dev/apis/web-api/rate-limits): each method has a tier of requests
 *   per minute, per workspace per app (Tier 3: 50+, Tier 4: 100+); past it, HTTP 429 with
 *   `Retry-After` in seconds; `chat.postMessage` has its own: about one message per second per
 *   channel, short bursts allowed;
 * - "Rate limit changes for non-Marketplace apps" (docs.slack.dev/changelog/2025-05-terms-rate-
 *   limit-update-and-faq): for an app commercially distributed outside the Slack Marketplace,
 *   `conversations.history` is 1 request a minute and its `limit` at most (and by default) 15
 *   (new apps since 2025-05-29, every install since 2026-03-03). Internal apps of a workspace
 *   and Marketplace apps keep Tier 3.
 */

/** Who the app is to Slack's limits. */
export type SlackDistribution = "internal" | "marketplace" | "non-marketplace";

/** Requests a minute by method (Slack's tiers for the methods the stand-in serves). */
const PER_MINUTE: Readonly<Record<string, number>> = {
  "conversations.history": 50,
  "conversations.info": 50,
  "conversations.join": 50,
  "oauth.v2.access": 100,
};
/** `chat.postMessage`: a message a second per channel, with a burst of this many. */
const POST_BURST = 10;

/** `conversations.history`'s `limit` for the app: its most, and its default. */
export function historyLimit(d: SlackDistribution): { max: number; default: number } {
  return d === "non-marketplace" ? { max: 15, default: 15 } : { max: 999, default: 100 };
}

export class SlackRateTiers {
  /** Request times in the last minute, by method. */
  private readonly times = new Map<string, number[]>();
  /** `chat.postMessage`'s bucket per channel: posts it may make now, refilled one a second. */
  private readonly buckets = new Map<string, { left: number; at: number }>();

  constructor(
    private readonly now: () => number,
    public distribution: SlackDistribution,
  ) {}

  /** How many a minute `method` allows this app (undefined: not limited here, as `auth.test`). */
  perMinute(method: string): number | undefined {
    if (method === "conversations.history" && this.distribution === "non-marketplace") return 1;
    return PER_MINUTE[method];
  }

  /**
   * Counts a call of `method` (on `channel`, for a post); undefined when it may go, else the
   * `Retry-After` Slack would answer, in whole seconds.
   */
  take(method: string, channel: string | undefined): number | undefined {
    const now = this.now();
    if (method === "chat.postMessage") {
      // One a second per channel, with a burst: a bucket of POST_BURST refilled one a second.
      const key = channel ?? "";
      const b = this.buckets.get(key) ?? { left: POST_BURST, at: now };
      b.left = Math.min(POST_BURST, b.left + (now - b.at) / 1000);
      b.at = now;
      this.buckets.set(key, b);
      if (b.left < 1) return Math.max(1, Math.ceil(1 - b.left));
      b.left -= 1;
      return undefined;
    }
    const limit = this.perMinute(method);
    return limit === undefined ? undefined : this.window(method, limit, 60_000, now);
  }

  private window(key: string, limit: number, ms: number, now: number): number | undefined {
    const recent = (this.times.get(key) ?? []).filter((t) => t > now - ms);
    this.times.set(key, recent);
    if (recent.length >= limit) {
      const free = (recent[recent.length - limit] as number) + ms;
      return Math.max(1, Math.ceil((free - now) / 1000));
    }
    recent.push(now);
    return undefined;
  }
}
